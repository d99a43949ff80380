//! ExecuteStreamingSql, in its steps: the request checked, the resume decision (from the token's
//! point, or a restart's memory of where the query's stream broke before), the stream (a parked
//! one taken back, or a new query started), and the task that sends it and, at a fault, parks it
//! for its resume and remembers where it broke.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tonic::{Request, Response, Status};

use super::commit::transaction_tag;
use super::queries::Prepared;
use super::{LocalSpanner, caller, deadline_of, dml};
use crate::proto::google::spanner::v1 as pb;
use crate::server::knobs::{KnobSettings, Knobs};
use crate::server::link::Link;
use crate::server::query::QuerySpec;
use crate::server::stream::budget::SendBudget;
use crate::server::stream::drain::Drain;
use crate::server::stream::live::{self, Ended, LiveStream, Resumption};
use crate::server::stream::parked::Parked;
use crate::server::stream::restarts::Restarts;
use crate::server::stream::sink::Output;
use crate::server::stream::tap::Tap;
use crate::server::stream::unread::WaitsOn;

/// Streams a query's answer: a resumed stream continues from its token, a new one runs the query.
pub(super) async fn execute_streaming_sql(
    spanner: &LocalSpanner,
    request: Request<pb::ExecuteSqlRequest>,
) -> Result<Response<live::Response>, Status> {
    let begun = Instant::now();
    let tap = spanner.watching();
    if let Some(tap) = &tap {
        tap.request(begun, !request.get_ref().resume_token.is_empty());
    }
    let knobs = spanner.knobs.get();
    let deadline = deadline_of(&request);
    let r = request.get_ref();
    if let Some(in_txn) = spanner.read_write_selected(
        &r.session,
        (
            r.transaction.as_ref(),
            transaction_tag(r.request_options.as_ref()),
        ),
        caller(&request).as_ref(),
        &knobs,
    )? {
        let in_txn = in_txn.hinted(request.extensions());
        return dml::execute_streaming_sql(spanner, r, in_txn, (&knobs, deadline)).await;
    }
    let prepared = spanner.prepare(request.get_ref(), caller(&request).as_ref(), &knobs)?;
    let restart_key = restart_key(&request.get_ref().session, &prepared);
    let resumption = resumption(&spanner.restarts, &prepared, restart_key);
    let way_out = WayOut {
        link: caller(&request),
        drain: request.extensions().get::<Arc<Drain>>().cloned(),
    };
    let live = held_or_started(spanner, &prepared, (&knobs, way_out), deadline, begun).await?;
    if let Some(tap) = &tap {
        tap.stream(live.id, prepared.resume.map(|point| point.stamp.stream));
    }
    let budget = live.budget();
    let (tx, rx) = mpsc::channel(4);
    let after = Afterwards {
        knobs: Arc::clone(&spanner.knobs),
        parked: Arc::clone(&spanner.parked),
        restarts: Arc::clone(&spanner.restarts),
        restart_key,
    };
    tokio::spawn(send_and_settle(live, tx, resumption, tap.clone(), after));
    Ok(Response::new(live::Response::new(
        rx, deadline, tap, budget,
    )))
}

/// What names a query's stream in the restart memory: its session and its request key.
fn restart_key(session: &str, prepared: &Prepared) -> u64 {
    crate::fnv::of_parts(&[
        session.as_bytes(),
        &prepared.stamp.request_key.to_le_bytes(),
    ])
}

/// Where the response starts and where its faults may fire.
fn resumption(restarts: &Restarts, prepared: &Prepared, restart_key: u64) -> Resumption {
    match prepared.resume {
        Some(point) => Resumption {
            after: Some(point.seq),
            faults_after: Some(point.seq),
        },
        // Run again from the start after its stream broke: no fault where it failed before,
        // and none at all in a shape without resume tokens, whose one resume point, the
        // start, has failed once.
        None => Resumption {
            after: None,
            faults_after: restarts.recall(restart_key).map(|seq| {
                if prepared.stamp.shape.resume_tokens() {
                    seq
                } else {
                    u64::MAX
                }
            }),
        },
    }
}

/// The stream's connection and its response's way out, as its waits are counted.
struct WayOut {
    link: Option<Arc<Link>>,
    drain: Option<Arc<Drain>>,
}

/// The stream to send: the parked one the resume token names, if it is held at that point, or
/// else the query started anew.
async fn held_or_started(
    spanner: &LocalSpanner,
    prepared: &Prepared,
    (knobs, way_out): (&KnobSettings, WayOut),
    deadline: Option<Instant>,
    begun: Instant,
) -> Result<LiveStream, Status> {
    let held = prepared.resume.and_then(|point| {
        spanner
            .parked
            .take(point.stamp.stream, |live| live.next_seq == point.seq + 1)
    });
    if let Some(live) = held {
        live.interrupt().set_deadline(deadline);
        return Ok(live);
    }
    // A stream that holds its whole answer is bounded by its own limit instead.
    let limit = if live::holds_answer(prepared.stamp.shape, &prepared.report) {
        usize::MAX
    } else {
        usize::try_from(knobs.max_stream_buffer_bytes).unwrap_or(usize::MAX)
    };
    let budget = Arc::new(SendBudget::new(limit).counted(WaitsOn {
        unread: Arc::clone(&spanner.unread),
        link: way_out.link,
        drain: way_out.drain,
    }));
    let spec = QuerySpec {
        output: Output::Messages {
            transaction: prepared.transaction.clone(),
            stamp: prepared.stamp,
            budget: Arc::clone(&budget),
        },
        ..prepared.spec.clone()
    };
    let started = spanner.start_query(spec, knobs, deadline).await?;
    Ok(LiveStream::new(
        (prepared.stamp.stream, spanner.next_query_number()),
        (started.events, budget),
        started.gone,
        begun,
        prepared.report.clone(),
        prepared.stamp.shape,
    )
    .queued(started.queued))
}

/// What the stream's task needs once its response has ended: the knobs, where a faulted stream
/// is held, and the memory of where streams broke.
struct Afterwards {
    knobs: Arc<Knobs>,
    parked: Arc<Parked<LiveStream>>,
    restarts: Arc<Restarts>,
    restart_key: u64,
}

/// The stream's task: sends the stream, then settles how it ended.
async fn send_and_settle(
    live: LiveStream,
    tx: live::Out,
    resumption: Resumption,
    tap: Option<Arc<Tap>>,
    after: Afterwards,
) {
    match live
        .run(&tx, &after.knobs, resumption, tap.as_deref())
        .await
    {
        Ended::Faulted(live, fault) => park_faulted(live, fault, &tx, &after).await,
        Ended::Done => after.restarts.forget(after.restart_key),
        Ended::Stopped => {}
    }
}

/// A stream at an injected fault: where it broke is remembered for a restart, and the stream is
/// held for its resume before the client hears of the fault (so its resume always finds it).
async fn park_faulted(live: Box<LiveStream>, fault: Status, tx: &live::Out, after: &Afterwards) {
    let knobs = after.knobs.get();
    let hold = Duration::from_millis(knobs.park_timeout_ms);
    let (id, seq) = (live.id, live.next_seq);
    after
        .restarts
        .remember(after.restart_key, seq.saturating_sub(1), hold);
    if !live.shape().resume_tokens() {
        // No token can name it: the client can only run the query again.
        drop(live);
        let _ = tx.send(Err(fault)).await;
        return;
    }
    after.parked.park(id, *live, knobs.max_parked_streams, hold);
    if tx.send(Err(fault)).await.is_err() {
        // The client left without hearing of it: nobody will resume this stream.
        drop(after.parked.take(id, |live| live.next_seq == seq));
    }
}
