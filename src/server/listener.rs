//! The connections the local instance accepts: at most `max_connections` at once (a connection past
//! it is closed as soon as it is accepted), each closed once it has sent nothing for its idle time
//! (the server's HTTP/2 keepalive pings make a live peer answer well within it), and an accept
//! loop that backs off when accepting fails (EMFILE: out of file descriptors) instead of spinning.
//! Each connection has a [`Link`] its calls can reach it by, to close it from the server's side.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

/// How long the accept loop waits after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What bounds the connections, fixed when the instance starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ConnectionLimits {
    /// Connections open at once; one more is closed as soon as it is accepted. Default 1,000.
    pub max_connections: u64,
    /// A connection that sends nothing for this long is closed, in milliseconds. Default 60 s
    /// (the server pings every 20 s, so a live client always answers within it).
    pub idle_timeout_ms: u64,
    /// Streams whose query may wait on a client that reads none of it, server-wide. Past it, the
    /// connection of the stream that has waited longest (at least a second) is closed. Default 64.
    pub max_unread_streams: u64,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits::DEFAULT
    }
}

impl ConnectionLimits {
    /// The defaults, as a constant (command-line defaults read it).
    pub const DEFAULT: ConnectionLimits = ConnectionLimits {
        max_connections: 1000,
        idle_timeout_ms: 60_000,
        max_unread_streams: 64,
    };
}

/// The accepted connections, as tonic's `serve_with_incoming` takes them.
pub struct Incoming {
    listener: TcpListener,
    open: Arc<AtomicUsize>,
    limits: ConnectionLimits,
    backoff: Option<Pin<Box<Sleep>>>,
}

impl Incoming {
    /// Connections accepted on `listener` within `limits`.
    pub fn new(listener: TcpListener, limits: ConnectionLimits) -> Self {
        Incoming {
            listener,
            open: Arc::default(),
            limits,
            backoff: None,
        }
    }
}

impl Stream for Incoming {
    type Item = io::Result<Connection>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            if let Some(sleep) = self.backoff.as_mut() {
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                self.backoff = None;
            }
            match self.listener.poll_accept(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => {
                    // Out of descriptors or a connection reset before it was accepted: wait
                    // before trying again, so the loop does not spin.
                    self.backoff = Some(Box::pin(tokio::time::sleep(ACCEPT_BACKOFF)));
                }
                Poll::Ready(Ok((stream, _))) => {
                    let max = usize::try_from(self.limits.max_connections).unwrap_or(usize::MAX);
                    if self.open.load(Ordering::Acquire) >= max {
                        // Refused: closed at once, before any byte is read.
                        drop(stream);
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    self.open.fetch_add(1, Ordering::AcqRel);
                    let idle = Duration::from_millis(self.limits.idle_timeout_ms);
                    return Poll::Ready(Some(Ok(Connection {
                        stream,
                        link: Arc::default(),
                        open: Arc::clone(&self.open),
                        idle,
                        quiet: Box::pin(tokio::time::sleep(idle)),
                    })));
                }
            }
        }
    }
}

/// One accepted connection: counted while open, closed when it stays silent for its idle time or
/// its [`Link`] is closed.
pub struct Connection {
    stream: TcpStream,
    link: Arc<Link>,
    open: Arc<AtomicUsize>,
    idle: Duration,
    quiet: Pin<Box<Sleep>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What a call knows of its connection (tonic puts it in the request's extensions).
#[derive(Debug, Clone)]
pub struct Peer {
    /// Its addresses.
    pub tcp: TcpConnectInfo,
    /// The way to close it.
    pub link: Arc<Link>,
}

/// A hand on one connection that its calls can keep: [`Link::close`] ends it, with every stream
/// on it, and so frees what the transport holds for them. It also knows what the connection is
/// doing: its requests in flight, and when the transport last took a piece of a response on it.
#[derive(Debug, Default)]
pub struct Link {
    closed: AtomicBool,
    /// The task reading the connection, to wake when it is closed.
    reader: Mutex<Option<Waker>>,
    /// When the transport last took a piece of a response on it (`stream/drain.rs`).
    drained: Stamp,
    /// Requests begun on it so far.
    requests: AtomicU64,
    /// Requests whose response has not ended.
    in_flight: AtomicUsize,
    /// When its last request ended (never, if none has).
    idle_since: Stamp,
}

/// One request in flight on a connection, counted until dropped.
#[derive(Debug)]
pub struct Busy(Arc<Link>);

impl Drop for Busy {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle_since.set_now();
        }
    }
}

impl Link {
    /// A request begins on the connection; it is in flight until the guard is dropped.
    pub fn begin_request(self: &Arc<Self>) -> Busy {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(self))
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Whether it ever sent a request.
    pub fn ever_asked(&self) -> bool {
        self.requests.load(Ordering::Relaxed) > 0
    }

    /// The transport took a piece of a response on it: its client granted window.
    pub fn drained(&self) {
        self.drained.set_now();
    }

    /// Whether the transport took a piece of a response on it within `grace`.
    pub fn drained_within(&self, grace: Duration) -> bool {
        self.drained.within(grace)
    }

    /// Closes the connection: its next read fails, and the server drops it.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let reader = self
            .reader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(waker) = reader {
            waker.wake();
        }
    }

    /// Whether [`Link::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    fn wake_on_close(&self, waker: &Waker) {
        let mut reader = self.reader.lock().unwrap_or_else(PoisonError::into_inner);
        if !reader.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *reader = Some(waker.clone());
        }
    }
}

impl Connected for Connection {
    type ConnectInfo = Peer;

    fn connect_info(&self) -> Self::ConnectInfo {
        Peer {
            tcp: self.stream.connect_info(),
            link: Arc::clone(&self.link),
        }
    }
}

impl AsyncRead for Connection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let me = &mut *self;
        if me.link.is_closed() {
            return Poll::Ready(Err(closed()));
        }
        match Pin::new(&mut me.stream).poll_read(cx, buf) {
            Poll::Ready(done) => {
                me.quiet.as_mut().reset(Instant::now() + me.idle);
                Poll::Ready(done)
            }
            Poll::Pending => match me.quiet.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the connection sent nothing for its idle time",
                ))),
                Poll::Pending => {
                    me.link.wake_on_close(cx.waker());
                    // Closed between the first look and the waker's registration.
                    if me.link.is_closed() {
                        return Poll::Ready(Err(closed()));
                    }
                    Poll::Pending
                }
            },
        }
    }
}

/// An instant kept in an atomic, so that hot paths stamp it without a lock: milliseconds since
/// the process's first stamp, or never.
#[derive(Debug, Default)]
pub struct Stamp(AtomicU64);

/// The instant stamps count from.
fn epoch() -> std::time::Instant {
    static EPOCH: OnceLock<std::time::Instant> = OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Milliseconds since the epoch, plus one (0 is never).
fn stamp_now() -> u64 {
    u64::try_from(epoch().elapsed().as_millis())
        .unwrap_or(u64::MAX - 1)
        .saturating_add(1)
}

impl Stamp {
    /// A stamp of now.
    pub fn now() -> Self {
        Stamp(AtomicU64::new(stamp_now()))
    }

    /// Stamps it now.
    pub fn set_now(&self) {
        self.0.store(stamp_now(), Ordering::Relaxed);
    }

    /// How long ago it was stamped; `None` if never.
    pub fn age(&self) -> Option<Duration> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            at => Some(Duration::from_millis(stamp_now().saturating_sub(at))),
        }
    }

    /// Whether it was stamped within `window`.
    pub fn within(&self, window: Duration) -> bool {
        self.age().is_some_and(|age| age < window)
    }
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the server closed the connection: a stream on it went unread while too many did",
    )
}

impl AsyncWrite for Connection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
