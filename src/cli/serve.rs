//! `spanprof serve`: run the built-in local instance until Ctrl-C, with its knobs changeable from stdin.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use std::ops::{RangeFrom, RangeInclusive};

use clap::value_parser;

use crate::server::knobs::{MAX_MESSAGE_BYTES, MIN_MESSAGE_BYTES};
use crate::server::queue::MAX_QUERY_THREADS;
use crate::server::{
    ConnectionLimits, DEFAULT_SEED23_ROWS, KnobSettings, Knobs, LocalInstance, ServerConfig, Shape,
};

/// Arguments of `spanprof serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Loopback port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Rows in the Seed23 table.
    #[arg(long, default_value_t = DEFAULT_SEED23_ROWS)]
    pub rows: u64,
    /// Largest PartialResultSet to send, in bytes (256 to 64 MiB); values are split to fit.
    #[arg(long, default_value_t = 1 << 20, value_parser = value_parser!(u64).range(MESSAGE_BYTES))]
    pub max_message_bytes: u64,
    /// Fail every K-th message with UNAVAILABLE, once per resume point (0: never).
    #[arg(long, default_value_t = 0)]
    pub fail_every: u64,
    /// Delay before the first message of each response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub first_byte_delay_ms: u64,
    /// Delay before every message, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub message_delay_ms: u64,
    /// Cap on the sending rate, in bytes per second (0: none).
    #[arg(long = "bandwidth", default_value_t = 0)]
    pub bandwidth_bytes_per_s: u64,
    /// Every N-th streaming query stalls before one of its messages (0: none).
    #[arg(long, default_value_t = 0)]
    pub stall_every: u64,
    /// How long a stalled query waits, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub stall_ms: u64,
    /// The message a stalled query waits before, from 1.
    #[arg(long, default_value_t = 1, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub stall_at_message: u64,
    /// Queries running at once (each on a thread); more are refused with RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = DEFAULTS.max_concurrent_queries, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub max_concurrent_queries: u64,
    /// Largest unary ExecuteSql answer, in bytes; larger ones fail as production's do.
    #[arg(long, default_value_t = DEFAULTS.max_unary_result_bytes, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub max_unary_result_bytes: u64,
    /// Bytes of a stream's messages that may wait for a client that does not read; its query
    /// pauses there (and frees its concurrency slot).
    #[arg(long, default_value_t = DEFAULTS.max_stream_buffer_bytes, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub max_stream_buffer_bytes: u64,
    /// Largest string or blob a query may make or read, in bytes.
    #[arg(long, default_value_t = DEFAULTS.max_value_bytes, value_parser = value_parser!(u64).range(VALUE_BYTES))]
    pub max_value_bytes: u64,
    /// Longest SQL text, in bytes.
    #[arg(long, default_value_t = DEFAULTS.max_sql_bytes, value_parser = value_parser!(u64).range(SQL_BYTES))]
    pub max_sql_bytes: u64,
    /// Faulted streams held for their resume at once.
    #[arg(long, default_value_t = DEFAULTS.max_parked_streams)]
    pub max_parked_streams: u64,
    /// How long a faulted stream is held for its resume, in milliseconds.
    #[arg(long, default_value_t = DEFAULTS.park_timeout_ms)]
    pub park_timeout_ms: u64,
    /// Sessions open at once; past it one whose connections closed, or one of the connection that
    /// created the most, makes room; else RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = DEFAULTS.max_sessions, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub max_sessions: u64,
    /// A session unused this long is deleted, in milliseconds (production: one hour).
    #[arg(long, default_value_t = DEFAULTS.session_idle_timeout_ms, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub session_idle_timeout_ms: u64,
    /// Longest database or session name, in bytes.
    #[arg(long, default_value_t = DEFAULTS.max_name_bytes, value_parser = value_parser!(u64).range(NAME_BYTES))]
    pub max_name_bytes: u64,
    /// Bytes of request bodies still arriving, server-wide; past it, bodies silent for a second
    /// make room, else the request that would pass it is refused with RESOURCE_EXHAUSTED.
    #[arg(long, default_value_t = DEFAULTS.max_pending_request_bytes, value_parser = value_parser!(u64).range(PENDING_REQUEST_BYTES))]
    pub max_pending_request_bytes: u64,
    /// How long a request may take to arrive whole, in milliseconds; past it, DEADLINE_EXCEEDED.
    #[arg(long, default_value_t = DEFAULTS.request_timeout_ms, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub request_timeout_ms: u64,
    /// Connections open at once; past it an idle one makes room (one that never asked first), and
    /// only when every one has a request in flight is the new one closed as it is accepted.
    #[arg(long, default_value_t = ConnectionLimits::DEFAULT.max_connections, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub max_connections: u64,
    /// A connection that sends nothing this long is closed, in milliseconds (the server pings
    /// every 20 s, so a live client always answers within the default).
    #[arg(long, default_value_t = ConnectionLimits::DEFAULT.idle_timeout_ms, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub idle_timeout_ms: u64,
    /// Streams whose query may wait on a client that reads none of it (server-wide; a client that
    /// granted window within 1 s is reading); past it, the connection whose unread streams hold
    /// the most bytes is closed.
    #[arg(long, default_value_t = ConnectionLimits::DEFAULT.max_unread_streams, value_parser = value_parser!(u64).range(AT_LEAST_ONE))]
    pub max_unread_streams: u64,
    /// How answers are cut into messages: `production` (stats last, a resume token on every
    /// message), `emulator` (stats first, no tokens, `""`/`[]` continuations) or `edge` (every
    /// legal shape). Faults apply on top.
    #[arg(long, default_value_t = Shape::Production, value_parser = parse_shape)]
    pub shape: Shape,
    /// The queue model: query threads, service time, freezes.
    #[command(flatten)]
    pub queue: QueueArgs,
    /// Every N-th new read-write transaction aborts at its commit with ABORTED and RetryInfo; a
    /// retry of an aborted one is not new (0: none).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub abort_every: u64,
    /// The retry delay those aborts ask for in their RetryInfo (`20ms`, `1s`; whole milliseconds).
    #[arg(long, value_name = "DUR", default_value = "10ms", value_parser = parse_millis)]
    pub abort_retry_delay: u64,
    /// The retry delay an abort by the lock table asks for (a transaction wounded by an older
    /// one, a lock wait too long, a lock-free read written since).
    #[arg(long, value_name = "DUR", default_value = "1ms", value_parser = parse_millis)]
    pub conflict_retry_delay: u64,
    /// Every N-th applied commit of a read-write transaction loses its answer: applied, yet the
    /// client gets UNAVAILABLE, as when the connection breaks at that moment; the same Commit sent
    /// again gets the commit timestamp (0: none).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub lose_commit_answer_every: u64,
    /// The interval of SPANNER_SYS's `_MINUTE` lock and transaction statistics (`_10MINUTE` and
    /// `_HOUR` are 10 and 60 of it): production's is a minute, the default; a shorter one (at
    /// least 1s) is a knob for tests and teaching, so that an interval closes without waiting
    /// a minute.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = parse_stats_interval)]
    pub stats_interval: std::time::Duration,
}

/// A statistics interval (`--stats-interval 2s`): at least a second (the local instance's floor),
/// at most a day, in whole milliseconds.
pub fn parse_stats_interval(text: &str) -> Result<std::time::Duration, String> {
    let ms = parse_millis(text)?;
    if ms < 1000 {
        return Err("a statistics interval is from 1s to a day".into());
    }
    Ok(std::time::Duration::from_millis(ms))
}

/// A duration such as `20ms`, `1.5s` or `250us`, in whole milliseconds (at most a day).
fn parse_millis(text: &str) -> Result<u64, String> {
    let digits = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("`{text}` needs a unit: ms, s, us, min"))?;
    let (number, unit) = text.split_at(digits);
    let number: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 20ms"))?;
    let nanos =
        crate::units::nanos_per(unit).ok_or_else(|| format!("`{unit}` is not a unit of time"))?;
    let millis = number * nanos as f64 / 1e6;
    if !(0.0..=86_400_000.0).contains(&millis) {
        return Err(format!("`{text}` is more than a day"));
    }
    Ok(millis.round() as u64)
}

/// The local instance as a known queue (`server::queue`): what `serve`, `profile` and `load` on
/// the built-in instance take alike. All off by default.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct QueueArgs {
    /// Query threads: a query waits, first come first served, for one of N (0: no queue).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = value_parser!(u64).range(QUERY_THREADS))]
    pub query_threads: u64,
    /// How long a query thread holds each query before it runs, in milliseconds (a fixed
    /// service time: N threads serve at most N / D queries a second).
    #[arg(long, value_name = "D", default_value_t = 0, value_parser = value_parser!(u64).range(PAUSE_MS))]
    pub service_ms: u64,
    /// Every S milliseconds (the first S after the start) all answers pause for --freeze-ms.
    #[arg(long, value_name = "S", default_value_t = 0, value_parser = value_parser!(u64).range(PAUSE_MS))]
    pub freeze_every_ms: u64,
    /// How long each pause lasts, in milliseconds (at most --freeze-every-ms).
    #[arg(long, value_name = "P", default_value_t = 0, value_parser = value_parser!(u64).range(PAUSE_MS))]
    pub freeze_ms: u64,
}

impl QueueArgs {
    /// `knobs` with the queue model these arguments ask for.
    pub fn apply(&self, knobs: KnobSettings) -> KnobSettings {
        KnobSettings {
            query_threads: self.query_threads,
            service_ms: self.service_ms,
            freeze_every_ms: self.freeze_every_ms,
            freeze_ms: self.freeze_ms,
            ..knobs
        }
    }

    /// Whether any of them is set.
    pub fn is_set(&self) -> bool {
        self.query_threads > 0 || self.service_ms > 0 || self.freeze_ms > 0
    }
}

/// A `--shape` value.
fn parse_shape(text: &str) -> Result<Shape, String> {
    Shape::parse(text).ok_or_else(|| {
        let names: Vec<&str> = Shape::ALL.iter().map(|s| s.as_str()).collect();
        format!("`{text}` is not a shape: {}", names.join(", "))
    })
}

const DEFAULTS: KnobSettings = KnobSettings::DEFAULT;
const MESSAGE_BYTES: RangeInclusive<u64> = MIN_MESSAGE_BYTES..=MAX_MESSAGE_BYTES;
const AT_LEAST_ONE: RangeFrom<u64> = 1..;
/// SQLite's own ceilings on a value and a statement, and room for a database name.
const VALUE_BYTES: RangeInclusive<u64> = 1024..=1_000_000_000;
const SQL_BYTES: RangeInclusive<u64> = 64..=1_000_000_000;
const NAME_BYTES: RangeInclusive<u64> = 64..=1 << 20;
/// Room for at least one request of the largest size the server decodes (16 MiB).
const PENDING_REQUEST_BYTES: RangeFrom<u64> = (16 << 20)..;
/// The queue model's threads, and its times (at most a day each).
const QUERY_THREADS: RangeInclusive<u64> = 0..=MAX_QUERY_THREADS;
const PAUSE_MS: RangeInclusive<u64> = 0..=86_400_000;

impl ServeArgs {
    /// The connection limits these arguments ask for.
    pub fn connections(&self) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: self.max_connections,
            idle_timeout_ms: self.idle_timeout_ms,
            max_unread_streams: self.max_unread_streams,
        }
    }

    /// The knob settings these arguments ask for.
    pub fn knobs(&self) -> KnobSettings {
        KnobSettings {
            max_message_bytes: self.max_message_bytes,
            fail_every: self.fail_every,
            first_byte_delay_ms: self.first_byte_delay_ms,
            message_delay_ms: self.message_delay_ms,
            bandwidth_bytes_per_s: self.bandwidth_bytes_per_s,
            stall_every: self.stall_every,
            stall_ms: self.stall_ms,
            stall_at_message: self.stall_at_message,
            max_concurrent_queries: self.max_concurrent_queries,
            max_unary_result_bytes: self.max_unary_result_bytes,
            max_stream_buffer_bytes: self.max_stream_buffer_bytes,
            max_value_bytes: self.max_value_bytes,
            max_sql_bytes: self.max_sql_bytes,
            max_parked_streams: self.max_parked_streams,
            park_timeout_ms: self.park_timeout_ms,
            max_sessions: self.max_sessions,
            session_idle_timeout_ms: self.session_idle_timeout_ms,
            max_name_bytes: self.max_name_bytes,
            max_pending_request_bytes: self.max_pending_request_bytes,
            request_timeout_ms: self.request_timeout_ms,
            shape: self.shape,
            abort_every: self.abort_every,
            abort_retry_delay_ms: self.abort_retry_delay,
            conflict_retry_delay_ms: self.conflict_retry_delay,
            lose_commit_answer_every: self.lose_commit_answer_every,
            stats_interval_ms: self.stats_interval.as_millis() as u64,
            ..self.queue.apply(KnobSettings::DEFAULT)
        }
    }
}

/// Serves until Ctrl-C (or SIGTERM). Prints the address and the `SPANNER_EMULATOR_HOST` line first.
pub fn run_serve(args: &ServeArgs, mut out: impl Write) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("spanprof-serve")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let config = ServerConfig {
            port: args.port,
            seed23_rows: args.rows,
            knobs: args.knobs(),
            connections: args.connections(),
        };
        let instance = LocalInstance::start(config).await?;
        let host_port = instance.host_port();
        // One write: a reader that stops after the address line must not make a later line fail.
        let banner = format!(
            "spanprof local instance listening on {host_port} (Seed23: {} rows)\n\
             SPANNER_EMULATOR_HOST={host_port}\n\
             change a knob by typing e.g. `fail-every 3` or `max-message-bytes 16384`; `show` prints them\n",
            args.rows
        );
        out.write_all(banner.as_bytes())?;
        out.flush()?;
        watch_stdin(Arc::clone(instance.knobs()));
        shutdown_signal().await;
        instance.stop(Duration::from_secs(2)).await;
        anyhow::Ok(())
    })
}

/// The first SIGINT, SIGTERM or SIGHUP (SIGINT alone where there are no others): how `serve`
/// learns it is asked to stop.
pub(super) async fn shutdown_signal() {
    StopSignals::new().next().await;
}

/// The signals that ask `serve` and `load` to stop, each caught from the moment this is made
/// (none is lost between two waits): SIGINT (Ctrl-C), SIGTERM, and SIGHUP, which is how a closed
/// terminal or an ended SSH session asks; its default action would end the process without a
/// word of what was measured. Made inside a tokio runtime.
pub(super) struct StopSignals {
    #[cfg(unix)]
    streams: [Option<tokio::signal::unix::Signal>; 3],
}

/// SIGINT, SIGTERM and SIGHUP's numbers, the same on every Unix system, in `streams`' order.
#[cfg(unix)]
const STOP_SIGNOS: [i32; 3] = [2, 15, 1];

impl StopSignals {
    /// Catches the signals from now on; one that cannot be caught keeps its default action.
    pub(super) fn new() -> StopSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                streams: STOP_SIGNOS.map(|signo| signal(SignalKind::from_raw(signo)).ok()),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }

    /// Waits for the next of them; its number.
    pub(super) async fn next(&mut self) -> i32 {
        #[cfg(unix)]
        {
            async fn one(stream: &mut Option<tokio::signal::unix::Signal>) {
                match stream {
                    Some(s) => {
                        s.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            let [int, term, hup] = &mut self.streams;
            if int.is_some() || term.is_some() || hup.is_some() {
                let [int_no, term_no, hup_no] = STOP_SIGNOS;
                return tokio::select! {
                    () = one(int) => int_no,
                    () = one(term) => term_no,
                    () = one(hup) => hup_no,
                };
            }
        }
        let _ = tokio::signal::ctrl_c().await;
        2
    }
}

/// Reads `knob value` lines from stdin on a named thread and applies them. Stops at end of input.
fn watch_stdin(knobs: Arc<Knobs>) {
    let spawned = std::thread::Builder::new()
        .name("spanprof-knobs".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                match apply_knob(&knobs, &line) {
                    Ok(settings) => eprintln!("knobs: {settings:?}"),
                    Err(e) => eprintln!("{e}"),
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("knobs cannot be changed from stdin: {e}");
    }
}

/// A knob that can be turned on stdin: its name, the values it takes, and where it goes.
type Knob = (
    &'static str,
    RangeInclusive<u64>,
    fn(&mut KnobSettings) -> &mut u64,
);

/// The knobs `serve` reads on stdin, with the same ranges as its flags.
const KNOBS: [Knob; 28] = [
    ("max-message-bytes", MESSAGE_BYTES, |k| {
        &mut k.max_message_bytes
    }),
    ("fail-every", 0..=u64::MAX, |k| &mut k.fail_every),
    ("first-byte-delay-ms", 0..=u64::MAX, |k| {
        &mut k.first_byte_delay_ms
    }),
    ("message-delay-ms", 0..=u64::MAX, |k| {
        &mut k.message_delay_ms
    }),
    ("bandwidth", 0..=u64::MAX, |k| &mut k.bandwidth_bytes_per_s),
    ("stall-every", 0..=u64::MAX, |k| &mut k.stall_every),
    ("stall-ms", 0..=u64::MAX, |k| &mut k.stall_ms),
    ("stall-at-message", 1..=u64::MAX, |k| {
        &mut k.stall_at_message
    }),
    ("max-concurrent-queries", 1..=u64::MAX, |k| {
        &mut k.max_concurrent_queries
    }),
    ("max-unary-result-bytes", 1..=u64::MAX, |k| {
        &mut k.max_unary_result_bytes
    }),
    ("max-stream-buffer-bytes", 1..=u64::MAX, |k| {
        &mut k.max_stream_buffer_bytes
    }),
    ("max-value-bytes", VALUE_BYTES, |k| &mut k.max_value_bytes),
    ("max-sql-bytes", SQL_BYTES, |k| &mut k.max_sql_bytes),
    ("max-parked-streams", 0..=u64::MAX, |k| {
        &mut k.max_parked_streams
    }),
    ("park-timeout-ms", 0..=u64::MAX, |k| &mut k.park_timeout_ms),
    ("max-sessions", 1..=u64::MAX, |k| &mut k.max_sessions),
    ("session-idle-timeout-ms", 1..=u64::MAX, |k| {
        &mut k.session_idle_timeout_ms
    }),
    ("max-name-bytes", NAME_BYTES, |k| &mut k.max_name_bytes),
    ("max-pending-request-bytes", 16 << 20..=u64::MAX, |k| {
        &mut k.max_pending_request_bytes
    }),
    ("request-timeout-ms", 1..=u64::MAX, |k| {
        &mut k.request_timeout_ms
    }),
    ("query-threads", QUERY_THREADS, |k| &mut k.query_threads),
    ("service-ms", PAUSE_MS, |k| &mut k.service_ms),
    ("freeze-every-ms", PAUSE_MS, |k| &mut k.freeze_every_ms),
    ("freeze-ms", PAUSE_MS, |k| &mut k.freeze_ms),
    ("abort-every", 0..=u64::MAX, |k| &mut k.abort_every),
    ("abort-retry-delay-ms", PAUSE_MS, |k| {
        &mut k.abort_retry_delay_ms
    }),
    ("conflict-retry-delay-ms", PAUSE_MS, |k| {
        &mut k.conflict_retry_delay_ms
    }),
    ("lose-commit-answer-every", 0..=u64::MAX, |k| {
        &mut k.lose_commit_answer_every
    }),
];

/// Applies one `knob value` line (or `show`), returning the settings now in force.
pub fn apply_knob(knobs: &Knobs, line: &str) -> Result<KnobSettings, String> {
    let mut s = knobs.get();
    let mut words = line.split_whitespace();
    let (Some(name), value) = (words.next(), words.next()) else {
        return Ok(s);
    };
    if name == "show" {
        return Ok(s);
    }
    let Some((_, range, field)) = KNOBS.iter().find(|(known, ..)| *known == name) else {
        let names: Vec<&str> = KNOBS.iter().map(|(known, ..)| *known).collect();
        return Err(format!("unknown knob `{name}`: {}", names.join(", ")));
    };
    let value: u64 = value
        .ok_or_else(|| format!("`{name}` needs a value"))?
        .parse()
        .map_err(|_| format!("`{name}` needs a whole number"))?;
    if !range.contains(&value) {
        return Err(format!(
            "`{name}` takes {} to {}",
            range.start(),
            range.end()
        ));
    }
    *field(&mut s) = value;
    knobs.set(s);
    Ok(knobs.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_lines_change_the_live_knobs() {
        let knobs = Knobs::new(KnobSettings::default());
        assert_eq!(
            apply_knob(&knobs, "fail-every 3").map(|s| s.fail_every),
            Ok(3)
        );
        assert_eq!(knobs.get().fail_every, 3);
        assert!(apply_knob(&knobs, "fail-every").is_err());
        assert!(apply_knob(&knobs, "fail-every x").is_err());
        assert!(apply_knob(&knobs, "speed 3").is_err());
        assert!(
            apply_knob(&knobs, "max-message-bytes 100").is_err(),
            "below 256"
        );
        assert!(apply_knob(&knobs, "max-concurrent-queries 0").is_err());
        assert_eq!(
            apply_knob(&knobs, "session-idle-timeout-ms 5000").map(|s| s.session_idle_timeout_ms),
            Ok(5000)
        );
        assert_eq!(apply_knob(&knobs, "show").map(|s| s.fail_every), Ok(3));
        assert_eq!(
            apply_knob(&knobs, "stall-at-message 4").map(|s| s.stall_at_message),
            Ok(4)
        );
        assert!(apply_knob(&knobs, "stall-at-message 0").is_err(), "from 1");
        assert_eq!(
            apply_knob(&knobs, "query-threads 2").map(|s| s.query_threads),
            Ok(2)
        );
        assert_eq!(
            apply_knob(&knobs, "freeze-ms 200").map(|s| s.freeze_ms),
            Ok(200)
        );
        assert!(
            apply_knob(&knobs, "service-ms 99999999999").is_err(),
            "a day at most"
        );
        assert_eq!(
            apply_knob(&knobs, "abort-every 3").map(|s| s.abort_every),
            Ok(3)
        );
    }

    #[test]
    fn abort_flags_become_the_abort_knobs() {
        use clap::Parser as _;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let cli =
            Cli::try_parse_from(["serve", "--abort-every", "3", "--abort-retry-delay", "20ms"])
                .expect("parses");
        let knobs = cli.serve.knobs();
        assert_eq!((knobs.abort_every, knobs.abort_retry_delay_ms), (3, 20));
        assert_eq!(parse_millis("1.5s"), Ok(1_500));
        assert!(parse_millis("20").is_err(), "a unit is needed");
        assert!(parse_millis("2days").is_err());
        let default = Cli::try_parse_from(["serve"]).expect("parses");
        assert_eq!(default.serve.knobs().abort_retry_delay_ms, 10);
    }
}
