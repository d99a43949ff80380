//! A gate for CI: does a new run regress against a baseline? It fails only when the new run's
//! median is slower than the baseline's by more than the allowed fraction *and* the bootstrap says
//! the difference is real, so a noisy machine alone does not fail a build, and a real slowdown
//! within the allowance does not either.

use super::comparison::{BootstrapSettings, PairNames, TotalComparison, compare_measure_named};
use crate::part::Measure;
use crate::report::RunReport;

/// What a gate allows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gate {
    /// The slowdown allowed, as a fraction: 0.10 lets the new median be up to 10% slower.
    pub max_slowdown: f64,
    /// What is compared: the total (the default), or one part.
    pub measure: Measure,
}

/// What a gate decided, and why, in words.
#[derive(Debug, Clone, PartialEq)]
pub struct GateOutcome {
    /// The comparison of the measure.
    pub comparison: TotalComparison,
    /// Whether the new run regressed: slower by more than allowed, significantly.
    pub failed: bool,
    /// One line saying what was found and what it means for the gate.
    pub reason: String,
}

/// Why a gate could not decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// The measure is not positive in the timed iterations of both runs.
    #[error(
        "cannot gate on {measure}: it is not above 0 in both {base}'s and {new}'s successful iterations"
    )]
    NotComparable {
        /// The measure's label.
        measure: &'static str,
        /// The baseline's label.
        base: String,
        /// The new run's label.
        new: String,
    },
}

/// Gates `new` against `base` under `gate`, with the comparison made under `settings`; the
/// reason calls the runs by their labels.
pub fn gate(
    base: &RunReport,
    new: &RunReport,
    gate: Gate,
    settings: BootstrapSettings,
) -> Result<GateOutcome, GateError> {
    gate_named(base, new, PairNames::labels(base, new), gate, settings)
}

/// [`gate()`] with a reason that calls the runs by `names` (the baseline's first).
pub fn gate_named(
    base: &RunReport,
    new: &RunReport,
    names: PairNames<'_>,
    gate: Gate,
    settings: BootstrapSettings,
) -> Result<GateOutcome, GateError> {
    let comparison =
        compare_measure_named(base, new, names, gate.measure, settings).ok_or_else(|| {
            GateError::NotComparable {
                measure: gate.measure.label(),
                base: names.a.to_owned(),
                new: names.b.to_owned(),
            }
        })?;
    let c = &comparison.comparison;
    let allowed = 1.0 + gate.max_slowdown;
    let percent = |x: f64| format!("{:.0}%", x * 100.0);
    let slowdown = c.ratio - 1.0;
    let (failed, why) = if c.ratio > allowed && c.significant {
        (
            true,
            format!(
                "{} slower, more than the {} allowed: the gate fails",
                percent(slowdown),
                percent(gate.max_slowdown)
            ),
        )
    } else if c.ratio > allowed {
        (
            false,
            format!(
                "{} slower, more than the {} allowed, but not significantly: the gate passes",
                percent(slowdown),
                percent(gate.max_slowdown)
            ),
        )
    } else if c.ratio > 1.0 {
        (
            false,
            format!(
                "{} slower, within the {} allowed: the gate passes",
                percent(slowdown),
                percent(gate.max_slowdown)
            ),
        )
    } else {
        (false, "no slower: the gate passes".to_owned())
    };
    let reason = format!("{}; {why}", comparison.verdict);
    Ok(GateOutcome {
        comparison,
        failed,
        reason,
    })
}

/// Reads an allowed slowdown written as a percentage (`10%`) or a fraction (`0.1`).
pub fn parse_slowdown(text: &str) -> Result<f64, String> {
    let trimmed = text.trim();
    let value = match trimmed.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => trimmed.parse::<f64>(),
    };
    match value {
        Ok(v) if v.is_finite() && (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{trimmed:?} is not a slowdown: write it as a percentage such as 10% (or 0.1)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, base: f64, n: usize) -> RunReport {
        let totals: Vec<f64> = (0..n)
            .map(|k| base + base * 0.04 * ((k * 37) % n) as f64 / n as f64)
            .collect();
        RunReport::with_totals(label, &totals)
    }

    const TEN_PERCENT: Gate = Gate {
        max_slowdown: 0.10,
        measure: Measure::Total,
    };

    #[test]
    fn a_real_slowdown_past_the_allowance_fails_the_gate() {
        let outcome = gate(
            &run("base", 100.0, 30),
            &run("new", 130.0, 30),
            TEN_PERCENT,
            BootstrapSettings::DEFAULT,
        )
        .expect("comparable");
        assert!(outcome.failed, "{}", outcome.reason);
        assert!(
            outcome
                .reason
                .contains("30% slower, more than the 10% allowed: the gate fails"),
            "{}",
            outcome.reason
        );
    }

    #[test]
    fn the_same_query_twice_and_a_slowdown_within_the_allowance_pass() {
        let same = gate(
            &run("base", 100.0, 30),
            &run("new", 100.0, 30),
            TEN_PERCENT,
            BootstrapSettings::DEFAULT,
        )
        .expect("comparable");
        assert!(!same.failed, "{}", same.reason);
        let within = gate(
            &run("base", 100.0, 30),
            &run("new", 105.0, 30),
            TEN_PERCENT,
            BootstrapSettings::DEFAULT,
        )
        .expect("comparable");
        assert!(!within.failed);
        assert!(
            within.reason.contains("within the 10% allowed"),
            "{}",
            within.reason
        );
        let faster = gate(
            &run("base", 100.0, 30),
            &run("new", 60.0, 30),
            TEN_PERCENT,
            BootstrapSettings::DEFAULT,
        )
        .expect("comparable");
        assert!(!faster.failed);
        assert!(faster.reason.ends_with("no slower: the gate passes"));
    }

    #[test]
    fn a_slowdown_the_noise_could_explain_passes() {
        // Two iterations each, one of them wild: the interval is too wide to say.
        let base = RunReport::with_totals("base", &[100.0, 300.0]);
        let new = RunReport::with_totals("new", &[120.0, 400.0]);
        let outcome =
            gate(&base, &new, TEN_PERCENT, BootstrapSettings::DEFAULT).expect("comparable");
        assert!(!outcome.failed, "{}", outcome.reason);
        assert!(
            outcome.reason.contains("but not significantly"),
            "{}",
            outcome.reason
        );
    }

    #[test]
    fn a_named_gate_calls_the_runs_by_the_names_given() {
        let outcome = gate_named(
            &run("run", 100.0, 30),
            &run("run", 130.0, 30),
            PairNames {
                a: "run · 10:00:00",
                b: "run · 11:00:00",
            },
            TEN_PERCENT,
            BootstrapSettings::DEFAULT,
        )
        .expect("comparable");
        assert!(
            outcome
                .reason
                .starts_with("run · 11:00:00 is 1.30× ± 0.01 slower than run · 10:00:00"),
            "{}",
            outcome.reason
        );
    }

    #[test]
    fn a_phase_not_measured_cannot_be_gated() {
        let server = Gate {
            measure: Measure::Part(crate::part::Part::Server),
            ..TEN_PERCENT
        };
        let error = gate(
            &run("base", 1.0, 5),
            &run("new", 1.0, 5),
            server,
            BootstrapSettings::DEFAULT,
        )
        .expect_err("no server times");
        assert!(
            error.to_string().contains("cannot gate on server"),
            "{error}"
        );
    }

    #[test]
    fn slowdowns_read_as_percentages_or_fractions() {
        assert_eq!(parse_slowdown("10%"), Ok(0.1));
        assert_eq!(parse_slowdown("0.25"), Ok(0.25));
        assert_eq!(parse_slowdown(" 5 % "), Ok(0.05));
        for bad in ["", "ten", "-5%", "NaN", "1e9"] {
            assert!(parse_slowdown(bad).is_err(), "{bad}");
        }
    }
}
