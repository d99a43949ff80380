//! In what order a profile runs its variants' iterations. Run back to back, two variants compare
//! the machine's drift between them as much as the variants; interleaved (the default), each round
//! runs every variant once, so drift falls on all of them alike. Warm-ups come first, each variant's
//! own, in every order.

use serde::{Deserialize, Serialize};

/// The order of a profile's timed iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "order", content = "seed")]
pub enum Order {
    /// Round robin: the first iteration of every variant, then the second of every variant...
    #[default]
    Interleaved,
    /// Every iteration of the first variant, then of the second...
    Blocked,
    /// A random permutation of all of them, drawn from this seed (the same seed, the same order).
    Shuffled(u64),
}

impl Order {
    /// `interleaved`, `blocked` or `shuffled (seed N)`.
    pub fn describe(self) -> String {
        match self {
            Order::Interleaved => "interleaved".into(),
            Order::Blocked => "blocked".into(),
            Order::Shuffled(seed) => format!("shuffled (seed {seed})"),
        }
    }
}

/// One turn of a schedule: which variant runs, its iteration number (warm-ups first, from 0), and
/// whether it is a warm-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn {
    /// The variant's index.
    pub variant: usize,
    /// The iteration's number within its variant.
    pub iteration: u32,
    /// Whether it is one of the variant's warm-ups.
    pub warmup: bool,
}

/// Every turn of a profile of `variants` variants, each with `warmup` warm-ups and `iterations`
/// timed iterations, in `order`. Each variant's warm-ups come first, variant after variant; so do
/// each variant's iterations in their own numbering, whatever the order.
pub fn schedule(variants: usize, warmup: u32, iterations: u32, order: Order) -> Vec<Turn> {
    let mut turns = Vec::with_capacity(variants * (warmup + iterations) as usize);
    for variant in 0..variants {
        turns.extend((0..warmup).map(|iteration| Turn {
            variant,
            iteration,
            warmup: true,
        }));
    }
    let timed = |variant: usize, i: u32| Turn {
        variant,
        iteration: warmup + i,
        warmup: false,
    };
    match order {
        Order::Interleaved => {
            for i in 0..iterations {
                turns.extend((0..variants).map(|v| timed(v, i)));
            }
        }
        Order::Blocked => {
            for v in 0..variants {
                turns.extend((0..iterations).map(|i| timed(v, i)));
            }
        }
        Order::Shuffled(seed) => {
            let mut slots: Vec<usize> = (0..variants)
                .flat_map(|v| std::iter::repeat_n(v, iterations as usize))
                .collect();
            crate::stats::shuffle(&mut slots, seed);
            // The shuffle picks which variant runs at each turn; each variant's own iterations
            // keep their numbering in time.
            let mut next = vec![0u32; variants];
            for v in slots {
                turns.push(timed(v, next[v]));
                next[v] += 1;
            }
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(turns: &[Turn]) -> Vec<(usize, u32, bool)> {
        turns
            .iter()
            .map(|s| (s.variant, s.iteration, s.warmup))
            .collect()
    }

    #[test]
    fn interleaved_runs_every_variant_once_a_round_after_all_the_warmups() {
        let turns = schedule(2, 1, 2, Order::Interleaved);
        assert_eq!(
            labels(&turns),
            [
                (0, 0, true),
                (1, 0, true),
                (0, 1, false),
                (1, 1, false),
                (0, 2, false),
                (1, 2, false)
            ]
        );
    }

    #[test]
    fn blocked_runs_each_variant_to_its_end_before_the_next() {
        let turns = schedule(2, 0, 3, Order::Blocked);
        let variants: Vec<usize> = turns.iter().map(|s| s.variant).collect();
        assert_eq!(variants, [0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn shuffled_is_a_permutation_fixed_by_its_seed() {
        let a = schedule(3, 1, 20, Order::Shuffled(7));
        let b = schedule(3, 1, 20, Order::Shuffled(7));
        let c = schedule(3, 1, 20, Order::Shuffled(8));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 3 * 21);
        assert!(a[..3].iter().all(|s| s.warmup), "warm-ups first");
        for v in 0..3 {
            let mine: Vec<u32> = a
                .iter()
                .filter(|s| s.variant == v)
                .map(|s| s.iteration)
                .collect();
            assert_eq!(
                mine,
                (0..21).collect::<Vec<_>>(),
                "variant {v} keeps its numbering"
            );
        }
        let interleaved = schedule(3, 1, 20, Order::Interleaved);
        assert_ne!(a, interleaved, "not the round robin");
    }

    #[test]
    fn one_variant_runs_the_same_in_every_order() {
        let plain = schedule(1, 2, 5, Order::Interleaved);
        assert_eq!(plain, schedule(1, 2, 5, Order::Blocked));
        assert_eq!(plain, schedule(1, 2, 5, Order::Shuffled(3)));
        assert_eq!(
            plain.iter().map(|s| s.iteration).collect::<Vec<_>>(),
            (0..7).collect::<Vec<_>>()
        );
    }
}
