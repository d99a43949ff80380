//! How a response leaves for its client, and the signs that its client is reading.
//!
//! HTTP/2's transport (hyper) takes the next piece of a response body only once the piece before
//! it has found send window: the client must have granted it. A body handed over in 1 MiB frames
//! (one message each) shows that only once per megabyte, which a client reading at 128 KiB/s
//! grants over eight seconds; so every response body is cut here into pieces of [`PIECE`] bytes
//! (shared, not copied), and each time the transport comes back for another, the stream's
//! [`Drain`] and its connection's [`Link`] are stamped. A stream whose drain was stamped within the
//! grace has a client that is reading, however slowly: the cap on unread streams (`unread.rs`)
//! never chooses it.
//!
//! The same layer counts each connection's requests in flight ([`Link::begin_request`]): the
//! connection cap (`listener.rs`) chooses its victim among connections with none.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use http_body::{Frame, SizeHint};
use tonic::body::Body;
use tonic::codegen::http::{Request, Response};
use tonic::codegen::{Bytes, Service};

use crate::server::link::{Busy, Link, Stamp};
use crate::server::listener::Peer;

/// The largest piece of a response body handed to the transport at once: HTTP/2's default frame.
pub const PIECE: usize = 16 << 10;

/// When the transport last took a piece of one response: the stream's sign of a reading client.
#[derive(Debug)]
pub struct Drain {
    taken: Stamp,
    link: Option<Arc<Link>>,
}

impl Drain {
    /// A response on `link`'s connection, starting now (its first piece is yet to go).
    pub fn new(link: Option<Arc<Link>>) -> Self {
        Drain {
            taken: Stamp::now(),
            link,
        }
    }

    /// The transport came for another piece: the client granted window for the one before.
    pub fn taken(&self) {
        self.taken.set_now();
        if let Some(link) = &self.link {
            link.drained();
        }
    }

    /// Whether the transport took a piece within `grace`.
    pub fn taken_within(&self, grace: Duration) -> bool {
        self.taken.within(grace)
    }
}

/// The layer that cuts every response body into pieces, stamps each response's [`Drain`] (in the
/// request's extensions, for the call to find) and counts the connection's requests in flight.
#[derive(Debug, Clone, Copy, Default)]
pub struct Draining;

impl<S> tower_layer::Layer<S> for Draining {
    type Service = Drained<S>;

    fn layer(&self, inner: S) -> Drained<S> {
        Drained { inner }
    }
}

/// A service whose responses leave in pieces.
#[derive(Debug, Clone)]
pub struct Drained<S> {
    inner: S,
}

/// The response of a [`Drained`] service, as it will be once its call ends.
pub type DrainedFuture<B, E> = Pin<Box<dyn Future<Output = Result<Response<Pieces<B>>, E>> + Send>>;

impl<S, B> Service<Request<Body>> for Drained<S>
where
    S: Service<Request<Body>, Response = Response<B>>,
    S::Future: Send + 'static,
    B: http_body::Body<Data = Bytes> + Unpin + Send + 'static,
{
    type Response = Response<Pieces<B>>;
    type Error = S::Error;
    type Future = DrainedFuture<B, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Body>) -> Self::Future {
        let link = request
            .extensions()
            .get::<Peer>()
            .map(|peer| Arc::clone(&peer.link));
        let busy = link.as_ref().map(Link::begin_request);
        let drain = Arc::new(Drain::new(link));
        request.extensions_mut().insert(Arc::clone(&drain));
        let call = self.inner.call(request);
        Box::pin(async move {
            let response = call.await?;
            Ok(response.map(|inner| Pieces {
                inner,
                rest: Bytes::new(),
                drain,
                _busy: busy,
            }))
        })
    }
}

/// A response body handed to the transport [`PIECE`] bytes at a time, its [`Drain`] stamped each
/// time the transport comes back for more; its connection counts it in flight until it is dropped.
pub struct Pieces<B> {
    inner: B,
    /// What is left of the frame being cut.
    rest: Bytes,
    drain: Arc<Drain>,
    _busy: Option<Busy>,
}

impl<B> http_body::Body for Pieces<B>
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        // hyper polls again only once the last piece found send window.
        this.drain.taken();
        if !this.rest.is_empty() {
            let piece = this.rest.split_to(PIECE.min(this.rest.len()));
            return Poll::Ready(Some(Ok(Frame::data(piece))));
        }
        let frame = match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            other => return Poll::Ready(other),
        };
        match frame.into_data() {
            Ok(mut data) => {
                if data.len() > PIECE {
                    this.rest = data.split_off(PIECE);
                }
                Poll::Ready(Some(Ok(Frame::data(data))))
            }
            Err(frame) => Poll::Ready(Some(Ok(frame))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(rest));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(rest));
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;

    async fn next(body: &mut Pieces<Body>) -> Option<Frame<Bytes>> {
        std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx))
            .await
            .map(|f| f.expect("no error"))
    }

    #[tokio::test]
    async fn a_large_frame_leaves_in_pieces_each_stamping_the_drain_and_its_connection() {
        let link = Arc::new(Link::default());
        let drain = Arc::new(Drain::new(Some(Arc::clone(&link))));
        let whole: Vec<u8> = (0..PIECE * 2 + 10).map(|i| i as u8).collect();
        let mut body = Pieces {
            inner: Body::new(http_body_util::Full::new(Bytes::from(whole.clone()))),
            rest: Bytes::new(),
            drain: Arc::clone(&drain),
            _busy: None,
        };
        std::thread::sleep(Duration::from_millis(30));
        assert!(!drain.taken_within(Duration::from_millis(20)));
        assert!(!link.drained_within(Duration::from_millis(20)));
        let mut sizes = Vec::new();
        let mut joined = Vec::new();
        while let Some(frame) = next(&mut body).await {
            let data = frame.into_data().expect("data");
            sizes.push(data.len());
            joined.extend_from_slice(&data);
        }
        assert_eq!(sizes, [PIECE, PIECE, 10]);
        assert_eq!(joined, whole, "the same bytes, in order");
        assert!(drain.taken_within(Duration::from_millis(20)));
        assert!(link.drained_within(Duration::from_millis(20)));
        assert!(body.is_end_stream());
    }
}
