//! Load variants (`spanprof load --vary SETTING=V1,V2`): whole load runs of one workload that
//! differ in one setting (the lock mode, the isolation, the commit delay, the skew), set side by
//! side step level by step level, and what changed said in words, each variant against the first.
//!
//! A step is matched to the others' by its level (a rate or a number of clients); a level a run
//! did not reach (cancelled before it) is said to be missing, never compared. Every figure is the
//! step's own (`steps[]` of its [`LoadReport`]): goodput, attempts a second, aborts per
//! transaction, those at commit, the lock wait per committed transaction (`parts.lock_wait`), and
//! the 50th and 99th percentiles from the intended start.

use crate::load::{LoadReport, StepResult};
use crate::text::trimmed;

/// One run's figures at one step level.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VariantRow {
    /// The step's level as a number (its rate, or its clients).
    pub level: f64,
    /// The level in words (`concurrency 4`, `200 req/s`).
    pub level_words: String,
    /// The setting's value the run had (`optimistic`).
    pub value: String,
    /// Transactions committed (requests ended ok) a second.
    pub goodput_per_s: f64,
    /// Attempts a second, aborted ones included (a read-write step's; `None` for a query's).
    pub attempts_per_s: Option<f64>,
    /// Aborted attempts per transaction that made one.
    pub aborts_per_transaction: Option<f64>,
    /// Of them, the ones that aborted at the commit, per transaction.
    pub commit_aborts_per_transaction: Option<f64>,
    /// The lock wait per committed transaction, in ms: 0 for a read-write step that waited for
    /// none, `None` where nothing committed (or for a query's step).
    pub lock_wait_ms: Option<f64>,
    /// The median latency from the intended start.
    pub p50_ms: Option<f64>,
    /// The 99th percentile from the intended start.
    pub p99_ms: Option<f64>,
}

/// The variants compared: a row per (step level, run), and the comparison in words.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VariantComparison {
    /// The rows: by level, in the order the levels were first run, each level's runs in the
    /// order run.
    pub rows: Vec<VariantRow>,
    /// Each variant after the first against the first, a sentence per level.
    pub words: Vec<String>,
}

/// What a step's figures are, for a comparison.
fn row_of(step: &StepResult, value: &str) -> VariantRow {
    let transactions: u64 = step.attempts.values().sum();
    let read_write = step.committed.is_some();
    let commit_aborts = (read_write && transactions > 0)
        .then(|| step.aborts_at.get("commit").copied().unwrap_or(0) as f64 / transactions as f64);
    let lock_wait =
        (read_write && step.count > 0).then(|| step.parts.get("lock_wait").copied().unwrap_or(0.0));
    VariantRow {
        level: step.level().value(),
        level_words: step.level().describe(),
        value: value.to_owned(),
        goodput_per_s: step.committed_per_s.unwrap_or(step.achieved_rate),
        attempts_per_s: step.attempts_per_s,
        aborts_per_transaction: step.aborts_per_transaction,
        commit_aborts_per_transaction: commit_aborts,
        lock_wait_ms: lock_wait,
        p50_ms: step.p50_ms,
        p99_ms: step.p99_ms,
    }
}

/// The runs `reports` (one per value of `values`, in order) compared level by level; the first
/// is the one every other is set against.
pub fn compare_variants(values: &[String], reports: &[LoadReport]) -> VariantComparison {
    let mut levels: Vec<(f64, String)> = Vec::new();
    for step in reports.iter().flat_map(|r| &r.steps) {
        let level = step.level();
        if !levels.iter().any(|(v, _)| *v == level.value()) {
            levels.push((level.value(), level.describe()));
        }
    }
    let value = |i: usize| {
        values
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("run {}", i + 1))
    };
    let mut rows = Vec::new();
    let mut words = Vec::new();
    let many_levels = levels.len() > 1;
    for (level, level_words) in &levels {
        let at: Vec<Option<VariantRow>> = reports
            .iter()
            .enumerate()
            .map(|(i, r)| {
                r.steps
                    .iter()
                    .find(|s| s.level().value() == *level)
                    .map(|s| row_of(s, &value(i)))
            })
            .collect();
        rows.extend(at.iter().flatten().cloned());
        let Some(Some(base)) = at.first() else {
            continue;
        };
        for (i, other) in at.iter().enumerate().skip(1) {
            let lead = if many_levels {
                format!("at {level_words}, {}", value(i))
            } else {
                value(i)
            };
            words.push(match other {
                Some(other) => sentence(&lead, base, other),
                None => format!("{lead}: no step at {level_words} (the run ended before it)"),
            });
        }
    }
    VariantComparison { rows, words }
}

/// A figure in words: one decimal past 10, at most two below, three below 0.1 (so that a wait
/// that is not zero never reads as one).
fn fig(v: f64) -> String {
    if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else if v.abs() >= 0.1 {
        trimmed(v, 2)
    } else {
        trimmed(v, 3)
    }
}

/// Two figures closer than this share of the larger are said to be alike: a difference that
/// small is a shared machine's noise between two runs, not a trade.
pub const ALIKE_SHARE: f64 = 0.1;

/// How `other` compares with `base`: `Equal` when they print alike or are within
/// [`ALIKE_SHARE`] of the larger, except that zero is never alike a figure that is not.
fn compared(base: f64, other: f64) -> std::cmp::Ordering {
    let zero_apart = (base == 0.0) != (other == 0.0);
    let alike = fig(base) == fig(other) || (other - base).abs() <= ALIKE_SHARE * base.max(other);
    if alike && !zero_apart {
        std::cmp::Ordering::Equal
    } else {
        other.total_cmp(&base)
    }
}

/// How `other` did against `base`, led by `lead`: its lock waits, its aborts at commit, what it
/// traded, its goodput.
fn sentence(lead: &str, base: &VariantRow, other: &VariantRow) -> String {
    let b = &base.value;
    let mut clauses = Vec::new();
    let waits = match (base.lock_wait_ms, other.lock_wait_ms) {
        (Some(bw), Some(ow)) => Some((bw, ow)),
        _ => None,
    };
    let aborts = match (
        base.commit_aborts_per_transaction,
        other.commit_aborts_per_transaction,
    ) {
        (Some(ba), Some(oa)) => Some((ba, oa)),
        _ => None,
    };
    use std::cmp::Ordering::{Equal, Greater, Less};
    let waits_moved = waits.map(|(bw, ow)| compared(bw, ow));
    let aborts_moved = aborts.map(|(ba, oa)| compared(ba, oa));
    if let Some((bw, ow)) = waits {
        clauses.push(if ow == 0.0 && bw == 0.0 {
            format!("no lock waits, as {b}")
        } else if ow == 0.0 {
            format!("no lock waits ({b} waited {} ms per transaction)", fig(bw))
        } else if waits_moved == Some(Less) {
            format!(
                "lock waits fell to {} ms per transaction from {}",
                fig(ow),
                fig(bw)
            )
        } else if waits_moved == Some(Greater) {
            format!(
                "lock waits rose to {} ms per transaction from {}",
                fig(ow),
                fig(bw)
            )
        } else {
            format!(
                "about the lock wait of {b}, {} ms per transaction against {}",
                fig(ow),
                fig(bw)
            )
        });
    }
    if let Some((ba, oa)) = aborts {
        let opposite = matches!(
            (waits_moved, aborts_moved),
            (Some(Less), Some(Greater)) | (Some(Greater), Some(Less))
        );
        let join = if opposite {
            "but "
        } else if clauses.is_empty() {
            ""
        } else {
            "and "
        };
        let s = |v: f64| if v == 1.0 { "" } else { "s" };
        let about = if aborts_moved == Some(Equal) && oa != ba {
            "about as many: "
        } else {
            ""
        };
        clauses.push(format!(
            "{join}{about}{} abort{} per transaction at commit against {}",
            fig(oa),
            s(oa),
            fig(ba)
        ));
    }
    let mut text = format!("{lead}: {}", clauses.join(" "));
    if let (Some(waits), Some(aborts)) = (waits_moved, aborts_moved) {
        let traded = match (waits, aborts) {
            (Less, Greater) => Some("it traded waits for aborts on this workload"),
            (Greater, Less) => Some("it traded aborts for waits on this workload"),
            (Less, Less) => Some("fewer waits and fewer aborts at commit"),
            (Greater, Greater) => Some("more waits and more aborts at commit"),
            _ => None,
        };
        if let Some(t) = traded {
            text.push_str(": ");
            text.push_str(t);
        }
    }
    let goodput = goodput_words(base, other);
    if clauses.is_empty() {
        // A query's steps: no transaction figures, so their latencies say what changed.
        text = format!("{lead}: {goodput}{}", latency_words(base, other));
    } else {
        text.push_str("; ");
        text.push_str(&goodput);
    }
    text.push('.');
    text
}

/// `; p50 6.3 ms against 3 ms, p99 9 ms against 4.2 ms`, each percentile both runs have.
fn latency_words(base: &VariantRow, other: &VariantRow) -> String {
    let mut words = String::new();
    for (name, b, o) in [
        ("p50", base.p50_ms, other.p50_ms),
        ("p99", base.p99_ms, other.p99_ms),
    ] {
        if let (Some(b), Some(o)) = (b, o) {
            words.push_str(if words.is_empty() { "; " } else { ", " });
            words.push_str(&format!("{name} {} ms against {} ms", fig(o), fig(b)));
        }
    }
    words
}

/// `goodput 12.1/s against 17.7/s (0.68x)`, the ratio left out when the first had none.
fn goodput_words(base: &VariantRow, other: &VariantRow) -> String {
    let ratio = if base.goodput_per_s > 0.0 {
        format!(
            " ({}x)",
            trimmed(other.goodput_per_s / base.goodput_per_s, 2)
        )
    } else {
        String::new()
    };
    format!(
        "goodput {}/s against {}/s{ratio}",
        fig(other.goodput_per_s),
        fig(base.goodput_per_s)
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use super::*;
    use crate::load::{LoadSteps, Model, RunFacts, StepCpu, StepLevel, StepTally};

    /// A read-write step at `clients`: `committed` of `transactions` a second over 1 s, `aborts`
    /// aborts of which `at_commit` at commit, `lock_wait` ms per committed transaction.
    fn step(clients: u32, committed: u64, aborts: (u64, u64), lock_wait: f64) -> StepResult {
        let tally = StepTally::read_write(StepLevel::Concurrency(clients));
        let mut s = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        let (all, at_commit) = aborts;
        s.count = committed;
        s.committed = Some(committed);
        s.committed_per_s = Some(committed as f64);
        s.attempts = BTreeMap::from([(1, committed)]);
        s.aborts_at = BTreeMap::from([
            ("commit".to_owned(), at_commit),
            ("dml".to_owned(), all - at_commit),
        ]);
        s.aborts_at.retain(|_, n| *n > 0);
        s.aborts_per_transaction = Some(all as f64 / committed as f64);
        if lock_wait > 0.0 {
            s.parts.insert("lock_wait".to_owned(), lock_wait);
        }
        s
    }

    fn run(steps: Vec<StepResult>) -> LoadReport {
        let plan = LoadSteps {
            model: Model::Closed,
            levels: steps.iter().map(StepResult::level).collect(),
            step_duration: Duration::from_secs(1),
            max_in_flight: 4,
            drain: Duration::from_secs(1),
        };
        LoadReport::new(RunFacts::default(), &plan, steps)
    }

    fn values(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_variant_without_waits_and_with_more_commit_aborts_traded_waits_for_aborts() {
        let runs = [
            run(vec![step(4, 100, (40, 40), 38.2)]),
            run(vec![step(4, 50, (95, 95), 0.0)]),
        ];
        let c = compare_variants(&values(&["pessimistic", "optimistic"]), &runs);
        assert_eq!(c.rows.len(), 2);
        assert_eq!(c.rows[1].lock_wait_ms, Some(0.0));
        assert_eq!(c.rows[0].commit_aborts_per_transaction, Some(0.4));
        assert_eq!(
            c.words,
            [
                "optimistic: no lock waits (pessimistic waited 38.2 ms per transaction) but 1.9 \
              aborts per transaction at commit against 0.4: it traded waits for aborts on this \
              workload; goodput 50.0/s against 100.0/s (0.5x)."
            ]
        );
    }

    #[test]
    fn commit_aborts_within_a_tenth_are_alike_and_no_trade_is_claimed_of_them() {
        // 0.12 against 0.118 at commit: the noise of two runs, not a trade.
        let runs = [
            run(vec![step(2, 1000, (118, 118), 0.44)]),
            run(vec![step(2, 1000, (120, 120), 0.0)]),
        ];
        let c = compare_variants(&values(&["pessimistic", "optimistic"]), &runs);
        let w = &c.words[0];
        assert!(!w.contains("traded"), "{w}");
        assert!(
            w.contains(
                "no lock waits (pessimistic waited 0.44 ms per transaction) and about as many: \
                 0.12 aborts per transaction at commit against 0.12"
            ),
            "{w}"
        );
        // A third more is a difference.
        let runs = [
            run(vec![step(2, 1000, (90, 90), 0.44)]),
            run(vec![step(2, 1000, (120, 120), 0.0)]),
        ];
        let c = compare_variants(&values(&["pessimistic", "optimistic"]), &runs);
        assert!(
            c.words[0].contains("it traded waits for aborts"),
            "{}",
            c.words[0]
        );
    }

    #[test]
    fn fewer_waits_and_fewer_aborts_is_no_trade_and_no_lock_waits_is_said_only_of_a_zero() {
        let runs = [
            run(vec![step(4, 100, (40, 40), 20.0)]),
            run(vec![step(4, 100, (10, 10), 0.001)]),
        ];
        let c = compare_variants(&values(&["a", "b"]), &runs);
        let w = &c.words[0];
        assert!(!w.contains("no lock waits"), "{w}");
        assert!(!w.contains("traded"), "{w}");
        assert!(
            w.contains("lock waits fell to 0.001 ms per transaction from 20.0"),
            "{w}"
        );
        assert!(
            w.contains("and 0.1 aborts per transaction at commit against 0.4"),
            "{w}"
        );
        assert!(w.contains("fewer waits and fewer aborts at commit"), "{w}");
    }

    #[test]
    fn more_waits_and_fewer_aborts_traded_aborts_for_waits_and_more_of_both_is_said_plainly() {
        let base = run(vec![step(2, 100, (50, 50), 1.0)]);
        let c = compare_variants(
            &values(&["0ms", "100ms"]),
            &[base.clone(), run(vec![step(2, 80, (8, 8), 30.0)])],
        );
        let w = &c.words[0];
        assert!(
            w.starts_with("100ms: lock waits rose to 30.0 ms per transaction from 1"),
            "{w}"
        );
        assert!(
            w.contains("but 0.1 aborts per transaction at commit against 0.5"),
            "{w}"
        );
        assert!(w.contains("it traded aborts for waits"), "{w}");
        let c = compare_variants(
            &values(&["0ms", "100ms"]),
            &[base, run(vec![step(2, 80, (80, 80), 30.0)])],
        );
        let w = &c.words[0];
        assert!(
            w.contains("and 1 abort per transaction at commit against 0.5"),
            "{w}"
        );
        assert!(w.contains("more waits and more aborts at commit"), "{w}");
        assert!(!w.contains("traded") && !w.contains("but"), "{w}");
    }

    #[test]
    fn no_waits_on_either_side_is_said_as_such_and_no_trade_is_claimed() {
        let runs = [
            run(vec![step(4, 100, (40, 20), 0.0)]),
            run(vec![step(4, 90, (60, 60), 0.0)]),
        ];
        let c = compare_variants(&values(&["serializable", "repeatable-read"]), &runs);
        let w = &c.words[0];
        assert!(
            w.starts_with("repeatable-read: no lock waits, as serializable and 0.6"),
            "{w}"
        );
        assert!(!w.contains("traded"), "{w}");
        assert!(w.ends_with("goodput 90.0/s against 100.0/s (0.9x)."), "{w}");
    }

    #[test]
    fn levels_are_matched_across_runs_and_a_missing_one_is_said() {
        let runs = [
            run(vec![step(1, 10, (0, 0), 0.0), step(4, 40, (4, 4), 5.0)]),
            run(vec![step(1, 10, (0, 0), 0.0)]),
        ];
        let c = compare_variants(&values(&["1", "2"]), &runs);
        assert_eq!(c.rows.len(), 3);
        assert_eq!(c.rows[2].level, 4.0);
        assert_eq!(c.words.len(), 2);
        assert!(
            c.words[0].starts_with("at concurrency 1, 2: "),
            "{}",
            c.words[0]
        );
        assert_eq!(
            c.words[1],
            "at concurrency 4, 2: no step at concurrency 4 (the run ended before it)"
        );
    }

    #[test]
    fn a_query_run_s_steps_are_compared_by_goodput_and_latency() {
        let mut s = StepTally::new(StepLevel::Rate(50.0)).finish(
            Duration::ZERO,
            Duration::from_secs(1),
            StepCpu::default(),
        );
        s.achieved_rate = 49.0;
        s.p50_ms = Some(3.0);
        s.p99_ms = Some(4.25);
        let mut t = s.clone();
        t.achieved_rate = 25.0;
        t.p50_ms = Some(6.3);
        t.p99_ms = None;
        let c = compare_variants(&values(&["1.1", "2"]), &[run(vec![s]), run(vec![t])]);
        assert_eq!(c.rows[0].lock_wait_ms, None);
        assert_eq!(
            c.words,
            ["2: goodput 25.0/s against 49.0/s (0.51x); p50 6.3 ms against 3 ms."]
        );
    }
}
