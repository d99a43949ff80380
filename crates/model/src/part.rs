//! The parts of an iteration's time: one typed vocabulary, with each part's key, label, colour
//! and one-line description in one table ([`Part::info`]). A leaf: it names nothing else in the
//! crate, so the record, the analysis, the exports, the command line and the window all read
//! their words from here.
//!
//! The parts of an iteration are disjoint stretches of the client's time that add up to its total
//! (computed in `report::accounting`). A query's, in the order they are drawn:
//!
//! - a cold start's steps, where the iteration made them: `dns`, `tcp`, `tls`, `http2`, `token`,
//!   `session`;
//! - `partition_query`: a partitioned read's PartitionQuery call;
//! - the client's wait for the transport, split in two: `server` (while the server was still
//!   working on the query) and `network` (the rest: latency and transfer);
//! - `backoff`: waiting before re-sending a broken stream (and, in a read-write transaction,
//!   before an aborted attempt's retry);
//! - `wire_decode` and `row_decode`: the CPU time its thread got while decoding;
//! - `client_work`: the CPU time of the client's own work between its waits and decodes;
//! - `descheduled`: the time its timed work spent off the CPU (the scheduler's, not its own);
//! - `untimed`: what no measurement covers (small; a report says when it is not).
//!
//! A read-write transaction (`profile --read-write`) adds its own around a query's: `aborted` (the
//! attempts the server aborted, whole), `backoff` before each retry, and in the attempt that ended
//! it `begin`, its statements' query parts summed, `batch_dml`, `think` (its `SLEEP` steps) and
//! `commit`. Where the server says how long a statement waited for locks (Cloud Spanner's
//! `locking_delay`, the local instance's `lock_wait_time`), that much of `server` is `lock_wait`.
//!
//! A client program profiled at the local instance (`spanprof client`) has parts of its own, as
//! the server saw it: `startup`, `first_byte`, `streaming`, `blocked` (the server waiting on the
//! program to read) and `tail`, and `untimed`.
//!
//! Where the server's work ran beside the client's decode, that time is an overlap, not a part:
//! it is reported beside the parts and never added to them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A step of a cold start, in the order it runs: the one type the client times a cold start by,
/// its parts are made from ([`Part::Cold`]), its timeline lane and its causes name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ColdStep {
    /// Resolving the host name.
    Dns,
    /// The TCP connection.
    Tcp,
    /// The TLS handshake (nothing in plaintext).
    Tls,
    /// The HTTP/2 handshake, to the channel's first ready.
    Http2,
    /// A new token source and its first token (nothing without authentication).
    Token,
    /// CreateSession.
    Session,
}

impl ColdStep {
    /// Every step, in the order a cold start makes them.
    pub const ALL: [ColdStep; 6] = [
        ColdStep::Dns,
        ColdStep::Tcp,
        ColdStep::Tls,
        ColdStep::Http2,
        ColdStep::Token,
        ColdStep::Session,
    ];

    /// Its place in [`ColdStep::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Its key, the same in reports, timelines, errors and on the command line: `dns`, `tcp`,
    /// `tls`, `http2`, `token`, `session`.
    pub const fn key(self) -> &'static str {
        Part::Cold(self).key()
    }

    /// The step a key names.
    pub fn from_key(key: &str) -> Option<ColdStep> {
        ColdStep::ALL.into_iter().find(|s| s.key() == key.trim())
    }

    /// What the step does, in words for an error.
    pub const fn describe(self) -> &'static str {
        match self {
            ColdStep::Dns => "resolving the host name (dns)",
            ColdStep::Tcp => "the TCP connection (tcp)",
            ColdStep::Tls => "the TLS handshake (tls)",
            ColdStep::Http2 => "the HTTP/2 handshake (http2)",
            ColdStep::Token => "fetching an access token (token)",
            ColdStep::Session => "CreateSession (session)",
        }
    }
}

impl Serialize for ColdStep {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.key())
    }
}

impl<'de> Deserialize<'de> for ColdStep {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let key = String::deserialize(deserializer)?;
        ColdStep::from_key(&key).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{:?} is not a cold start's step (dns, tcp, tls, http2, token, session)",
                crate::text::excerpt(&key, 40)
            ))
        })
    }
}

/// One part of an iteration's time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    /// One of a cold start's steps.
    Cold(ColdStep),
    /// A partitioned read's PartitionQuery call.
    PartitionQuery,
    /// A read-write transaction's attempts that aborted, whole (each retried after its back-off).
    Aborted,
    /// A read-write transaction's BeginTransaction call (an inline begin is in its first
    /// statement's parts).
    Begin,
    /// Of the server's work, the time it says the statement waited for locks (Cloud Spanner's
    /// `locking_delay`, the local instance's `lock_wait_time`): carved out of `server`.
    LockWait,
    /// Waiting while the server worked on the query.
    Server,
    /// Waiting for what the server had sent: latency and transfer.
    Network,
    /// Waiting before re-sending a broken stream.
    Backoff,
    /// Wire decode's CPU time.
    WireDecode,
    /// Row decode's CPU time.
    RowDecode,
    /// The CPU time of the client's own work between its waits and decodes.
    ClientWork,
    /// The client's timed work off the CPU.
    Descheduled,
    /// A read-write transaction's ExecuteBatchDml calls.
    BatchDml,
    /// A read-write transaction held open by its script's `SLEEP` steps.
    Think,
    /// A read-write transaction's Commit call (and the commits a multiplexed session's retry
    /// reply asked for).
    Commit,
    /// What no measurement covers.
    Untimed,
    /// A client program's start to its first query request (at the server).
    Startup,
    /// A client program's first query request to its first message sent (at the server).
    FirstByte,
    /// A client program's first to last message, less the time the server waited on it.
    Streaming,
    /// The server waiting, a message ready, on a client program that was not reading.
    Blocked,
    /// A client program's last message sent to its exit.
    Tail,
}

/// A colour as red, green and blue bytes (the window converts it; exports name it in hex).
pub type Rgb = [u8; 3];

/// What is said of a part, in one place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartInfo {
    /// Its key in JSON (`parts.<key>`) and on the command line (`--phase <key>`).
    pub key: &'static str,
    /// Its column in a run's CSV: `<key>_ms`.
    pub column: &'static str,
    /// Its name for people.
    pub label: &'static str,
    /// Its colour in every chart.
    pub colour: Rgb,
    /// What it is, in one line.
    pub description: &'static str,
}

const fn info(
    key: &'static str,
    column: &'static str,
    label: &'static str,
    colour: Rgb,
    description: &'static str,
) -> PartInfo {
    PartInfo {
        key,
        column,
        label,
        colour,
        description,
    }
}

/// The colours of runs drawn side by side (Compare's bars, box plots and verdicts), in turn: none
/// a part's (each at least 10 apart in CIE76 ΔE from every part of a query, under every vision the
/// test simulates) and each at least 25 from every other, for readers with a colour-vision
/// deficiency too.
pub const RUN_COLOURS: [[u8; 3]; 6] = [
    [0xaa, 0x66, 0x00],
    [0xff, 0x11, 0x66],
    [0x22, 0xff, 0x11],
    [0xaa, 0xee, 0xbb],
    [0xbb, 0x99, 0xcc],
    [0xdd, 0x22, 0xee],
];

/// The colours of a load run's steps, from the lightest load to the heaviest: blue through
/// orange to red, at 0, 0.5 and 1 of the way ([`level_colour`]). The window's percentile lines
/// and the HTML page's take them from here.
pub const LEVEL_RAMP: [Rgb; 3] = [[33, 102, 172], [230, 140, 30], [178, 24, 43]];

/// The colour `t` of the way (0 to 1, clamped; not a number is 0) from the lightest load's to the
/// heaviest's along [`LEVEL_RAMP`].
pub fn level_colour(t: f64) -> Rgb {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let (a, b, f) = if t <= 0.5 {
        (LEVEL_RAMP[0], LEVEL_RAMP[1], t * 2.0)
    } else {
        (LEVEL_RAMP[1], LEVEL_RAMP[2], (t - 0.5) * 2.0)
    };
    [0, 1, 2].map(|k| {
        let (a, b) = (f64::from(a[k]), f64::from(b[k]));
        (a + (b - a) * f).round() as u8
    })
}

/// Every part's words and colour, in [`Part::ALL`] order. The colours of each set of parts drawn
/// together (a query's, a cold start's steps, a client program's) stay apart for readers with a
/// colour-vision deficiency: at least 20 apart in CIE76 ΔE under deuteranopia, protanopia and
/// tritanopia as Machado, Oliveira and Fernandes's model simulates them (the test below), with
/// greys for what is not the client's own work.
const INFO: [PartInfo; 26] = [
    info(
        "dns",
        "dns_ms",
        "dns",
        [0xba, 0x00, 0xfb],
        "a cold start resolving the host name",
    ),
    info(
        "tcp",
        "tcp_ms",
        "tcp",
        [0x27, 0x6b, 0x45],
        "a cold start's TCP connection",
    ),
    info(
        "tls",
        "tls_ms",
        "tls",
        [0x91, 0x89, 0x0b],
        "a cold start's TLS handshake (0 in plaintext)",
    ),
    info(
        "http2",
        "http2_ms",
        "http/2",
        [0x00, 0xfc, 0xb7],
        "a cold start's HTTP/2 handshake, to the channel's first ready",
    ),
    info(
        "token",
        "token_ms",
        "token",
        [0xc5, 0xf8, 0x13],
        "a cold start's new token source and first token (0 without authentication)",
    ),
    info(
        "session",
        "session_ms",
        "session",
        [0xf8, 0x39, 0xc2],
        "a cold start's CreateSession",
    ),
    info(
        "partition_query",
        "partition_query_ms",
        "partition query",
        [0xa2, 0x3e, 0x95],
        "a partitioned read's PartitionQuery call, before its partitions stream",
    ),
    info(
        "aborted",
        "aborted_ms",
        "aborted attempts",
        [0x4a, 0x12, 0x52],
        "a read-write transaction's attempts that the server aborted, whole, before the one that ended it",
    ),
    info(
        "begin",
        "begin_ms",
        "begin",
        [0x24, 0x27, 0x9e],
        "a read-write transaction's BeginTransaction call (an inline begin rides on its first statement)",
    ),
    info(
        "lock_wait",
        "lock_wait_ms",
        "lock wait",
        [0x0f, 0x34, 0x00],
        "of the server's work, the time it says the statement waited for locks",
    ),
    info(
        "server",
        "server_ms",
        "server",
        [0x78, 0x7a, 0xff],
        "waiting while the server was still working on the query",
    ),
    info(
        "network",
        "network_ms",
        "network",
        [0x35, 0xd0, 0xfa],
        "waiting for what the server had already sent: latency and transfer",
    ),
    info(
        "backoff",
        "backoff_ms",
        "back-off",
        [0x83, 0x09, 0xff],
        "waiting before a retry: re-sending a broken stream, or an aborted transaction's next attempt",
    ),
    info(
        "wire_decode",
        "wire_decode_ms",
        "wire decode",
        [0xf0, 0xc1, 0x8e],
        "CPU time turning bytes into messages (the fast decoder: into their framing)",
    ),
    info(
        "row_decode",
        "row_decode_ms",
        "row decode",
        [0xfc, 0x8a, 0x1f],
        "CPU time merging chunks and turning values into typed rows",
    ),
    info(
        "client_work",
        "client_work_ms",
        "client work",
        [0x06, 0x70, 0x2d],
        "CPU time of the client's own work between its waits and decodes (the rows' callback, bookkeeping)",
    ),
    info(
        "descheduled",
        "descheduled_ms",
        "descheduled",
        [0x99, 0x99, 0x99],
        "the client's timed work off the CPU: the scheduler's time, not the client's",
    ),
    info(
        "batch_dml",
        "batch_dml_ms",
        "batch DML",
        [0x75, 0x5a, 0x5c],
        "a read-write transaction's ExecuteBatchDml calls, whole",
    ),
    info(
        "think",
        "think_ms",
        "think",
        [0xab, 0xfc, 0x67],
        "a read-write transaction held open by its script's SLEEP steps",
    ),
    info(
        "commit",
        "commit_ms",
        "commit",
        [0x18, 0xae, 0x51],
        "a read-write transaction's Commit call, with any Commit sent again (a multiplexed session's retry reply, or an answer lost and asked for again)",
    ),
    info(
        "untimed",
        "untimed_ms",
        "untimed",
        [0xe7, 0xe7, 0xe7],
        "what no measurement covers",
    ),
    info(
        "startup",
        "startup_ms",
        "start-up",
        [0xff, 0xb0, 0x25],
        "the program's start to its first query request reaching the server",
    ),
    info(
        "first_byte",
        "first_byte_ms",
        "to first byte",
        [0x6a, 0x23, 0xff],
        "the first query request to the server's transport taking the first message",
    ),
    info(
        "streaming",
        "streaming_ms",
        "streaming",
        [0x2c, 0xb5, 0xff],
        "the first message taken to the last, less the time the server waited on the program",
    ),
    info(
        "blocked",
        "blocked_ms",
        "blocked",
        [0xb3, 0x1e, 0x70],
        "the server waiting, a message ready, on a program that was not reading (its decode)",
    ),
    info(
        "tail",
        "tail_ms",
        "to exit",
        [0x6a, 0x60, 0x00],
        "the last message taken to the program's exit",
    ),
];

impl Part {
    /// Every part, in the order reports list and charts stack them.
    pub const ALL: [Part; 26] = [
        Part::Cold(ColdStep::Dns),
        Part::Cold(ColdStep::Tcp),
        Part::Cold(ColdStep::Tls),
        Part::Cold(ColdStep::Http2),
        Part::Cold(ColdStep::Token),
        Part::Cold(ColdStep::Session),
        Part::PartitionQuery,
        Part::Aborted,
        Part::Begin,
        Part::LockWait,
        Part::Server,
        Part::Network,
        Part::Backoff,
        Part::WireDecode,
        Part::RowDecode,
        Part::ClientWork,
        Part::Descheduled,
        Part::BatchDml,
        Part::Think,
        Part::Commit,
        Part::Untimed,
        Part::Startup,
        Part::FirstByte,
        Part::Streaming,
        Part::Blocked,
        Part::Tail,
    ];

    /// A cold start's steps, in the order they are made.
    pub const COLD_START: [Part; 6] = [
        Part::Cold(ColdStep::Dns),
        Part::Cold(ColdStep::Tcp),
        Part::Cold(ColdStep::Tls),
        Part::Cold(ColdStep::Http2),
        Part::Cold(ColdStep::Token),
        Part::Cold(ColdStep::Session),
    ];

    /// A query's parts after any cold start, in order.
    pub const QUERY: [Part; 9] = [
        Part::PartitionQuery,
        Part::Server,
        Part::Network,
        Part::Backoff,
        Part::WireDecode,
        Part::RowDecode,
        Part::ClientWork,
        Part::Descheduled,
        Part::Untimed,
    ];

    /// A read-write transaction's parts, in order: its aborted attempts and back-offs, then the
    /// attempt that ended it: begin, its statements' parts (a query's, summed), batch DML, think
    /// time and commit.
    pub const TRANSACTION: [Part; 14] = [
        Part::Aborted,
        Part::Begin,
        Part::LockWait,
        Part::Server,
        Part::Network,
        Part::Backoff,
        Part::WireDecode,
        Part::RowDecode,
        Part::ClientWork,
        Part::Descheduled,
        Part::BatchDml,
        Part::Think,
        Part::Commit,
        Part::Untimed,
    ];

    /// A client program's parts as the server saw them (`spanprof client`), in order.
    pub const SUBJECT: [Part; 6] = [
        Part::Startup,
        Part::FirstByte,
        Part::Streaming,
        Part::Blocked,
        Part::Tail,
        Part::Untimed,
    ];

    /// Its place in [`Part::ALL`].
    pub const fn index(self) -> usize {
        match self {
            Part::Cold(step) => step.index(),
            Part::PartitionQuery => 6,
            Part::Aborted => 7,
            Part::Begin => 8,
            Part::LockWait => 9,
            Part::Server => 10,
            Part::Network => 11,
            Part::Backoff => 12,
            Part::WireDecode => 13,
            Part::RowDecode => 14,
            Part::ClientWork => 15,
            Part::Descheduled => 16,
            Part::BatchDml => 17,
            Part::Think => 18,
            Part::Commit => 19,
            Part::Untimed => 20,
            Part::Startup => 21,
            Part::FirstByte => 22,
            Part::Streaming => 23,
            Part::Blocked => 24,
            Part::Tail => 25,
        }
    }

    /// Its words and colour.
    pub const fn info(self) -> &'static PartInfo {
        &INFO[self.index()]
    }

    /// Its key in JSON and on the command line (`wire_decode`).
    pub const fn key(self) -> &'static str {
        self.info().key
    }

    /// Its column in a run's CSV (`wire_decode_ms`).
    pub const fn column(self) -> &'static str {
        self.info().column
    }

    /// Its name for people (`wire decode`).
    pub const fn label(self) -> &'static str {
        self.info().label
    }

    /// Its colour.
    pub const fn colour(self) -> Rgb {
        self.info().colour
    }

    /// What it is, in one line.
    pub const fn description(self) -> &'static str {
        self.info().description
    }

    /// The part a key names (`wire_decode`, also spelled `wire-decode`).
    pub fn from_key(key: &str) -> Option<Part> {
        let key = key.trim().replace('-', "_");
        Part::ALL.into_iter().find(|p| p.key() == key)
    }

    /// Whether it is one of a cold start's steps.
    pub fn is_cold_start(self) -> bool {
        matches!(self, Part::Cold(_))
    }

    /// Whether it is the client's CPU time at work (decode or its own work): what a faster client
    /// would shorten.
    pub fn is_client_cpu(self) -> bool {
        matches!(self, Part::WireDecode | Part::RowDecode | Part::ClientWork)
    }
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.key())
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let key = String::deserialize(deserializer)?;
        Part::from_key(&key).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{:?} is not a part of an iteration's time",
                crate::text::excerpt(&key, 40)
            ))
        })
    }
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// What statistics of an iteration are taken over: its total, or one of its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Measure {
    /// The whole iteration.
    Total,
    /// One part of it.
    Part(Part),
}

impl Measure {
    /// Its key on the command line and in JSON: `total`, or the part's.
    pub fn key(self) -> &'static str {
        match self {
            Measure::Total => "total",
            Measure::Part(part) => part.key(),
        }
    }

    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Measure::Total => "total",
            Measure::Part(part) => part.label(),
        }
    }

    /// The measure `text` names (`total`, or a part's key, `-` or `_` alike); an error that lists
    /// them, and says where a name older reports used went.
    pub fn parse(text: &str) -> Result<Measure, String> {
        if text.trim() == "total" {
            return Ok(Measure::Total);
        }
        if let Some(part) = Part::from_key(text) {
            return Ok(Measure::Part(part));
        }
        let moved = match text.trim() {
            "other" => " (\"other\" is now client_work, descheduled and untimed)",
            "ttfb" => " (the time to first byte is a figure beside the parts, not a part)",
            _ => "",
        };
        let keys: Vec<&str> = Part::ALL.iter().map(|p| p.key()).collect();
        Err(format!(
            "{text:?} is not total or a part{moved}: total, {}",
            keys.join(", ")
        ))
    }
}

impl std::fmt::Display for Measure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// How the client's wait was split between `server` and `network`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// From the server's own account of its work: its elapsed time less the time it reported
    /// waiting for the client to read (the local instance).
    Measured,
    /// From the server's elapsed time alone (Cloud Spanner, the emulator), which may include time
    /// it waited on the client: an estimate, the largest share the server can have had.
    Estimated,
    /// Not split: no server time came back (the query mode returns none), so the whole wait is
    /// `network`.
    None,
}

impl Split {
    /// Its name in JSON and CSV (`measured`, `estimated`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Measured => "measured",
            Split::Estimated => "estimated",
            Split::None => "none",
        }
    }

    /// What it means, in words for a table's footnote.
    pub fn note(self) -> &'static str {
        match self {
            Split::Measured => {
                "server and network: split by the server's own account of its work (its elapsed time less its wait on the client)"
            }
            Split::Estimated => {
                "server and network: an estimate from the server's elapsed time, which may include time it waited on the client"
            }
            Split::None => {
                "the wait is not split: no server time came back, so all of it is network"
            }
        }
    }
}

#[cfg(test)]
#[path = "part/tests.rs"]
mod tests;
