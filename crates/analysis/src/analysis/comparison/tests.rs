use super::*;
use crate::part::{ColdStep, Part};
use crate::report::IterationRecord;

#[test]
fn a_warm_run_set_against_a_cold_one_spends_nothing_on_the_cold_start() {
    let warm = run("warm", &[2.0, 2.0, 2.0], None);
    let mut cold = run("cold", &[8.0, 8.0, 8.0], None);
    cold.config.cold = true;
    for it in &mut cold.iterations {
        it.cold.get_or_insert_default().set(ColdStep::Token, 5.0);
    }
    let compared = compare_runs(&warm, &cold, BootstrapSettings::DEFAULT);
    let parts = compared.parts.as_ref().expect("both timed");
    let token = parts
        .parts
        .iter()
        .find(|p| p.part == Part::Cold(ColdStep::Token))
        .expect("the token compared");
    assert_eq!((token.a_mean, token.b_mean), (0.0, 5.0));
    assert!(
        !parts.parts.iter().any(|p| p.part == Part::PartitionQuery),
        "had by neither"
    );
    let verdict = compared.verdict_with_deltas().expect("compared");
    assert!(verdict.contains("token +5.00 ms"), "{verdict}");
    let both_warm = compare_runs(&warm, &warm, BootstrapSettings::DEFAULT);
    let parts = both_warm.parts.expect("timed");
    assert!(
        !parts
            .parts
            .iter()
            .any(|p| p.part == Part::Cold(ColdStep::Token))
    );
}

/// A run labelled `label` with one timed iteration per total, and a server time for each
/// when `server` is given.
fn run(label: &str, totals: &[f64], server: Option<f64>) -> RunReport {
    let mut report = RunReport::with_totals(label, totals);
    for iteration in &mut report.iterations {
        iteration.query.server_elapsed_ms = server;
    }
    report
}

/// `n` totals spread evenly over `base..base + width`, in a scrambled order.
fn spread(n: usize, base: f64, width: f64) -> Vec<f64> {
    (0..n)
        .map(|k| base + width * ((k * 37) % n) as f64 / n as f64)
        .collect()
}

#[test]
fn the_default_settings_are_the_command_lines() {
    let d = BootstrapSettings::default();
    assert_eq!((d.confidence, d.resamples, d.seed), (0.95, 10_000, 0x5eed));
    assert_eq!(d, BootstrapSettings::DEFAULT);
}

#[test]
fn part_changes_are_of_the_timed_iterations_and_add_up_to_the_total_s() {
    let mut a = run("a", &[10.0, 20.0, 30.0], Some(4.0));
    for it in &mut a.iterations {
        it.query.stream_wait_ms = Some(6.0);
    }
    // A warm-up and a failure are left out.
    a.iterations[0].warmup = true;
    a.iterations.push({
        let mut r = IterationRecord::new("a", 3, false, "t");
        r.outcome = crate::report::Outcome::failed("failed", None);
        r.total_ms = 1000.0;
        r
    });
    let b = run("b", &[5.0, 15.0, 40.0, 60.0], None);
    let c = compare_runs(&a, &b, BootstrapSettings::DEFAULT);
    let parts = c.parts.as_ref().expect("both timed");
    assert_eq!((parts.a_mean, parts.b_mean), (25.0, 30.0));
    let sum: f64 = parts.parts.iter().map(|p| p.change()).sum();
    assert!((sum - 5.0).abs() < 1e-9, "{sum}");
    let server = parts
        .parts
        .iter()
        .find(|p| p.part == Part::Server)
        .expect("in a");
    assert_eq!((server.a_mean, server.b_mean), (4.0, 0.0));
    assert_eq!((c.a_name.as_str(), c.b_name.as_str()), ("a", "b"));
}

#[test]
fn a_clearly_faster_run_gets_a_significant_verdict_naming_both() {
    let before = run("before", &spread(60, 100.0, 20.0), None);
    let after = run("after", &spread(60, 50.0, 10.0), None);
    let c = compare_runs(&before, &after, BootstrapSettings::DEFAULT);
    let total = c.total.as_ref().expect("both runs have timed iterations");
    assert!(total.comparison.significant, "{total:?}");
    assert!((total.comparison.ratio - 0.5).abs() < 0.02, "{total:?}");
    assert_eq!(total.comparison.confidence, 0.95);
    let verdict = c.verdict().expect("a verdict");
    assert!(verdict.starts_with("after is 2.0"), "{verdict}");
    assert!(verdict.contains("faster than before (95% CI "), "{verdict}");
    assert!(
        verdict.ends_with("the difference is significant"),
        "{verdict}"
    );
}

#[test]
fn the_total_is_stats_compare_under_the_settings_given() {
    let (a_totals, b_totals) = (spread(30, 80.0, 40.0), spread(30, 85.0, 40.0));
    let (a, b) = (run("a", &a_totals, None), run("b", &b_totals, None));
    for settings in [
        BootstrapSettings::DEFAULT,
        BootstrapSettings {
            confidence: 0.9,
            resamples: 500,
            seed: 7,
        },
    ] {
        let expected = stats::compare(
            &a_totals,
            &b_totals,
            settings.confidence,
            settings.resamples,
            settings.seed,
        )
        .expect("comparable runs");
        let total = compare_runs(&a, &b, settings)
            .total
            .expect("comparable runs");
        assert_eq!(total.comparison, expected);
        assert_eq!(total.verdict, stats::verdict(&expected, "a", "b"));
    }
}

#[test]
fn the_verdict_says_which_parts_the_difference_is_in_largest_first() {
    let mut wide = run("wide", &spread(30, 100.0, 10.0), Some(40.0));
    let mut narrow = run("narrow", &spread(30, 20.0, 4.0), Some(8.8));
    for (report, network, row) in [(&mut wide, 70.0, 12.0), (&mut narrow, 18.0, 2.2)] {
        for it in &mut report.iterations {
            it.query.stream_wait_ms = Some(network);
            it.query.row_decode_wall_ms = Some(row);
        }
    }
    let c = compare_runs(&wide, &narrow, BootstrapSettings::DEFAULT);
    let parts = c.parts.as_ref().expect("comparable");
    let order: Vec<Part> = parts
        .largest_changes()
        .into_iter()
        .map(|p| p.part)
        .collect();
    // The totals' means differ by 82.9 ms: the untimed rest of each iteration moved too.
    assert_eq!(
        order,
        [Part::Server, Part::Untimed, Part::Network, Part::RowDecode]
    );
    let text = c.verdict_with_deltas().expect("comparable");
    assert!(text.starts_with("narrow is "), "{text}");
    assert!(
        text.contains("significant; \u{2212}82.9 ms in the mean: server \u{2212}31.2 ms, "),
        "{text}"
    );
    assert!(
        text.ends_with("network \u{2212}20.8 ms, row decode \u{2212}9.80 ms"),
        "{text}"
    );
}

#[test]
fn one_part_compares_as_the_totals_do() {
    let mut a = run("a", &spread(30, 50.0, 5.0), Some(20.0));
    let mut b = run("b", &spread(30, 50.0, 5.0), Some(30.0));
    for it in a.iterations.iter_mut().chain(&mut b.iterations) {
        it.query.stream_wait_ms = Some(40.0);
    }
    let server = compare_measure(
        &a,
        &b,
        Measure::Part(Part::Server),
        BootstrapSettings::DEFAULT,
    )
    .expect("had by both");
    assert!((server.comparison.ratio - 1.5).abs() < 1e-9);
    assert!(
        server.verdict.starts_with("b's server is 1.50×"),
        "{}",
        server.verdict
    );
    assert!(
        compare_measure(
            &a,
            &b,
            Measure::Part(Part::RowDecode),
            BootstrapSettings::DEFAULT
        )
        .is_none(),
        "0 in both: no positive median"
    );
}

#[test]
fn a_run_without_timed_iterations_cannot_be_compared() {
    let a = run("a", &[10.0, 11.0], None);
    let mut b = run("b", &[12.0], None);
    b.iterations[0].warmup = true;
    let c = compare_runs(&a, &b, BootstrapSettings::DEFAULT);
    assert_eq!(c.total, None);
    assert_eq!(c.verdict(), None);
    assert!(c.parts.is_none());
}

#[test]
fn a_named_comparison_calls_the_runs_by_the_names_given_in_its_verdict() {
    let (a, b) = (
        run("run", &spread(30, 100.0, 20.0), None),
        run("run", &spread(30, 50.0, 10.0), None),
    );
    let names = PairNames {
        a: "run · 10:00:00",
        b: "run · 10:00:05",
    };
    let c = compare_runs_named(&a, &b, names, BootstrapSettings::DEFAULT);
    assert_eq!((c.a_name.as_str(), c.b_name.as_str()), (names.a, names.b));
    let verdict = c.verdict().expect("comparable");
    assert!(
        verdict.starts_with("run · 10:00:05 is ") && verdict.contains(" than run · 10:00:00 "),
        "{verdict}"
    );
    let total = compare_measure_named(&a, &b, names, Measure::Total, BootstrapSettings::DEFAULT)
        .expect("comparable");
    assert_eq!(total.verdict, verdict);
}
