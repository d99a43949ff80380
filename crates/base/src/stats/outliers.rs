//! Outliers by the median absolute deviation, and whether a run's first iteration was a cold start.
//!
//! The rule is Iglewicz and Hoaglin's modified z-score: with `M` the median and `MAD` the median
//! absolute deviation of the samples, a value `x` scores `0.6745 · (x - M) / MAD`, and a score
//! above 3.5 in absolute value marks a potential outlier. Both the median and the MAD ignore the
//! outliers they are meant to find, unlike the mean and standard deviation of the ordinary
//! z-score. (0.6745 is the 0.75 quantile of the standard normal distribution, so for normal data
//! `MAD / 0.6745` estimates the standard deviation and the score is comparable to a z-score.)
//!
//! Source: Boris Iglewicz and David C. Hoaglin, *How to Detect and Handle Outliers*, The ASQC
//! Basic References in Quality Control: Statistical Techniques, vol. 16, ASQC Quality Press,
//! 1993; as summarised in the NIST/SEMATECH e-Handbook of Statistical Methods, section 1.3.5.17
//! "Detection of Outliers" (<https://www.itl.nist.gov/div898/handbook/eda/section3/eda35h.htm>).

use super::{finite_sorted, median, ratio};

/// The modified z-score above which (in absolute value) a sample is an outlier: 3.5, the value
/// Iglewicz and Hoaglin recommend.
pub const OUTLIER_THRESHOLD: f64 = 3.5;

/// The 0.75 quantile of the standard normal distribution, the constant in the modified z-score.
const NORMAL_Q3: f64 = 0.6745;

/// The median absolute deviation of `samples`: the median of `|x - median(samples)|`.
///
/// The raw MAD, not scaled to estimate a standard deviation (the modified z-score does that with
/// its 0.6745). Values that are not finite are ignored; `None` when no finite value is left.
/// 0 for one sample, and whenever more than half the samples are equal.
pub fn mad(samples: &[f64]) -> Option<f64> {
    let mut values = finite_sorted(samples);
    let center = median(&mut values)?;
    let mut deviations: Vec<f64> = values.iter().map(|x| (x - center).abs()).collect();
    median(&mut deviations)
}

/// The indices into `samples` of the outliers: the values whose modified z-score
/// `0.6745 · (x - median) / MAD` exceeds `threshold` in absolute value (use
/// [`OUTLIER_THRESHOLD`]). See the [module documentation](self) for the source.
///
/// When the MAD is 0 (more than half the samples equal the median), every value that differs from
/// the median has an infinite score, so those values, and only those, are outliers, whatever the
/// threshold. Values that are not finite are ignored: they are neither counted in the median nor
/// reported. The indices come in ascending order; empty input gives no outliers.
pub fn outliers(samples: &[f64], threshold: f64) -> Vec<usize> {
    let mut values = finite_sorted(samples);
    let (Some(center), Some(spread)) = (median(&mut values), mad(&values)) else {
        return Vec::new();
    };
    samples
        .iter()
        .enumerate()
        .filter(|&(_, &x)| x.is_finite() && is_outlier(x, center, spread, threshold))
        .map(|(index, _)| index)
        .collect()
}

/// Whether `x` is an outlier of data with this median and MAD (see [`outliers`] for MAD = 0).
fn is_outlier(x: f64, center: f64, spread: f64, threshold: f64) -> bool {
    if spread == 0.0 {
        x != center
    } else {
        modified_z_score(x, center, spread).abs() > threshold
    }
}

/// Iglewicz and Hoaglin's modified z-score of `x`; `spread` (the MAD) must not be 0.
fn modified_z_score(x: f64, center: f64, spread: f64) -> f64 {
    NORMAL_Q3 * (x - center) / spread
}

/// The first iteration of a run (its first sample) set against the rest: whether it was a slow
/// cold start is [`is_slow_first`]'s to say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstSample {
    /// The first sample.
    pub first: f64,
    /// The median of the other samples.
    pub rest_median: f64,
    /// The median absolute deviation of the other samples (see [`mad`]).
    pub rest_mad: f64,
    /// `first / rest_median`: how many times slower the first iteration was (exactly 1 when both
    /// are 0, infinite when only the median of the rest is 0).
    pub ratio: f64,
}

/// The first sample of `samples_in_order` against the median and MAD of the others.
///
/// `None` with fewer than 2 samples, when the first one is not finite (the first sample is the
/// point, nothing else can stand in for it), or when none of the others is finite. Values after
/// the first that are not finite are ignored.
pub fn first_sample(samples_in_order: &[f64]) -> Option<FirstSample> {
    let (&first, rest) = samples_in_order.split_first()?;
    if !first.is_finite() {
        return None;
    }
    let mut rest = finite_sorted(rest);
    let rest_median = median(&mut rest)?;
    let rest_mad = mad(&rest)?;
    Some(FirstSample {
        first,
        rest_median,
        rest_mad,
        ratio: ratio(first, rest_median),
    })
}

/// Whether the first iteration was a slow cold start: more than 1.5 times the median of the
/// rest, and an outlier of the rest by the modified z-score (above [`OUTLIER_THRESHOLD`]).
///
/// Both conditions are needed: the first so that a run with a tiny spread does not call a first
/// iteration 10% slower a cold start, the second so that a run with a wide spread does not call a
/// first iteration within that spread one. When the MAD of the rest is 0 (the rest mostly equal)
/// every difference is an outlier by the MAD rule, so the rule becomes "more than 2 times the
/// median of the rest" instead. False when any field is NaN.
pub fn is_slow_first(c: &FirstSample) -> bool {
    if c.rest_mad == 0.0 {
        c.first > 2.0 * c.rest_median
    } else {
        c.first > 1.5 * c.rest_median
            && modified_z_score(c.first, c.rest_median, c.rest_mad) > OUTLIER_THRESHOLD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mad_hand_computed() {
        // median 3; deviations 2, 1, 0, 1, 97; their median 1.
        assert_eq!(mad(&[1.0, 2.0, 3.0, 4.0, 100.0]), Some(1.0));
        // median 2.5; deviations 1.5, 0.5, 0.5, 1.5; their median 1.
        assert_eq!(mad(&[4.0, 1.0, 3.0, 2.0]), Some(1.0));
    }

    #[test]
    fn mad_edge_cases() {
        assert_eq!(mad(&[]), None);
        assert_eq!(mad(&[f64::NAN]), None);
        assert_eq!(mad(&[42.0]), Some(0.0));
        assert_eq!(mad(&[3.0; 4]), Some(0.0));
        assert_eq!(
            mad(&[f64::NAN, 1.0, 2.0, f64::INFINITY, 3.0, 4.0, 100.0]),
            Some(1.0)
        );
    }

    #[test]
    fn outliers_finds_high_and_low_values() {
        // median 12.5, MAD 1.5: 100 scores 0.6745 · 87.5 / 1.5 ≈ 39.3, 10 scores ≈ 1.12.
        assert_eq!(
            outliers(&[10.0, 11.0, 12.0, 13.0, 14.0, 100.0], OUTLIER_THRESHOLD),
            vec![5]
        );
        // median 11.5, MAD 1.5: 0.1 scores 0.6745 · 11.4 / 1.5 ≈ 5.13.
        assert_eq!(
            outliers(&[0.1, 10.0, 11.0, 12.0, 13.0, 14.0], OUTLIER_THRESHOLD),
            vec![0]
        );
    }

    #[test]
    fn outliers_compares_the_score_with_the_threshold() {
        // median 3, MAD 1: scores 1.349, 0.6745, 0, 0.6745, 65.43.
        let samples = [1.0, 2.0, 3.0, 4.0, 100.0];
        assert_eq!(outliers(&samples, 1.3), vec![0, 4]);
        assert_eq!(outliers(&samples, 1.35), vec![4]);
        assert_eq!(outliers(&samples, 0.6), vec![0, 1, 3, 4]);
        assert_eq!(outliers(&samples, 70.0), Vec::<usize>::new());
    }

    #[test]
    fn outliers_with_zero_mad_are_the_values_off_the_median() {
        assert_eq!(
            outliers(&[5.0, 5.0, 9.0, 5.0, 5.0], OUTLIER_THRESHOLD),
            vec![2]
        );
        assert_eq!(outliers(&[5.0, 5.0, 5.0, 5.01, 4.0], 1000.0), vec![3, 4]);
        assert!(outliers(&[5.0; 4], OUTLIER_THRESHOLD).is_empty());
    }

    #[test]
    fn outliers_edge_cases() {
        assert!(outliers(&[], OUTLIER_THRESHOLD).is_empty());
        assert!(outliers(&[7.0], OUTLIER_THRESHOLD).is_empty());
        assert!(outliers(&[f64::NAN, f64::NAN], OUTLIER_THRESHOLD).is_empty());
        assert!(outliers(&[1.0, 2.0, 100.0], f64::NAN).is_empty());
    }

    #[test]
    fn outliers_skips_nan_but_keeps_original_indices() {
        let samples = [f64::NAN, 10.0, 11.0, 12.0, f64::NAN, 13.0, 14.0, 100.0];
        assert_eq!(outliers(&samples, OUTLIER_THRESHOLD), vec![7]);
    }

    #[test]
    fn cold_start_hand_computed() {
        // rest sorted 10, 10, 11, 11, 12: median 11, deviations 1, 1, 0, 0, 1, MAD 1.
        let c = first_sample(&[50.0, 10.0, 11.0, 12.0, 10.0, 11.0]).expect("enough samples");
        assert_eq!(
            c,
            FirstSample {
                first: 50.0,
                rest_median: 11.0,
                rest_mad: 1.0,
                ratio: 50.0 / 11.0
            }
        );
        // 50 > 16.5, score 0.6745 · 39 ≈ 26.3.
        assert!(is_slow_first(&c));
    }

    #[test]
    fn first_within_one_and_a_half_times_is_not_slow() {
        // rest median 11, MAD 1: 16 scores 3.37 and is under 16.5; 17 is over both.
        let fast = first_sample(&[16.0, 10.0, 11.0, 12.0, 10.0, 11.0]).expect("enough samples");
        assert!(!is_slow_first(&fast));
        let slow = first_sample(&[17.0, 10.0, 11.0, 12.0, 10.0, 11.0]).expect("enough samples");
        assert!(is_slow_first(&slow));
    }

    #[test]
    fn first_within_a_wide_spread_is_not_slow() {
        // rest sorted 5, 10, 15, 20, 30: median 15, MAD 5; 30 > 22.5 but scores only 2.02.
        let c = first_sample(&[30.0, 10.0, 20.0, 30.0, 5.0, 15.0]).expect("enough samples");
        assert_eq!((c.rest_median, c.rest_mad), (15.0, 5.0));
        assert!(!is_slow_first(&c));
    }

    #[test]
    fn with_zero_mad_slow_means_more_than_twice() {
        let c = first_sample(&[18.0, 10.0, 10.0, 10.0]).expect("enough samples");
        assert_eq!(c.rest_mad, 0.0);
        assert!(!is_slow_first(&c));
        assert!(is_slow_first(
            &first_sample(&[20.5, 10.0, 10.0, 10.0]).expect("enough samples")
        ));
        assert!(!is_slow_first(
            &first_sample(&[20.0, 10.0, 10.0, 10.0]).expect("enough")
        ));
    }

    #[test]
    fn cold_start_of_two_samples() {
        let c = first_sample(&[30.0, 10.0]).expect("two samples are enough");
        assert_eq!((c.rest_median, c.rest_mad, c.ratio), (10.0, 0.0, 3.0));
        assert!(is_slow_first(&c));
    }

    #[test]
    fn cold_start_of_all_equal_samples() {
        let c = first_sample(&[4.0; 6]).expect("enough samples");
        assert_eq!(c.ratio, 1.0);
        assert!(!is_slow_first(&c));
        let zeros = first_sample(&[0.0; 3]).expect("enough samples");
        assert_eq!(zeros.ratio, 1.0);
        assert!(!is_slow_first(&zeros));
    }

    #[test]
    fn cold_start_needs_a_finite_first_and_one_finite_other() {
        assert_eq!(first_sample(&[]), None);
        assert_eq!(first_sample(&[5.0]), None);
        assert_eq!(first_sample(&[f64::NAN, 1.0, 2.0]), None);
        assert_eq!(first_sample(&[1.0, f64::NAN]), None);
    }

    #[test]
    fn cold_start_ignores_nan_after_the_first() {
        let c = first_sample(&[50.0, f64::NAN, 10.0, 11.0, 12.0]).expect("enough finite samples");
        assert_eq!(c.rest_median, 11.0);
        assert!(is_slow_first(&c));
    }

    #[test]
    fn is_slow_first_with_nan_fields_is_false() {
        let c = FirstSample {
            first: f64::NAN,
            rest_median: 1.0,
            rest_mad: f64::NAN,
            ratio: f64::NAN,
        };
        assert!(!is_slow_first(&c));
    }
}
