//! SPANNER_SYS's lock and transaction statistics, aggregated from the lock journal: the rows of
//! `LOCK_STATS_TOP_*`, `LOCK_STATS_TOTAL_*`, `TXN_STATS_TOP_*` and `TXN_STATS_TOTAL_*` for the
//! minute, 10-minute and hour intervals. A pure module: it reads a [`Journal`] and a [`Window`] (the
//! wall clock at the lock table's start and the table's time now, both given, so tests inject
//! them) and returns plain rows; `sqlite/sys_tables.rs` puts them where a query reads them.
//!
//! **Intervals** end on the wall clock's multiples of their length (the minute, ten minutes, the
//! hour, as production's do; the "minute" is a knob, `stats_interval_ms`, so tests need not wait
//! one), and an interval appears only once it has closed. Each table keeps at most production's
//! retention in intervals (6 hours of minutes, 4 days of 10 minutes, 30 days of hours) and never
//! further back than the journal holds: an interval before the journal's oldest event (the lock
//! table's start, or the oldest event the ring kept) is not listed.
//!
//! **Lock statistics** (`lock_rows`): per interval and row-range start, the waits' time inside the
//! interval, with sample requests; the top [`TOP_ROWS`] by lock wait, and the total of every row.
//! **Transaction statistics** (`txn_rows`): per interval and fingerprint, the attempts that ended
//! in it. Nothing is kept of an optimistic transaction (its waits or its attempts).

use std::time::Duration;

use super::journal::Journal;

mod facts;
mod lock_rows;
mod row_range;
mod sql_rows;
mod txn_rows;

pub use lock_rows::{LockRow, LockStats, LockTotal, lock_stats};
pub use row_range::row_range_start_key;
pub use sql_rows::sys_tables;
pub use txn_rows::{TxnFigures, TxnRow, TxnStats, TxnTotal, txn_stats};

/// One span's statistics: its LOCK_STATS and TXN_STATS tables.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanStats {
    /// The span.
    pub span: Span,
    /// LOCK_STATS_TOP_ and LOCK_STATS_TOTAL_ of the span.
    pub lock: LockStats,
    /// TXN_STATS_TOP_ and TXN_STATS_TOTAL_ of the span.
    pub txn: TxnStats,
}

/// The statistics of `spans` as of `window`, from `journal` (a span with no closed interval yet
/// has empty tables).
pub fn collect(journal: &Journal, window: Window, spans: &[Span]) -> Vec<SpanStats> {
    let attempts = facts::attempts(journal);
    spans
        .iter()
        .map(|&span| match Intervals::of(window, span, journal) {
            Some(intervals) => SpanStats {
                span,
                lock: lock_stats(journal, &attempts, &intervals),
                txn: txn_stats(&attempts, &intervals),
            },
            None => SpanStats {
                span,
                lock: LockStats::default(),
                txn: TxnStats::default(),
            },
        })
        .collect()
}

/// The rows a TOP table keeps per interval: production's documents give no number (they say the
/// rows with the most lock wait, or latency, come first when not all can be kept); ours keeps this
/// many, the most first.
pub const TOP_ROWS: usize = 100;

/// One of SPANNER_SYS's interval lengths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Span {
    /// `_MINUTE`: the base interval.
    Minute,
    /// `_10MINUTE`: ten base intervals.
    TenMinute,
    /// `_HOUR`: sixty base intervals.
    Hour,
}

impl Span {
    /// Every span, shortest first.
    pub const ALL: [Span; 3] = [Span::Minute, Span::TenMinute, Span::Hour];

    /// How the table names end (`LOCK_STATS_TOP_` + this).
    pub fn suffix(self) -> &'static str {
        match self {
            Span::Minute => "MINUTE",
            Span::TenMinute => "10MINUTE",
            Span::Hour => "HOUR",
        }
    }

    /// Base intervals in one of this span.
    pub fn factor(self) -> u32 {
        match self {
            Span::Minute => 1,
            Span::TenMinute => 10,
            Span::Hour => 60,
        }
    }

    /// Intervals kept: production's retention (6 hours, 4 days, 30 days) in intervals.
    pub fn retained(self) -> u64 {
        match self {
            Span::Minute => 6 * 60,
            Span::TenMinute => 4 * 24 * 6,
            Span::Hour => 30 * 24,
        }
    }
}

/// When the statistics are read: the wall clock (since the Unix epoch) at the lock table's start,
/// the table's time now ([`super::locks::LockTable::now`]), and the base interval (a minute in
/// production; at least a second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The wall clock at the lock table's time zero.
    pub wall_zero: Duration,
    /// The lock table's time now.
    pub now: Duration,
    /// The `_MINUTE` tables' interval.
    pub base: Duration,
}

impl Window {
    /// The window now: the wall clock and the table's clock read together.
    pub fn read(table_now: Duration, base: Duration) -> Window {
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Window {
            wall_zero: wall.saturating_sub(table_now),
            now: table_now,
            base,
        }
    }
}

/// The closed intervals of one span that a table lists, numbered by their end's multiple of the
/// length (interval `k` covers `[k × length, (k + 1) × length)` of the wall clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Intervals {
    length: u128,
    wall_zero: u128,
    first: u128,
    last: u128,
}

impl Intervals {
    /// The closed intervals of `span` from the journal's oldest event to `window.now`, the last
    /// [`Span::retained`] at most; None when none has closed yet.
    pub fn of(window: Window, span: Span, journal: &Journal) -> Option<Intervals> {
        let base = window.base.max(Duration::from_secs(1)).as_nanos();
        let length = base * u128::from(span.factor());
        let wall_zero = window.wall_zero.as_nanos();
        let covered_from = wall_zero + oldest(journal).as_nanos();
        let now = wall_zero + window.now.as_nanos();
        // The interval holding `now` is open; the one before it is the last closed.
        let last = (now / length).checked_sub(1)?;
        let first =
            (covered_from / length).max(last.saturating_sub(u128::from(span.retained()) - 1));
        (first <= last).then_some(Intervals {
            length,
            wall_zero,
            first,
            last,
        })
    }

    /// Every interval listed, oldest first.
    pub fn all(&self) -> impl Iterator<Item = u128> + use<> {
        self.first..=self.last
    }

    /// The interval holding the journal time `at` (it may be outside the list).
    pub fn at(&self, at: Duration) -> u128 {
        (self.wall_zero + at.as_nanos()) / self.length
    }

    /// Whether interval `k` is listed.
    pub fn lists(&self, k: u128) -> bool {
        (self.first..=self.last).contains(&k)
    }

    /// The listed intervals that `[from, to)` (journal times) reaches into.
    pub fn reached(&self, from: Duration, to: Duration) -> std::ops::RangeInclusive<u128> {
        let start = self.at(from).max(self.first);
        let end = if to > from {
            self.at(to - Duration::from_nanos(1))
        } else {
            self.at(from)
        };
        start..=end.min(self.last)
    }

    /// Interval `k` in journal times, `[from, to)` (from clipped at the table's start).
    pub fn bounds(&self, k: u128) -> (Duration, Duration) {
        let to = ((k + 1) * self.length).saturating_sub(self.wall_zero);
        let from = (k * self.length).saturating_sub(self.wall_zero);
        (nanos(from), nanos(to))
    }

    /// Interval `k`'s end on the wall clock, since the Unix epoch: its INTERVAL_END.
    pub fn end(&self, k: u128) -> Duration {
        nanos((k + 1) * self.length)
    }
}

fn nanos(n: u128) -> Duration {
    Duration::new(
        u64::try_from(n / 1_000_000_000).unwrap_or(u64::MAX),
        (n % 1_000_000_000) as u32,
    )
}

/// The journal's oldest time it still covers: the table's start, or its oldest event kept when the
/// ring dropped some.
fn oldest(journal: &Journal) -> Duration {
    if journal.dropped() == 0 {
        return Duration::ZERO;
    }
    journal.events().next().map_or(Duration::ZERO, |e| e.at)
}

#[cfg(test)]
mod tests;
