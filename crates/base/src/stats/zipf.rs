//! Zipf's distribution over the ranks `1..=n`: rank `k` drawn with probability `k^-s / H(n, s)`,
//! rank 1 the most likely. Sampled by rejection-inversion (W. Hörmann and G. Derflinger,
//! "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS
//! 6(3), 1996): the ranks are covered by the integral of the hat `x^-s`, a uniform draw is
//! inverted through it, and the rare draw that lands outside the bar of its rank is drawn again.
//! Constant memory and expected constant time whatever `n` (up to 2^53, where a double still holds
//! every rank), for every exponent `s > 0`; `s = 1` is handled by the helpers' limits.

use super::random::SplitMix64;

/// Zipf's distribution over `1..=n` with exponent `s`, ready to sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Zipf {
    n: f64,
    s: f64,
    /// The hat's integral at the left end of rank 1's bar, minus rank 1's height: the draws'
    /// upper bound (the integral runs downwards).
    top: f64,
    /// The hat's integral at the right end of rank n's bar.
    bottom: f64,
    /// A draw this close to its rank is accepted without computing the bar's edge.
    squeeze: f64,
}

/// Why a Zipf distribution cannot be made.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZipfError {
    /// No ranks, or more than a double holds exactly.
    Ranks(u64),
    /// The exponent is not a number above 0.
    Exponent(f64),
}

impl std::fmt::Display for ZipfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ZipfError::Ranks(n) => {
                write!(
                    f,
                    "a Zipf distribution needs between 1 and 2^53 keys, not {n}"
                )
            }
            ZipfError::Exponent(s) => write!(f, "a Zipf exponent must be above 0, not {s}"),
        }
    }
}

impl std::error::Error for ZipfError {}

/// The most ranks a [`Zipf`] takes: every integer up to it is a double.
pub const MAX_ZIPF_RANKS: u64 = 1 << 53;

impl Zipf {
    /// Zipf's distribution over `1..=n` with exponent `s`.
    pub fn new(n: u64, s: f64) -> Result<Zipf, ZipfError> {
        if n == 0 || n > MAX_ZIPF_RANKS {
            return Err(ZipfError::Ranks(n));
        }
        if !(s.is_finite() && s > 0.0) {
            return Err(ZipfError::Exponent(s));
        }
        Ok(Zipf {
            n: n as f64,
            s,
            top: integral(1.5, s) - 1.0,
            bottom: integral(n as f64 + 0.5, s),
            squeeze: 2.0 - integral_inverse(integral(2.5, s) - hat(2.0, s), s),
        })
    }

    /// One rank in `1..=n`.
    pub fn sample(&self, rng: &mut SplitMix64) -> u64 {
        loop {
            let u = self.bottom + rng.unit() * (self.top - self.bottom);
            let x = integral_inverse(u, self.s);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.squeeze || u >= integral(k + 0.5, self.s) - hat(k, self.s) {
                return k as u64;
            }
        }
    }
}

/// The hat, `x^-s`.
fn hat(x: f64, s: f64) -> f64 {
    (-s * x.ln()).exp()
}

/// The hat's integral from 1, `(x^(1-s) - 1) / (1-s)` (`ln x` when `s = 1`).
fn integral(x: f64, s: f64) -> f64 {
    let ln = x.ln();
    expm1_over((1.0 - s) * ln) * ln
}

/// The `x` whose [`integral`] is `y`.
fn integral_inverse(y: f64, s: f64) -> f64 {
    // Rounding can take `t` just below -1, where the logarithm has no value.
    let t = (y * (1.0 - s)).max(-1.0);
    (ln1p_over(t) * y).exp()
}

/// `(e^x - 1) / x`, 1 at 0 (its series near 0, where the quotient loses its digits).
fn expm1_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0 * (1.0 + x / 4.0))
    }
}

/// `ln(1 + x) / x`, 1 at 0 (its series near 0).
fn ln1p_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - x / 4.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Zipf's exact probabilities over `1..=n`.
    fn exact(n: u64, s: f64) -> Vec<f64> {
        let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-s)).collect();
        let total: f64 = weights.iter().sum();
        weights.into_iter().map(|w| w / total).collect()
    }

    /// Pearson's chi-square of `draws` samples against `n`'s exact probabilities, the ranks whose
    /// expected count is under 5 pooled into one bin; with the bins' degrees of freedom.
    fn chi_square(n: u64, s: f64, draws: u32, seed: u64) -> (f64, usize) {
        let zipf = Zipf::new(n, s).expect("valid");
        let mut rng = SplitMix64::new(seed);
        let mut seen = vec![0u64; n as usize];
        for _ in 0..draws {
            let k = zipf.sample(&mut rng);
            assert!((1..=n).contains(&k), "rank {k} outside 1..={n}");
            seen[k as usize - 1] += 1;
        }
        let (mut chi, mut bins) = (0.0, 0);
        let (mut pooled_seen, mut pooled_expected) = (0.0, 0.0);
        for (p, &o) in exact(n, s).iter().zip(&seen) {
            let e = p * f64::from(draws);
            if e < 5.0 {
                pooled_seen += o as f64;
                pooled_expected += e;
            } else {
                chi += (o as f64 - e).powi(2) / e;
                bins += 1;
            }
        }
        if pooled_expected > 0.0 {
            chi += (pooled_seen - pooled_expected).powi(2) / pooled_expected;
            bins += 1;
        }
        (chi, bins - 1)
    }

    /// The chi-square's 99.9th percentile for `df` degrees of freedom (Wilson and Hilferty's
    /// approximation, within a percent from 10 degrees up).
    fn critical(df: usize) -> f64 {
        let k = df as f64;
        let z = 3.090_232; // the normal's 99.9th percentile
        k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
    }

    #[test]
    fn draws_follow_zipf_s_exact_probabilities_for_several_exponents() {
        for (n, s) in [(100, 0.99), (50, 1.0), (1_000, 0.5), (200, 1.5), (30, 3.0)] {
            let (chi, df) = chi_square(n, s, 200_000, 7);
            assert!(
                chi < critical(df),
                "n {n}, s {s}: chi-square {chi:.1} over {df} degrees of freedom (critical {:.1})",
                critical(df)
            );
        }
    }

    #[test]
    fn the_chi_square_test_tells_a_wrong_exponent_apart() {
        // Samples at s = 0.99 against the probabilities of s = 0.9: the test must be able to fail.
        let zipf = Zipf::new(100, 0.99).expect("valid");
        let mut rng = SplitMix64::new(7);
        let mut seen = vec![0u64; 100];
        for _ in 0..200_000 {
            seen[zipf.sample(&mut rng) as usize - 1] += 1;
        }
        let chi: f64 = exact(100, 0.9)
            .iter()
            .zip(&seen)
            .map(|(p, &o)| {
                let e = p * 200_000.0;
                (o as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi > critical(99), "{chi}");
    }

    #[test]
    fn rank_one_is_the_hottest_and_over_a_billion_keys_takes_its_exact_share() {
        let n = 1_000_000_000u64;
        let s = 0.99;
        let zipf = Zipf::new(n, s).expect("valid");
        let mut rng = SplitMix64::new(11);
        let draws = 400_000u32;
        let mut ones = 0u32;
        for _ in 0..draws {
            let k = zipf.sample(&mut rng);
            assert!((1..=n).contains(&k));
            ones += u32::from(k == 1);
        }
        // H(n, s) by Euler and Maclaurin: the first thousand terms summed, the rest integrated,
        // with the end corrections (exact to far below the sampling error).
        let m = 1_000f64;
        let f = |x: f64| x.powf(-s);
        let head: f64 = (1..1_000).map(|k| f(k as f64)).sum();
        let nf = n as f64;
        let tail = (nf.powf(1.0 - s) - m.powf(1.0 - s)) / (1.0 - s) + (f(m) + f(nf)) / 2.0
            - s * (nf.powf(-s - 1.0) - m.powf(-s - 1.0)) / 12.0;
        let p = 1.0 / (head + tail);
        let expected = p * f64::from(draws);
        let sigma = (expected * (1.0 - p)).sqrt();
        assert!(
            (f64::from(ones) - expected).abs() < 4.0 * sigma,
            "rank 1 drawn {ones} times, {expected:.0} ± {sigma:.0} expected"
        );
        assert!(std::mem::size_of::<Zipf>() <= 64, "constant memory");
    }

    #[test]
    fn one_rank_is_always_drawn_and_bad_shapes_are_refused() {
        let one = Zipf::new(1, 0.99).expect("valid");
        let mut rng = SplitMix64::new(1);
        assert!((0..1000).all(|_| one.sample(&mut rng) == 1));
        assert_eq!(Zipf::new(0, 1.0), Err(ZipfError::Ranks(0)));
        assert_eq!(
            Zipf::new(MAX_ZIPF_RANKS + 1, 1.0),
            Err(ZipfError::Ranks(MAX_ZIPF_RANKS + 1))
        );
        assert_eq!(Zipf::new(10, 0.0), Err(ZipfError::Exponent(0.0)));
        assert!(Zipf::new(10, f64::NAN).is_err());
        assert!(Zipf::new(10, -1.0).is_err());
    }

    #[test]
    fn uniform_draws_stay_in_their_bounds_and_reach_both_ends() {
        let mut rng = SplitMix64::new(3);
        let mut seen = [0u32; 7];
        for _ in 0..7_000 {
            seen[rng.below_u64(7) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        assert_eq!(rng.below_u64(0), 0);
        assert_eq!(rng.below_u64(1), 0);
        for _ in 0..1000 {
            let x = rng.unit();
            assert!((0.0..1.0).contains(&x));
        }
    }
}
