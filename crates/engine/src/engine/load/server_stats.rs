//! After a read-write load run's last step (`load --read-write --server-stats`): the target's own
//! lock and transaction statistics of the run. The run's transactions carried one tag; this waits
//! until the target's statistics interval holding the run's end has closed and appears (polling
//! LOCK_STATS_TOTAL_MINUTE's latest INTERVAL_END, once a second, up to the asked wait; a cancel
//! ends the wait), then reads LOCK_STATS_TOP_MINUTE and TXN_STATS_TOP_MINUTE (the tag's rows)
//! through a session of its own, every row bounded and checked by `crate::load::server_stats`. A
//! target that has no such tables (the emulator answers NOT_FOUND or INVALID_ARGUMENT) is said to
//! serve none; nothing is ever made up as a zero.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::super::common::SESSION_DELETE_WAIT;
use crate::client::read_write::{Isolation, LockMode};
use crate::client::{
    Decoding, Endpoint, IterationError, Param, Query, QueryMode, ResumePolicy, Session,
};
use crate::load::server_stats::{
    LOCK_COLUMNS, MAX_STATS_ROWS, MAX_TEXT_CHARS, TXN_COLUMNS, clip, lock_row, timestamp, txn_row,
};
use crate::load::{ServedStats, ServerStats, StatsRead};
use crate::report::Code;
use crate::wire::{DecoderKind, Row, RowsView, Timestamp};

use super::LoadSpec;
use crate::engine::{Target, Variant};

/// What a run asks of the target's statistics: the tag its transactions carry, how long to wait
/// for the interval to close, and whom to tell that it waits.
#[derive(Debug, Clone)]
pub struct ServerStatsAsk {
    /// The transaction tag every transaction of the run carries (at most 50 characters).
    pub tag: String,
    /// How long to wait, at most, for the interval holding the run's end to close and appear.
    pub wait: Duration,
    /// Told once, in words, when the run starts waiting.
    pub on_wait: WaitNotice,
}

/// How long a run waits, at most, for the interval holding its end when not told otherwise:
/// production's intervals close on the minute, and appear a little after.
pub const DEFAULT_STATS_WAIT: Duration = Duration::from_secs(75);

/// Why a run cannot ask for the target's statistics.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AskError {
    /// The run runs queries: the statistics are a read-write run's transactions'.
    #[error("the target's statistics are read for a read-write run's transactions")]
    NotReadWrite,
    /// The transactions' own tag is not one Spanner takes.
    #[error("{0}")]
    Tag(String),
}

impl ServerStatsAsk {
    /// The ask of a run of `variant`: its transactions carry their own tag, or one made for the
    /// run (`spanprof-load-` and 8 hex digits), put on them here; wait at most `wait`, and tell
    /// `on_wait` when the wait begins.
    pub fn tagging(
        variant: &mut Variant,
        wait: Duration,
        on_wait: WaitNotice,
    ) -> Result<ServerStatsAsk, AskError> {
        let read_write = variant.read_write.as_mut().ok_or(AskError::NotReadWrite)?;
        let tag = match &read_write.options.tag {
            Some(tag) => tag.clone(),
            None => made_tag(),
        };
        check_tag(&tag).map_err(AskError::Tag)?;
        read_write.options.tag = Some(tag.clone());
        Ok(ServerStatsAsk { tag, wait, on_wait })
    }
}

/// Sets the built-in instance's statistics interval (its `_MINUTE` tables') to `interval`;
/// whether `target` is the built-in instance (another's interval is its own).
pub fn set_stats_interval(target: &mut Target, interval: Duration) -> bool {
    match target {
        Target::Local(config) | Target::Kept(_, config) => {
            config.knobs.stats_interval_ms =
                u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
            true
        }
        Target::Endpoint(_) | Target::Cloud(_) => false,
    }
}

/// A tag of the run's own: `spanprof-load-` and 8 hex digits from the clock and the process.
fn made_tag() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let seed = format!("{nanos}-{}", std::process::id());
    format!(
        "spanprof-load-{:08x}",
        crate::fnv::continued(crate::fnv::OFFSET_BASIS, seed.as_bytes()) as u32
    )
}

/// Whom a run tells that it waits for the target's interval (the command line prints it).
#[derive(Clone)]
pub struct WaitNotice(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for WaitNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WaitNotice")
    }
}

/// How often the latest interval is asked for: the target's interval is a minute in production,
/// so once a second is modest, and fine-grained enough for a test's interval of a second or two.
const POLL: Duration = Duration::from_secs(1);

/// The run's wall clock: when its first step began and its last ended.
#[derive(Debug, Clone, Copy)]
pub(super) struct RunSpan {
    pub(super) from: SystemTime,
    pub(super) to: SystemTime,
}

/// The target's statistics of the run spanning `span`, read through a session of its own on
/// `endpoint`; `cancel` ends the wait.
pub(super) async fn read(
    endpoint: &Endpoint,
    spec: &LoadSpec,
    ask: &ServerStatsAsk,
    span: RunSpan,
    cancel: &AtomicBool,
) -> ServerStats {
    let since = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (from, to) = (since(span.from), since(span.to));
    let read = match Session::open_as(
        endpoint,
        &spec.database,
        spec.timeouts,
        spec.variant.session_kind(),
        spec.headers,
    )
    .await
    {
        Ok(session) => {
            let read = read_in(&session, ask, (from, to), cancel).await;
            let _ = session.close(SESSION_DELETE_WAIT).await;
            read
        }
        Err(e) => StatsRead::NotRead {
            why: clip(&format!("no session to read them in: {e}")),
        },
    };
    let lock_free = spec.variant.read_write.as_ref().is_some_and(|rw| {
        rw.options.lock_mode == LockMode::Optimistic
            || rw.options.isolation == Isolation::RepeatableRead
    });
    ServerStats {
        tag: ask.tag.clone(),
        run_from: rfc3339(from),
        run_to: rfc3339(to),
        read,
        lock_free,
    }
}

/// Waits for the interval holding `run.1` to appear, then reads the rows of the intervals ending
/// after `run.0` up to it.
async fn read_in(
    session: &Session,
    ask: &ServerStatsAsk,
    run: (Duration, Duration),
    cancel: &AtomicBool,
) -> StatsRead {
    let deadline = Instant::now() + ask.wait;
    let mut told = false;
    let ends = loop {
        let ends = match interval_ends(session).await {
            Ok(ends) => ends,
            Err(e) => return failed(&e),
        };
        if ends.first().is_some_and(|&latest| latest >= run.1) {
            break ends;
        }
        if !told {
            told = true;
            (ask.on_wait.0)(&format!(
                "waiting for the target's statistics interval to close (up to {} s)",
                ask.wait.as_secs()
            ));
        }
        if Instant::now() + POLL > deadline {
            return StatsRead::NotRead {
                why: format!(
                    "the target's statistics interval holding the run's end had not appeared \
                     within {} s (--server-stats-wait)",
                    ask.wait.as_secs()
                ),
            };
        }
        if pause(POLL, cancel).await {
            return StatsRead::NotRead {
                why: "the wait for the target's statistics was cancelled".into(),
            };
        }
    };
    // The intervals of the run: those ending after its start, up to the first ending at or after
    // its end (the one that held its last commit).
    let Some(&closing) = ends.iter().rev().find(|&&end| end >= run.1) else {
        return StatsRead::NotRead {
            why: "the target listed no interval holding the run's end".into(),
        };
    };
    let ours = |end: Duration| end > run.0 && end <= closing;
    let mut served = ServedStats {
        intervals: ends
            .iter()
            .rev()
            .filter(|&&e| ours(e))
            .map(|&e| rfc3339(e))
            .collect(),
        ..ServedStats::default()
    };
    if let Err(e) = lock_rows(session, &ours, &mut served).await {
        return failed(&e);
    }
    if let Err(e) = txn_rows(session, &ask.tag, &ours, &mut served).await {
        return failed(&e);
    }
    StatsRead::Served(served)
}

/// LOCK_STATS_TOTAL_MINUTE's interval ends, the latest first.
async fn interval_ends(session: &Session) -> Result<Vec<Duration>, IterationError> {
    let sql = "SELECT INTERVAL_END FROM SPANNER_SYS.LOCK_STATS_TOTAL_MINUTE \
               ORDER BY INTERVAL_END DESC";
    let (rows, _) = rows(session, sql, Vec::new()).await?;
    Ok(rows
        .iter()
        .filter_map(|r| timestamp(r.0.first()?, "INTERVAL_END").ok())
        .map(|(end, _)| end)
        .collect())
}

/// LOCK_STATS_TOP_MINUTE's rows of the intervals `ours` keeps, into `served`.
async fn lock_rows(
    session: &Session,
    ours: &dyn Fn(Duration) -> bool,
    served: &mut ServedStats,
) -> Result<(), IterationError> {
    let sql = format!(
        "SELECT {LOCK_COLUMNS} FROM SPANNER_SYS.LOCK_STATS_TOP_MINUTE \
         ORDER BY INTERVAL_END DESC, LOCK_WAIT_SECONDS DESC"
    );
    let (rows, cut) = rows(session, &sql, Vec::new()).await?;
    let mut refused = 0;
    for row in &rows {
        match lock_row(row) {
            Ok((end, row)) if ours(end) => served.lock_rows.push(row),
            Ok(_) => {}
            Err(_) => refused += 1,
        }
    }
    served.lock_rows.reverse();
    note(served, "LOCK_STATS_TOP_MINUTE", cut, refused);
    Ok(())
}

/// TXN_STATS_TOP_MINUTE's rows for `tag` of the intervals `ours` keeps, into `served`.
async fn txn_rows(
    session: &Session,
    tag: &str,
    ours: &dyn Fn(Duration) -> bool,
    served: &mut ServedStats,
) -> Result<(), IterationError> {
    let sql = format!(
        "SELECT {TXN_COLUMNS} FROM SPANNER_SYS.TXN_STATS_TOP_MINUTE \
         WHERE TRANSACTION_TAG = @tag ORDER BY INTERVAL_END DESC"
    );
    let tag_param = Param {
        name: "tag".into(),
        type_name: "STRING".into(),
        value: tag.to_owned(),
    };
    let (rows, cut) = rows(session, &sql, vec![tag_param]).await?;
    let mut refused = 0;
    for row in &rows {
        match txn_row(row) {
            Ok((end, row)) if ours(end) && row.tag == tag => served.txn_rows.push(row),
            Ok(_) => {}
            Err(_) => refused += 1,
        }
    }
    served.txn_rows.reverse();
    note(served, "TXN_STATS_TOP_MINUTE", cut, refused);
    Ok(())
}

/// A notice of rows cut or refused, when there were.
fn note(served: &mut ServedStats, table: &str, cut: bool, refused: usize) {
    if cut {
        served.notices.push(format!(
            "{table} held more than {MAX_STATS_ROWS} rows: the latest {MAX_STATS_ROWS} were read"
        ));
    }
    if refused > 0 {
        served.notices.push(format!(
            "{refused} of {table}'s rows were not what the table holds (a wrong type, a figure \
             that is no number), and were left out"
        ));
    }
}

/// Runs `sql` (a strong read) and keeps its first [`MAX_STATS_ROWS`] rows; whether there were
/// more. A server that sends more has them counted, not kept.
async fn rows(
    session: &Session,
    sql: &str,
    params: Vec<Param>,
) -> Result<(Vec<Row>, bool), IterationError> {
    let query = Query {
        sql: format!("{sql} LIMIT {}", MAX_STATS_ROWS + 1),
        params,
        mode: QueryMode::Normal,
        options: Default::default(),
    };
    let prepared = session.prepare(&query)?;
    let mut kept: Vec<Row> = Vec::new();
    let mut seen = 0usize;
    {
        let mut on_rows = |batch: RowsView<'_>, _: usize| {
            seen = seen.saturating_add(batch.len());
            let room = MAX_STATS_ROWS.saturating_sub(kept.len());
            if room > 0 {
                kept.extend(batch.to_rows(room));
            }
        };
        let decoding = Decoding {
            kept_messages: 0,
            ..Decoding::new(DecoderKind::Reference, &mut on_rows)
        };
        session
            .execute(&prepared, ResumePolicy::default(), decoding)
            .await?;
    }
    Ok((kept, seen > MAX_STATS_ROWS))
}

/// What a failed query says: a target without the tables serves none (the emulator answers
/// NOT_FOUND or INVALID_ARGUMENT for a table it does not know); anything else left them unread.
fn failed(error: &IterationError) -> StatsRead {
    let why = clip(&crate::text::printable(&error.to_string()));
    match error.status_code() {
        Some(Code::NotFound | Code::InvalidArgument | Code::Unimplemented) => {
            StatsRead::NotServed { why }
        }
        _ => StatsRead::NotRead { why },
    }
}

/// Waits `d`, looking at `cancel` every 50 ms; whether it was cancelled.
async fn pause(d: Duration, cancel: &AtomicBool) -> bool {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if cancel.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cancel.load(Ordering::SeqCst)
}

/// A time since the Unix epoch in RFC 3339.
fn rfc3339(since_epoch: Duration) -> String {
    let seconds = i64::try_from(since_epoch.as_secs()).unwrap_or(i64::MAX);
    Timestamp::new(seconds, since_epoch.subsec_nanos()).map_or_else(String::new, |t| t.to_string())
}

/// Whether `tag` is one the run can carry: Spanner's bound of 50 characters, printable ASCII.
pub fn check_tag(tag: &str) -> Result<(), String> {
    if tag.is_empty() || tag.len() > 50 || !tag.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(format!(
            "a transaction tag is 1 to 50 printable ASCII characters, not {:?}",
            crate::text::excerpt(tag, MAX_TEXT_CHARS.min(60))
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_cut_short_by_a_cancel() {
        let cancel = AtomicBool::new(true);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let began = Instant::now();
        assert!(rt.block_on(pause(Duration::from_secs(30), &cancel)));
        assert!(began.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_made_tag_is_one_spanner_takes_and_a_run_of_queries_has_none() {
        let tag = made_tag();
        assert!(
            tag.starts_with("spanprof-load-") && tag.len() == 22,
            "{tag}"
        );
        assert!(check_tag(&tag).is_ok());
        let notice = WaitNotice(Arc::new(|_| {}));
        let mut query = Variant::new("q", "SELECT 1");
        assert_eq!(
            ServerStatsAsk::tagging(&mut query, DEFAULT_STATS_WAIT, notice).map(|a| a.tag),
            Err(AskError::NotReadWrite)
        );
    }

    #[test]
    fn a_tag_is_what_spanner_takes() {
        assert!(check_tag("spanprof-load-0a1b2c3d").is_ok());
        assert!(check_tag(&"x".repeat(51)).is_err());
        assert!(check_tag("tab\there").is_err());
        assert!(check_tag("").is_err());
    }
}
