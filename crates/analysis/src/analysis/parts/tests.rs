use super::*;
use crate::report::IterationRecord;

fn record(
    iteration: u32,
    total_ms: f64,
    network_ms: f64,
    server_ms: Option<f64>,
) -> IterationRecord {
    {
        let mut r = IterationRecord::new("r", iteration, false, "2026-01-02T03:04:05Z");
        r.total_ms = total_ms;
        r.query.stream_wait_ms = Some(network_ms);
        r.query.wire_decode_wall_ms = Some(1.0);
        r.query.wire_decode_cpu_ms = Some(1.0);
        r.query.row_decode_wall_ms = Some(4.0);
        r.query.row_decode_cpu_ms = Some(3.5);
        r.query.client_work_wall_ms = Some(1.0);
        r.query.client_work_cpu_ms = Some(1.0);
        r.query.descheduled_ms = Some(0.5);
        r.query.server_elapsed_ms = server_ms;
        r
    }
}

#[test]
fn the_means_of_the_parts_add_up_to_the_mean_total() {
    let records = vec![
        record(0, 20.0, 10.0, Some(8.0)),
        record(1, 31.3, 21.0, Some(30.0)),
        record(2, 17.25, 9.0, None),
        {
            let mut r = record(3, 900.0, 10.0, None);
            r.outcome = crate::report::Outcome::failed("failed", None);
            r
        },
    ];
    let stats = PartStats::of(&records).expect("timed iterations");
    assert_eq!(stats.total.count, 3, "the failed iteration is left out");
    let sum: f64 = stats.parts.iter().map(|p| p.summary.mean).sum();
    assert!(
        (sum - stats.total.mean).abs() < 1e-9,
        "{sum} vs {}",
        stats.total.mean
    );
    let shares: f64 = stats.parts.iter().map(|p| p.share).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    // Iteration 2 had no server time: its server part counts as 0 in the mean.
    let server = stats.part(Part::Server).expect("two iterations had it");
    assert!((server.summary.mean - (8.0 + 21.0) / 3.0).abs() < 1e-9);
    assert_eq!(stats.split, Split::Estimated);
    assert_eq!(stats.overlap.map(|o| o.count), Some(2));
}

#[test]
fn a_notable_untimed_share_is_named_by_iteration() {
    // 16 ms of the first's 16.5 are timed; 16 of the second's 40.
    let records = vec![record(0, 16.5, 10.0, None), record(1, 40.0, 10.0, None)];
    let stats = PartStats::of(&records).expect("timed");
    assert_eq!(stats.untimed_notable, vec![1]);
}

#[test]
fn the_headline_reads_like_hyperfine_s() {
    let records = vec![
        record(0, 20.0, 10.0, Some(8.0)),
        record(1, 30.0, 20.0, Some(19.0)),
    ];
    let stats = PartStats::of(&records).expect("timed");
    let line = stats.headline().to_string();
    assert!(
        line.starts_with(
            "Time (mean ± σ): 25.0 ms ± 7.07 ms [20.0 ms … 30.0 ms], 2 iterations; server 54%"
        ),
        "{line}"
    );
}

#[test]
fn the_changes_of_the_parts_add_up_to_the_change_of_the_total() {
    let a = PartStats::of(&[
        record(0, 20.0, 10.0, Some(8.0)),
        record(1, 22.0, 12.0, Some(8.0)),
    ])
    .expect("a");
    let cold = {
        let mut r = record(0, 50.0, 30.0, Some(29.0));
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Dns, 1.0);
        r.cold
            .get_or_insert_default()
            .set(crate::report::ColdStep::Token, 4.0);
        r
    };
    let b = PartStats::of(&[cold, record(1, 40.0, 20.0, None)]).expect("b");
    let comparison = PartComparison::of(&a, &b);
    let sum: f64 = comparison.parts.iter().map(PartChange::change).sum();
    assert!((sum - comparison.total_change()).abs() < 1e-9, "{sum}");
    assert!((comparison.total_change() - 24.0).abs() < 1e-9);
    assert!(
        comparison
            .parts
            .iter()
            .any(|c| c.part == Part::Cold(crate::report::ColdStep::Dns) && c.a_mean == 0.0)
    );
    let words = comparison.in_words();
    assert!(words.starts_with("+24.0 ms in the mean: "), "{words}");
}
