//! A tiny deterministic pseudo-random generator (SplitMix64) for the demo data.
//!
//! Every demo cell is a pure function of (table, row id, column): [`Rng::for_cell`] derives an
//! independent stream from those three, so any subset of the cells of any row can be produced
//! without generating the others, on any machine, in any order.
//!
//! SplitMix64 is Steele, Lea and Flood's generator from "Fast Splittable Pseudorandom Number
//! Generators" (OOPSLA 2014): a Weyl sequence passed through a 64-bit mixing function. It is not
//! cryptographic; it is small, fast and good enough to make data look varied.

/// The Weyl sequence increment: 2^64 divided by the golden ratio, made odd.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (a variant of MurmurHash3's 64-bit finaliser).
const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 generator. Cheap to create (one `u64`), so make one per cell.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator whose first output is SplitMix64's first output for `seed`.
    pub const fn new(seed: u64) -> Self {
        Rng { state: seed }
    }

    /// The generator for one cell: `table` is a constant that tells tables apart, `id` the row's
    /// key and `column` the column's index (or any other number naming a stream of the row).
    pub const fn for_cell(table: u64, id: i64, column: usize) -> Self {
        let row = mix(table ^ (id as u64).wrapping_mul(GAMMA));
        Rng::new(mix(row
            ^ (column as u64)
                .wrapping_add(1)
                .wrapping_mul(0xd1b5_4a32_d192_ed03)))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A number in `0..n` (0 when `n` is 0), by Lemire's multiply-and-shift; the bias is at most
    /// `n / 2^64`, far below anything the demo data could show.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..=hi` (`lo` when `hi < lo`).
    #[inline]
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = hi.wrapping_sub(lo) as u64;
        match span.checked_add(1) {
            Some(n) => lo.wrapping_add(self.below(n) as i64),
            None => self.next_u64() as i64,
        }
    }

    /// A float uniformly spread over `[0, 1)`, with 53 random bits.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (never for `p <= 0`, always for `p >= 1`).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of `items`, each equally likely.
    ///
    /// # Panics
    /// If `items` is empty.
    #[inline]
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    /// Fills `buf` with random bytes, eight at a time.
    pub fn fill_bytes(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let last = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&last[..rest.len()]);
        }
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        self.fill_bytes(&mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_splitmix64_outputs() {
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        let mut rng = Rng::new(1_234_567);
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(
            first,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423
            ]
        );
    }

    #[test]
    fn cells_get_distinct_reproducible_streams() {
        let a = Rng::for_cell(1, 42, 3).next_u64();
        assert_eq!(a, Rng::for_cell(1, 42, 3).next_u64());
        let others = [
            Rng::for_cell(2, 42, 3),
            Rng::for_cell(1, 43, 3),
            Rng::for_cell(1, 42, 4),
            Rng::for_cell(1, -42, 3),
            Rng::for_cell(1, 3, 42),
        ];
        for mut other in others {
            assert_ne!(other.next_u64(), a, "{other:?}");
        }
        // Neighbouring cells' first outputs share no obvious structure.
        let firsts: std::collections::HashSet<u64> = (0..1000)
            .flat_map(|id| (0..23).map(move |c| Rng::for_cell(7, id, c).next_u64()))
            .collect();
        assert_eq!(firsts.len(), 23_000);
    }

    #[test]
    fn bounded_helpers_stay_in_bounds_and_reach_both_ends() {
        let mut rng = Rng::new(9);
        let mut seen = [false; 7];
        for _ in 0..2_000 {
            let n = rng.below(7);
            assert!(n < 7);
            seen[n as usize] = true;
            let r = rng.range(-3, 3);
            assert!((-3..=3).contains(&r));
            seen[(r + 3) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.range(5, 5), 5);
        assert_eq!(rng.range(5, 1), 5);
        let full: Vec<i64> = (0..64).map(|_| rng.range(i64::MIN, i64::MAX)).collect();
        assert!(full.iter().any(|&x| x < 0) && full.iter().any(|&x| x > 0));
        for _ in 0..1_000 {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn chance_and_pick_have_the_right_frequencies() {
        let mut rng = Rng::new(11);
        assert!(!(0..1_000).any(|_| rng.chance(0.0)));
        assert!((0..1_000).all(|_| rng.chance(1.0)));
        let hits = (0..100_000).filter(|_| rng.chance(0.05)).count();
        assert!((4_500..5_500).contains(&hits), "{hits}");
        let mut counts = [0usize; 4];
        for _ in 0..40_000 {
            counts[rng.pick(&[0usize, 1, 2, 3])] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn fill_bytes_covers_every_byte_including_the_tail() {
        let mut rng = Rng::new(3);
        for len in [0, 1, 7, 8, 9, 13, 64, 1_000] {
            let a = Rng::new(len as u64).bytes(len);
            assert_eq!(a.len(), len);
            assert_eq!(a, Rng::new(len as u64).bytes(len));
        }
        // Every position, the tail too, takes many values over many fills.
        let mut distinct = vec![std::collections::HashSet::new(); 13];
        for _ in 0..200 {
            let mut buf = [0u8; 13];
            rng.fill_bytes(&mut buf);
            for (set, b) in distinct.iter_mut().zip(buf) {
                set.insert(b);
            }
        }
        assert!(distinct.iter().all(|s| s.len() > 100), "{distinct:?}");
        // Roughly uniform bytes: each value within 20% of its expected count over 1 MiB.
        let data = rng.bytes(1 << 20);
        let mut counts = [0u32; 256];
        for b in data {
            counts[usize::from(b)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (3_276..4_916).contains(&c)),
            "{counts:?}"
        );
    }
}
