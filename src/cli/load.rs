//! `spanprof load`: one query under a steady arrival rate (`--rate 50,100,200`) or a fixed
//! concurrency (`--concurrency 1,2,4`), a step each; every step's latencies from the intended
//! and from the actual start, the knee, where the time went, the client's CPU per request. With
//! `--read-write` each request is one read-write transaction (`profile --read-write`'s options),
//! and each step says its goodput, attempts and aborts too.
//! Ctrl-C (or SIGTERM, or SIGHUP) stops the run and still prints and writes what was measured;
//! a second one ends the process at once.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::headers::HeaderArgs;
use super::load_draws::LoadQueryArgs;
use super::load_summary::{step_line, summary};
use super::options::RequestOptionArgs;
use super::outputs::{LoadFiles, Outputs};
use super::profile::check_label;
use super::read_write::ReadWriteArgs;
use super::target::{TargetArgs, parse_limit};
use crate::engine::load::LoadSpec;
use crate::engine::{Canceller, Engine, Job, LoadEvent, Variant};
use crate::export::Reports;
use crate::load::{
    LoadReport, LoadSteps, MAX_IN_FLIGHT, Model, StepLevel, parse_concurrencies, parse_rates,
};
use crate::report::printable;

/// Arguments of `spanprof load`.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct LoadArgs {
    /// `merge`: runs made together by several processes, as one.
    #[command(subcommand)]
    pub action: Option<LoadAction>,
    /// Where to run (the built-in instance takes the queue model's knobs).
    #[command(flatten)]
    pub target: TargetArgs,
    /// What to run (one --sql, a --script or a --mix) and what each request draws.
    #[command(flatten)]
    pub query: LoadQueryArgs,
    /// How the query is asked.
    #[command(flatten)]
    pub options: RequestOptionArgs,
    /// Each request one read-write transaction (`--read-write`), as `profile --read-write` runs one.
    #[command(flatten)]
    pub read_write: ReadWriteArgs,
    /// What every call says besides the query.
    #[command(flatten)]
    pub headers: HeaderArgs,
    /// The target's own lock and transaction statistics of the run (`--server-stats`).
    #[command(flatten)]
    pub server_stats: super::target_stats::ServerStatsArgs,
    /// The run's label.
    #[arg(long, default_value = "load")]
    pub label: String,
    /// The open model: requests a second, one step per value (`50,100,200`, each may end in
    /// `/s`), or a ramp `FROM..TO:STEP` (`50..400:50`; without `:STEP` it steps by FROM); past
    /// 20,000 a rate is capped, with a notice.
    #[arg(
        long,
        value_name = "R,R,...",
        required_unless_present = "concurrency",
        conflicts_with = "concurrency"
    )]
    pub rate: Option<String>,
    /// The closed model: requests in flight, one step per value (`1,2,4`, or a ramp `1..8:1`),
    /// each client starting its next request when its last one ended.
    #[arg(long, value_name = "C,C,...")]
    pub concurrency: Option<String>,
    /// How long each step generates requests.
    #[arg(long, value_name = "DUR", default_value = "5s", value_parser = parse_limit)]
    pub step_duration: Duration,
    /// The open model's bound on requests in flight: a start past it waits (and is counted
    /// late; one still waiting when its step ends is dropped).
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_IN_FLIGHT)))]
    pub max_in_flight: u32,
    /// How long a step's requests in flight may take to end after it stops generating; those
    /// left are counted unfinished.
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = parse_limit)]
    pub drain: Duration,
    /// End the ramp at the knee: once two steps in a row depart from the first by the knee's
    /// rule, the higher steps are not run (the window's "Find the knee" sets it).
    #[arg(long)]
    pub stop_at_knee: bool,
    /// Run the whole load once per value of one setting, in turn, and compare the runs, each
    /// against the first: lock-mode=pessimistic,optimistic, isolation=serializable,repeatable-read,
    /// max-commit-delay=0ms,100ms, or skew=0.5,2 (the exponent of every zipf-drawn --param).
    // `spanprof load` hands such a run to `load_variants::run_variants`.
    #[arg(long, value_name = "SETTING=V,V,...", value_parser = super::load_vary::parse_vary)]
    pub vary: Option<super::load_vary::Vary>,
    /// Where the run is written.
    #[command(flatten)]
    pub out: Outputs<LoadFiles>,
    /// Where the run is saved (the run history, as for `profile`).
    #[command(flatten)]
    pub history: super::history::HistoryArgs,
}

/// What `spanprof load` does besides running a load.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum LoadAction {
    /// Merge load runs of one query made at the same time by several processes (on several
    /// machines) into the run they made together: histograms added exactly, counts and rates
    /// summed, a step's level the sum of theirs, each process's generator figures kept apart.
    Merge(MergeArgs),
}

/// Arguments of `spanprof load merge`.
#[derive(Debug, Clone, clap::Args)]
pub struct MergeArgs {
    /// The runs: their reports (`spanprof load --json`, or `--html`) or `history:ID` (a load
    /// run saved in the run history), two or more.
    #[arg(required = true, num_args = 2.., value_name = "RUN.json|history:ID")]
    pub runs: Vec<PathBuf>,
    /// The run history `history:ID` reads from (as for `profile`).
    #[arg(long = "history", value_name = "PATH", env = "SPANPROF_HISTORY")]
    pub history: Option<String>,
    /// Where to write the merged run, as `load` writes one.
    #[command(flatten)]
    pub out: Outputs<LoadFiles>,
}

/// `spanprof load merge`: reads the runs, merges them, prints and writes the merged run.
fn run_merge(args: &MergeArgs, mut out: impl Write) -> anyhow::Result<LoadReport> {
    let mut store = None;
    let runs = args
        .runs
        .iter()
        .map(
            |path| match path.to_str().and_then(|p| p.strip_prefix("history:")) {
                Some(id) => from_history(&mut store, args.history.as_deref(), id),
                None => {
                    let bytes = crate::export::read_bounded(path, crate::export::MAX_REPORT_BYTES)
                        .with_context(|| format!("cannot read {}", path.display()))?;
                    crate::export::read_load_report(&bytes).with_context(|| {
                        format!("{} is not a spanprof load report", path.display())
                    })
                }
            },
        )
        .collect::<anyhow::Result<Vec<_>>>()?;
    let merged = crate::load::merge(&runs)?;
    out.write_all(summary(&merged).as_bytes())?;
    args.out.write(Reports::Load(&merged), None)?;
    Ok(merged)
}

/// Load run `id` of the history `location` names (opened at the first such run).
fn from_history(
    store: &mut Option<(Box<dyn crate::history::HistoryStore>, String)>,
    location: Option<&str>,
    id: &str,
) -> anyhow::Result<LoadReport> {
    if store.is_none() {
        let location = crate::history::Location::choose(location, false)?;
        let opened = crate::history::open(&location)?.context("no history store")?;
        *store = Some((opened, location.describe()));
    }
    let Some((store, described)) = store.as_mut() else {
        anyhow::bail!("no history store");
    };
    store.get_load(id)?.with_context(|| {
        format!(
            "the history {described} holds no load run {}",
            printable(id)
        )
    })
}

/// The spec the arguments describe.
fn load_spec(args: &LoadArgs) -> anyhow::Result<LoadSpec> {
    check_label(&args.label)?;
    let script = args.read_write.script_text()?;
    let drawing = args.query.drawing()?;
    let sql = match (script, args.query.sql.as_slice()) {
        (Some(_), _) | (_, [_, ..]) if drawing.mix_sql.is_some() => {
            anyhow::bail!("--mix holds the transactions' scripts: leave out --sql and --script")
        }
        (None, []) if drawing.mix_sql.is_some() => drawing.mix_sql.clone().unwrap_or_default(),
        (Some(script), []) => script,
        (Some(_), _) => {
            anyhow::bail!("--script holds the transaction's statements: leave out --sql")
        }
        (None, [sql]) => sql.clone(),
        (None, _) if args.read_write.read_write => {
            anyhow::bail!(
                "load --read-write runs one transaction: give one --sql (statements separated by `;`) or --script"
            )
        }
        (None, _) => anyhow::bail!("load runs one query: give one --sql"),
    };
    let mut notices = Vec::new();
    let (model, levels) = match (&args.rate, &args.concurrency) {
        (Some(rates), _) => {
            let (rates, capped) = parse_rates(rates)?;
            notices.extend(capped);
            (
                Model::Open,
                rates.into_iter().map(StepLevel::Rate).collect(),
            )
        }
        (None, Some(c)) => (
            Model::Closed,
            parse_concurrencies(c)?
                .into_iter()
                .map(StepLevel::Concurrency)
                .collect(),
        ),
        (None, None) => anyhow::bail!("give --rate or --concurrency"),
    };
    let plan = LoadSteps {
        model,
        levels,
        step_duration: args.step_duration,
        max_in_flight: args.max_in_flight,
        drain: args.drain,
    };
    plan.check()?;
    if args.target.queue.is_set()
        && !matches!(args.target.target(), crate::engine::Target::Local(_))
    {
        notices.push(
            "--query-threads, --service-ms and --freeze-* shape the built-in instance only: \
             ignored for this target"
                .to_owned(),
        );
    }
    let mut timeouts = args.target.timeouts.timeouts();
    // No request may outlive its step's drain by much: its deadline is the drain and the step.
    timeouts.iteration = timeouts.iteration.min(args.step_duration + args.drain);
    let variant = Variant {
        params: drawing.typed.clone(),
        mode: args.query.mode(&args.target),
        options: args.options.options()?,
        ..Variant::new(args.label.clone(), sql)
    };
    let variant = args
        .read_write
        .apply(vec![variant])?
        .pop()
        .context("no variant to load")?;
    if variant.read_write.is_some() && variant.options.partitioned.is_some() {
        anyhow::bail!(
            "a read-write transaction runs unpartitioned: leave out --partitioned with --read-write"
        );
    }
    Ok(LoadSpec {
        database: args.target.database(),
        variant,
        plan,
        decoder: args.query.decoder.into(),
        timeouts,
        headers: args.headers.options(),
        notices,
        stop_at_knee: args.stop_at_knee,
        draws: drawing.draws,
        server_stats: None,
    })
}

/// Runs the load test, prints each step as it ends (stderr) and the summary (`out`), and writes
/// the exports. Ctrl-C ends it early with everything measured so far.
pub fn run_load(args: &LoadArgs, mut out: impl Write) -> anyhow::Result<LoadReport> {
    if let Some(LoadAction::Merge(merge)) = &args.action {
        return run_merge(merge, out);
    }
    anyhow::ensure!(
        args.vary.is_none(),
        "--vary makes several load runs: `spanprof load` runs them, one at a time"
    );
    let (target, spec) = prepared(args)?;
    let report = measure(target, spec, |run| stop_on_signal(move || run.cancel()))?;
    out.write_all(summary(&report).as_bytes())?;
    args.out.write(Reports::Load(&report), None)?;
    super::history::save_load(&args.history, &report);
    Ok(report)
}

/// The target and the spec the arguments describe: with `--server-stats`, the run's transactions
/// tagged and the target's statistics asked for (the built-in instance's interval set as
/// `--stats-interval` says).
pub(super) fn prepared(args: &LoadArgs) -> anyhow::Result<(crate::engine::Target, LoadSpec)> {
    let mut spec = load_spec(args)?;
    spec.server_stats = args.server_stats.ask(&mut spec.variant)?;
    let mut target = args.target.target();
    spec.notices.extend(args.server_stats.apply(&mut target));
    Ok((target, spec))
}

/// Runs `spec` on `target` through the engine, each step printed as it ends (stderr); `started`
/// is given the run's canceller once it runs. The report, whole or cancelled (and the target's
/// own statistics of the run, when the spec asks for them).
pub(super) fn measure(
    target: crate::engine::Target,
    spec: LoadSpec,
    started: impl FnOnce(Canceller),
) -> anyhow::Result<LoadReport> {
    for notice in &spec.notices {
        eprintln!("note: {notice}");
    }
    if let Some(draws) = &spec.draws.draws {
        eprintln!("draws: {}", draws.describe().join("; "));
    }
    let run = Engine::start(Job::Load(target, spec), Arc::new(|| {}))
        .context("cannot start the load generator")?;
    started(run.canceller());
    let mut report = None;
    for event in run.load_events() {
        match event {
            LoadEvent::Connected(target) => eprintln!("connected to {target}"),
            LoadEvent::StepStarted { index, level } => {
                eprintln!("step {}: {}", index + 1, level.describe())
            }
            LoadEvent::StepDone(step) => eprintln!("  {}", step_line(&step)),
            LoadEvent::Finished(r) => report = Some(*r),
            LoadEvent::Failed(e) => return Err(e.into()),
        }
    }
    report.context("the load generator stopped without a report")
}

/// Cancels the run at the first SIGINT, SIGTERM or SIGHUP, on a named thread of its own (the
/// default action, ending the process, would lose what was measured); a second one ends the
/// process at once, with the signal's status, whatever the run was still doing (waiting for the
/// history's lock, writing its exports), the children stopped first.
pub(super) fn stop_on_signal(cancel: impl FnOnce() + Send + 'static) {
    let spawned = std::thread::Builder::new()
        .name("spanprof-load-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let second = rt.block_on(async {
                let mut signals = super::serve::StopSignals::new();
                signals.next().await;
                eprintln!(
                    "stopping: the steps measured so far are reported (a second signal ends at once)"
                );
                cancel();
                signals.next().await
            });
            eprintln!("a second signal: ending now; what was not yet written is lost");
            crate::children::stop_all();
            std::process::exit(128 + second);
        });
    if let Err(e) = spawned {
        eprintln!("Ctrl-C will end the run without its report: {e}");
    }
}
