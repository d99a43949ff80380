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

fn record(iteration: u32, (lane, total_us): (Lane, u64)) -> IterationRecord {
    IterationRecord {
        total_ms: total_us as f64 / 1000.0,
        timeline: Some(Timeline {
            lanes: vec![lane],
            total_us,
            setup: Vec::new(),
        }),
        ..IterationRecord::new("r", iteration, false, "2026-01-02T03:04:05Z")
    }
}

fn report(records: Vec<IterationRecord>) -> RunReport {
    let mut report = RunReport::with_totals("r", &[]);
    report.iterations = records;
    report
}

fn coverage(i: &IterationCauses) -> f64 {
    let named: f64 = i
        .causes
        .iter()
        .filter(|c| c.kind != CauseKind::Other && c.ms > 0.0)
        .map(|c| c.ms)
        .sum();
    named / i.extra_ms
}

#[test]
fn a_stall_before_one_message_is_named_a_stream_gap_at_that_message() {
    let records = (0..9)
        .map(|i| {
            let gap = if i % 3 == 2 { (4, 80_000) } else { (0, 0) };
            record(i, lane(60, 200 + u64::from(i) * 3, gap, 0))
        })
        .collect();
    let explained = explain(&report(records)).expect("timelines");
    let stalled: Vec<u32> = explained
        .iterations
        .iter()
        .filter(|i| {
            i.causes.iter().any(|c| {
                c.kind == CauseKind::StreamGap
                    && c.at_message == Some(4)
                    && (60.0..=110.0).contains(&c.ms)
            })
        })
        .map(|i| i.iteration)
        .collect();
    assert_eq!(stalled, vec![2, 5, 8]);
    for i in explained
        .iterations
        .iter()
        .filter(|i| stalled.contains(&i.iteration))
    {
        assert!(coverage(i) >= 0.9, "{i:?}");
        assert_eq!(i.causes[0].kind, CauseKind::StreamGap, "{i:?}");
    }
    assert!(!stalled.contains(&explained.median_iteration));
    let top = &explained.run.causes[0];
    assert_eq!((top.kind, top.at_message), (CauseKind::StreamGap, Some(4)));
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
    let slow = explained
        .iterations
        .iter()
        .find(|i| i.iteration == 5)
        .expect("iteration 5");
    assert_eq!(slow.causes[0].kind, CauseKind::Descheduled, "{slow:?}");
    assert!(coverage(slow) >= 0.9, "{slow:?}");
    assert!(
        !slow
            .causes
            .iter()
            .any(|c| c.kind == CauseKind::Decode && c.ms > 0.5),
        "{slow:?}"
    );
}

#[test]
fn a_resume_s_back_off_and_new_first_message_are_named_resume() {
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
        resent_us: broke,
    });
    records.push(record(3, (resumed, total)));
    let explained = explain(&report(records)).expect("timelines");
    let it = explained.iterations.last().expect("four");
    assert_eq!(it.causes[0].kind, CauseKind::Resume, "{it:?}");
    assert!(coverage(it) >= 0.9, "{it:?}");
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
    let records = (0..3).map(|i| record(i, lane(5, 200, (0, 0), 0))).collect();
    let explained = explain(&report(records)).expect("timelines");
    let json = serde_json::to_value(&explained)?;
    assert!(json["median_iteration"].is_u64());
    let first = &json["iterations"][0];
    for key in ["iteration", "total_ms", "extra_ms", "causes"] {
        assert!(first.get(key).is_some(), "{key} in {first}");
    }
    assert!(json["run"]["causes"].is_array());
    Ok(())
}
