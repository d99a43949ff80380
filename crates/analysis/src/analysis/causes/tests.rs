use super::*;
use crate::report::{Message, Resume, Span};

/// A lane of `messages` messages: each waited for `wait_us` (message `gap.0` for `gap.1` more),
/// then wire- and row-decoded for 50 µs each, `off_cpu_us` of each span off the CPU; the total
/// is where the last span ended plus 20 µs.
fn lane(messages: u32, wait_us: u64, gap: (u32, u64), off_cpu_us: u64) -> (Lane, u64) {
    let mut at = 300u64; // the call's set-up before the first wait
    let mut lane = Lane {
        name: "stream".into(),
        requests_us: vec![0],
        ..Lane::default()
    };
    for number in 1..=messages {
        let wait = wait_us + if number == gap.0 { gap.1 } else { 0 };
        let arrived = at + wait;
        let span = |start_us| Span {
            start_us,
            wall_us: 50,
            cpu_us: Some(50 - off_cpu_us),
        };
        lane.messages.push(Message {
            number,
            waited_from_us: at,
            arrived_us: arrived,
            bytes: 1000,
            rows: 10,
            resume_token: true,
            wire: span(arrived),
            row: Some(span(arrived + 50)),
            ..Message::default()
        });
        at = arrived + 100;
    }
    lane.end_us = at;
    (lane, at + 20)
}

/// A record of the lane with the figures the engine takes from it: the waits (outside resumes'
/// back-offs), the decodes' wall and CPU times, the back-off.
fn record(iteration: u32, (lane, total_us): (Lane, u64)) -> IterationRecord {
    let ms = |us: u64| us as f64 / 1000.0;
    let sum = |us: &mut dyn Iterator<Item = u64>| us.fold(0u64, u64::saturating_add);
    let backoff = sum(&mut lane.resumes.iter().map(|r| r.backoff_us));
    let waits = sum(&mut lane.messages.iter().map(Message::wait_us));
    let [wire, wire_cpu, row, row_cpu] = lane.decode_us();
    {
        let mut r = IterationRecord::new("r", iteration, false, "2026-01-02T03:04:05Z");
        r.total_ms = ms(total_us);
        r.query.stream_wait_ms = Some(ms(waits.saturating_sub(backoff)));
        r.query.backoff_ms = Some(ms(backoff));
        r.query.wire_decode_wall_ms = Some(ms(wire));
        r.query.wire_decode_cpu_ms = Some(ms(wire_cpu));
        r.query.row_decode_wall_ms = Some(ms(row));
        r.query.row_decode_cpu_ms = Some(ms(row_cpu));
        r.timeline = Some(Timeline {
            lanes: vec![lane],
            total_us,
            setup: Vec::new(),
        });
        r
    }
}

fn report(records: Vec<IterationRecord>) -> RunReport {
    let mut report = RunReport::with_totals("r", &[]);
    report.iterations = records;
    report
}

/// Nine iterations of 60 messages, waits growing a little with each; every third one waits 80 ms
/// more before its fourth message.
fn stalled() -> Explanation {
    let records = (0..9)
        .map(|i| {
            let gap = if i % 3 == 2 { (4, 80_000) } else { (0, 0) };
            record(i, lane(60, 200 + u64::from(i) * 3, gap, 0))
        })
        .collect();
    explain(&report(records)).expect("timelines")
}

fn find(explained: &Explanation, iteration: u32) -> &IterationCauses {
    explained
        .iterations
        .iter()
        .find(|i| i.iteration == iteration)
        .expect("the iteration")
}

#[test]
fn a_stall_before_one_message_is_the_network_s_growth_before_that_message() {
    let explained = stalled();
    for i in [2, 5, 8] {
        let it = find(&explained, i);
        let top = &it.causes[0];
        assert_eq!(top.kind, Part::Network, "{it:?}");
        assert_eq!(top.location, Some(Location::BeforeMessage(4)), "{it:?}");
        assert_eq!(top.at_message, Some(4), "{it:?}");
        assert!((60.0..=110.0).contains(&top.ms), "{it:?}");
        assert!(top.detail.contains("before message 4 (waited "), "{top:?}");
    }
    let top = &explained.run.causes[0];
    assert_eq!((top.kind, top.at_message), (Part::Network, Some(4)));
}

#[test]
fn every_cause_is_named_by_a_part_s_key() -> Result<(), serde_json::Error> {
    let json = serde_json::to_value(stalled())?;
    let kinds: Vec<&serde_json::Value> = json["iterations"]
        .as_array()
        .into_iter()
        .flatten()
        .chain([&json["run"]])
        .flat_map(|i| i["causes"].as_array().into_iter().flatten())
        .map(|c| &c["kind"])
        .collect();
    assert!(!kinds.is_empty());
    for kind in kinds {
        let part = kind.as_str().and_then(Part::from_key);
        assert!(part.is_some_and(|p| Part::QUERY.contains(&p)), "{kind}");
    }
    Ok(())
}

#[test]
fn the_causes_add_up_to_the_difference_of_the_totals() {
    let explained = stalled();
    for it in &explained.iterations {
        let sum: f64 = it.causes.iter().map(|c| c.ms).sum();
        // Parts that changed by less than 10 µs are left out.
        assert!((sum - it.extra_ms).abs() < 0.01 * 8.0, "{sum} for {it:?}");
    }
    assert!(
        explained
            .iterations
            .iter()
            .any(|i| i.extra_ms.abs() > 1.0 && !i.causes.is_empty())
    );
}

#[test]
fn the_median_iteration_and_one_just_like_it_have_no_causes() {
    // Every iteration alike, each with one long wait: the median's is not a cause against itself.
    let records = (0..5)
        .map(|i| record(i, lane(20, 200, (4, 30_000), 0)))
        .collect();
    let explained = explain(&report(records)).expect("timelines");
    assert!(
        explained.iterations.iter().all(|i| i.causes.is_empty()),
        "{explained:?}"
    );
    let explained = stalled();
    assert!(
        find(&explained, explained.median_iteration)
            .causes
            .is_empty()
    );
}

#[test]
fn the_parts_that_moved_the_way_asked_come_first_largest_first() {
    let explained = stalled();
    for it in explained.iterations.iter().filter(|i| !i.causes.is_empty()) {
        let sign = if it.extra_ms < 0.0 { -1.0 } else { 1.0 };
        let asked: Vec<f64> = it.causes.iter().map(|c| c.ms * sign).collect();
        assert!(asked.windows(2).all(|w| w[0] >= w[1]), "{it:?}");
    }
}

#[test]
fn a_faster_iteration_names_what_shrank_first() {
    let mut records: Vec<IterationRecord> = (0..5)
        .map(|i| record(i, lane(100, 200, (0, 0), 0)))
        .collect();
    // Shorter waits (−10 ms), less decode CPU and more of it off the CPU (+2 ms).
    records.push(record(5, lane(100, 100, (0, 0), 10)));
    let explained = explain(&report(records)).expect("timelines");
    let fast = find(&explained, 5);
    assert!(fast.extra_ms < 0.0, "{fast:?}");
    let kinds: Vec<Part> = fast.causes.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            Part::Network,
            Part::WireDecode,
            Part::RowDecode,
            Part::Descheduled
        ],
        "{fast:?}"
    );
}

#[test]
fn no_part_is_named_twice_in_one_iteration() {
    let explained = stalled();
    for it in explained.iterations.iter().chain([&IterationCauses {
        iteration: 0,
        total_ms: 0.0,
        extra_ms: 0.0,
        causes: explained.run.causes.clone(),
    }]) {
        let mut kinds: Vec<Part> = it.causes.iter().map(|c| c.kind).collect();
        kinds.sort();
        let before = kinds.len();
        kinds.dedup();
        assert_eq!(kinds.len(), before, "{it:?}");
    }
}

#[test]
fn an_iteration_off_the_cpu_is_named_descheduled_not_decode() {
    let mut records: Vec<IterationRecord> = (0..5)
        .map(|i| record(i, lane(100, 200, (0, 0), 0)))
        .collect();
    // The same CPU time per span, each span 40 µs longer: off the CPU.
    let (mut slow_lane, _) = lane(100, 200, (0, 0), 0);
    for m in &mut slow_lane.messages {
        m.wire.wall_us += 40;
        if let Some(r) = m.row.as_mut() {
            r.wall_us += 40;
        }
    }
    let total = 300 + 100 * (200 + 100 + 80) + 20;
    for m in &mut slow_lane.messages {
        let shift = 80 * u64::from(m.number - 1);
        m.waited_from_us += shift;
        m.arrived_us += shift;
        m.wire.start_us += shift;
        if let Some(r) = m.row.as_mut() {
            r.start_us += shift + 40;
        }
    }
    records.push(record(5, (slow_lane, total)));
    let explained = explain(&report(records)).expect("timelines");
    let slow = find(&explained, 5);
    assert_eq!(slow.causes[0].kind, Part::Descheduled, "{slow:?}");
    assert!(
        !slow
            .causes
            .iter()
            .any(|c| c.kind.is_client_cpu() && c.ms > 0.5),
        "{slow:?}"
    );
}

#[test]
fn a_resume_s_back_off_is_named_backoff() {
    let mut records: Vec<IterationRecord> = (0..3)
        .map(|i| record(i, lane(20, 200, (0, 0), 0)))
        .collect();
    let (mut resumed, total) = lane(20, 200, (11, 30_000), 0);
    // The stream broke where message 11 was awaited; it came 30 ms later, after the back-off.
    let broke = resumed.messages[10].waited_from_us;
    resumed.resumes.push(Resume {
        at_us: broke,
        status: "UNAVAILABLE: x".into(),
        dropped_messages: 0,
        dropped_bytes: 0,
        backoff_us: 20_000,
        resent_us: broke + 20_000,
    });
    records.push(record(3, (resumed, total)));
    let explained = explain(&report(records)).expect("timelines");
    let it = find(&explained, 3);
    assert_eq!(it.causes[0].kind, Part::Backoff, "{it:?}");
    assert!((it.causes[0].ms - 20.0).abs() < 0.01, "{it:?}");
}

#[test]
fn a_report_without_timelines_says_so() {
    let report = RunReport::with_totals("old", &[10.0, 11.0]);
    let err = explain(&report).expect_err("no timelines");
    assert_eq!(err, ExplainError::NoTimelines("old".into()));
    assert!(err.to_string().contains("no timelines"), "{err}");
}

#[test]
fn a_hostile_timeline_gets_finite_answers_without_a_panic() {
    let (mut wild, _) = lane(5, 200, (0, 0), 0);
    for m in &mut wild.messages {
        m.arrived_us = u64::MAX;
        m.wire.start_us = u64::MAX;
        m.wire.wall_us = u64::MAX;
        m.wire.cpu_us = Some(u64::MAX);
    }
    wild.origin_us = u64::MAX;
    wild.buckets.push(Bucket {
        first: 9,
        last: 2,
        wait_us: 1,
        max_wait_us: u64::MAX,
        ..Bucket::default()
    });
    let mut records = vec![record(0, lane(5, 200, (0, 0), 0)), record(1, (wild, 1))];
    records[1].total_ms = 1e300;
    records[1].query.stream_wait_ms = Some(f64::MAX);
    records.push(IterationRecord {
        total_ms: f64::NAN,
        ..record(2, lane(5, 200, (0, 0), 0))
    });
    let explained = explain(&report(records)).expect("timelines");
    assert_eq!(explained.iterations.len(), 2, "the NaN total is left out");
    for i in &explained.iterations {
        assert!(i.causes.iter().all(|c| c.ms.is_finite()), "{i:?}");
    }
}

#[test]
fn one_iteration_is_picked_or_its_absence_said() {
    let records = (0..3).map(|i| record(i, lane(5, 200, (0, 0), 0))).collect();
    let explained = explain(&report(records)).expect("timelines");
    let one = only(explained.clone(), "r", 1).expect("iteration 1");
    assert_eq!(one.iterations.len(), 1);
    assert_eq!(
        only(explained, "r", 7),
        Err(ExplainError::NoSuchIteration {
            run: "r".into(),
            iteration: 7
        })
    );
}

#[test]
fn the_json_has_the_issue_s_shape() -> Result<(), serde_json::Error> {
    let json = serde_json::to_value(stalled())?;
    assert!(json["median_iteration"].is_u64());
    let first = &json["iterations"][2];
    for key in ["iteration", "total_ms", "extra_ms", "causes"] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    let cause = &first["causes"][0];
    assert_eq!(cause["kind"], "network", "{cause}");
    assert_eq!(cause["location"]["before_message"], 4, "{cause}");
    assert!(json["run"]["causes"].is_array());
    Ok(())
}

#[test]
fn against_a_stalled_median_a_faster_iteration_names_where_it_did_not_wait() {
    // Three of five stall 80 ms before message 4, so the median iteration is a stalled one.
    let records = (0..5)
        .map(|i| {
            let gap = if i % 2 == 0 { (4, 80_000) } else { (0, 0) };
            record(i, lane(60, 200 + u64::from(i) * 3, gap, 0))
        })
        .collect();
    let explained = explain(&report(records)).expect("timelines");
    assert_eq!(explained.median_iteration % 2, 0, "{explained:?}");
    for i in [1, 3] {
        let it = find(&explained, i);
        let top = &it.causes[0];
        assert_eq!(top.kind, Part::Network, "{it:?}");
        assert!(top.ms < -60.0, "{it:?}");
        assert_eq!(top.location, Some(Location::BeforeMessage(4)), "{it:?}");
    }
    // The stalled ones are not told apart from the median by their stall.
    for it in explained.iterations.iter().filter(|i| i.iteration % 2 == 0) {
        assert!(it.causes.iter().all(|c| c.location.is_none()), "{it:?}");
    }
}

/// A transfer that aborted `aborts` times at its commit (each 3 ms, then 20.5 ms of back-off for
/// a 20 ms RetryInfo) before its committed attempt of 5 ms.
fn transfer(iteration: u32, aborts: usize) -> IterationRecord {
    use crate::report::{ActionKind, Attempt, AttemptOutcome, TransactionRecord};
    let mut r = IterationRecord::new("rw", iteration, false, "2026-12-05T00:00:00Z");
    let mut attempts = Vec::new();
    for _ in 0..aborts {
        let mut a = Attempt::new(AttemptOutcome::Aborted);
        a.total_ms = 3.0;
        a.ended_at = Some(ActionKind::Commit);
        a.retry_delay_ms = Some(20.0);
        a.backoff_ms = Some(20.5);
        attempts.push(a);
    }
    let mut committed = Attempt::new(AttemptOutcome::Committed);
    committed.total_ms = 5.0;
    attempts.push(committed);
    r.total_ms = 5.0 + aborts as f64 * 23.5;
    r.transaction = Some(TransactionRecord {
        attempts,
        ..TransactionRecord::default()
    });
    r
}

#[test]
fn a_transaction_that_aborted_is_explained_by_its_aborted_attempt_and_its_back_off() {
    let records = vec![
        transfer(0, 0),
        transfer(1, 0),
        transfer(2, 1),
        transfer(3, 0),
    ];
    let explained = explain_records("rw", &records).expect("transactions are explained");
    let slow = explained
        .iterations
        .iter()
        .find(|i| i.iteration == 2)
        .expect("iteration 2");
    assert_eq!(slow.extra_ms, 23.5);
    let kinds: Vec<Part> = slow.causes.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [Part::Backoff, Part::Aborted]);
    assert!(
        slow.causes[0].detail.contains("RetryInfo asked 20.0 ms"),
        "{}",
        slow.causes[0].detail
    );
    assert!(
        slow.causes[1]
            .detail
            .contains("1 aborted attempt (at commit)"),
        "{}",
        slow.causes[1].detail
    );
}
