//! A read-write load run's own figures beside what the target's statistics say of it
//! (`load --server-stats`), computed once for the summary, the JSON's readers and the HTML page:
//! the lock wait the run was told of against LOCK_STATS' LOCK_WAIT_SECONDS over the run's
//! intervals, the run's hottest key against the row range with the most lock wait, and the run's
//! attempts, aborts and commits against TXN_STATS' counts for the run's tag; each said in words,
//! agreeing or not, with why they may differ. A target that serves no statistics says so, and no
//! figure is shown for it.

use std::collections::BTreeMap;

use crate::load::{LoadReport, ServedStats, StatsRead};

/// What the view says of the target's statistics.
#[derive(Debug, Clone, PartialEq)]
pub enum StatsView {
    /// The target served them: each figure beside the run's.
    Compared(StatsComparison),
    /// The target serves none (the emulator): the words, with the server's answer.
    NotServed(String),
    /// They were not read (the wait ran out, was cancelled, or the query failed): why.
    NotRead(String),
    /// They were read, but count none of the run's transactions, which read without locks
    /// (optimistic, or repeatable read): the words, and no figure held against the run's.
    NotCounted(String),
}

/// The run's figures beside the target's.
#[derive(Debug, Clone, PartialEq)]
pub struct StatsComparison {
    /// The tag the run's transactions carried.
    pub tag: String,
    /// The intervals read.
    pub intervals: usize,
    /// One line per figure.
    pub lines: Vec<ComparedFigure>,
    /// Why the two may differ, in words.
    pub caveats: Vec<&'static str>,
    /// What was cut or refused while reading.
    pub notices: Vec<String>,
}

/// One figure of the run beside the target's.
#[derive(Debug, Clone, PartialEq)]
pub struct ComparedFigure {
    /// What it is (`lock wait`, `hottest key`, `attempts`...).
    pub what: &'static str,
    /// The run's, in words (`n/a` where the run has none).
    pub run: String,
    /// The target's, in words.
    pub target: String,
    /// Whether they agree (None: nothing to compare).
    pub agree: Option<bool>,
    /// The line in words.
    pub words: String,
}

impl ComparedFigure {
    /// Whether they agree, in a word: `agree`, `differ`, or `–` with nothing to compare.
    pub fn verdict(&self) -> &'static str {
        match self.agree {
            Some(true) => "agree",
            Some(false) => "differ",
            None => "–",
        }
    }
}

impl StatsComparison {
    /// What was read, in words: the tables, the run's tag and how many intervals.
    pub fn what_was_read(&self) -> String {
        format!(
            "SPANNER_SYS.LOCK_STATS_TOP_MINUTE and TXN_STATS_TOP_MINUTE (tag {}), {} interval{} \
             read",
            self.tag,
            self.intervals,
            if self.intervals == 1 { "" } else { "s" }
        )
    }
}

/// The words a target without statistics gets.
pub const NOT_SERVED: &str = "no lock statistics on this target";

/// The words a run of lock-free transactions gets: the target's statistics leave them out.
pub const NOT_COUNTED: &str = "the run's transactions read without locks (optimistic, or \
     repeatable read), and the target's lock and transaction statistics count none of them: \
     nothing to hold against the run's figures";

/// Lock waits agree within this many seconds, or [`LOCK_WAIT_SHARE`] of the larger: a wait cut at
/// an interval's edge, or rounded to the microsecond on either side.
pub const LOCK_WAIT_SLACK_S: f64 = 0.002;
/// See [`LOCK_WAIT_SLACK_S`].
pub const LOCK_WAIT_SHARE: f64 = 0.02;

/// Why the run's figures and the target's may differ.
const CAVEATS: [&str; 4] = [
    "LOCK_STATS is not per tag: its intervals (ending on the minute) also hold other clients' \
     waits, and the time before the run's start and after its end in the first and last interval",
    "the run counts the waits the target named to it, those that ended in an abort included; a \
     wait of a transaction abandoned in flight is in LOCK_STATS only",
    "TXN_STATS counts attempts that ended inside the intervals read, by the run's tag; the \
     warm-up transaction is left untagged and out of both",
    "neither table counts optimistic transactions",
];

/// The view of `report`'s target statistics; None when the run did not ask for them.
pub fn server_stats_view(report: &LoadReport) -> Option<StatsView> {
    let stats = report.server_stats.as_ref()?;
    Some(match &stats.read {
        StatsRead::NotServed { why } => StatsView::NotServed(format!(
            "{NOT_SERVED} (the target answered: {})",
            crate::text::printable(why)
        )),
        StatsRead::NotRead { why } => StatsView::NotRead(format!(
            "the target's statistics were not read: {}",
            crate::text::printable(why)
        )),
        StatsRead::Served(_) if stats.lock_free => StatsView::NotCounted(NOT_COUNTED.to_owned()),
        StatsRead::Served(served) => StatsView::Compared(compare(report, &stats.tag, served)),
    })
}

/// The run's figures in `report` beside `served`.
pub fn compare(report: &LoadReport, tag: &str, served: &ServedStats) -> StatsComparison {
    let lines = vec![
        lock_wait_line(report, served),
        hottest_line(report, served),
        count_line(
            "attempts",
            run_attempts(report),
            served.txn_rows.iter().map(|r| r.attempt_count).sum(),
        ),
        count_line(
            "aborts",
            run_aborts(report),
            served.txn_rows.iter().map(|r| r.commit_abort_count).sum(),
        ),
        count_line(
            "commits",
            report.steps.iter().filter_map(|s| s.committed).sum(),
            served
                .txn_rows
                .iter()
                .map(|r| r.commit_attempt_count.saturating_sub(r.commit_abort_count))
                .sum(),
        ),
    ];
    StatsComparison {
        tag: crate::text::printable(tag).into_owned(),
        intervals: served.intervals.len(),
        lines,
        caveats: CAVEATS.to_vec(),
        notices: served.notices.clone(),
    }
}

fn run_attempts(report: &LoadReport) -> u64 {
    report
        .steps
        .iter()
        .flat_map(|s| &s.attempts)
        .map(|(&k, &n)| u64::from(k).saturating_mul(n))
        .fold(0, u64::saturating_add)
}

fn run_aborts(report: &LoadReport) -> u64 {
    report
        .steps
        .iter()
        .flat_map(|s| s.aborts_at.values())
        .fold(0, |a, &b| a.saturating_add(b))
}

/// The run's named lock waits (seconds) against LOCK_WAIT_SECONDS summed over the intervals.
fn lock_wait_line(report: &LoadReport, served: &ServedStats) -> ComparedFigure {
    // Folded from +0.0: an empty sum of f64 is -0.0, which prints as "-0.000 s".
    let target: f64 = served
        .lock_rows
        .iter()
        .fold(0.0, |sum, r| sum + r.lock_wait_seconds);
    let run = report
        .steps
        .iter()
        .filter_map(|s| s.conflicts.as_ref())
        .map(|c| c.wait_ms / 1e3)
        .reduce(|a, b| a + b);
    let theirs = format!("{target:.3} s");
    let Some(run) = run else {
        return ComparedFigure {
            what: "lock wait",
            run: "n/a".into(),
            words: format!(
                "lock wait: the target's LOCK_STATS say {theirs}; the target named no waits to \
                 the run, so there is nothing of the run's to hold it against"
            ),
            target: theirs,
            agree: None,
        };
    };
    let agree = lock_waits_agree(run, target);
    let ours = format!("{run:.3} s");
    let words = if agree {
        format!("lock wait: the run was told of {ours}, LOCK_STATS say {theirs}: they agree")
    } else if target > run {
        format!(
            "lock wait: the run was told of {ours}, LOCK_STATS say {theirs}: the target counted \
             {:.3} s more (other clients', or a transaction's abandoned in flight)",
            target - run
        )
    } else {
        format!(
            "lock wait: the run was told of {ours}, LOCK_STATS say {theirs}: the target counted \
             {:.3} s less (a row past the top of the table, or an interval not read)",
            run - target
        )
    };
    ComparedFigure {
        what: "lock wait",
        run: ours,
        target: theirs,
        agree: Some(agree),
        words,
    }
}

/// Whether two lock waits (seconds) agree within [`LOCK_WAIT_SLACK_S`] or
/// [`LOCK_WAIT_SHARE`] of the larger.
pub fn lock_waits_agree(run: f64, target: f64) -> bool {
    let slack = LOCK_WAIT_SLACK_S.max(LOCK_WAIT_SHARE * run.max(target));
    (run - target).abs() <= slack
}

/// The key the run waited on most against the row range LOCK_STATS give the most lock wait.
fn hottest_line(report: &LoadReport, served: &ServedStats) -> ComparedFigure {
    let mut ours: BTreeMap<&str, f64> = BTreeMap::new();
    for key in report
        .steps
        .iter()
        .filter_map(|s| s.conflicts.as_ref())
        .flat_map(|c| &c.keys)
    {
        *ours.entry(key.key.as_str()).or_default() += key.wait_ms;
    }
    let mut theirs: BTreeMap<&str, f64> = BTreeMap::new();
    for row in &served.lock_rows {
        *theirs.entry(row.row_range_start_key.as_str()).or_default() += row.lock_wait_seconds;
    }
    let top = |m: &BTreeMap<&str, f64>| {
        m.iter()
            .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(k, _)| crate::text::printable(k).into_owned())
    };
    let (run, target) = (top(&ours), top(&theirs));
    let agree = match (&run, &target) {
        (Some(r), Some(t)) => Some(same_key(r, t)),
        _ => None,
    };
    let run: String = run.unwrap_or_else(|| "n/a".into());
    let target: String = target.unwrap_or_else(|| "none".into());
    let words = match agree {
        Some(true) => format!(
            "hottest key: the run's {run} is LOCK_STATS' row range with the most lock wait, {target}"
        ),
        Some(false) => format!(
            "hottest key: the run waited most on {run}, LOCK_STATS most on {target} (other \
             clients', or a range that starts elsewhere)"
        ),
        None => format!("hottest key: the run's {run}, LOCK_STATS' {target}: nothing to compare"),
    };
    ComparedFigure {
        what: "hottest key",
        run,
        target,
        agree,
        words,
    }
}

/// Whether the run's key in words (`accounts(1)`, lower-cased as the lock table names it) and a
/// ROW_RANGE_START_KEY (`Accounts(1)`, `Accounts(1)+` for a range from it) name the same start.
pub fn same_key(run: &str, target: &str) -> bool {
    let target = target.strip_suffix('+').unwrap_or(target);
    let run = run.replace(['[', ' '], "");
    let run = run.split("..").next().unwrap_or(&run);
    run.eq_ignore_ascii_case(target)
}

/// A count of the run's beside the target's.
fn count_line(what: &'static str, run: u64, target: u64) -> ComparedFigure {
    let agree = run == target;
    let words = if agree {
        format!("{what}: the run counted {run}, TXN_STATS {target} for its tag: they agree")
    } else {
        let (more, by) = if target > run {
            ("more", target - run)
        } else {
            ("fewer", run - target)
        };
        format!(
            "{what}: the run counted {run}, TXN_STATS {target} for its tag: the target counted \
             {by} {more}"
        )
    };
    ComparedFigure {
        what,
        run: run.to_string(),
        target: target.to_string(),
        agree: Some(agree),
        words,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::server_stats::{LockStatsRow, ServerStats, TxnStatsRow};
    use crate::load::{LoadSteps, Model, RunFacts, StepCpu, StepLevel, StepTally};
    use crate::report::{Conflicts, KeyConflicts};
    use std::time::Duration;

    fn report(wait_ms: f64, key: &str, attempts: u64, aborts: u64) -> LoadReport {
        let plan = LoadSteps {
            model: Model::Closed,
            levels: vec![StepLevel::Concurrency(4)],
            step_duration: Duration::from_secs(3),
            max_in_flight: 10,
            drain: Duration::from_secs(1),
        };
        let mut step = StepTally::read_write(StepLevel::Concurrency(4)).finish(
            Duration::ZERO,
            Duration::from_secs(3),
            StepCpu::default(),
        );
        step.committed = Some(attempts - aborts);
        step.attempts = [(1, attempts - 2 * aborts), (2, aborts)].into();
        step.aborts_at = [("commit".to_owned(), aborts)].into();
        step.conflicts = Some(Conflicts {
            waits: 3,
            wait_ms,
            wounds: 0,
            keys: vec![KeyConflicts {
                key: key.into(),
                waits: 3,
                wait_ms,
                ..Default::default()
            }],
        });
        LoadReport::new(RunFacts::default(), &plan, vec![step])
    }

    fn served(seconds: f64, key: &str, attempts: u64, aborts: u64) -> ServedStats {
        ServedStats {
            intervals: vec!["2026-12-05T18:31:00Z".into()],
            lock_rows: vec![LockStatsRow {
                interval_end: "2026-12-05T18:31:00Z".into(),
                row_range_start_key: key.into(),
                lock_wait_seconds: seconds,
                sample_lock_requests: Vec::new(),
            }],
            txn_rows: vec![TxnStatsRow {
                interval_end: "2026-12-05T18:31:00Z".into(),
                tag: "t".into(),
                attempt_count: attempts,
                commit_attempt_count: attempts,
                commit_abort_count: aborts,
                commit_retry_count: aborts,
                avg_total_latency_seconds: None,
            }],
            notices: Vec::new(),
        }
    }

    #[test]
    fn figures_that_agree_are_said_to() {
        let r = report(1_500.0, "accounts(1)", 40, 5);
        let c = compare(&r, "t", &served(1.5004, "Accounts(1)", 40, 5));
        assert!(c.lines.iter().all(|l| l.agree == Some(true)), "{c:#?}");
        assert!(c.lines[0].words.contains("1.500 s"), "{}", c.lines[0].words);
        assert!(c.lines[0].words.ends_with("they agree"));
        assert!(c.lines[1].words.contains("Accounts(1)"));
        assert_eq!(c.lines[4].run, "35");
        assert!(c.caveats.iter().any(|w| w.contains("not per tag")));
    }

    #[test]
    fn figures_that_differ_say_by_how_much_and_why() {
        let r = report(1_000.0, "accounts(1)", 40, 5);
        let c = compare(&r, "t", &served(1.8, "Accounts(7)", 43, 5));
        let words: Vec<&str> = c.lines.iter().map(|l| l.words.as_str()).collect();
        assert_eq!(c.lines[0].agree, Some(false));
        assert!(words[0].contains("0.800 s more"), "{}", words[0]);
        assert!(words[0].contains("other clients"), "{}", words[0]);
        assert_eq!(c.lines[1].agree, Some(false));
        assert!(words[1].contains("accounts(1)") && words[1].contains("Accounts(7)"));
        assert!(words[2].contains("3 more"), "{}", words[2]);
        assert_eq!(c.lines[3].agree, Some(true));
    }

    #[test]
    fn a_target_without_statistics_is_said_so_and_shows_no_figure() {
        let mut r = report(10.0, "accounts(1)", 4, 0);
        assert_eq!(server_stats_view(&r), None, "not asked, nothing said");
        r.server_stats = Some(ServerStats {
            tag: "t".into(),
            run_from: String::new(),
            run_to: String::new(),
            read: StatsRead::NotServed {
                why: "NOT_FOUND: Table not found: SPANNER_SYS.LOCK_STATS_TOTAL_MINUTE".into(),
            },
            lock_free: false,
        });
        let Some(StatsView::NotServed(words)) = server_stats_view(&r) else {
            panic!("not served");
        };
        assert!(words.starts_with(NOT_SERVED), "{words}");
        assert!(words.contains("NOT_FOUND"), "{words}");
        assert!(!words.contains(" 0"), "no zero is made up: {words}");
    }

    #[test]
    fn a_lock_free_run_is_said_to_be_uncounted_and_no_figure_is_held_against_it() {
        let mut r = report(0.0, "accounts(1)", 40, 5);
        r.server_stats = Some(ServerStats {
            tag: "t".into(),
            run_from: String::new(),
            run_to: String::new(),
            read: StatsRead::Served(ServedStats::default()),
            lock_free: true,
        });
        assert_eq!(
            server_stats_view(&r),
            Some(StatsView::NotCounted(NOT_COUNTED.to_owned()))
        );
    }

    #[test]
    fn an_interval_without_lock_rows_says_zero_seconds_not_minus_zero() {
        let r = report(0.0, "accounts(1)", 40, 5);
        let none = ServedStats {
            lock_rows: Vec::new(),
            ..served(0.0, "Accounts(1)", 40, 5)
        };
        let c = compare(&r, "t", &none);
        assert_eq!(c.lines[0].target, "0.000 s", "{c:#?}");
    }

    #[test]
    fn keys_match_across_the_two_spellings() {
        assert!(same_key("accounts(1)", "Accounts(1)"));
        assert!(same_key("accounts[(1)..(5))", "Accounts(1)+"));
        assert!(!same_key("accounts(1)", "Accounts(10)"));
        assert!(lock_waits_agree(0.0, 0.001));
        assert!(lock_waits_agree(10.0, 10.15));
        assert!(!lock_waits_agree(1.0, 1.1));
    }
}
