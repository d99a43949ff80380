//! The client against a hostile server: the stand-in Spanner service (`standin.rs`)
//! that streams without end faster than the client reads, sends a message past the client's size
//! limit, a resume token of 100 MB, or answers every query with UNAVAILABLE.

use std::time::{Duration, Instant};

use spanprof::client::iteration::{Decoding, run_iteration};
use spanprof::client::{
    IterationError, MAX_MESSAGE_BYTES, ResumePolicy, Timeouts, connect_plaintext,
};
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::DecoderKind;

use crate::standin::{Behaviour, Queries, StandIn};

/// Starts a stand-in that answers every query as `queries` say.
async fn start(queries: Queries) -> StandIn {
    StandIn::start(Behaviour::answering(queries)).await
}

/// One iteration against `host`, limited to `iteration`, each message's rows handed to a callback
/// that takes `per_message` (a client slower than its server); in a task of its own, so that a
/// test can stop waiting for an iteration that never yields.
fn iterate(
    host: &str,
    iteration: Duration,
    per_message: Duration,
) -> std::sync::mpsc::Receiver<Result<u64, IterationError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let host = host.to_owned();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let _ = tx.send(runtime.block_on(async move {
            let channel = connect_plaintext(&host).await.expect("connects");
            let request = pb::ExecuteSqlRequest {
                session: "projects/p/instances/i/databases/d/sessions/s1".into(),
                sql: "SELECT hostility".into(),
                ..Default::default()
            };
            let timeouts = Timeouts {
                iteration,
                ..Timeouts::DEFAULT
            };
            let mut on_rows = |_: spanprof::wire::RowsView<'_>, _: usize| {
                if !per_message.is_zero() {
                    std::thread::sleep(per_message);
                }
            };
            let timing = run_iteration(
                channel,
                &request,
                Default::default(),
                ResumePolicy::default(),
                timeouts,
                Decoding::new(DecoderKind::Fast, &mut on_rows),
            )
            .await?;
            Ok(timing.rows)
        }));
    });
    rx
}

/// Waits at most `within` for `iteration` to end; its error.
async fn error_within(
    iteration: std::sync::mpsc::Receiver<Result<u64, IterationError>>,
    within: Duration,
) -> IterationError {
    let ended = tokio::task::block_in_place(|| iteration.recv_timeout(within));
    ended
        .unwrap_or_else(|_| panic!("the iteration did not end within {within:?}"))
        .expect_err("the hostile server's answer is refused")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_iteration_limit_holds_against_a_server_that_outruns_the_client() {
    let standin = start(Queries::Endless).await;
    let started = Instant::now();
    let iteration = iterate(
        standin.host(),
        Duration::from_secs(2),
        Duration::from_millis(2),
    );
    let error = error_within(iteration, Duration::from_secs(10)).await;
    let took = started.elapsed();
    assert!(matches!(error, IterationError::Deadline { .. }), "{error}");
    assert!(
        error.to_string().contains("did not finish within 2 s"),
        "{error}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_past_the_size_limit_is_refused_before_it_is_read() {
    let standin = start(Queries::Huge(MAX_MESSAGE_BYTES + (1 << 20))).await;
    let iteration = iterate(standin.host(), Duration::from_secs(60), Duration::ZERO);
    let error = error_within(iteration, Duration::from_secs(30)).await;
    assert!(matches!(error, IterationError::TooLarge(_)), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("larger than the 128 MiB one message may be"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_huge_resume_token_is_refused_not_sent_back() {
    let standin = start(Queries::LongToken(100_000_000)).await;
    let iteration = iterate(standin.host(), Duration::from_secs(60), Duration::ZERO);
    let error = error_within(iteration, Duration::from_secs(30)).await;
    assert!(matches!(error, IterationError::TooLarge(_)), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("message 1 carries a resume token of 100000000 bytes, more than the 64 KiB"),
        "{text}"
    );
    assert_eq!(
        standin.count("ExecuteStreamingSql"),
        1,
        "no resume was asked"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn resumes_against_an_always_unavailable_server_back_off() {
    let standin = start(Queries::Unavailable).await;
    let window = Duration::from_secs(3);
    let iteration = iterate(standin.host(), window, Duration::ZERO);
    let error = error_within(iteration, Duration::from_secs(10)).await;
    assert!(matches!(error, IterationError::Deadline { .. }), "{error}");
    // Waits of 5 ms doubling to 1 s, each between half and all of it: 9 to 13 requests in 3 s;
    // without a back-off that backs off, hundreds.
    let asked = standin.count("ExecuteStreamingSql");
    assert!((5..=16).contains(&asked), "{asked} requests in {window:?}");
}

/// The client's HTTP/2 layer refuses response headers past its limit,
/// and tonic says "h2 protocol error"; the iteration says what it was. Past 4 times the limit
/// the connection is closed (certain); past the limit only, the stream is reset (as for a
/// malformed block, which the words name too).
#[tokio::test(flavor = "multi_thread")]
async fn response_headers_past_the_limit_are_named_not_called_a_protocol_error() {
    for (bytes, said) in [
        (
            80 << 10,
            "the server's response headers were larger than the 16 KiB this client takes (more than 64 KiB",
        ),
        (
            20 << 10,
            "the server's response headers were larger than the 16 KiB this client takes, or malformed",
        ),
    ] {
        let standin = StandIn::start(Behaviour {
            padding: Some(bytes),
            ..Behaviour::answering(Queries::OneRow)
        })
        .await;
        let iteration = iterate(standin.host(), Duration::from_secs(30), Duration::ZERO);
        let error = error_within(iteration, Duration::from_secs(20)).await;
        let text = error.to_string();
        assert!(text.contains(said), "{bytes}: {text}");
        assert!(!text.contains("h2 protocol error"), "{text}");
        assert_eq!(standin.count("ExecuteStreamingSql"), 1, "not resumed");
    }
}
