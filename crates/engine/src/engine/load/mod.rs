//! A load test: one query started at a steady arrival rate (the open model) or by a fixed number
//! of clients (the closed model), a step per level (the engine's handle starts it, as any run),
//! after one warm-up request whose figures are kept out (as `profile`'s warm-up is).
//! Each request's latency is recorded from its intended start and from its actual start
//! (`crate::load`); a step stops generating after its duration, waits for its requests in flight
//! (at most the plan's drain), and is reported before the next begins. Cancelling (Ctrl-C, a
//! closed window) abandons what is in flight and still reports every step measured so far.

mod draws;
mod generator;
mod pool;
mod request;
mod server_stats;
mod sink;
mod transaction;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::common::{SESSION_DELETE_WAIT, now_rfc3339};
use super::events::{EngineError, LoadEvent, Sink};
use super::spec::Variant;
use super::target::{Connected, Target, connect};
use crate::client::{DatabasePath, HeaderOptions, Session, Timeouts};
use crate::load::step::StepCpu;
use crate::load::{
    KneeRule, LoadReport, LoadSteps, Model, RunFacts, StepLevel, StepResult, StepTally, find_knee,
};
use crate::wire::DecoderKind;
use draws::RequestDraws;
pub use draws::{LoadDraws, LoadParam, LoadParamError, LoadParams, MixScript};
use generator::{Generator, InFlight, OpenStep};
use pool::{Opener, SessionPool};
use request::Shared;
pub use server_stats::{
    AskError, DEFAULT_STATS_WAIT, ServerStatsAsk, WaitNotice, check_tag, set_stats_interval,
};
use sink::StepSink;
use transaction::Transactions;

/// What to load.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    /// The database.
    pub database: DatabasePath,
    /// The query (its label names the run).
    pub variant: Variant,
    /// The steps and how they run.
    pub plan: LoadSteps,
    /// The decoder.
    pub decoder: DecoderKind,
    /// The client's limits (each request's deadline is `timeouts.iteration`).
    pub timeouts: Timeouts,
    /// The official clients' optional headers.
    pub headers: HeaderOptions,
    /// What was noticed before the run (capped rates), carried into the report.
    pub notices: Vec<String>,
    /// Whether the ramp ends at the knee: once two steps in a row depart from the first by the
    /// knee's rule, the steps above them are not run (a search for the knee needs no more).
    pub stop_at_knee: bool,
    /// What each request draws (parameters over a key space, a mix's script).
    pub draws: LoadDraws,
    /// The target's own lock and transaction statistics of a read-write run, read after its last
    /// step (`--server-stats`): the tag the run's transactions carry and how long to wait for the
    /// interval; none otherwise.
    pub server_stats: Option<ServerStatsAsk>,
}

/// How many of a load run's requests are in flight now, read from any thread (the window reads it
/// while a step drains).
#[derive(Debug, Clone, Default)]
pub struct InFlightCount(Arc<AtomicU32>);

impl InFlightCount {
    /// The requests in flight now.
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }

    /// One more is in flight until the guard is dropped.
    fn enter(&self) -> InFlightGuard {
        self.0.fetch_add(1, Ordering::Relaxed);
        InFlightGuard(Arc::clone(&self.0))
    }
}

/// A request in flight, counted until it is dropped (ended or abandoned).
struct InFlightGuard(Arc<AtomicU32>);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How far ahead of its setting up a step's first start is.
const LEAD: Duration = Duration::from_millis(50);

/// Runs `spec` against `target`, every event to `sink`, until done or cancelled (`cancel`, read
/// by the generator's threads too); `in_flight` counts the requests in flight. When the spec asks
/// for them, the target's own statistics of the run are read after its last step
/// (`server_stats`), before the local instance it started stops.
pub(super) async fn run(
    target: Target,
    spec: LoadSpec,
    sink: &Sink,
    cancel: &Arc<AtomicBool>,
    in_flight: InFlightCount,
) {
    let send = |event: LoadEvent| sink.send(event);
    // The generator's thread starts its requests on the run's runtime.
    let runtime = tokio::runtime::Handle::current();
    let started_at = now_rfc3339();
    let wall_began = std::time::SystemTime::now();
    let run_began = Instant::now();
    let stats = spec.server_stats.clone();
    let opened = open(&target, &spec, in_flight, stats.is_some()).await;
    let (connected, shared) = match opened {
        Ok((connected, shared)) => (connected, Arc::new(shared)),
        Err(e) => return send(LoadEvent::Failed(e)),
    };
    let description = match &shared.transactions {
        Some(t) => t.pool.description().unwrap_or_default(),
        None => shared
            .sessions
            .first()
            .map_or_else(String::new, |(s, _)| s.description().to_owned()),
    };
    send(LoadEvent::Connected(description));
    request::warm_up(&shared, cancel).await;
    let mut steps = Vec::with_capacity(spec.plan.levels.len());
    let mut notices = spec.notices.clone();
    for (index, &level) in spec.plan.levels.iter().enumerate() {
        if cancel.load(Ordering::SeqCst) {
            break;
        }
        if let Some(t) = &shared.transactions {
            // Made before the step, so that its requests do not wait for CreateSession (one
            // that fails here fails again, counted, when a request needs the session).
            let _ = t.pool.fill(pool::sessions_before(&spec.plan, level)).await;
        }
        send(LoadEvent::StepStarted { index, level });
        let result = one_step(level, &spec.plan, &shared, cancel, &runtime, run_began).await;
        send(LoadEvent::StepDone(Box::new(result.clone())));
        steps.push(result);
        let left = spec.plan.levels.len() - steps.len();
        if spec.stop_at_knee && left > 0 && knee_confirmed(&steps) {
            notices.push(format!(
                "the ramp stopped at the knee: two steps in a row departed from the first, so the \
                 {left} higher steps were not run"
            ));
            break;
        }
    }
    let span = server_stats::RunSpan {
        from: wall_began,
        to: std::time::SystemTime::now(),
    };
    let facts = RunFacts {
        label: spec.variant.label.clone(),
        sql: spec.variant.sql.clone(),
        target: target.report_name(),
        database: spec.database.name(),
        started_at,
        decoder: spec.decoder.as_str().to_owned(),
        notices,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cancelled: cancel.load(Ordering::SeqCst),
    };
    let mut report = LoadReport::new(facts, &spec.plan, steps);
    report.draws = spec.draws.draws.clone();
    // Every request has ended or been abandoned: the sessions are ours alone again.
    if let Ok(shared) = Arc::try_unwrap(shared) {
        let mut closes = tokio::task::JoinSet::new();
        let pooled = shared.transactions.iter().flat_map(|t| t.pool.drain());
        for session in shared.sessions.into_iter().map(|(s, _)| s).chain(pooled) {
            closes.spawn(session.close(SESSION_DELETE_WAIT));
        }
        let _ = tokio::time::timeout(SESSION_DELETE_WAIT, closes.join_all()).await;
    }
    if let Some(ask) = &stats {
        let read = server_stats::read(&connected.endpoint, &spec, ask, span, cancel).await;
        report.server_stats = Some(read);
    }
    // The local instance, if the run started one, stops once the session is closed (and its
    // statistics were read).
    drop(connected);
    send(LoadEvent::Finished(Box::new(report)));
}

/// Whether the last two steps both depart from the first by the knee's rule: the knee is found,
/// and one step past it confirms it (one disturbed step is no knee).
fn knee_confirmed(steps: &[StepResult]) -> bool {
    find_knee(steps, &KneeRule::DEFAULT).is_some_and(|knee| knee.index + 1 < steps.len())
}

/// The streams a server takes at once on one HTTP/2 connection: gRPC's usual limit, Cloud
/// Spanner's and the local instance's.
pub const STREAMS_PER_CONNECTION: u32 = 100;
/// The most connections a load run opens.
pub const MAX_CONNECTIONS: u32 = 64;

/// How many connections a run opens so that its requests in flight never wait on this side for a
/// stream: a request past a connection's [`STREAMS_PER_CONNECTION`] waits in the client's HTTP/2
/// layer, before the server has seen it, and that wait (a queue, not the network) was counted as
/// network. One per hundred requests the plan may keep in flight (the open model's bound, the
/// closed model's largest concurrency), at most [`MAX_CONNECTIONS`].
pub fn connections_for(plan: &LoadSteps) -> u32 {
    let in_flight = match plan.model {
        Model::Open => plan.max_in_flight,
        Model::Closed => plan
            .levels
            .iter()
            .map(|l| match l {
                StepLevel::Concurrency(c) => *c,
                StepLevel::Rate(_) => 1,
            })
            .max()
            .unwrap_or(1),
    };
    in_flight
        .div_ceil(STREAMS_PER_CONNECTION)
        .clamp(1, MAX_CONNECTIONS)
}

/// The target made reachable (the local instance started, held for the run), the sessions the
/// requests take in turn (multiplexed unless the variant asks otherwise), each on a connection of
/// its own ([`connections_for`]), and the query prepared on each. A read-write run's sessions are
/// a pool instead, a session lent to one transaction at a time (`pool`), filled for the first step.
async fn open(
    target: &Target,
    spec: &LoadSpec,
    in_flight: InFlightCount,
    untagged_warm_up: bool,
) -> Result<(Connected, Shared), EngineError> {
    let connected = connect(target).await?;
    if let Some(rw) = &spec.variant.read_write {
        let opener = Opener {
            endpoint: connected.endpoint.clone(),
            database: spec.database.clone(),
            timeouts: spec.timeouts,
            kind: spec.variant.session_kind(),
            headers: spec.headers,
        };
        let pool = Arc::new(SessionPool::new(opener, pool::most_sessions(&spec.plan)));
        let first = spec
            .plan
            .levels
            .first()
            .copied()
            .unwrap_or(StepLevel::Concurrency(1));
        pool.fill(pool::sessions_before(&spec.plan, first)).await?;
        let shared = Shared {
            sessions: Vec::new(),
            next: std::sync::atomic::AtomicUsize::new(0),
            decoder: spec.decoder,
            in_flight,
            transactions: Some(Transactions {
                pool,
                read_write: rw.clone(),
                mix: spec.draws.scripts.clone(),
                untagged_warm_up,
            }),
            draws: spec.draws.draws.as_ref().map(RequestDraws::new),
        };
        return Ok((connected, shared));
    }
    let mut sessions = Vec::new();
    for _ in 0..connections_for(&spec.plan) {
        let session = Session::open_as(
            &connected.endpoint,
            &spec.database,
            spec.timeouts,
            spec.variant.session_kind(),
            spec.headers,
        )
        .await?;
        let query = session.prepare(&spec.variant.query())?;
        sessions.push((session, query));
    }
    let shared = Shared {
        sessions,
        next: std::sync::atomic::AtomicUsize::new(0),
        decoder: spec.decoder,
        in_flight,
        transactions: None,
        draws: spec.draws.draws.as_ref().map(RequestDraws::new),
    };
    Ok((connected, shared))
}

/// Runs one step: generates for the step's duration, drains, and returns its figures.
async fn one_step(
    level: StepLevel,
    plan: &LoadSteps,
    shared: &Arc<Shared>,
    cancel: &Arc<AtomicBool>,
    runtime: &tokio::runtime::Handle,
    run_began: Instant,
) -> StepResult {
    let (abandon_tx, abandon) = watch::channel(false);
    let process_cpu = cpu_time::ProcessTime::try_now().ok();
    let sink = Arc::new(StepSink {
        tally: Mutex::new(if let Some(t) = &shared.transactions {
            StepTally::read_write(level).with_scripts(&t.script_names())
        } else {
            StepTally::new(level)
        }),
        // The first start a little ahead, so that the generator thread's own start is not
        // counted as its lag.
        began: Instant::now() + LEAD,
        abandon,
    });
    let drain_until = sink.began + plan.step_duration + plan.drain;
    let mut generator_cpu = None;
    match (plan.model, level) {
        (Model::Open, StepLevel::Rate(rate)) => {
            let in_flight = Arc::new(InFlight::default());
            let g = Generator {
                shared: Arc::clone(shared),
                sink: Arc::clone(&sink),
                runtime: runtime.clone(),
                in_flight: Arc::clone(&in_flight),
                cancel: Arc::clone(cancel),
            };
            let step = OpenStep {
                rate,
                duration: plan.step_duration,
                max_in_flight: plan.max_in_flight,
            };
            let thread = std::thread::Builder::new()
                .name("spanprof-load-generator".into())
                .spawn(move || generator::generate(step, &g));
            if let Ok(thread) = thread {
                let joined = tokio::task::spawn_blocking(move || thread.join()).await;
                generator_cpu = joined.ok().and_then(Result::ok);
            }
            drain(|| in_flight.current() == 0, drain_until, cancel).await;
            let _ = abandon_tx.send(true);
            let grace = Instant::now() + Duration::from_secs(2);
            drain(|| in_flight.current() == 0, grace, &AtomicBool::new(false)).await;
        }
        (_, level) => {
            let concurrency = match level {
                StepLevel::Concurrency(c) => c,
                StepLevel::Rate(r) => r.round().clamp(1.0, f64::from(u32::MAX)) as u32,
            };
            let clients = tokio::spawn(generator::closed(
                concurrency,
                plan.step_duration,
                Arc::clone(shared),
                Arc::clone(&sink),
                Arc::clone(cancel),
            ));
            drain(|| clients.is_finished(), drain_until, cancel).await;
            let _ = abandon_tx.send(true);
            let _ = clients.await;
        }
    }
    let generated = plan.step_duration.min(sink.began.elapsed());
    let cpu = StepCpu {
        generator: generator_cpu,
        process: process_cpu
            .and_then(|t| t.try_elapsed().ok())
            .unwrap_or_default(),
    };
    let started = sink.began.saturating_duration_since(run_began);
    sink.lock().finish(started, generated, cpu)
}

/// Waits until `done()` holds, `until` passes or the run is cancelled, looking every 2 ms.
async fn drain(done: impl Fn() -> bool, until: Instant, cancel: &AtomicBool) {
    while !done() && Instant::now() < until && !cancel.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(model: Model, levels: Vec<StepLevel>, max_in_flight: u32) -> LoadSteps {
        LoadSteps {
            model,
            levels,
            step_duration: Duration::from_secs(1),
            max_in_flight,
            drain: Duration::from_secs(1),
        }
    }

    #[test]
    fn a_connection_per_hundred_requests_in_flight_so_none_waits_for_a_stream() {
        let open = |n| connections_for(&plan(Model::Open, vec![StepLevel::Rate(10.0)], n));
        assert_eq!(open(1), 1);
        assert_eq!(open(100), 1);
        assert_eq!(open(101), 2);
        assert_eq!(open(1_000), 10, "the default bound");
        assert_eq!(open(100_000), MAX_CONNECTIONS);
        let closed = connections_for(&plan(
            Model::Closed,
            vec![StepLevel::Concurrency(4), StepLevel::Concurrency(250)],
            1_000,
        ));
        assert_eq!(
            closed, 3,
            "the largest concurrency, not the open model's bound"
        );
    }

    /// A step at `rate` whose requests all took `ms` from their intended start.
    fn step(rate: f64, ms: u64) -> StepResult {
        let mut tally = StepTally::new(StepLevel::Rate(rate));
        let ended = crate::load::Ended {
            from_intended: Duration::from_millis(ms),
            from_start: Duration::from_millis(ms),
            ..Default::default()
        };
        for _ in 0..rate as usize {
            tally.ok(&ended, &Default::default());
        }
        tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default())
    }

    #[test]
    fn the_ramp_stops_once_two_steps_in_a_row_depart_and_not_on_one() {
        let calm = [step(50.0, 2), step(100.0, 2)];
        assert!(!knee_confirmed(&calm));
        // One step past the rule: a knee so far, not yet confirmed.
        let one = [step(50.0, 2), step(100.0, 2), step(200.0, 40)];
        assert!(!knee_confirmed(&one));
        let two = [
            step(50.0, 2),
            step(100.0, 2),
            step(200.0, 40),
            step(400.0, 90),
        ];
        assert!(knee_confirmed(&two));
        // A disturbed step between calm ones is no knee.
        let blip = [step(50.0, 2), step(100.0, 40), step(200.0, 2)];
        assert!(!knee_confirmed(&blip));
    }
}
