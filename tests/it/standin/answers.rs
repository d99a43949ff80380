//! What the stand-in answers a query with: the scripts of PartialResultSets that [`Queries`] names,
//! and the timing headers that [`Timing`] names; and what a Commit gets, as [`Commits`] says.

use std::pin::Pin;
use std::time::Duration;

use prost::Message;
use spanprof::client::headers::AFE_SERVER_TIMING_HEADER;
use spanprof::proto::google::rpc;
use spanprof::proto::google::spanner::v1 as pb;
use tokio_stream::Stream;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};

/// Messages a [`Queries::Resumable`] answer has.
pub const MESSAGES: u32 = 10;
/// Messages the first attempt of a [`Queries::Resumable`] query sends before its stream breaks.
pub const FAULT_AFTER: u32 = 5;
/// The `gfet4t7` time [`Timing::Measured`] reports, in ms.
pub const GFE_MS: u32 = 7;
/// The `afe` time [`Timing::Measured`] reports to requests that opted in, in ms.
pub const AFE_MS: u32 = 3;

/// A query's answer, as it streams.
pub type Messages = Pin<Box<dyn Stream<Item = Result<pb::PartialResultSet, Status>> + Send>>;

/// What ExecuteStreamingSql answers, every query alike.
#[derive(Debug, Clone, Copy)]
pub enum Queries {
    /// One value with no metadata, which a decoder refuses: for tests of the calls alone.
    Bare,
    /// A whole answer in one message: a column `n` of INT64, the value 1, and statistics saying
    /// one row was returned.
    OneRow,
    /// Never a message (a query still running).
    Stall,
    /// Refused before any response header, with this code and message.
    Refuse(Code, &'static str),
    /// [`MESSAGES`] one-row messages (the value `n` from 1), each with a resume token, the metadata
    /// on the first and the statistics on the last; a query's first attempt breaks after
    /// [`FAULT_AFTER`] of them (UNAVAILABLE, as a lost connection looks), and a resume goes on
    /// after the message its token names.
    Resumable,
    /// One-row messages without end, each with a resume token, as fast as the connection takes
    /// them.
    Endless,
    /// One message of a STRING value of this many bytes.
    Huge(usize),
    /// One message whose resume token has this many bytes, then UNAVAILABLE, so that a client which
    /// kept the token would send it back.
    LongToken(usize),
    /// Response headers, then UNAVAILABLE.
    Unavailable,
}

impl Queries {
    /// The answer to `request`: its messages, or the status that refuses it.
    pub fn answer(self, request: &pb::ExecuteSqlRequest) -> Result<Messages, Status> {
        let script = match self {
            Queries::Bare => vec![Ok(pb::PartialResultSet {
                values: vec![string("1")],
                ..Default::default()
            })],
            Queries::OneRow => vec![Ok(pb::PartialResultSet {
                stats: Some(stats(&[("rows_returned", "1")])),
                ..message(true, pb::TypeCode::Int64, "1")
            })],
            Queries::Stall => return Ok(Box::pin(tokio_stream::pending())),
            Queries::Refuse(code, text) => return Err(Status::new(code, text)),
            Queries::Resumable => resumable(&request.resume_token)?,
            Queries::Endless => {
                let rows = (0u64..).map(|n| {
                    Ok(pb::PartialResultSet {
                        resume_token: n.to_le_bytes().to_vec(),
                        ..message(n == 0, pb::TypeCode::Int64, &n.to_string())
                    })
                });
                return Ok(Box::pin(tokio_stream::iter(rows)));
            }
            Queries::Huge(bytes) => {
                vec![Ok(message(true, pb::TypeCode::String, &"x".repeat(bytes)))]
            }
            Queries::LongToken(bytes) => vec![
                Ok(pb::PartialResultSet {
                    resume_token: vec![7; bytes],
                    ..message(true, pb::TypeCode::Int64, "1")
                }),
                Err(Status::unavailable("the stand-in breaks the stream")),
            ],
            Queries::Unavailable => vec![Err(Status::unavailable(
                "the stand-in is always unavailable",
            ))],
        };
        Ok(Box::pin(tokio_stream::iter(script)))
    }
}

fn string(s: &str) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::StringValue(s.to_owned())),
    }
}

/// A message with one value of a one-column result (a column `n` of `code`), with the metadata
/// when `first`.
fn message(first: bool, code: pb::TypeCode, value: &str) -> pb::PartialResultSet {
    let column = pb::struct_type::Field {
        name: "n".into(),
        r#type: Some(pb::Type {
            code: code as i32,
            ..Default::default()
        }),
    };
    pb::PartialResultSet {
        metadata: first.then(|| pb::ResultSetMetadata {
            row_type: Some(pb::StructType {
                fields: vec![column],
            }),
            ..Default::default()
        }),
        values: vec![string(value)],
        ..Default::default()
    }
}

/// Query statistics of these fields, each a string.
fn stats(fields: &[(&str, &str)]) -> pb::ResultSetStats {
    pb::ResultSetStats {
        query_stats: Some(prost_types::Struct {
            fields: fields
                .iter()
                .map(|(name, value)| ((*name).to_owned(), string(value)))
                .collect(),
        }),
        ..Default::default()
    }
}

/// Message `n` (from 1) of a resumable answer.
fn resumable_message(n: u32) -> pb::PartialResultSet {
    let last = (n == MESSAGES).then(|| {
        stats(&[
            ("rows_returned", &MESSAGES.to_string()),
            ("elapsed_time", "1.25 msecs"),
        ])
    });
    pb::PartialResultSet {
        resume_token: format!("t{n}").into_bytes(),
        stats: last,
        ..message(n == 1, pb::TypeCode::Int64, &n.to_string())
    }
}

/// A resumable answer to a request carrying `token`: the first attempt's messages and its fault,
/// or the messages after the one the token names.
fn resumable(token: &[u8]) -> Result<Vec<Result<pb::PartialResultSet, Status>>, Status> {
    let after = resumed_after(token)?;
    let mut answer: Vec<_> = if after == 0 {
        let mut first: Vec<_> = (1..=FAULT_AFTER)
            .map(|n| Ok(resumable_message(n)))
            .collect();
        first.push(Err(Status::unavailable(
            "the stand-in's fault after 5 messages",
        )));
        first
    } else {
        ((after + 1)..=MESSAGES)
            .map(|n| Ok(resumable_message(n)))
            .collect()
    };
    if answer.is_empty() {
        answer.push(Ok(pb::PartialResultSet::default()));
    }
    Ok(answer)
}

/// The message a resume token says was the last one taken (0 for no token).
fn resumed_after(token: &[u8]) -> Result<u32, Status> {
    if token.is_empty() {
        return Ok(0);
    }
    std::str::from_utf8(token)
        .ok()
        .and_then(|t| t.strip_prefix('t'))
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= MESSAGES)
        .ok_or_else(|| Status::invalid_argument("not a resume token of this stand-in"))
}

/// The timing headers every streamed answer carries.
#[derive(Debug, Clone, Copy)]
pub enum Timing {
    /// None.
    None,
    /// `server-timing` with a `gfet4t7` entry of [`GFE_MS`] and, only to requests that opted in,
    /// an `afe` entry of [`AFE_MS`]; and the request id echoed.
    Measured,
    /// A `server-timing` that cannot be read and a request id echo that is not one.
    Malformed,
    /// This `server-timing`, with the request id echoed.
    Fixed(&'static str),
}

impl Timing {
    /// Writes the response headers to `asked` (the request's headers) into `headers`.
    pub fn write(self, asked: &MetadataMap, headers: &mut MetadataMap) {
        let header = |name: &str| {
            asked
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let echo = || header("x-goog-spanner-request-id").unwrap_or_default();
        let (timing, echo) = match self {
            Timing::None => return,
            Timing::Malformed => (
                "gfet4t7; dur=, afe;dur=-3, ;;;, afe; dur=NaN, gfet4t7;dur=1e999".to_owned(),
                "1.not-hex.-1..NaN.x y".to_owned(),
            ),
            Timing::Fixed(timing) => (timing.to_owned(), echo()),
            Timing::Measured => {
                let opted_in = header(AFE_SERVER_TIMING_HEADER).as_deref() == Some("true");
                let afe = if opted_in {
                    format!(", afe; dur={AFE_MS}")
                } else {
                    String::new()
                };
                (format!("gfet4t7; dur={GFE_MS}{afe}"), echo())
            }
        };
        if let Ok(value) = MetadataValue::try_from(timing) {
            headers.insert("server-timing", value);
        }
        if let Ok(value) = MetadataValue::try_from(echo) {
            headers.insert("x-goog-spanner-request-id", value);
        }
    }
}

/// The message of the ABORTED a [`Commits::AbortFirst`] commit gets.
pub const ABORT_MESSAGE: &str = "the stand-in aborts the first commit";
/// The seconds of the first commit timestamp (2026-01-01T00:00:00Z); the `n`-th commit that
/// succeeds is `n - 1` seconds later.
pub const COMMIT_SECONDS: i64 = 1_767_225_600;

/// How Commit answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commits {
    /// Every commit succeeds, with a commit timestamp.
    Ok,
    /// The first commit aborts (ABORTED asking for a retry after `delay_ms`, the RetryInfo where
    /// `retry_info` says); every later one succeeds.
    AbortFirst {
        /// Where the ABORTED carries its RetryInfo.
        retry_info: RetryIn,
        /// The retry delay it asks for, in ms.
        delay_ms: u64,
    },
    /// The first commit gets a multiplexed session's retry reply (not committed; commit again
    /// with the token [`RETRY_TOKEN`], sequence number [`RETRY_SEQ`]); every later one succeeds.
    RetryReplyFirst,
    /// The first commit's answer is lost (UNAVAILABLE, as when the connection breaks); every later
    /// one succeeds, as Spanner answers a Commit sent again for a transaction that committed.
    LoseFirstAnswer,
    /// Every commit's answer is lost (UNAVAILABLE).
    LoseEveryAnswer,
}

/// The message of a lost commit answer.
pub const LOST_MESSAGE: &str = "connection reset before the commit's answer";

/// The precommit token a [`Commits::RetryReplyFirst`] reply hands back.
pub const RETRY_TOKEN: &[u8] = b"commit-again";
/// Its sequence number.
pub const RETRY_SEQ: i32 = 7;

/// Where an ABORTED carries its google.rpc.RetryInfo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryIn {
    /// In the status details (`grpc-status-details-bin`: a google.rpc.Status holding it as an
    /// Any), as Cloud Spanner sends it.
    Details,
    /// Only in the binary trailer `google.rpc.retryinfo-bin`.
    Trailer,
    /// Nowhere: a bare ABORTED.
    Neither,
}

impl Commits {
    /// The answer to the `n`-th Commit the stand-in got (from 1).
    pub fn answer(self, n: u32) -> Result<pb::CommitResponse, Status> {
        match self {
            Commits::AbortFirst {
                retry_info,
                delay_ms,
            } if n == 1 => Err(aborted(retry_info, Duration::from_millis(delay_ms))),
            Commits::RetryReplyFirst if n == 1 => Ok(pb::CommitResponse {
                multiplexed_session_retry: Some(
                    pb::commit_response::MultiplexedSessionRetry::PrecommitToken(
                        pb::MultiplexedSessionPrecommitToken {
                            precommit_token: RETRY_TOKEN.to_vec(),
                            seq_num: RETRY_SEQ,
                        },
                    ),
                ),
                ..Default::default()
            }),
            Commits::LoseFirstAnswer if n == 1 => Err(Status::unavailable(LOST_MESSAGE)),
            Commits::LoseEveryAnswer => Err(Status::unavailable(LOST_MESSAGE)),
            Commits::Ok
            | Commits::AbortFirst { .. }
            | Commits::RetryReplyFirst
            | Commits::LoseFirstAnswer => {
                let aborted = u32::from(!matches!(self, Commits::Ok));
                Ok(pb::CommitResponse {
                    commit_timestamp: Some(prost_types::Timestamp {
                        seconds: COMMIT_SECONDS + i64::from(n - aborted) - 1,
                        nanos: 0,
                    }),
                    ..Default::default()
                })
            }
        }
    }
}

/// An ABORTED asking for a retry after `delay`, its RetryInfo where `place` says. Encoded here
/// from the generated types, not by the client's own helpers, so that a client reading them wrong
/// is not hidden by writing them wrong the same way.
fn aborted(place: RetryIn, delay: Duration) -> Status {
    let retry_info = rpc::RetryInfo {
        retry_delay: Some(prost_types::Duration {
            seconds: i64::try_from(delay.as_secs()).expect("a test's delay"),
            nanos: i32::try_from(delay.subsec_nanos()).expect("under a second"),
        }),
    }
    .encode_to_vec();
    match place {
        RetryIn::Details => {
            let details = rpc::Status {
                code: Code::Aborted as i32,
                message: ABORT_MESSAGE.to_owned(),
                details: vec![prost_types::Any {
                    type_url: "type.googleapis.com/google.rpc.RetryInfo".to_owned(),
                    value: retry_info,
                }],
            };
            Status::with_details(Code::Aborted, ABORT_MESSAGE, details.encode_to_vec().into())
        }
        RetryIn::Trailer => {
            let mut trailers = MetadataMap::new();
            let value = MetadataValue::from_bytes(&retry_info);
            trailers.insert_bin("google.rpc.retryinfo-bin", value);
            Status::with_metadata(Code::Aborted, ABORT_MESSAGE, trailers)
        }
        RetryIn::Neither => Status::aborted(ABORT_MESSAGE),
    }
}
