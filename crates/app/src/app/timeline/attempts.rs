//! A read-write transaction's timeline as data: one lane per attempt on the iteration's time
//! axis, each attempt starting where the one before it ended plus the back-off slept after it.
//! A lane holds the attempt's actions (begin, each statement, batch DML, think time, commit), the
//! call it ended at when it aborted or failed (from its last action's end to its own end: that
//! call is not one of its actions), and the back-off after it; each with its figures in words for
//! the hover. An action's waits for locks are marked inside it (their share of it, from its start:
//! the server takes a statement's or commit's locks before it runs it), the hover naming the key,
//! column, mode, time and whom it waited behind; a wounded attempt's end names the older
//! transaction that wounded it (as the run's conflict view, `analysis::RunConflicts`, names them:
//! one of the run's attempts, or another client's). Built once per opened iteration;
//! `attempts_view.rs` draws it.

use crate::analysis::RunConflicts;
use crate::analysis::conflicts::Party;
use crate::report::{Action, ActionKind, Attempt, AttemptOutcome, QueryTimings, TransactionRecord};
use crate::text::{count, maybe_ms, ms};

/// The most lanes drawn: a transaction of more attempts shows its last ones.
pub const MAX_LANES: usize = 40;

/// What a segment of a lane is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    /// One of the attempt's actions.
    Action(ActionKind),
    /// The call the attempt ended at, aborted or failed.
    Ended(ActionKind),
    /// The back-off slept after the attempt, before the next.
    Backoff,
}

/// One stretch of a lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    /// What it is.
    pub segment: Segment,
    /// Where it starts and ends, in ms from the iteration's start.
    pub from_ms: f64,
    /// See `from_ms`.
    pub to_ms: f64,
    /// Its name, written on it where it fits (the back-off's with its figures).
    pub label: String,
    /// Its figures, for the hover.
    pub hover: String,
    /// The waits for locks inside it, each from and to, in ms from the iteration's start.
    pub waits: Vec<(f64, f64)>,
}

/// One attempt's lane.
#[derive(Debug, Clone, PartialEq)]
pub struct Lane {
    /// Its name on the axis: `attempt 2`.
    pub label: String,
    /// How the attempt ended.
    pub outcome: AttemptOutcome,
    /// Where the attempt starts and ends, in ms from the iteration's start (its back-off after).
    pub start_ms: f64,
    /// See `start_ms`.
    pub end_ms: f64,
    /// Its stretches, in time order.
    pub stretches: Vec<Stretch>,
    /// How it ended, in words, when it did not commit: `aborted at commit` (and who wounded it,
    /// when the server said).
    pub ended: Option<String>,
    /// The same without who wounded it, where the whole does not fit.
    pub ended_short: Option<String>,
}

/// The lanes of one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct AttemptLanes {
    /// The lanes drawn, first attempt at the top.
    pub lanes: Vec<Lane>,
    /// Attempts left out before them (past [`MAX_LANES`]).
    pub left_out: usize,
    /// Where the last lane ends (or the iteration's total, if later), in ms.
    pub end_ms: f64,
    /// Whether some action waited for a lock or some attempt was wounded (the server named it).
    pub named_conflicts: bool,
}

impl AttemptLanes {
    /// The lanes of `t`, the transaction of an iteration `total_ms` long, its waits and wounds
    /// named as `conflicts` (the run's conflict view) names them.
    pub fn of(
        t: &TransactionRecord,
        total_ms: f64,
        conflicts: Option<&RunConflicts>,
    ) -> AttemptLanes {
        let mut lanes = Vec::with_capacity(t.attempts.len().min(MAX_LANES));
        let mut start = 0.0f64;
        for (k, a) in t.attempts.iter().enumerate() {
            let lane = lane(k + 1, a, start, conflicts);
            start = lane.stretches.last().map_or(lane.end_ms, |s| s.to_ms);
            lanes.push(lane);
        }
        let end_ms = start.max(if total_ms.is_finite() { total_ms } else { 0.0 });
        let left_out = lanes.len().saturating_sub(MAX_LANES);
        lanes.drain(..left_out);
        let named_conflicts = t
            .attempts
            .iter()
            .any(|a| a.wounded_by.is_some() || a.actions.iter().any(|s| !s.lock_waits.is_empty()));
        AttemptLanes {
            lanes,
            left_out,
            end_ms,
            named_conflicts,
        }
    }
}

/// Attempt `number`'s lane, the attempt starting `start` ms into the iteration.
fn lane(number: usize, a: &Attempt, start: f64, conflicts: Option<&RunConflicts>) -> Lane {
    let end = start + a.total_ms.max(0.0);
    let mut stretches: Vec<Stretch> = a
        .actions
        .iter()
        .filter(|s| s.kind.is_some())
        .map(|s| {
            let mut stretch = action(s, start);
            lock_waits(&mut stretch, s, conflicts);
            stretch
        })
        .collect();
    let ended_at = a.ended_at.filter(|_| {
        matches!(
            a.outcome,
            AttemptOutcome::Aborted | AttemptOutcome::Failed | AttemptOutcome::Unknown
        )
    });
    let wound = a.wounded_by.as_ref().map(|w| match conflicts {
        Some(c) => c.wound_words(w),
        None => format!("wounded by transaction {}", w.by),
    });
    // Short on the lane (the hover says the rest): the attempt of this run, or another client.
    let by = a
        .wounded_by
        .as_ref()
        .map(|w| match conflicts.map(|c| c.party(&w.by)) {
            Some(Party::Attempt(older)) => format!(", wounded by {}", older.words()),
            Some(Party::Other(_)) => ", wounded by another client".to_owned(),
            None => ", wounded".to_owned(),
        });
    let ended_short = ended_at.map(|at| format!("{} at {}", a.outcome.as_str(), step_name(at)));
    let ended = ended_short
        .as_ref()
        .map(|short| format!("{short}{}", by.as_deref().unwrap_or_default()));
    if let Some(at) = ended_at {
        ended_stretch(&mut stretches, (number, a), at, (start, end));
        if let (Some(last), Some(wound)) = (stretches.last_mut(), &wound) {
            last.hover.push_str(&format!("\n{wound}"));
        }
    }
    if let Some(b) = a.backoff_ms.filter(|b| *b > 0.0) {
        stretches.push(backoff(number, a, end, b));
    }
    Lane {
        label: format!("attempt {number}"),
        outcome: a.outcome,
        start_ms: start,
        end_ms: end,
        stretches,
        ended,
        ended_short,
    }
}

/// Marks where attempt `number` (`a`, from `start` to `end`) ended, at the call `at`: its last
/// action when the record kept the call that failed as one, else a stretch of its own from its
/// last action's end to its end; with the outcome and the server's message for the hover.
fn ended_stretch(
    stretches: &mut Vec<Stretch>,
    (number, a): (usize, &Attempt),
    at: ActionKind,
    (start, end): (f64, f64),
) {
    let said = a.message.as_deref().map_or(String::new(), |m| {
        format!(
            "\nthe server said: {}",
            crate::text::excerpt(&crate::text::printable(m), 300)
        )
    });
    if let Some(last) = stretches
        .last_mut()
        .filter(|s| s.segment == Segment::Action(at))
    {
        last.segment = Segment::Ended(at);
        last.hover = format!(
            "{} ({}), attempt {number}: {}{said}",
            step_name(at),
            a.outcome.as_str(),
            last.hover
        );
        return;
    }
    let from = stretches.last().map_or(start, |s| s.to_ms.min(end));
    stretches.push(Stretch {
        segment: Segment::Ended(at),
        from_ms: from,
        to_ms: end,
        label: step_name(at).to_owned(),
        hover: format!(
            "{} ({}), attempt {number}: {}, from {} into the attempt{said}",
            step_name(at),
            a.outcome.as_str(),
            ms(end - from),
            ms(from - start)
        ),
        waits: Vec::new(),
    });
}

/// The back-off `b` ms slept after attempt `number`, which ended at `end`.
fn backoff(number: usize, a: &Attempt, end: f64, b: f64) -> Stretch {
    let asked = a.retry_delay_ms.map(|d| format!(" (RetryInfo {})", ms(d)));
    let from = a
        .retry_info_from
        .as_deref()
        .map(|f| format!(", read from the {f}"))
        .unwrap_or_default();
    let hover = match a.retry_delay_ms {
        Some(d) => format!(
            "back-off {} after attempt {number}: the server's RetryInfo asked for {}{from}",
            ms(b),
            ms(d)
        ),
        None => format!(
            "back-off {} after attempt {number}: the server asked for no delay (no RetryInfo); \
             the retry policy chose it",
            ms(b)
        ),
    };
    Stretch {
        segment: Segment::Backoff,
        from_ms: end,
        to_ms: end + b,
        label: format!("back-off {}{}", ms(b), asked.unwrap_or_default()),
        hover,
        waits: Vec::new(),
    }
}

/// One action's stretch, its attempt starting at `start`.
fn action(s: &Action, start: f64) -> Stretch {
    let kind = s.kind.unwrap_or(ActionKind::Query);
    let from = start + s.at_ms.max(0.0);
    let name = match kind {
        ActionKind::Query | ActionKind::Dml | ActionKind::BatchDml | ActionKind::Read
            if s.index > 0 =>
        {
            format!("{} {}", step_name(kind), s.index)
        }
        _ => step_name(kind).to_owned(),
    };
    let mut hover = format!(
        "{name}: {}, from {} into the attempt",
        ms(s.ms),
        ms(s.at_ms)
    );
    if let Some(rows) = s.rows {
        let what = if matches!(kind, ActionKind::Query | ActionKind::Read) {
            "returned"
        } else {
            "changed"
        };
        let noun = if rows == 1 { "row" } else { "rows" };
        hover.push_str(&format!("\n{} {noun} {what}", count(rows)));
    }
    if let Some(q) = s.query.as_ref().map(QueryTimings::from) {
        hover.push_str(&statement_words(&q));
    }
    if s.commit_retries > 0 {
        hover.push_str(&format!(
            "\ncommitted again {} times after the retry reply (its precommit token)",
            s.commit_retries
        ));
    }
    if s.commit_asked_again > 0 {
        hover.push_str(&format!(
            "\nits answer lost: the same Commit sent again {} times",
            s.commit_asked_again
        ));
    }
    Stretch {
        segment: Segment::Action(kind),
        from_ms: from,
        to_ms: from + s.ms.max(0.0),
        label: name,
        hover,
        waits: Vec::new(),
    }
}

/// Marks `s`'s waits for locks on its stretch, one after another from its start and within it,
/// and names each on its hover.
fn lock_waits(stretch: &mut Stretch, s: &Action, conflicts: Option<&RunConflicts>) {
    let mut at = stretch.from_ms;
    for wait in &s.lock_waits {
        let share = wait.ms.max(0.0).min((stretch.to_ms - at).max(0.0));
        if share > 0.0 {
            stretch.waits.push((at, at + share));
        }
        at += share;
        let words = match conflicts {
            Some(c) => c.wait_words(wait),
            None => format!("waited {:.1} ms for {}", wait.ms, wait.key),
        };
        stretch.hover.push_str(&format!("\n{words}"));
    }
}

/// A streamed statement's figures, a line each after a newline.
fn statement_words(q: &QueryTimings) -> String {
    let mut words = format!(
        "\nfirst byte {} · waited {}",
        maybe_ms(q.ttfb_ms),
        maybe_ms(q.stream_wait_ms)
    );
    if let Some(server) = q.server_elapsed_ms {
        words.push_str(&format!(" · the server reports {}", ms(server)));
    }
    words.push_str(&format!(
        "\nwire decode {} · row decode {} · client work {}",
        maybe_ms(q.wire_decode_wall_ms),
        maybe_ms(q.row_decode_wall_ms),
        maybe_ms(q.client_work_wall_ms)
    ));
    words
}

/// A step's name for people: `begin`, `query`, `DML`, `batch DML`, `mutation`, `think`, `commit`,
/// `rollback`.
pub fn step_name(kind: ActionKind) -> &'static str {
    match kind {
        ActionKind::Begin => "begin",
        ActionKind::Query => "query",
        ActionKind::Dml => "DML",
        ActionKind::Read => "read",
        ActionKind::BatchDml => "batch DML",
        ActionKind::Mutate => "mutation",
        ActionKind::Think => "think",
        ActionKind::Commit => "commit",
        ActionKind::Rollback => "rollback",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dml(index: u32, at_ms: f64, took: f64) -> Action {
        Action {
            kind: Some(ActionKind::Dml),
            index,
            at_ms,
            ms: took,
            rows: Some(1),
            ..Action::default()
        }
    }

    /// Two DML aborted at the commit (20 ms asked, 21.1 slept), then committed.
    pub(crate) fn aborted_once() -> TransactionRecord {
        let mut aborted = Attempt::new(AttemptOutcome::Aborted);
        aborted.total_ms = 3.0;
        aborted.actions = vec![dml(1, 0.0, 1.0), dml(2, 1.0, 1.0)];
        aborted.ended_at = Some(ActionKind::Commit);
        aborted.message = Some("Transaction aborted; retry it".into());
        aborted.retry_delay_ms = Some(20.0);
        aborted.retry_info_from = Some("details".into());
        aborted.backoff_ms = Some(21.1);
        let mut committed = Attempt::new(AttemptOutcome::Committed);
        committed.total_ms = 4.0;
        committed.actions = vec![
            dml(1, 0.0, 1.5),
            dml(2, 1.5, 1.0),
            Action {
                kind: Some(ActionKind::Commit),
                at_ms: 2.5,
                ms: 1.5,
                ..Action::default()
            },
        ];
        TransactionRecord {
            attempts: vec![aborted, committed],
            ..TransactionRecord::default()
        }
    }

    #[test]
    fn each_attempt_starts_after_the_one_before_and_its_back_off() {
        let lanes = AttemptLanes::of(&aborted_once(), 28.2, None);
        assert_eq!(lanes.lanes.len(), 2);
        let (first, second) = (&lanes.lanes[0], &lanes.lanes[1]);
        assert_eq!((first.start_ms, first.end_ms), (0.0, 3.0));
        assert_eq!(first.ended.as_deref(), Some("aborted at commit"));
        let kinds: Vec<Segment> = first.stretches.iter().map(|s| s.segment).collect();
        assert_eq!(
            kinds,
            [
                Segment::Action(ActionKind::Dml),
                Segment::Action(ActionKind::Dml),
                Segment::Ended(ActionKind::Commit),
                Segment::Backoff
            ]
        );
        // The commit the server aborted: from the last statement's end to the attempt's end.
        assert_eq!(
            (first.stretches[2].from_ms, first.stretches[2].to_ms),
            (2.0, 3.0)
        );
        let back_off = &first.stretches[3];
        assert_eq!(back_off.label, "back-off 21.1 ms (RetryInfo 20.0 ms)");
        assert!((back_off.to_ms - 24.1).abs() < 1e-9);
        assert!((second.start_ms - 24.1).abs() < 1e-9);
        assert!((second.stretches[2].from_ms - 26.6).abs() < 1e-9);
        assert_eq!(second.ended, None);
        assert!((lanes.end_ms - 28.2).abs() < 1e-9, "the total, past 28.1");
        assert!(
            first.stretches[0].hover.ends_with("\n1 row changed"),
            "{}",
            first.stretches[0].hover
        );
    }

    #[test]
    fn a_call_the_record_kept_as_an_action_is_marked_where_the_attempt_ended() {
        let mut t = aborted_once();
        t.attempts[0].actions.push(Action {
            kind: Some(ActionKind::Commit),
            at_ms: 2.0,
            ms: 0.9,
            ..Action::default()
        });
        let lanes = AttemptLanes::of(&t, 0.0, None);
        let first = &lanes.lanes[0];
        let kinds: Vec<Segment> = first.stretches.iter().map(|s| s.segment).collect();
        assert_eq!(
            kinds,
            [
                Segment::Action(ActionKind::Dml),
                Segment::Action(ActionKind::Dml),
                Segment::Ended(ActionKind::Commit),
                Segment::Backoff
            ],
            "one commit, not two"
        );
        let commit = &first.stretches[2];
        assert!((commit.to_ms - 2.9).abs() < 1e-9);
        assert!(
            commit
                .hover
                .starts_with("commit (aborted), attempt 1: commit: 900 µs")
                && commit
                    .hover
                    .ends_with("the server said: Transaction aborted; retry it"),
            "{}",
            commit.hover
        );
    }

    #[test]
    fn a_wait_is_marked_inside_its_action_named_and_a_wound_names_the_older_transaction() {
        use crate::report::{IterationRecord, LockWaitSeen, ReportHead, RunConfig, WoundSeen};
        let mut t = aborted_once();
        t.attempts[0].transaction_id = Some("bb".into());
        t.attempts[0].actions[1].lock_waits = vec![LockWaitSeen {
            key: "accounts(1)".into(),
            column: Some("balance".into()),
            mode: "ReaderShared".into(),
            ms: 0.5,
            holders: vec!["aa".into()],
        }];
        t.attempts[0].wounded_by = Some(WoundSeen {
            by: "cc".into(),
            key: "accounts(1)".into(),
            column: None,
            mode: "Exclusive".into(),
        });
        let mut holder = IterationRecord::new("rw", 0, false, "");
        let mut older = Attempt::new(AttemptOutcome::Committed);
        older.transaction_id = Some("aa".into());
        holder.transaction = Some(TransactionRecord {
            attempts: vec![older],
            ..TransactionRecord::default()
        });
        let mut waiter = IterationRecord::new("rw", 1, false, "");
        waiter.transaction = Some(t.clone());
        let report =
            ReportHead::new(RunConfig::default(), String::new()).with_records(vec![holder, waiter]);
        let conflicts = RunConflicts::of(&report).expect("a conflict view");
        let lanes = AttemptLanes::of(&t, 28.2, Some(&conflicts));
        assert!(lanes.named_conflicts);
        let dml = &lanes.lanes[0].stretches[1];
        assert_eq!(
            dml.waits,
            [(1.0, 1.5)],
            "from the action's start, its share"
        );
        assert!(
            dml.hover.ends_with(
                "waited 0.5 ms for accounts(1).balance (ReaderShared) behind iteration 0, attempt 1"
            ),
            "{}",
            dml.hover
        );
        assert_eq!(
            lanes.lanes[0].ended.as_deref(),
            Some("aborted at commit, wounded by another client")
        );
        let end = &lanes.lanes[0].stretches[2];
        assert!(
            end.hover.ends_with(
                "wounded by another client's transaction cc, an older transaction that asked \
                 for accounts(1) (Exclusive)"
            ),
            "{}",
            end.hover
        );
        assert!(!AttemptLanes::of(&aborted_once(), 0.0, None).named_conflicts);
    }

    #[test]
    fn a_transaction_of_many_attempts_draws_its_last_ones() {
        let mut t = aborted_once();
        let again = t.attempts[0].clone();
        t.attempts
            .splice(0..0, std::iter::repeat_n(again, MAX_LANES + 5));
        let lanes = AttemptLanes::of(&t, 0.0, None);
        assert_eq!(lanes.lanes.len(), MAX_LANES);
        assert_eq!(lanes.left_out, 7);
        assert_eq!(
            lanes.lanes.last().map(|l| l.label.as_str()),
            Some("attempt 47")
        );
    }
}
