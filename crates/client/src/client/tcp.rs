//! A TCP connection to whichever resolved address answers first. The addresses are tried in the
//! order the resolver gave them; the next one starts beside those still trying when an attempt
//! has had [`ATTEMPT_DELAY`] without an answer, or at once when one fails; the first to connect
//! wins and the others are dropped (the sequential part of RFC 8305, "Happy Eyeballs v2", with its
//! recommended 250 ms). One at a time, an address that drops SYNs held its attempt for the
//! kernel's minutes of retries and no later address was ever tried. The whole connect
//! stays within the caller's timeout.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use tokio::net::TcpStream;

/// How long an attempt has alone before the next address is tried beside it.
pub const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// A TCP connection to the first of `addresses` to answer (no delay, as gRPC wants), or the
/// last failure when none does.
pub async fn connect_first(addresses: &[SocketAddr]) -> Result<TcpStream, String> {
    let stream = first_to_answer(addresses, ATTEMPT_DELAY, TcpStream::connect).await?;
    // Without it a small request can wait for Nagle; a failure here costs only speed.
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// What `connect` gives for the first address that answers, trying them as the module says.
async fn first_to_answer<T, F, Fut>(
    addresses: &[SocketAddr],
    delay: Duration,
    connect: F,
) -> Result<T, String>
where
    F: Fn(SocketAddr) -> Fut,
    Fut: Future<Output = io::Result<T>>,
{
    let attempt = |address: SocketAddr| {
        let connecting = connect(address);
        async move { (address, connecting.await) }
    };
    let mut waiting = addresses.iter().copied();
    let mut trying = FuturesUnordered::new();
    let mut last = "the name resolved to no address".to_owned();
    loop {
        if trying.is_empty() {
            match waiting.next() {
                Some(address) => trying.push(attempt(address)),
                None => return Err(last),
            }
        }
        match tokio::time::timeout(delay, trying.next()).await {
            Ok(Some((_, Ok(connected)))) => return Ok(connected),
            Ok(Some((address, Err(e)))) => {
                last = format!("{address}: {e}");
                if let Some(address) = waiting.next() {
                    trying.push(attempt(address));
                }
            }
            Ok(None) => {}
            Err(_) => {
                if let Some(address) = waiting.next() {
                    trying.push(attempt(address));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener whose accept queue is full and never read: the kernel drops the SYNs that
    /// follow, as a firewall that drops them would (the client retries for minutes).
    async fn dropping_syns() -> (tokio::net::TcpListener, Vec<TcpStream>, SocketAddr) {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket
            .bind("127.0.0.1:0".parse().expect("an address"))
            .expect("bound");
        let listener = socket.listen(1).expect("listening");
        let address = listener.local_addr().expect("its address");
        let mut held = Vec::new();
        // A backlog of 1 queues 2; the ones after wait for an answer that never comes.
        for _ in 0..2 {
            let queued = tokio::time::timeout(Duration::from_secs(2), TcpStream::connect(address));
            held.push(queued.await.expect("queued").expect("connected"));
        }
        let dropped = tokio::time::timeout(Duration::from_millis(300), TcpStream::connect(address));
        assert!(dropped.await.is_err(), "the next SYN goes unanswered");
        (listener, held, address)
    }

    #[tokio::test]
    async fn an_address_that_drops_syns_does_not_hide_the_next_one() {
        let (_full, _held, silent) = dropping_syns().await;
        let good = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bound");
        let good_address = good.local_addr().expect("its address");
        let connected = tokio::time::timeout(
            Duration::from_secs(5),
            connect_first(&[silent, good_address]),
        )
        .await
        .expect("connected before the caller's limit")
        .expect("connected");
        assert_eq!(connected.peer_addr().expect("a peer"), good_address);
    }

    #[tokio::test]
    async fn a_refused_address_moves_on_at_once_and_the_last_failure_is_named() {
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bound");
            listener.local_addr().expect("its address")
        };
        // A day of delay: only a failure can start the next attempt.
        let day = Duration::from_secs(86_400);
        let tried = std::sync::Mutex::new(Vec::new());
        let error = first_to_answer(&[closed, closed], day, |a| {
            tried.lock().expect("unpoisoned").push(a);
            TcpStream::connect(a)
        })
        .await
        .expect_err("both refused");
        assert_eq!(tried.lock().expect("unpoisoned").len(), 2);
        assert!(error.starts_with(&closed.to_string()), "{error}");
        let none = first_to_answer(&[], day, TcpStream::connect)
            .await
            .expect_err("no address");
        assert!(none.contains("no address"), "{none}");
    }

    #[tokio::test]
    async fn a_slow_first_address_still_wins_if_it_answers_first() {
        let (a, b): (SocketAddr, SocketAddr) = (
            "192.0.2.1:1".parse().expect("an address"),
            "192.0.2.2:1".parse().expect("an address"),
        );
        // The first answers after 200 ms, the second (started at 10 ms) after 1 s.
        let answer = |address: SocketAddr| async move {
            let after = if address == a { 200 } else { 1_000 };
            tokio::time::sleep(Duration::from_millis(after)).await;
            Ok::<_, io::Error>(address)
        };
        let won = first_to_answer(&[a, b], Duration::from_millis(10), answer).await;
        assert_eq!(won, Ok(a));
    }
}
