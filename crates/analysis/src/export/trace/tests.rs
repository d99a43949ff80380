use super::*;
use crate::report::{Bucket, Message, Resume, Span, Timeline};

fn span(start_us: u64, wall_us: u64) -> Span {
    Span {
        start_us,
        wall_us,
        cpu_us: Some(wall_us / 2),
    }
}

fn lane(name: &str, origin_us: u64) -> Lane {
    let messages = (1..=3)
        .map(|n| {
            let at = u64::from(n) * 1000;
            Message {
                number: n,
                waited_from_us: at - 500,
                arrived_us: at,
                bytes: 100,
                rows: 2,
                wire: span(at, 100),
                row: Some(span(at + 100, 100)),
                ..Message::default()
            }
        })
        .collect();
    Lane {
        name: name.into(),
        origin_us,
        requests_us: vec![0],
        messages,
        buckets: vec![Bucket {
            first: 4,
            last: 9,
            from_us: 3200,
            to_us: 5000,
            ..Bucket::default()
        }],
        resumes: vec![Resume {
            at_us: 5000,
            resent_us: 5300,
            status: "UNAVAILABLE: \u{1b}x".into(),
            ..Resume::default()
        }],
        finish: Some(span(5400, 10)),
        end_us: 5500,
        ..Lane::default()
    }
}

fn run(label: &str, lanes: impl Fn() -> Vec<Lane>, totals: &[f64]) -> RunReport {
    let mut report = RunReport::with_totals(label, totals);
    for r in &mut report.iterations {
        r.timeline = Some(Timeline {
            lanes: lanes(),
            total_us: us(r.total_ms),
            setup: Vec::new(),
        });
    }
    report
}

/// The X events of each (pid, tid), checked strictly nested; returns the top-level ones.
fn nested(events: &[Value]) -> Vec<&Value> {
    let mut by_thread: std::collections::BTreeMap<(u64, u64), Vec<&Value>> = Default::default();
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let key = (
            e["pid"].as_u64().unwrap_or(0),
            e["tid"].as_u64().unwrap_or(0),
        );
        by_thread.entry(key).or_default().push(e);
    }
    let mut top = Vec::new();
    for (_, mut slices) in by_thread {
        let range = |e: &Value| {
            let ts = e["ts"].as_u64().unwrap_or(0);
            (ts, ts + e["dur"].as_u64().unwrap_or(0))
        };
        slices.sort_by_key(|e| {
            let (s, end) = range(e);
            (s, std::cmp::Reverse(end))
        });
        let mut stack: Vec<(u64, u64)> = Vec::new();
        for e in slices {
            let (s, end) = range(e);
            while stack.last().is_some_and(|&(_, pe)| pe <= s) {
                stack.pop();
            }
            if let Some(&(ps, pe)) = stack.last() {
                assert!(s >= ps && end <= pe, "{e} overlaps its parent {ps}..{pe}");
            } else {
                top.push(e);
            }
            stack.push((s, end));
        }
    }
    top
}

fn export(reports: &[RunReport]) -> Vec<Value> {
    let bytes = Trace.export(reports).expect("a trace");
    let doc: Value = serde_json::from_slice(&bytes).expect("JSON");
    doc["traceEvents"].as_array().cloned().unwrap_or_default()
}

#[test]
fn each_iteration_is_one_top_level_slice_as_long_as_its_total() {
    let reports = [
        run("fast", || vec![lane("stream", 0)], &[6.0, 7.25]),
        run("slow", || vec![lane("stream", 0)], &[9.5]),
    ];
    let events = export(&reports);
    let top = nested(&events);
    let durations: Vec<u64> = top.iter().filter_map(|e| e["dur"].as_u64()).collect();
    assert_eq!(durations, vec![6000, 7250, 9500]);
    let processes: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .filter_map(|e| e["args"]["name"].as_str())
        .collect();
    assert_eq!(processes, ["fast", "slow"]);
    assert!(events.iter().any(|e| e["name"] == "thread_name"));
    assert!(events.iter().any(|e| e["name"] == "wait #2"));
    assert!(events.iter().any(|e| e["name"] == "resume"));
}

#[test]
fn partitions_get_a_thread_each_inside_the_iteration() {
    let report = run(
        "p",
        || vec![lane("partition 1", 200), lane("partition 2", 300)],
        &[8.0],
    );
    let events = export(&[report]);
    let top = nested(&events);
    let threads: Vec<u64> = top.iter().filter_map(|e| e["tid"].as_u64()).collect();
    assert_eq!(threads, vec![1, 2, 3]);
    let partition = top[1];
    assert_eq!(partition["name"], "partition 1");
    assert_eq!(partition["ts"].as_u64(), Some(200));
}

#[test]
fn a_hostile_timeline_still_nests_strictly() {
    let report = run(
        "wild",
        || {
            let mut l = lane("stream", 0);
            l.messages[1].wire = span(u64::MAX - 5, u64::MAX);
            l.messages[2].waited_from_us = 0;
            l.buckets[0].from_us = 10;
            l.buckets[0].to_us = u64::MAX;
            vec![l]
        },
        &[f64::INFINITY, 3.0],
    );
    let events = export(&[report]);
    let top = nested(&events);
    assert_eq!(top.len(), 2, "{top:?}");
}

#[test]
fn a_cold_start_s_steps_come_before_the_query_inside_the_iteration() {
    let mut report = run("cold", || vec![lane("stream", 3000)], &[9.0]);
    if let Some(t) = report.iterations[0].timeline.as_mut() {
        t.setup = crate::report::ColdStep::ALL
            .into_iter()
            .zip(0u64..)
            .map(|(step, i)| crate::report::SetupStep {
                step,
                start_us: i * 500,
                wall_us: if step == crate::report::ColdStep::Dns {
                    0
                } else {
                    500
                },
            })
            .collect();
    }
    let events = export(&[report]);
    let top = nested(&events);
    assert_eq!(top.len(), 1, "the steps are inside the iteration");
    let names: Vec<&str> = events
        .iter()
        .filter(|e| e["cat"] == "stream")
        .filter_map(|e| e["name"].as_str())
        .take(5)
        .collect();
    assert_eq!(
        names,
        ["tcp", "tls", "http2", "token", "session"],
        "dns took 0"
    );
}
