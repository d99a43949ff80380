//! Two runs side by side: the median of each phase in both with their ratio, and whether the
//! difference in total time is real, by [`stats::compare`]'s bootstrap under one set of
//! [`BootstrapSettings`] for every front end.

use crate::report::{Phase, RunReport};
use crate::stats::{self, Comparison};

/// How the bootstrap comparison of two runs is made: the same settings give the same interval,
/// wherever it is shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BootstrapSettings {
    /// The confidence level of the interval, strictly between 0 and 1.
    pub confidence: f64,
    /// How many resamples the bootstrap draws.
    pub resamples: usize,
    /// The seed of its generator: a comparison is a pure function of the two runs.
    pub seed: u64,
}

impl BootstrapSettings {
    /// A 95% interval from 10,000 resamples, seeded with `0x5eed`: what `spanprof compare` and
    /// the app's compare view use.
    pub const DEFAULT: BootstrapSettings = BootstrapSettings {
        confidence: 0.95,
        resamples: 10_000,
        seed: 0x5eed,
    };
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The median of one phase in both runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PhaseMedians {
    /// The phase.
    pub phase: Phase,
    /// Its median in run A (the baseline), in milliseconds.
    pub a_ms: f64,
    /// Its median in run B, in milliseconds.
    pub b_ms: f64,
    /// `b_ms / a_ms`; `None` when A's median is not positive.
    pub ratio: Option<f64>,
}

/// The bootstrap comparison of the two runs' total times, and what it means in words.
#[derive(Debug, Clone, PartialEq)]
pub struct TotalComparison {
    /// The ratio of the medians with its confidence interval.
    pub comparison: Comparison,
    /// One line naming both runs, from [`stats::verdict`], e.g. "after is 1.80× ± 0.10 faster
    /// than before (95% CI 1.70–1.90): the difference is significant".
    pub verdict: String,
}

/// Run B against run A (the baseline).
#[derive(Debug, Clone, PartialEq)]
pub struct RunComparison {
    /// Run A's label.
    pub a_label: String,
    /// Run B's label.
    pub b_label: String,
    /// The phases measured in both runs' timed iterations, in [`Phase::ALL`] order; a cold
    /// start's steps measured in one run set against a warm run's 0.
    pub phases: Vec<PhaseMedians>,
    /// The comparison of the totals; `None` when either run has no timed iteration with a
    /// positive median (see [`stats::compare`]).
    pub total: Option<TotalComparison>,
}

impl PhaseMedians {
    /// How much longer the phase took in B than in A, in milliseconds (negative: B is faster).
    pub fn delta_ms(&self) -> f64 {
        self.b_ms - self.a_ms
    }
}

/// The phases a difference in total time is made of: each iteration's total splits into these
/// (the server's own time overlaps network, but says where the network time went), a cold
/// iteration's into its steps too.
pub const PARTS: [Phase; 11] = [
    Phase::Dns,
    Phase::Tcp,
    Phase::Tls,
    Phase::Http2,
    Phase::Token,
    Phase::Session,
    Phase::Server,
    Phase::Network,
    Phase::WireDecode,
    Phase::RowDecode,
    Phase::Other,
];

impl RunComparison {
    /// The verdict in words, when the totals could be compared.
    pub fn verdict(&self) -> Option<&str> {
        self.total.as_ref().map(|t| t.verdict.as_str())
    }

    /// Where the difference is: the median change of each of [`PARTS`] measured in both runs,
    /// the largest change first.
    pub fn deltas(&self) -> Vec<&PhaseMedians> {
        let mut parts: Vec<&PhaseMedians> = self
            .phases
            .iter()
            .filter(|p| PARTS.contains(&p.phase))
            .collect();
        parts.sort_by(|x, y| y.delta_ms().abs().total_cmp(&x.delta_ms().abs()));
        parts
    }

    /// The verdict followed by where the difference is, e.g. "narrow is 7.90× ± 0.60 faster than
    /// wide (95% CI 7.31–8.52): the difference is significant: server −31.2 ms, row decode −9.8 ms,
    /// network −12.0 ms".
    pub fn verdict_with_deltas(&self) -> Option<String> {
        let verdict = self.verdict()?;
        let deltas: Vec<String> = self
            .deltas()
            .into_iter()
            .map(|p| format!("{} {}", p.phase.label(), signed_ms(p.delta_ms())))
            .collect();
        Some(if deltas.is_empty() {
            verdict.to_owned()
        } else {
            format!("{verdict}: {}", deltas.join(", "))
        })
    }
}

/// `+1.2 ms`, `−31.2 ms` (a true minus sign), `±0.0 ms`.
pub fn signed_ms(ms: f64) -> String {
    if ms.abs() < 0.05 {
        "±0.0 ms".into()
    } else if ms < 0.0 {
        format!("\u{2212}{:.1} ms", -ms)
    } else {
        format!("+{ms:.1} ms")
    }
}

/// The bootstrap comparison of one phase of run `b` with run `a`, as [`compare_runs`] compares
/// their totals; `None` when the phase was not measured in both (or its medians are not positive).
pub fn compare_phase(
    a: &RunReport,
    b: &RunReport,
    phase: Phase,
    settings: BootstrapSettings,
) -> Option<TotalComparison> {
    let comparison = stats::compare(
        &a.phase_samples(phase),
        &b.phase_samples(phase),
        settings.confidence,
        settings.resamples,
        settings.seed,
    )?;
    let (a_label, b_label) = (&a.config.label, &b.config.label);
    let verdict = if phase == Phase::Total {
        stats::verdict(&comparison, a_label, b_label)
    } else {
        stats::verdict(
            &comparison,
            &format!("{a_label}'s {}", phase.label()),
            &format!("{b_label}'s {}", phase.label()),
        )
    };
    Some(TotalComparison {
        comparison,
        verdict,
    })
}

/// Compares run `b` with run `a` over their timed iterations. The cost is the bootstrap's, about
/// `settings.resamples · (a + b)` draws and sorted values: tens of milliseconds for two runs of
/// 100 iterations at the default settings, too long for a UI thread.
pub fn compare_runs(a: &RunReport, b: &RunReport, settings: BootstrapSettings) -> RunComparison {
    let (a_label, b_label) = (a.config.label.clone(), b.config.label.clone());
    let total = compare_phase(a, b, Phase::Total, settings);
    RunComparison {
        phases: Phase::ALL
            .into_iter()
            .filter_map(|phase| phase_medians(a, b, phase))
            .collect(),
        a_label,
        b_label,
        total,
    }
}

fn phase_medians(a: &RunReport, b: &RunReport, phase: Phase) -> Option<PhaseMedians> {
    let median = |run: &RunReport| stats::summarize(&run.phase_samples(phase)).map(|s| s.median);
    let (a_ms, b_ms) = (median(a), median(b));
    if a_ms.is_none() && b_ms.is_none() {
        return None;
    }
    // A warm run spends nothing on a cold start's steps: set against a cold run, they are 0.
    let warm = |run: &RunReport| (phase.is_cold_start() && !run.config.cold).then_some(0.0);
    let (a_ms, b_ms) = (a_ms.or_else(|| warm(a))?, b_ms.or_else(|| warm(b))?);
    Some(PhaseMedians {
        phase,
        a_ms,
        b_ms,
        ratio: (a_ms > 0.0).then(|| b_ms / a_ms),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{IterationRecord, Status};

    #[test]
    fn a_warm_run_set_against_a_cold_one_spends_nothing_on_the_cold_start() {
        let warm = run("warm", &[2.0, 2.0, 2.0], None);
        let mut cold = run("cold", &[8.0, 8.0, 8.0], None);
        cold.config.cold = true;
        for it in &mut cold.iterations {
            it.token_ms = Some(5.0);
        }
        let compared = compare_runs(&warm, &cold, BootstrapSettings::DEFAULT);
        let token = compared
            .phases
            .iter()
            .find(|p| p.phase == Phase::Token)
            .expect("the token compared");
        assert_eq!((token.a_ms, token.b_ms), (0.0, 5.0));
        assert!(
            !compared.phases.iter().any(|p| p.phase == Phase::Tls),
            "measured in neither"
        );
        let verdict = compared.verdict_with_deltas().expect("compared");
        assert!(verdict.contains("token +5.0 ms"), "{verdict}");
        let both_warm = compare_runs(&warm, &warm, BootstrapSettings::DEFAULT);
        assert!(!both_warm.phases.iter().any(|p| p.phase == Phase::Token));
    }

    /// A run labelled `label` with one timed iteration per total, and a server time for each
    /// when `server` is given.
    fn run(label: &str, totals: &[f64], server: Option<f64>) -> RunReport {
        let mut report = RunReport::with_totals(label, totals);
        for iteration in &mut report.iterations {
            iteration.server_ms = server;
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
    fn phase_medians_and_their_ratios_are_of_the_timed_iterations() {
        let mut a = run("a", &[10.0, 20.0, 30.0], Some(4.0));
        // A warm-up and a failure are left out of the medians.
        a.iterations[0].warmup = true;
        a.iterations.push(IterationRecord {
            status: Status::Error,
            total_ms: 1000.0,
            ..IterationRecord::new("a", 3, false, "t")
        });
        let b = run("b", &[5.0, 15.0, 40.0, 60.0], Some(0.0));
        let c = compare_runs(&a, &b, BootstrapSettings::DEFAULT);
        assert_eq!(
            c.phases,
            vec![
                PhaseMedians {
                    phase: Phase::Total,
                    a_ms: 25.0,
                    b_ms: 27.5,
                    ratio: Some(1.1)
                },
                PhaseMedians {
                    phase: Phase::Server,
                    a_ms: 4.0,
                    b_ms: 0.0,
                    ratio: Some(0.0)
                },
            ]
        );
        let reversed = compare_runs(&b, &a, BootstrapSettings::DEFAULT);
        assert_eq!(
            reversed.phases[1].ratio, None,
            "a zero baseline has no ratio"
        );
        assert_eq!((c.a_label.as_str(), c.b_label.as_str()), ("a", "b"));
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
    fn the_verdict_says_which_phases_the_difference_is_in_largest_first() {
        let mut wide = run("wide", &spread(30, 100.0, 10.0), Some(40.0));
        let mut narrow = run("narrow", &spread(30, 20.0, 4.0), Some(8.8));
        for (report, network, row) in [(&mut wide, 30.0, 12.0), (&mut narrow, 18.0, 2.2)] {
            for it in &mut report.iterations {
                it.network_ms = Some(network);
                it.row_decode_ms = Some(row);
            }
        }
        let c = compare_runs(&wide, &narrow, BootstrapSettings::DEFAULT);
        let deltas: Vec<Phase> = c.deltas().into_iter().map(|p| p.phase).collect();
        assert_eq!(deltas, [Phase::Server, Phase::Network, Phase::RowDecode]);
        let text = c.verdict_with_deltas().expect("comparable");
        assert!(text.starts_with("narrow is "), "{text}");
        assert!(
            text.ends_with(
                "significant: server \u{2212}31.2 ms, network \u{2212}12.0 ms, row decode \u{2212}9.8 ms"
            ),
            "{text}"
        );
        assert_eq!(signed_ms(1.25), "+1.2 ms");
        assert_eq!(signed_ms(-0.01), "±0.0 ms");
    }

    #[test]
    fn one_phase_compares_as_the_totals_do() {
        let a = run("a", &spread(30, 50.0, 5.0), Some(20.0));
        let b = run("b", &spread(30, 50.0, 5.0), Some(30.0));
        let server = compare_phase(&a, &b, Phase::Server, BootstrapSettings::DEFAULT)
            .expect("measured in both");
        assert!((server.comparison.ratio - 1.5).abs() < 1e-9);
        assert!(
            server.verdict.starts_with("b's server is 1.50×"),
            "{}",
            server.verdict
        );
        assert!(compare_phase(&a, &b, Phase::RowDecode, BootstrapSettings::DEFAULT).is_none());
    }

    #[test]
    fn a_run_without_timed_iterations_cannot_be_compared() {
        let a = run("a", &[10.0, 11.0], None);
        let mut b = run("b", &[12.0], None);
        b.iterations[0].warmup = true;
        let c = compare_runs(&a, &b, BootstrapSettings::DEFAULT);
        assert_eq!(c.total, None);
        assert_eq!(c.verdict(), None);
        assert!(c.phases.is_empty());
    }
}
