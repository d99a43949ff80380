//! A seeded generator for resampling and for shuffling a schedule: sequences fixed by their seed,
//! so every figure built on them is a pure function of its inputs.

/// SplitMix64, the small, fast, statistically sound generator of Steele, Lea and Flood ("Fast
/// Splittable Pseudorandom Number Generators", OOPSLA 2014), with the constants of Vigna's
/// public-domain reference version. Good enough for resampling; not for anything secret.
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0), by Lemire's multiply-and-shift: the high 64 bits of
    /// `random · n`. Its bias is below `n / 2^64`, far below anything a bootstrap can see.
    pub fn below(&mut self, n: usize) -> usize {
        let wide = u128::from(self.next_u64()) * n as u128;
        // The high half of a 64×64-bit product is below `n`, so it fits in a usize.
        (wide >> 64) as usize
    }

    /// A number in `0..n` (0 when `n` is 0), without bias: Lemire's multiply-and-shift, drawing
    /// again when the low half falls in the `2^64 mod n` values that would favour some results
    /// ("Fast Random Integer Generation in an Interval", 2019).
    pub fn below_u64(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let threshold = n.wrapping_neg() % n;
        loop {
            let wide = u128::from(self.next_u64()) * u128::from(n);
            if (wide as u64) >= threshold {
                return (wide >> 64) as u64;
            }
        }
    }

    /// A number in `[0, 1)`, from the top 53 bits (every double of that form equally likely).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Shuffles `items` in place (Fisher and Yates, Durstenfeld's form), the order fixed by `seed`.
pub fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = SplitMix64::new(seed);
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shuffle_is_a_permutation_fixed_by_its_seed() {
        let mut a: Vec<u32> = (0..50).collect();
        let mut b = a.clone();
        let mut c = a.clone();
        shuffle(&mut a, 1);
        shuffle(&mut b, 1);
        shuffle(&mut c, 2);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, (0..50).collect::<Vec<_>>());
        a.sort_unstable();
        assert_eq!(a, (0..50).collect::<Vec<_>>());
        let mut empty: [u8; 0] = [];
        shuffle(&mut empty, 3);
    }
}
