use super::*;

fn record(i: u32, total: f64) -> IterationRecord {
    IterationRecord {
        total_ms: total,
        network_ms: Some(total * 0.6),
        server_ms: Some(total * 0.2),
        wire_decode_ms: Some(total * 0.1),
        row_decode_ms: Some(total * 0.2),
        other_ms: Some(total * 0.1),
        ..IterationRecord::new("r", i, i == 0, "t")
    }
}

#[test]
fn segments_take_the_server_out_of_the_network_and_add_up() {
    let r = record(1, 10.0);
    let s = segments(&r);
    assert!((s[0] - 2.0).abs() < 1e-9);
    assert!((s[1] - 4.0).abs() < 1e-9);
    assert!((s.iter().sum::<f64>() - 10.0).abs() < 1e-9);
    let mut odd = record(2, 10.0);
    odd.server_ms = Some(50.0);
    assert!((segments(&odd)[1]).abs() < 1e-9, "server capped by network");
}

#[test]
fn a_client_programs_bar_splits_its_transfer_into_streaming_and_blocked() {
    let r = IterationRecord {
        startup_ms: Some(100.0),
        first_byte_ms: Some(5.0),
        transfer_ms: Some(80.0),
        blocked_ms: Some(60.0),
        tail_ms: Some(15.0),
        ..IterationRecord::new("client", 1, false, "t")
    };
    assert_eq!(client_segments(&r), [100.0, 5.0, 20.0, 60.0, 15.0]);
    assert_eq!(Layout::of(std::slice::from_ref(&r)), Layout::Client);
    assert_eq!(Layout::of(&[record(1, 10.0)]), Layout::Query);
    let odd = IterationRecord {
        blocked_ms: Some(500.0),
        ..r
    };
    assert_eq!(
        client_segments(&odd)[2..4],
        [0.0, 80.0],
        "blocked capped by the transfer"
    );
    assert!(
        tooltip(&odd).contains("blocked 80.000 ms"),
        "{}",
        tooltip(&odd)
    );
}

#[test]
fn a_server_time_beyond_the_clients_waits_is_said_as_overlap_not_a_zero_network() {
    use crate::report::{Lane, Message, Span, Timeline};
    // The client waited 10 ms (all server time), then decoded for 20 ms while the server,
    // which reports 25.43 ms, went on working.
    let mut r = IterationRecord {
        total_ms: 30.0,
        network_ms: Some(10.0),
        server_ms: Some(25.43),
        wire_decode_ms: Some(20.0),
        row_decode_ms: Some(0.0),
        other_ms: Some(0.0),
        ..IterationRecord::new("r", 1, false, "t")
    };
    let plain = tooltip(&r);
    assert!(!plain.contains("its work overlaps the stream"), "{plain}");
    assert!(
        plain.contains("network 0.000 ms (the client's waits less the server's time)"),
        "{plain}"
    );
    assert!(
        plain.contains("15.430 ms overlapped the client's own work"),
        "{plain}"
    );
    r.timeline = Some(Timeline {
        lanes: vec![Lane {
            requests_us: vec![0],
            messages: vec![Message {
                number: 1,
                arrived_us: 10_000,
                wire: Span {
                    start_us: 10_000,
                    wall_us: 20_000,
                    cpu_us: None,
                },
                ..Message::default()
            }],
            end_us: 30_000,
            ..Lane::default()
        }],
        total_us: 30_000,
        setup: Vec::new(),
    });
    let timed = tooltip(&r);
    assert!(
        timed.contains("the bar holds 10.000 ms (as much as the client waited);\non the timeline 10.000 ms of it fell in the client's waits, 15.430 ms beside its decode"),
        "{timed}"
    );
    let inside = IterationRecord {
        server_ms: Some(4.0),
        ..r
    };
    assert!(tooltip(&inside).contains("all within the client's waits"));
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
fn summaries_follow_the_selection() {
    let records: Vec<IterationRecord> = (0..4).map(|i| record(i, f64::from(i))).collect();
    let all = summaries(&records, &BTreeSet::new());
    assert_eq!(all[0].0, Phase::Total);
    assert_eq!(all[0].1.count, 3, "warm-up left out");
    let some = summaries(&records, &BTreeSet::from([3]));
    assert_eq!(some[0].1.count, 1);
    assert_eq!(some[0].1.median, 3.0);
}
