//! Pure statistics over timing samples (milliseconds as `f64`).
//!
//! - [`summary`](mod@summary): count, mean, median, sample standard deviation, extremes and
//!   percentiles.
//! - [`outliers`](mod@outliers): the median absolute deviation and Iglewicz and Hoaglin's
//!   modified z-score; whether the first iteration of a run was a slow cold start.
//! - [`compare`](mod@compare): the ratio of the medians of two runs with a bootstrap confidence
//!   interval.
//! - [`zipf`](mod@zipf): Zipf's distribution over ranks, sampled by rejection-inversion (a load
//!   run's hot keys).
//!
//! Everything here is a pure function of its inputs (the bootstrap takes its seed as an argument),
//! and nothing panics on odd input: values that are not finite (NaN, ±∞) are not measurements and
//! are left out, and a result that cannot be computed is `None`.

pub mod compare;
pub mod outliers;
pub mod random;
pub mod summary;
pub mod zipf;

pub use compare::{Comparison, compare, verdict};
pub use outliers::{FirstSample, OUTLIER_THRESHOLD, first_sample, is_slow_first, mad, outliers};
pub use random::shuffle;
pub use summary::{Summary, percentile, summarize};
pub use zipf::{MAX_ZIPF_RANKS, Zipf, ZipfError};

/// The median of `values` (the mean of the two middle values for an even count); `None` when empty.
/// Sorts `values` in place. NaNs sort last.
pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    Some(if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    })
}

/// The finite values of `samples`, sorted ascending: what every statistic here works on.
fn finite_sorted(samples: &[f64]) -> Vec<f64> {
    let mut values: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
    values.sort_by(f64::total_cmp);
    values
}

/// `numerator / denominator`, except that equal values (0 / 0 included) give exactly 1.
fn ratio(numerator: f64, denominator: f64) -> f64 {
    if numerator == denominator {
        1.0
    } else {
        numerator / denominator
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }

    #[test]
    fn finite_sorted_drops_nan_and_infinities_and_sorts() {
        let values = finite_sorted(&[3.0, f64::NAN, -1.0, f64::INFINITY, 2.0, f64::NEG_INFINITY]);
        assert_eq!(values, vec![-1.0, 2.0, 3.0]);
        assert!(finite_sorted(&[f64::NAN]).is_empty());
    }

    #[test]
    fn ratio_of_equal_values_is_one_even_at_zero() {
        assert_eq!(ratio(0.0, 0.0), 1.0);
        assert_eq!(ratio(3.0, 2.0), 1.5);
        assert_eq!(ratio(1.0, 0.0), f64::INFINITY);
    }
}
