//! One query's stream in progress, on the server's side: the task that sends the messages its query
//! thread cut, paces and fails them as the knobs say, stops when the client goes away or the deadline
//! passes, and hands itself over to be held at an injected fault; and the response stream the client
//! reads, which ends with DEADLINE_EXCEEDED at the deadline whatever the task is doing.
//!
//! When the tap watches, the response measures how long the transport left a ready message waiting:
//! a client that does not read leaves HTTP/2 without send window (or TCP without room), and the
//! transport only comes back for the next message once there is some. The time from taking one
//! message to taking the next, while the next was already waiting, is time the server was blocked
//! on the client.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use prost::bytes::Bytes;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Status;

use super::budget::SendBudget;
use super::builder::{MessageBuilder, append_stats};
use super::sink::QueryEvent;
use super::tap::Tap;
use crate::server::control::{GoneOnDrop, Interrupt, Stop};
use crate::server::encoded::EncodedPartialResultSet;
use crate::server::knobs::Knobs;
use crate::server::result_stats::{Report, Waits};
use crate::server::shape::Shape;

/// The most a stream that puts its statistics first (the emulator's shape) holds while its answer
/// completes; past it the query fails with RESOURCE_EXHAUSTED.
pub const MAX_HELD_ANSWER_BYTES: usize = 256 << 20;

/// What a query thread reports, as the stream task receives it.
pub type Events = mpsc::Receiver<Result<QueryEvent, Status>>;
/// Where the stream task puts what the client is to read.
pub type Out = mpsc::Sender<Result<EncodedPartialResultSet, Status>>;

/// One query's stream in progress: its cursor (the query's events), the message builder, and the
/// messages built but not yet sent. It outlives a response when a fault is injected, so that the resume
/// continues from the cursor instead of running the query again. The query thread cuts the messages
/// and hands its builder over at the end, to close the stream with the statistics.
pub struct LiveStream {
    /// The stream's id, as its tokens carry it.
    pub id: u64,
    report: Report,
    builder: Option<MessageBuilder>,
    /// Whether the last message is built.
    finished: bool,
    unsent: VecDeque<Bytes>,
    events: Events,
    started: Instant,
    /// Its query's wait in the queue model for a query thread, when the model is on.
    queued: Option<Duration>,
    /// The number of the next message to send.
    pub next_seq: u64,
    /// Marks the query's client gone when the stream is dropped, however it ends.
    gone: GoneOnDrop,
    /// How the answer is cut.
    shape: Shape,
    /// Bytes of messages built and not sent, counted while the whole answer is held.
    held_bytes: usize,
    /// The bytes between the query thread and the transport.
    budget: Arc<SendBudget>,
    /// Which streaming query of the server's this is (from 1), for the stall knob.
    query_number: u64,
}

/// Whether a stream of `shape` holds its whole answer until it is complete: the statistics go
/// first, and are known last.
pub fn holds_answer(shape: Shape, report: &Report) -> bool {
    shape.stats_first() && (report.with_stats || report.explain)
}

/// Where a response starts, and where its faults may fire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Resumption {
    /// The client has every message up to this one (its resume token's): none is sent again.
    pub after: Option<u64>,
    /// No fault fires at or before this message: a resume's point, or where the query's stream
    /// failed before it was restarted (`u64::MAX`: none at all).
    pub faults_after: Option<u64>,
}

/// How a response ended.
pub enum Ended {
    /// Every message was sent.
    Done,
    /// A fault is due after a message; the stream can be resumed from there. The fault is not
    /// sent yet: the stream must be held for its resume first, or a client quick to resume would
    /// find nothing to resume and start the query again.
    Faulted(Box<LiveStream>, Status),
    /// The client went away, the deadline passed, or the query failed (the error was sent).
    Stopped,
}

impl LiveStream {
    /// A stream of the query whose thread reports on `events` and counts its messages against
    /// `budget`; `gone` stops it when the stream is dropped. `query_number` counts the server's
    /// streaming queries (from 1).
    pub fn new(
        (id, query_number): (u64, u64),
        (events, budget): (Events, Arc<SendBudget>),
        gone: GoneOnDrop,
        started: Instant,
        report: Report,
        shape: Shape,
    ) -> Self {
        LiveStream {
            id,
            report,
            builder: None,
            finished: false,
            unsent: VecDeque::new(),
            events,
            started,
            queued: None,
            next_seq: 0,
            gone,
            shape,
            held_bytes: 0,
            budget,
            query_number,
        }
    }

    /// This stream's query waited `queued` in the queue model for a query thread.
    pub fn queued(mut self, queued: Option<Duration>) -> Self {
        self.queued = queued;
        self
    }

    /// Whether the answer is held until complete.
    fn holds_answer(&self) -> bool {
        holds_answer(self.shape, &self.report)
    }

    /// The bytes between its query thread and the transport, which its responses release.
    pub fn budget(&self) -> Arc<SendBudget> {
        Arc::clone(&self.budget)
    }

    /// The query's interrupt.
    pub fn interrupt(&self) -> &Arc<Interrupt> {
        &self.gone.0
    }

    /// How its answer is cut.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// Sends messages as the query produces them, pacing and failing as the knobs say. Messages a
    /// resumed client already has (up to `resume.after`) are built but not sent. A watching `tap`
    /// sees every message and wait.
    pub async fn run(
        mut self,
        out: &Out,
        knobs: &Knobs,
        resume: Resumption,
        tap: Option<&Tap>,
    ) -> Ended {
        let deadline = self.interrupt().deadline();
        let mut first = true;
        if self.holds_answer()
            && let Err(stopped) = self.hold_answer(out, deadline).await
        {
            return stopped;
        }
        loop {
            while let Some(msg) = self.unsent.pop_front() {
                let seq = self.next_seq;
                self.next_seq += 1;
                if resume.after.is_some_and(|r| seq <= r) {
                    self.budget.release(msg.len());
                    continue;
                }
                let is_final = self.finished && self.unsent.is_empty();
                let settings = knobs.get();
                let mut wait = settings.pace(msg.len());
                if std::mem::take(&mut first) {
                    wait += settings.first_byte_delay();
                }
                wait += settings.stall(self.query_number, seq);
                if !wait.is_zero()
                    && guarded(tokio::time::sleep(wait), out, deadline)
                        .await
                        .is_none()
                {
                    return Ended::Stopped;
                }
                if let Some(tap) = tap {
                    tap.message(self.id, seq, &msg);
                }
                if !self.send(msg, out, deadline).await {
                    return Ended::Stopped;
                }
                if settings.fails_after(seq, resume.faults_after, is_final) {
                    let fault = Status::unavailable(format!(
                        "injected fault after message {seq} (fail every {}); resume from the last token",
                        settings.fail_every
                    ));
                    if let Some(tap) = tap {
                        tap.fault();
                    }
                    return Ended::Faulted(Box::new(self), fault);
                }
            }
            if self.finished {
                if resume.after.is_some_and(|r| r >= self.next_seq) {
                    let _ = out.send(Err(past_the_end())).await;
                    return Ended::Stopped;
                }
                if let Some(tap) = tap {
                    tap.finished(self.id);
                }
                return Ended::Done;
            }
            let Some(event) = guarded(self.events.recv(), out, deadline).await else {
                return Ended::Stopped;
            };
            if let Err(status) = self.take(event) {
                let _ = out.send(Err(status)).await;
                return Ended::Stopped;
            }
        }
    }

    /// Hands `msg` to the transport; whether it took it (else the client left or the deadline
    /// passed). The time it waits for room, a message ready and the transport's queue full, is the
    /// server waiting on a client that does not read (HTTP/2 flow control): counted in the
    /// statistics' `client_wait_time`, so that a slow client is never taken for a slow server.
    async fn send(&mut self, msg: Bytes, out: &Out, deadline: Option<Instant>) -> bool {
        let ready = Instant::now();
        let sent = guarded(out.send(Ok(EncodedPartialResultSet(msg))), out, deadline).await;
        self.budget.waited_on_client(ready.elapsed());
        matches!(sent, Some(Ok(())))
    }

    /// Takes in the query's events until its answer is complete (the emulator's shape, statistics
    /// first), within [`MAX_HELD_ANSWER_BYTES`]. `Err` says how the response ended instead.
    async fn hold_answer(&mut self, out: &Out, deadline: Option<Instant>) -> Result<(), Ended> {
        while !self.finished {
            let Some(event) = guarded(self.events.recv(), out, deadline).await else {
                return Err(Ended::Stopped);
            };
            let taken = self.take(event).and_then(|()| {
                if self.held_bytes > MAX_HELD_ANSWER_BYTES {
                    Err(Status::resource_exhausted(format!(
                        "the emulator's shape holds the whole answer to send its statistics first, \
                         and this one is larger than {} MiB: use normal mode or another shape",
                        MAX_HELD_ANSWER_BYTES >> 20
                    )))
                } else {
                    Ok(())
                }
            });
            if let Err(status) = taken {
                let _ = out.send(Err(status)).await;
                return Err(Ended::Stopped);
            }
        }
        Ok(())
    }

    /// Takes in one event of the query thread; an error ends the stream.
    fn take(&mut self, event: Option<Result<QueryEvent, Status>>) -> Result<(), Status> {
        match event {
            Some(Ok(QueryEvent::Messages(messages))) => {
                self.held_bytes += messages.iter().map(Bytes::len).sum::<usize>();
                self.unsent.extend(messages);
            }
            Some(Ok(QueryEvent::Built(builder))) => self.builder = Some(*builder),
            Some(Ok(QueryEvent::Done(totals))) => {
                let builder = self
                    .builder
                    .take()
                    .ok_or_else(|| Status::internal("the query ended without its last message"))?;
                let waits = Waits {
                    client: Some(self.budget.client_wait()),
                    queue: self.queued,
                };
                let stats = self
                    .report
                    .stats(&totals, self.started, builder.value_bytes(), waits);
                let before = self.unsent.len();
                if self.shape.stats_first() {
                    self.unsent.extend(builder.finish(None));
                    self.put_stats_first(stats);
                } else {
                    self.unsent.extend(builder.finish(stats));
                }
                let last: usize = self.unsent.iter().skip(before).map(Bytes::len).sum();
                self.budget.charge(last);
                self.finished = true;
            }
            Some(Ok(QueryEvent::Columns(_) | QueryEvent::Rows(_))) => {}
            Some(Err(status)) => return Err(status),
            None => return Err(Status::internal("the query stopped without finishing")),
        }
        Ok(())
    }
}

impl LiveStream {
    /// The statistics on the first message, if it is not sent yet (the answer was held for them).
    fn put_stats_first(
        &mut self,
        stats: Option<crate::proto::google::spanner::v1::ResultSetStats>,
    ) {
        let (Some(stats), Some(first)) = (stats, self.unsent.front_mut()) else {
            return;
        };
        if self.next_seq > 0 {
            return;
        }
        let mut bytes = first.to_vec();
        append_stats(&mut bytes, &stats);
        *first = Bytes::from(bytes);
    }
}

fn past_the_end() -> Status {
    Status::invalid_argument("the resume token points past the end of this query's answer")
}

/// Waits for `work` unless the client goes away or the deadline passes first (`None` then).
async fn guarded<T>(
    work: impl Future<Output = T>,
    out: &Out,
    deadline: Option<Instant>,
) -> Option<T> {
    let expiry = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        done = work => Some(done),
        () = out.closed() => None,
        () = expiry => None,
    }
}

/// The stream a client reads: the stream task's messages, ended by DEADLINE_EXCEEDED if the
/// deadline passes first.
pub struct Response {
    messages: ReceiverStream<Result<EncodedPartialResultSet, Status>>,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    ended: bool,
    /// A watching tap: it notes when the transport takes each message.
    tap: Option<Arc<Tap>>,
    /// When the transport took the last message while the next was already waiting.
    waiting_since: Option<Instant>,
    /// What each message taken gives back room in.
    budget: Arc<SendBudget>,
}

impl Response {
    /// What the stream task sends on the other end of `messages`, due by `deadline`; each
    /// message the transport takes is released from `budget`.
    pub fn new(
        messages: mpsc::Receiver<Result<EncodedPartialResultSet, Status>>,
        deadline: Option<Instant>,
        tap: Option<Arc<Tap>>,
        budget: Arc<SendBudget>,
    ) -> Self {
        Response {
            messages: ReceiverStream::new(messages),
            deadline: deadline.map(|at| Box::pin(tokio::time::sleep_until(at.into()))),
            ended: false,
            tap,
            waiting_since: None,
            budget,
        }
    }
}

impl Stream for Response {
    type Item = Result<EncodedPartialResultSet, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        if let Some(sleep) = self.deadline.as_mut()
            && sleep.as_mut().poll(cx).is_ready()
        {
            self.ended = true;
            return Poll::Ready(Some(Err(Stop::Deadline.status())));
        }
        let next = Pin::new(&mut self.messages).poll_next(cx);
        match &next {
            Poll::Ready(None) => self.ended = true,
            Poll::Ready(Some(Ok(message))) => {
                self.budget.release(message.0.len());
                if let Some(tap) = &self.tap {
                    let now = Instant::now();
                    tap.taken(now, message.0.len());
                    if let Some(since) = self.waiting_since {
                        tap.blocked(now.saturating_duration_since(since));
                    }
                }
                let queued = !self.messages.as_ref().is_empty();
                self.waiting_since = if self.tap.is_some() && queued {
                    Some(Instant::now())
                } else {
                    None
                };
            }
            _ => {}
        }
        next
    }
}
