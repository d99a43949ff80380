//! Request bodies bounded while they arrive: the bytes of every unfinished request body, server-wide,
//! against one cap, and each body's time to finish.
//!
//! A client that sends most of a large request and goes silent made the server hold those bytes for
//! as long as its connection stayed open (225 connections holding 15 MiB each reached 3 GB). A tower
//! layer in front of every service wraps each request body: the bytes it has passed on count against
//! `max_pending_request_bytes` until the body ends or is dropped; a body past its first 64 KiB that
//! would pass the cap makes room by failing bodies that have sent nothing for a second, the largest
//! first ([`pending`]), or is failed itself with RESOURCE_EXHAUSTED when that would not be enough
//! (tonic answers with that status and the stream and its bytes are dropped); a body not finished
//! within `request_timeout_ms` is failed with DEADLINE_EXCEEDED.
//! Every Spanner request is one message, so a body that takes long is a client that stopped.
//!
//! A body's gRPC messages are held back until each has arrived whole ([`messages`]): the decoder
//! behind reserves the length a message's prefix claims as soon as it reads the prefix, so a
//! prefix passed on alone made the server reserve what a client merely claimed. Held here, the
//! bytes count against the same cap as they arrive, and memory follows the bytes that came.

pub mod messages;
pub mod pending;

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http_body::{Frame, SizeHint};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::http::Request;
use tonic::codegen::{Bytes, Service};

use super::knobs::Knobs;
use messages::Messages;
use pending::{Counted, Pending};

/// A body's first bytes always pass, counted but never refused, so that small requests (a session,
/// `SELECT 1`) are answered while large unfinished ones hold the cap; how far small bodies can take
/// the total past it is bounded by the streams open (connections x 100) and the time limit.
pub const SMALL_BODY_BYTES: u64 = 64 << 10;

/// The layer that bounds every request body of the server it is added to.
#[derive(Debug, Clone)]
pub struct BoundRequests {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    knobs: Arc<Knobs>,
    /// Bytes that arrived in request bodies that have not ended.
    pending: Pending,
    /// The largest message the services behind decode: a larger claim is passed on at once,
    /// for the decoder to refuse before it reserves anything.
    max_message_bytes: u64,
}

impl BoundRequests {
    /// Bounds request bodies by these knobs (`max_pending_request_bytes`, `request_timeout_ms`),
    /// read when each request starts; `max_message_bytes` is the largest message the services
    /// behind it decode.
    pub fn new(knobs: Arc<Knobs>, max_message_bytes: u64) -> Self {
        BoundRequests {
            shared: Arc::new(Shared {
                knobs,
                pending: Pending::default(),
                max_message_bytes,
            }),
        }
    }

    /// Bytes of unfinished request bodies held now.
    pub fn pending_bytes(&self) -> u64 {
        self.shared.pending.total()
    }
}

impl<S> tower_layer::Layer<S> for BoundRequests {
    type Service = Bounded<S>;

    fn layer(&self, inner: S) -> Bounded<S> {
        Bounded {
            inner,
            shared: Arc::clone(&self.shared),
        }
    }
}

/// A service whose request bodies are bounded.
#[derive(Debug, Clone)]
pub struct Bounded<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> Service<Request<Body>> for Bounded<S>
where
    S: Service<Request<Body>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let shared = Arc::clone(&self.shared);
        let request = request.map(|body| Body::new(BoundedBody::new(body, shared)));
        self.inner.call(request)
    }
}

/// A request body whose bytes count against the server-wide cap from their arrival until it
/// ends, each gRPC message held back until it has arrived whole.
struct BoundedBody {
    inner: Body,
    shared: Arc<Shared>,
    /// Its messages: whole ones ready to pass on, the one arriving held.
    messages: Messages,
    /// Its id in `shared.pending`, where its bytes are counted.
    id: u64,
    cap: u64,
    timeout: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    ended: bool,
}

impl BoundedBody {
    /// `inner`, bounded by the knobs as they are now; its time starts now.
    fn new(inner: Body, shared: Arc<Shared>) -> Self {
        let knobs = shared.knobs.get();
        let timeout = Duration::from_millis(knobs.request_timeout_ms);
        let messages = Messages::new(shared.max_message_bytes);
        let id = shared.pending.open();
        BoundedBody {
            inner,
            shared,
            messages,
            id,
            cap: knobs.max_pending_request_bytes,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            ended: false,
        }
    }

    /// Gives its bytes back and passes on nothing more (what it held is dropped).
    fn end(&mut self) {
        self.shared.pending.close(self.id);
        self.ended = true;
        self.messages.clear();
    }

    /// Counts `bytes` more; false (having ended) when that passes the cap, this body is past its
    /// first [`SMALL_BODY_BYTES`], and stalled bodies cannot make room.
    fn count(&mut self, bytes: u64) -> bool {
        let counted = self
            .shared
            .pending
            .count(self.id, bytes, self.cap, SMALL_BODY_BYTES);
        if counted == Counted::Refused {
            self.end();
            return false;
        }
        true
    }

    fn dropped_for_room(&self) -> Status {
        Status::resource_exhausted(format!(
            "the request sent nothing for {} s while the local instance's unfinished requests were \
             at their limit (max_pending_request_bytes): its bytes were dropped to make room; send \
             it again",
            pending::STALLED.as_secs()
        ))
    }

    fn too_many_bytes(&self) -> Status {
        Status::resource_exhausted(format!(
            "the local instance holds {} bytes of unfinished requests, its limit \
             (max_pending_request_bytes), and none has been silent for a second: send the request \
             again in a moment",
            self.cap
        ))
    }

    /// The body ended (or sent trailers) inside a message: nothing of that message is passed on,
    /// so the decoder never reserves its claim.
    fn cut_short(&mut self) -> Status {
        let (claimed, came) = self.messages.progress().unwrap_or((0, 0));
        self.end();
        Status::internal(format!(
            "the request ended inside a message ({came} of the {claimed} bytes its prefix claims)"
        ))
    }

    fn too_slow(&self) -> Status {
        Status::deadline_exceeded(format!(
            "the request did not arrive whole within {} ms (request_timeout_ms)",
            self.timeout.as_millis()
        ))
    }
}

impl http_body::Body for BoundedBody {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
        let this = self.get_mut();
        loop {
            if !this.ended && this.shared.pending.dropped(this.id, cx.waker()) {
                this.end();
                return Poll::Ready(Some(Err(this.dropped_for_room())));
            }
            if let Some(piece) = this.messages.pop() {
                return Poll::Ready(Some(Ok(Frame::data(piece))));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            // First: a body that keeps trickling in must not outlive its time either.
            if this.deadline.as_mut().poll(cx).is_ready() {
                this.end();
                return Poll::Ready(Some(Err(this.too_slow())));
            }
            // The deadline polled above wakes this task when it passes.
            let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => frame,
                Some(Err(status)) => {
                    this.end();
                    return Poll::Ready(Some(Err(status)));
                }
                None if this.messages.holding() => {
                    return Poll::Ready(Some(Err(this.cut_short())));
                }
                None => {
                    this.end();
                    return Poll::Ready(None);
                }
            };
            match frame.into_data() {
                Ok(data) => {
                    if !this.count(data.len() as u64) {
                        return Poll::Ready(Some(Err(this.too_many_bytes())));
                    }
                    this.messages.push(data);
                }
                // Trailers: after the last whole message only.
                Err(_) if this.messages.holding() => {
                    return Poll::Ready(Some(Err(this.cut_short())));
                }
                Err(frame) => return Poll::Ready(Some(Ok(frame))),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended || (self.messages.is_empty() && self.inner.is_end_stream())
    }

    fn size_hint(&self) -> SizeHint {
        if self.ended {
            return SizeHint::with_exact(0);
        }
        let inner = self.inner.size_hint();
        let buffered = self.messages.buffered();
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(buffered));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(buffered));
        }
        hint
    }
}

impl Drop for BoundedBody {
    fn drop(&mut self) {
        self.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::knobs::KnobSettings;
    use http_body::Body as _;

    /// A body that yields `chunks` and then waits forever (a client gone silent).
    fn silent_after(chunks: Vec<&'static [u8]>) -> Body {
        let frames = chunks
            .into_iter()
            .map(|c| Ok::<_, Status>(Frame::data(Bytes::from_static(c))));
        let stream =
            tokio_stream::StreamExt::chain(tokio_stream::iter(frames), tokio_stream::pending());
        Body::new(http_body_util_free::StreamBody(Box::pin(stream)))
    }

    /// A minimal stream-of-frames body (http-body-util is not a dependency).
    mod http_body_util_free {
        use super::*;
        use tokio_stream::Stream;

        type Frames = Pin<Box<dyn Stream<Item = Result<Frame<Bytes>, Status>> + Send>>;

        pub struct StreamBody(pub Frames);

        impl http_body::Body for StreamBody {
            type Data = Bytes;
            type Error = Status;

            fn poll_frame(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<Option<Result<Frame<Bytes>, Status>>> {
                self.0.as_mut().poll_next(cx)
            }
        }
    }

    fn bounded(layer: &BoundRequests, body: Body) -> BoundedBody {
        BoundedBody::new(body, Arc::clone(&layer.shared))
    }

    async fn next(body: &mut BoundedBody) -> Option<Result<Frame<Bytes>, Status>> {
        std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await
    }

    #[tokio::test]
    async fn a_message_passes_only_once_its_claimed_bytes_have_arrived() {
        let layer = BoundRequests::new(Arc::new(Knobs::new(KnobSettings::default())), 16 << 20);
        // A prefix claiming 16 MiB and one byte, then silence: nothing passes, 6 bytes counted.
        static CLAIM: [u8; 6] = [0, 1, 0, 0, 0, b'x'];
        let mut claim = bounded(&layer, silent_after(vec![&CLAIM[..]]));
        let waited = tokio::time::timeout(Duration::from_millis(50), next(&mut claim)).await;
        assert!(waited.is_err(), "nothing of the message passed: {waited:?}");
        assert_eq!(layer.pending_bytes(), 6);
        drop(claim);
        assert_eq!(layer.pending_bytes(), 0);
        // A message in three frames passes whole after its last, in order.
        static PARTS: [&[u8]; 3] = [&[0, 0, 0], &[0, 4, b'a'], b"bcd"];
        let frames = PARTS.iter().map(|p| Ok(Frame::data(Bytes::from_static(p))));
        let mut whole = bounded(
            &layer,
            Body::new(http_body_util_free::StreamBody(Box::pin(
                tokio_stream::iter(frames),
            ))),
        );
        let mut passed = Vec::new();
        while let Some(frame) = next(&mut whole).await {
            passed.extend_from_slice(frame.expect("data").data_ref().expect("data"));
        }
        assert_eq!(passed, [0, 0, 0, 0, 4, b'a', b'b', b'c', b'd']);
        // A body that ends inside a message is refused, its part never passed.
        let frames = [Ok(Frame::data(Bytes::from_static(&CLAIM)))];
        let mut cut = bounded(
            &layer,
            Body::new(http_body_util_free::StreamBody(Box::pin(
                tokio_stream::iter(frames),
            ))),
        );
        let refused = next(&mut cut).await.expect("an error").expect_err("cut");
        assert_eq!(refused.code(), tonic::Code::Internal);
        assert!(
            refused.message().contains("1 of the 16777216 bytes"),
            "{refused:?}"
        );
        assert!(next(&mut cut).await.is_none());
        assert_eq!(layer.pending_bytes(), 0);
    }

    #[tokio::test]
    async fn unfinished_bodies_share_one_cap_and_a_time_limit() {
        const K64: usize = SMALL_BODY_BYTES as usize;
        static BIG: [u8; 2 * K64] = [7; 2 * K64];
        let layer = BoundRequests::new(
            Arc::new(Knobs::new(KnobSettings {
                max_pending_request_bytes: 3 * SMALL_BODY_BYTES,
                request_timeout_ms: 200,
                ..KnobSettings::default()
            })),
            16 << 20,
        );
        let mut first = bounded(&layer, silent_after(vec![&BIG[..]]));
        assert!(matches!(next(&mut first).await, Some(Ok(_))));
        assert_eq!(layer.pending_bytes(), 2 * SMALL_BODY_BYTES);
        // A second unfinished body fills the cap with its first frame.
        let mut second = bounded(&layer, silent_after(vec![&BIG[..K64], &BIG[..K64]]));
        assert!(matches!(next(&mut second).await, Some(Ok(_))));
        // A small body still passes with the cap full, and gives its bytes back when it ends.
        let mut small = bounded(&layer, Body::new(String::from("SELECT 1")));
        assert!(matches!(next(&mut small).await, Some(Ok(_))));
        assert_eq!(layer.pending_bytes(), 3 * SMALL_BODY_BYTES + 8);
        assert!(next(&mut small).await.is_none());
        assert_eq!(layer.pending_bytes(), 3 * SMALL_BODY_BYTES);
        // The second body's next frame passes the cap: refused, its bytes dropped.
        let refused = next(&mut second)
            .await
            .expect("an error")
            .expect_err("refused");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(refused.message().contains("max_pending_request_bytes"));
        assert!(next(&mut second).await.is_none(), "nothing more");
        assert_eq!(layer.pending_bytes(), 2 * SMALL_BODY_BYTES);
        // The silent first body fails at its time limit and gives its bytes back.
        let late = next(&mut first).await.expect("an error").expect_err("late");
        assert_eq!(late.code(), tonic::Code::DeadlineExceeded);
        assert!(late.message().contains("request_timeout_ms"), "{late:?}");
        assert_eq!(layer.pending_bytes(), 0);
        // One dropped unfinished gives its bytes back too (four bytes of a prefix: held).
        let mut dropped = bounded(&layer, silent_after(vec![b"1234"]));
        let waited = tokio::time::timeout(Duration::from_millis(20), next(&mut dropped)).await;
        assert!(waited.is_err(), "{waited:?}");
        assert_eq!(layer.pending_bytes(), 4);
        drop(dropped);
        assert_eq!(layer.pending_bytes(), 0);
    }
}
