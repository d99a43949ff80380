use super::*;
use crate::report::{Between, Lane, Timeline};

fn query(total_ms: f64) -> IterationRecord {
    IterationRecord {
        total_ms,
        network_ms: Some(20.0),
        wire_decode_ms: Some(3.0),
        wire_decode_cpu_ms: Some(2.5),
        row_decode_ms: Some(10.0),
        row_decode_cpu_ms: Some(9.0),
        client_work_ms: Some(4.0),
        client_work_cpu_ms: Some(3.0),
        descheduled_ms: Some(2.5),
        ..IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z")
    }
}

fn parts_of(a: &Accounting) -> Vec<(Part, f64)> {
    a.parts.iter().collect()
}

#[test]
fn the_parts_add_up_to_the_total_and_the_rest_is_untimed() {
    let a = query(38.0).accounting();
    assert_eq!(
        parts_of(&a),
        vec![
            (Part::Network, 20.0),
            (Part::WireDecode, 2.5),
            (Part::RowDecode, 9.0),
            (Part::ClientWork, 3.0),
            (Part::Descheduled, 2.5),
            (Part::Untimed, 1.0),
        ]
    );
    assert_eq!(a.parts.sum_ms(), 38.0);
    assert_eq!(
        a.split,
        Split::None,
        "no server time: the wait is not split"
    );
    assert_eq!(a.overlap_ms, None);
    assert!(a.client_work_timed);
}

#[test]
fn a_server_that_reports_its_wait_on_the_client_splits_the_wait_exactly() {
    // The server took 42 ms, 30 of them waiting for the client to read: 12 ms of work, all
    // while the client waited.
    let record = IterationRecord {
        server_ms: Some(42.0),
        server_client_wait_ms: Some(30.0),
        ..query(38.0)
    };
    let a = record.accounting();
    assert_eq!(a.split, Split::Measured);
    assert_eq!(a.parts.get(Part::Server), Some(12.0));
    assert_eq!(a.parts.get(Part::Network), Some(8.0));
    assert_eq!(a.overlap_ms, Some(0.0));
    assert_eq!(a.parts.sum_ms(), 38.0);
}

#[test]
fn server_work_beyond_the_client_s_wait_is_an_overlap_never_a_part() {
    // The server reports 42 ms of elapsed time and nothing about waiting: the estimate gives it
    // the whole 20 ms wait, and the 22 ms it worked while the client decoded overlap.
    let record = IterationRecord {
        server_ms: Some(42.0),
        ..query(38.0)
    };
    let a = record.accounting();
    assert_eq!(a.split, Split::Estimated);
    assert_eq!(a.parts.get(Part::Server), Some(20.0));
    assert_eq!(a.parts.get(Part::Network), Some(0.0));
    assert_eq!(a.overlap_ms, Some(22.0));
    assert_eq!(a.parts.sum_ms(), 38.0, "the overlap is not added");
}

#[test]
fn a_cold_start_s_steps_come_first_and_the_gap_after_them_is_untimed() {
    let record = IterationRecord {
        dns_ms: Some(1.0),
        tcp_ms: Some(2.0),
        tls_ms: Some(0.0),
        http2_ms: Some(1.5),
        token_ms: Some(0.0),
        session_ms: Some(3.0),
        ..query(46.0)
    };
    let a = record.accounting();
    let names: Vec<Part> = a.parts.iter().map(|(p, _)| p).collect();
    assert_eq!(&names[..6], &Part::COLD_START);
    assert_eq!(a.parts.get(Part::Untimed), Some(1.5));
    assert_eq!(a.parts.sum_ms(), 46.0);
}

#[test]
fn parts_that_come_to_more_than_the_total_give_back_from_the_wait_first() {
    // A clock's rounding: the spans sum past the total by 0.4 ms.
    let a = query(36.6).accounting();
    assert_eq!(a.parts.get(Part::Untimed), Some(0.0));
    assert_eq!(a.parts.get(Part::Network), Some(19.6));
    assert_eq!(a.parts.sum_ms(), 36.6);
}

#[test]
fn an_older_report_derives_its_client_work_from_the_timeline_or_says_it_cannot() {
    let mut old = IterationRecord {
        client_work_ms: None,
        client_work_cpu_ms: None,
        ..query(38.0)
    };
    let a = old.accounting();
    assert!(!a.client_work_timed);
    assert!(!a.parts.has(Part::ClientWork));
    assert_eq!(a.parts.get(Part::Untimed), Some(4.0));
    old.timeline = Some(Timeline {
        lanes: vec![Lane {
            between: Between {
                wall_us: 4_000,
                cpu_us: 3_000,
            },
            ..Lane::default()
        }],
        total_us: 38_000,
        setup: Vec::new(),
    });
    let a = old.accounting();
    assert!(a.client_work_timed);
    assert_eq!(a.parts.get(Part::ClientWork), Some(3.0));
    assert_eq!(a.parts.get(Part::Untimed), Some(1.0));
}

#[test]
fn a_report_without_cpu_times_counts_decode_wall_time_as_decode() {
    let old = IterationRecord {
        total_ms: 30.0,
        network_ms: Some(20.0),
        wire_decode_ms: Some(3.0),
        row_decode_ms: Some(5.0),
        other_ms: Some(2.0),
        ..IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z")
    };
    let a = old.accounting();
    assert_eq!(a.parts.get(Part::WireDecode), Some(3.0));
    assert_eq!(a.parts.get(Part::RowDecode), Some(5.0));
    assert!(!a.parts.has(Part::Descheduled));
    assert_eq!(a.parts.get(Part::Untimed), Some(2.0));
}

#[test]
fn a_subject_s_time_splits_as_the_server_saw_it() {
    let record = IterationRecord {
        total_ms: 1_900.0,
        startup_ms: Some(950.25),
        first_byte_ms: Some(3.5),
        transfer_ms: Some(700.0),
        blocked_ms: Some(640.125),
        tail_ms: Some(246.0),
        ..IterationRecord::new("c", 0, false, "2026-01-02T03:04:05Z")
    };
    let a = record.accounting();
    assert_eq!(
        parts_of(&a),
        vec![
            (Part::Untimed, 0.25),
            (Part::Startup, 950.25),
            (Part::FirstByte, 3.5),
            (Part::Streaming, 59.875),
            (Part::Blocked, 640.125),
            (Part::Tail, 246.0),
        ]
    );
    assert_eq!(a.parts.sum_ms(), 1_900.0);
}

#[test]
fn hostile_figures_give_finite_parts_that_still_add_up() {
    let record = IterationRecord {
        total_ms: 10.0,
        network_ms: Some(f64::NAN),
        wire_decode_ms: Some(-4.0),
        row_decode_ms: Some(f64::INFINITY),
        server_ms: Some(1e300),
        server_client_wait_ms: Some(-1.0),
        ..IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z")
    };
    let a = record.accounting();
    assert_eq!(a.parts.sum_ms(), 10.0);
    assert!(a.parts.iter().all(|(_, ms)| ms.is_finite() && ms >= 0.0));
}

#[test]
fn a_failed_iteration_is_untimed_but_for_the_steps_it_made() {
    let record = IterationRecord {
        total_ms: 12.0,
        status: crate::report::Status::Error,
        dns_ms: Some(2.0),
        ..IterationRecord::new("r", 0, false, "2026-01-02T03:04:05Z")
    };
    let a = record.accounting();
    assert_eq!(parts_of(&a), vec![(Part::Dns, 2.0), (Part::Untimed, 10.0)]);
}
