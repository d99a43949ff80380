//! A summary of one run's timings: count, mean, median, spread, extremes and percentiles.

use super::finite_sorted;

/// The usual description of a set of timing samples, all in the samples' unit (milliseconds).
///
/// Built by [`summarize`] from the finite samples only (NaN and ±∞ are left out, and not counted).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// How many finite samples were summarised.
    pub count: usize,
    /// The arithmetic mean.
    pub mean: f64,
    /// The median (the 50th percentile: the mean of the two middle values for an even count).
    pub median: f64,
    /// The sample standard deviation (divisor `n - 1`); 0 when there are fewer than 2 samples.
    pub std_dev: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// The 90th percentile, as [`percentile`] computes it.
    pub p90: f64,
    /// The 99th percentile, as [`percentile`] computes it.
    pub p99: f64,
}

/// Summarises `samples`; `None` when there is no finite sample.
///
/// Values that are not finite (NaN, ±∞) are ignored: a timing that is not a number is not a
/// measurement. The order of `samples` does not matter.
pub fn summarize(samples: &[f64]) -> Option<Summary> {
    let sorted = finite_sorted(samples);
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    let count = sorted.len();
    let mean = sorted.iter().sum::<f64>() / count as f64;
    let std_dev = if count < 2 {
        0.0
    } else {
        let squares: f64 = sorted.iter().map(|x| (x - mean) * (x - mean)).sum();
        (squares / (count - 1) as f64).sqrt()
    };
    Some(Summary {
        count,
        mean,
        median: percentile(&sorted, 50.0)?,
        std_dev,
        min,
        max,
        p90: percentile(&sorted, 90.0)?,
        p99: percentile(&sorted, 99.0)?,
    })
}

/// The `p`th percentile (`p` from 0 to 100) of `sorted`, which must be sorted ascending.
///
/// Linear interpolation between the closest ranks, the method numpy's `percentile` uses by
/// default (`method="linear"`, type 7 in Hyndman and Fan, "Sample Quantiles in Statistical
/// Packages", The American Statistician 50(4), 1996): with `n` values indexed from 0, the
/// percentile sits at the fractional index `h = (n - 1) · p / 100`, and is
/// `sorted[⌊h⌋] + (h - ⌊h⌋) · (sorted[⌊h⌋ + 1] - sorted[⌊h⌋])`. So `p = 0` is the minimum,
/// `p = 100` the maximum and `p = 50` the median.
///
/// `None` when `sorted` is empty or `p` is NaN or outside `0..=100`. Unsorted input or NaNs in
/// `sorted` give a meaningless number, never a panic.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let last = sorted.len() - 1;
    let h = last as f64 * p / 100.0;
    // `h` lies in 0..=last, so the truncating cast is the floor and in range; `min` keeps it so.
    let low = (h.floor() as usize).min(last);
    let high = (low + 1).min(last);
    let fraction = h - low as f64;
    let (a, b) = (sorted[low], sorted[high]);
    Some(if fraction == 0.0 {
        a
    } else {
        a + fraction * (b - a)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn percentile_interpolates_like_numpy_linear() {
        let one_to_ten: Vec<f64> = (1..=10).map(f64::from).collect();
        // numpy.percentile(range(1, 11), [0, 25, 50, 90, 99, 100]) == [1, 3.25, 5.5, 9.1, 9.91, 10]
        let expected = [
            (0.0, 1.0),
            (25.0, 3.25),
            (50.0, 5.5),
            (90.0, 9.1),
            (99.0, 9.91),
            (100.0, 10.0),
        ];
        for (p, want) in expected {
            let got = percentile(&one_to_ten, p).expect("p is in range");
            assert!(close(got, want), "p{p}: got {got}, want {want}");
        }
    }

    #[test]
    fn percentile_of_two_values_and_exact_ranks() {
        assert_eq!(percentile(&[10.0, 20.0], 50.0), Some(15.0));
        assert_eq!(percentile(&[10.0, 20.0], 10.0), Some(11.0));
        // h = 2 · 50 / 100 = 1 exactly: the middle value, no interpolation.
        assert_eq!(percentile(&[1.0, 7.0, 100.0], 50.0), Some(7.0));
    }

    #[test]
    fn percentile_of_one_sample_is_that_sample() {
        for p in [0.0, 50.0, 99.0, 100.0] {
            assert_eq!(percentile(&[4.5], p), Some(4.5));
        }
    }

    #[test]
    fn percentile_rejects_empty_input_and_bad_p() {
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[1.0, 2.0], -0.1), None);
        assert_eq!(percentile(&[1.0, 2.0], 100.1), None);
        assert_eq!(percentile(&[1.0, 2.0], f64::NAN), None);
    }

    #[test]
    fn percentile_with_nan_in_input_does_not_panic() {
        assert!(percentile(&[1.0, f64::NAN], 50.0).is_some_and(f64::is_nan));
    }

    #[test]
    fn summarize_hand_computed_example() {
        // mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32; sample variance 32/7.
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).expect("not empty");
        assert_eq!(s.count, 8);
        assert!(close(s.mean, 5.0));
        assert!(close(s.median, 4.5));
        assert!(close(s.std_dev, (32.0_f64 / 7.0).sqrt()));
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // h = 7 · 0.9 = 6.3: 7 + 0.3 · (9 - 7); h = 7 · 0.99 = 6.93: 7 + 0.93 · 2.
        assert!(close(s.p90, 7.6));
        assert!(close(s.p99, 8.86));
    }

    #[test]
    fn summarize_does_not_depend_on_order() {
        let sorted = summarize(&[1.0, 2.0, 3.0, 10.0]);
        let shuffled = summarize(&[10.0, 3.0, 1.0, 2.0]);
        assert_eq!(sorted, shuffled);
        assert!(close(sorted.expect("not empty").median, 2.5));
    }

    #[test]
    fn summarize_empty_is_none() {
        assert_eq!(summarize(&[]), None);
        assert_eq!(summarize(&[f64::NAN, f64::INFINITY]), None);
    }

    #[test]
    fn summarize_one_sample_has_zero_spread() {
        let s = summarize(&[3.5]).expect("not empty");
        let every = [s.mean, s.median, s.min, s.max, s.p90, s.p99];
        assert_eq!(s.count, 1);
        assert!(every.iter().all(|&x| x == 3.5), "{s:?}");
        assert_eq!(s.std_dev, 0.0);
    }

    #[test]
    fn summarize_all_equal_has_zero_spread() {
        let s = summarize(&[7.25; 5]).expect("not empty");
        assert_eq!(s.count, 5);
        assert_eq!(s.std_dev, 0.0);
        assert_eq!((s.mean, s.median, s.p99), (7.25, 7.25, 7.25));
    }

    #[test]
    fn summarize_ignores_nan() {
        let s = summarize(&[f64::NAN, 1.0, 3.0, f64::NAN]).expect("two finite samples");
        assert_eq!(s.count, 2);
        assert!(close(s.mean, 2.0));
        assert!(close(s.std_dev, 2.0_f64.sqrt()));
        assert!(!s.p99.is_nan());
    }
}
