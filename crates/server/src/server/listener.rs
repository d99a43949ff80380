//! The connections the local instance accepts: at most `max_connections` at once, each closed once
//! it has sent nothing for its idle time (the server's HTTP/2 keepalive pings make a live peer
//! answer well within it), and an accept loop that backs off when accepting fails (EMFILE: out of
//! file descriptors) instead of spinning. Each connection has a [`Link`] its calls can reach it by.
//!
//! At the cap a new connection is not refused while another is idle: the idle connection that
//! never sent a request, else the one idle longest, is closed to make room (a connection with a
//! request in flight never is). Connections that answer pings and never ask anything can no longer
//! hold every place; only when every connection has a request in flight is the new one closed.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};
use tokio_stream::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use super::link::Link;

/// How long the accept loop waits after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What bounds the connections, fixed when the instance starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ConnectionLimits {
    /// Connections open at once. Past it an idle connection is closed to make room (one that never
    /// sent a request first), or, when every one has a request in flight, the new one. Default 1,000.
    pub max_connections: u64,
    /// A connection that sends nothing for this long is closed, in milliseconds. Default 60 s
    /// (the server pings every 20 s, so a live client always answers within it).
    pub idle_timeout_ms: u64,
    /// Streams whose query may wait on a client that reads none of it, server-wide. Past it, the
    /// connection whose unread streams hold the most bytes is closed (`stream/unread.rs`). Default 64.
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
    open: Arc<Open>,
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
                    let Some((id, link)) = self.open.admit(max) else {
                        // Every connection is busy: this one is closed before a byte is read.
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let idle = Duration::from_millis(self.limits.idle_timeout_ms);
                    return Poll::Ready(Some(Ok(Connection {
                        stream,
                        link,
                        id,
                        open: Arc::clone(&self.open),
                        idle,
                        quiet: Box::pin(tokio::time::sleep(idle)),
                    })));
                }
            }
        }
    }
}

/// The connections open now, each by its link: where the cap finds an idle one to close.
#[derive(Debug, Default)]
struct Open {
    links: Mutex<HashMap<u64, Arc<Link>>>,
}

impl Open {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, Arc<Link>>> {
        // One map operation at a time: a panic cannot leave it half-written.
        self.links.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Room for a connection accepted now, within `max`: its id and link, or `None` when every
    /// open connection has a request in flight. At the cap, the idle connection that never sent a
    /// request is closed to make room, else the one idle longest.
    fn admit(&self, max: usize) -> Option<(u64, Arc<Link>)> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let mut links = self.lock();
        if links.len() >= max && links.values().filter(|link| !link.is_closed()).count() >= max {
            let victim = links
                .values()
                .filter(|link| !link.is_closed())
                .filter_map(|link| Some((link, link.idle_for()?)))
                .max_by_key(|(link, idle)| (!link.ever_asked(), *idle))
                .map(|(link, _)| Arc::clone(link))?;
            victim.close();
        }
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let link = Arc::new(Link::accepted(id));
        links.insert(id, Arc::clone(&link));
        Some((id, link))
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }
}

/// One accepted connection: counted while open, closed when it stays silent for its idle time or
/// its [`Link`] is closed.
pub struct Connection {
    stream: TcpStream,
    link: Arc<Link>,
    id: u64,
    open: Arc<Open>,
    idle: Duration,
    quiet: Pin<Box<Sleep>>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.open.remove(self.id);
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

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the server closed the connection: it was idle at the connection cap, or its streams went \
         unread while too many did",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_an_idle_connection_makes_room_one_that_never_asked_first() {
        let open = Open::default();
        let (_, asked) = open.admit(3).expect("room");
        let (_, never) = open.admit(3).expect("room");
        let (_, busy) = open.admit(3).expect("room");
        drop(asked.begin_request());
        let _in_flight = busy.begin_request();
        std::thread::sleep(Duration::from_millis(5));
        let (_, newest) = open.admit(3).expect("an idle one makes room");
        assert!(never.is_closed(), "it never sent a request");
        assert!(!asked.is_closed() && !busy.is_closed() && !newest.is_closed());
        let _newest_busy = newest.begin_request();
        let (_, last) = open.admit(3).expect("the idle one that asked makes room");
        assert!(asked.is_closed() && !busy.is_closed());
        let _last_busy = last.begin_request();
        assert!(
            open.admit(3).is_none(),
            "every connection has a request in flight"
        );
    }
}
