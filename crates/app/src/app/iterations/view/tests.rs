use super::*;

/// The parts of the `records` that count (timed, and in `selection` if it is not empty), as the
/// summary table gets them.
fn part_stats(records: &[IterationRecord], selection: &BTreeSet<u32>) -> Option<PartStats> {
    PartStats::of(chosen(records, selection))
}

fn record(i: u32, total: f64) -> IterationRecord {
    {
        let mut r = IterationRecord::new("r", i, i == 0, "t");
        r.total_ms = total;
        r.query.stream_wait_ms = Some(total * 0.6);
        r.query.server_elapsed_ms = Some(total * 0.2);
        r.query.wire_decode_wall_ms = Some(total * 0.1);
        r.query.row_decode_wall_ms = Some(total * 0.2);
        r.query.outside_wait_and_decode_ms = Some(total * 0.1);
        r
    }
}

#[test]
fn the_bars_stack_the_accounting_s_parts_and_add_up() {
    let r = record(1, 10.0);
    assert_eq!(
        stacked_parts(std::slice::from_ref(&r)),
        [
            Part::Server,
            Part::Network,
            Part::WireDecode,
            Part::RowDecode,
            Part::Untimed
        ]
    );
    let parts = r.accounting().parts;
    assert_eq!(parts.get(Part::Server), Some(2.0));
    assert_eq!(parts.get(Part::Network), Some(4.0));
    assert_eq!(parts.sum_ms(), 10.0);
    assert_eq!(overlap_span(&r), None, "the server's work fit in the waits");
}

#[test]
fn an_overlap_is_drawn_over_the_decode_and_said_apart_in_the_tooltip() {
    // The client waited 10 ms (all server time), then decoded for 20 ms while the server,
    // which reports 25.43 ms, went on working.
    let r = {
        let mut r = IterationRecord::new("r", 1, false, "t");
        r.total_ms = 30.0;
        r.query.stream_wait_ms = Some(10.0);
        r.query.server_elapsed_ms = Some(25.43);
        r.query.wire_decode_wall_ms = Some(20.0);
        r.query.row_decode_wall_ms = Some(0.0);
        r.query.outside_wait_and_decode_ms = Some(0.0);
        r
    };
    assert_eq!(overlap_span(&r), Some((10.0, 15.43)));
    let text = tooltip(&r);
    assert!(text.contains("\nserver 10.0 ms\nnetwork 0 ms\n"), "{text}");
    assert!(
        text.contains("overlap 15.4 ms (the server working beside the client's decode: not added)"),
        "{text}"
    );
    assert!(
        text.contains("the server reports 25.4 ms elapsed"),
        "{text}"
    );
}

#[test]
fn a_subjects_bar_splits_its_transfer_into_streaming_and_blocked() {
    let r = {
        let mut r = IterationRecord::new("client", 1, false, "t");
        r.total_ms = 200.0;
        r.subject_mut().startup_ms = Some(100.0);
        r.subject_mut().first_byte_ms = Some(5.0);
        r.subject_mut().transfer_ms = Some(80.0);
        r.subject_mut().blocked_ms = Some(60.0);
        r.subject_mut().tail_ms = Some(15.0);
        r
    };
    assert_eq!(
        stacked_parts(std::slice::from_ref(&r)),
        [
            Part::Untimed,
            Part::Startup,
            Part::FirstByte,
            Part::Streaming,
            Part::Blocked,
            Part::Tail
        ]
    );
    let odd = {
        let mut r = r;
        r.subject_mut().blocked_ms = Some(500.0);
        r
    };
    let parts = odd.accounting().parts;
    assert_eq!(parts.get(Part::Streaming), Some(0.0));
    assert_eq!(
        parts.get(Part::Blocked),
        Some(80.0),
        "blocked capped by the transfer"
    );
    assert!(
        tooltip(&odd).contains("\nblocked 80.0 ms"),
        "{}",
        tooltip(&odd)
    );
}

#[test]
fn flags_name_the_cold_start_and_outliers() {
    let mut records: Vec<IterationRecord> = (0..12)
        .map(|i| record(i, 10.0 + f64::from(i % 3) * 0.1))
        .collect();
    records[0].total_ms = 80.0;
    records[7].total_ms = 60.0;
    let flags = flags(&records);
    assert!(
        flags
            .iter()
            .any(|f| f.iteration == 0 && f.text.contains("cold start"))
    );
    assert!(
        flags
            .iter()
            .any(|f| f.iteration == 7 && f.text.contains("outlier"))
    );
}

#[test]
fn the_summary_follows_the_selection() {
    let records: Vec<IterationRecord> = (0..4).map(|i| record(i, f64::from(i))).collect();
    let all = part_stats(&records, &BTreeSet::new()).expect("timed");
    assert_eq!(all.total.count, 3, "warm-up left out");
    let some = part_stats(&records, &BTreeSet::from([3])).expect("one");
    assert_eq!(some.total.count, 1);
    assert_eq!(some.total.median, 3.0);
    assert!(
        part_stats(&records, &BTreeSet::from([0])).is_none(),
        "a warm-up"
    );
}

#[test]
fn the_same_error_is_said_once_naming_its_iterations() {
    let failed = |i: u32, error: &str| {
        let mut r = record(i, 1.0);
        r.outcome = crate::report::Outcome::failed(error, None);
        r
    };
    let mut records: Vec<IterationRecord> =
        (1..=7).map(|i| failed(i, "Table not found: T")).collect();
    records.push(failed(8, "deadline exceeded"));
    records.push(record(9, 10.0));
    assert_eq!(
        failures(&records),
        [
            "#1, #2, #3, #4, 3 more failed alike: Table not found: T",
            "#8 failed: deadline exceeded"
        ]
    );
}

#[test]
fn a_warm_up_far_above_the_timed_bars_is_cut_just_above_them() {
    // record(0, ...) is a warm-up.
    let cold = [record(0, 720.0), record(1, 140.0), record(2, 150.0)];
    let clip = warmup_clip(&cold).expect("a warm-up 4.8x the tallest timed bar is cut");
    assert!((clip - 150.0 * 1.15).abs() < 1e-9, "{clip}");
    // Near the timed bars, or with no timed bar to scale by, nothing is cut.
    assert_eq!(warmup_clip(&[record(0, 200.0), record(1, 150.0)]), None);
    assert_eq!(warmup_clip(&[record(0, 720.0)]), None);
    assert_eq!(warmup_clip(&[record(1, 720.0), record(2, 150.0)]), None);
}

#[test]
fn the_iteration_axis_is_marked_at_whole_iterations_from_zero_the_coarser_steps_named() {
    // A first iteration streaming with fifty planned, the plot's margin either side.
    let marks = iteration_marks(egui_plot::GridInput {
        bounds: (-3.0, 52.0),
        base_step_size: 0.4,
    });
    let values: Vec<f64> = marks.iter().map(|m| m.value).collect();
    assert_eq!(values.first(), Some(&0.0), "none below zero");
    assert_eq!(values.last(), Some(&52.0));
    assert!(values.iter().all(|v| v.fract() == 0.0), "{values:?}");
    let step = |v: f64| marks.iter().find(|m| m.value == v).map(|m| m.step_size);
    assert_eq!(step(7.0), Some(1.0));
    assert_eq!(step(8.0), Some(2.0));
    assert_eq!(step(30.0), Some(10.0));
    assert_eq!(step(40.0), Some(20.0));
    assert_eq!(iteration_tick(3.0), "3");
    assert_eq!(iteration_tick(-1.0), "");
    assert_eq!(iteration_tick(0.5), "");
    // A thousand iterations in little room: every twentieth.
    let marks = iteration_marks(egui_plot::GridInput {
        bounds: (-10.0, 1000.0),
        base_step_size: 15.0,
    });
    assert_eq!(marks.len(), 51);
}

/// A transaction of 30 ms: an attempt aborted at its commit after 3 ms, a back-off of 21 ms, then
/// a committed one: BeginTransaction 0.5 ms, a DML statement that waited 1 ms, a 2 ms SLEEP and a
/// 1.5 ms commit.
fn transaction_record(i: u32) -> IterationRecord {
    use crate::report::{
        Action, ActionKind, Attempt, AttemptOutcome, QueryTimings, StoredTimings, TransactionRecord,
    };
    let action = |kind, at_ms, ms| Action {
        kind: Some(kind),
        at_ms,
        ms,
        ..Action::default()
    };
    let mut aborted = Attempt::new(AttemptOutcome::Aborted);
    aborted.total_ms = 3.0;
    aborted.ended_at = Some(ActionKind::Commit);
    aborted.backoff_ms = Some(21.0);
    let mut committed = Attempt::new(AttemptOutcome::Committed);
    committed.total_ms = 5.5;
    let wait = QueryTimings {
        stream_wait_ms: Some(1.0),
        ..QueryTimings::default()
    };
    committed.actions = vec![
        action(ActionKind::Begin, 0.0, 0.5),
        Action {
            query: Some(StoredTimings::from(&wait)),
            ..action(ActionKind::Dml, 0.5, 1.0)
        },
        action(ActionKind::Think, 1.5, 2.0),
        action(ActionKind::Commit, 3.5, 1.5),
    ];
    let mut r = IterationRecord::new("rw", i, false, "t");
    r.total_ms = 30.0;
    r.transaction = Some(TransactionRecord {
        attempts: vec![aborted, committed],
        ..TransactionRecord::default()
    });
    r
}

#[test]
fn a_transaction_s_bar_stacks_its_own_parts_in_part_order_and_adds_up_to_its_total() {
    let r = transaction_record(1);
    let stacked = stacked_parts(std::slice::from_ref(&r));
    assert_eq!(
        stacked,
        [
            Part::Aborted,
            Part::Begin,
            Part::Network,
            Part::Backoff,
            Part::Think,
            Part::Commit,
            Part::Untimed
        ]
    );
    // Bottom to top as Part::ALL lists them, so the legend (which names `stacked` in turn) reads
    // in the bars' order, each part in its own colour.
    let order: Vec<Part> = Part::ALL
        .into_iter()
        .filter(|p| stacked.contains(p))
        .collect();
    assert_eq!(order, stacked);
    let colours: BTreeSet<[u8; 4]> = stacked.iter().map(|p| theme::part(*p).to_array()).collect();
    assert_eq!(colours.len(), stacked.len(), "no two parts share a colour");
    let parts = r.accounting().parts;
    assert_eq!(parts.get(Part::Aborted), Some(3.0));
    assert_eq!(parts.get(Part::Backoff), Some(21.0));
    assert_eq!(parts.get(Part::Think), Some(2.0));
    assert!((parts.sum_ms() - 30.0).abs() < 1e-9, "{}", parts.sum_ms());
    // The summary's parts over several transactions add up the same way.
    let stats = part_stats(&[r, transaction_record(2)], &BTreeSet::new()).expect("stats");
    let means: f64 = stats.parts.iter().map(|p| p.summary.mean).sum();
    assert!((means - stats.total.mean).abs() < 1e-6, "{means}");
}
