//! The spread of a run's total times as five numbers: what a box plot draws.

use crate::part::Measure;
use crate::report::RunReport;
use crate::stats::percentile;

/// The minimum, quartiles and maximum of a run's timed totals, in milliseconds ([`percentile`]'s
/// interpolation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    /// How many timed totals there are (finite ones).
    pub count: usize,
    /// The shortest total.
    pub min: f64,
    /// The 25th percentile.
    pub q1: f64,
    /// The median.
    pub median: f64,
    /// The 75th percentile.
    pub q3: f64,
    /// The longest total.
    pub max: f64,
}

/// The distribution of the totals of `report`'s timed iterations; `None` when it has none (values
/// that are not finite are left out, as everywhere in [`stats`](crate::stats)).
pub fn totals_distribution(report: &RunReport) -> Option<Distribution> {
    let mut sorted: Vec<f64> = report
        .samples(Measure::Total)
        .into_iter()
        .filter(|x| x.is_finite())
        .collect();
    sorted.sort_by(f64::total_cmp);
    let q = |p| percentile(&sorted, p);
    Some(Distribution {
        count: sorted.len(),
        min: q(0.0)?,
        q1: q(25.0)?,
        median: q(50.0)?,
        q3: q(75.0)?,
        max: q(100.0)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of `totals` whose first iteration is a warm-up.
    fn report(totals: &[f64]) -> RunReport {
        let mut report = RunReport::with_totals("r", totals);
        report.config.warmup = 1;
        if let Some(first) = report.iterations.first_mut() {
            first.warmup = true;
        }
        report
    }

    #[test]
    fn five_numbers_of_the_timed_totals() {
        // The warm-up (500) is left out; 1 to 9 in any order: quartiles at 3 and 7.
        let d = totals_distribution(&report(&[
            500.0,
            9.0,
            1.0,
            5.0,
            3.0,
            7.0,
            2.0,
            8.0,
            4.0,
            6.0,
            f64::NAN,
        ]))
        .expect("timed totals");
        assert_eq!(
            d,
            Distribution {
                count: 9,
                min: 1.0,
                q1: 3.0,
                median: 5.0,
                q3: 7.0,
                max: 9.0
            }
        );
    }

    #[test]
    fn a_run_with_only_a_warm_up_has_no_distribution() {
        assert_eq!(totals_distribution(&report(&[10.0])), None);
        assert_eq!(totals_distribution(&report(&[])), None);
    }
}
