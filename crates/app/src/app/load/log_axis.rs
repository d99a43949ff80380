//! The Load tab's latency axis on a log scale: a plot's y is log10 of the latency in
//! milliseconds, its marks at 1, 2 and 5 times each power of ten, written as people write
//! latencies (`0.5 ms`, `20 ms`, `2 s`). A step at 2 ms and one at 2 s both read: on a linear
//! axis the low steps lie flat on the floor under the heavy ones.

use egui_plot::{GridInput, GridMark};

/// The lowest latency drawn (a microsecond): a zero has no logarithm.
const FLOOR_MS: f64 = 1e-3;

/// A latency in milliseconds as the plot's y.
pub fn y(ms: f64) -> f64 {
    ms.max(FLOOR_MS).log10()
}

/// The plot's y as a latency in milliseconds.
pub fn ms(y: f64) -> f64 {
    10f64.powf(y)
}

/// `range` (the lowest and highest latency so far, in ms) widened to hold `ms`.
pub fn widen(range: &mut Option<(f64, f64)>, ms: f64) {
    *range = Some(match *range {
        Some((lo, hi)) => (lo.min(ms), hi.max(ms)),
        None => (ms, ms),
    });
}

/// The whole decades around latencies from `lo` to `hi` ms, as y: the plot spans at least one.
pub fn span(lo: f64, hi: f64) -> (f64, f64) {
    let bottom = y(lo).floor();
    let top = y(hi).ceil().max(bottom + 1.0);
    (bottom, top)
}

/// The marks in view: 1, 2 and 5 times each power of ten. The decades' own marks are the
/// strong ones (the plot shows the 2s and 5s only where a decade is tall enough for them).
pub fn marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 40.0 {
        return Vec::new();
    }
    let mut marks = Vec::new();
    for decade in (lo.floor() as i32)..=(hi.ceil() as i32) {
        for (factor, step_size) in [(1.0, 1.0), (2.0, 0.3), (5.0, 0.3)] {
            let value = f64::from(decade) + f64::log10(factor);
            if value >= lo - 1e-9 && value <= hi + 1e-9 {
                marks.push(GridMark { value, step_size });
            }
        }
    }
    marks
}

/// A mark's words: `0.1 ms`, `2 ms`, `500 ms`, `1 s`, `20 s`.
pub fn words(y: f64) -> String {
    let ms = ms(y);
    // Marks are 1, 2 or 5 times a power of ten: rounding to three significant digits undoes
    // the logarithm's last bits.
    let round = |v: f64| {
        let scale = 10f64.powf(2.0 - v.abs().log10().floor());
        (v * scale).round() / scale
    };
    if ms >= 1_000.0 {
        format!("{} s", crate::text::trimmed(round(ms / 1e3), 3))
    } else {
        format!("{} ms", crate::text::trimmed(round(ms), 3))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `ms` is 1, 2 or 5 times a power of ten (a mark's latency).
    fn is_mark(ms: f64) -> bool {
        let exponent = ms.log10().floor();
        let leading = ms / 10f64.powf(exponent);
        [1.0, 2.0, 5.0, 10.0]
            .iter()
            .any(|f| (leading - f).abs() < 1e-6)
    }

    #[test]
    fn marks_are_one_two_five_of_each_decade_and_read_as_latencies() {
        let marks = marks(GridInput {
            bounds: (y(0.5), y(200.0)),
            base_step_size: 0.1,
        });
        let said: Vec<String> = marks.iter().map(|m| words(m.value)).collect();
        assert_eq!(
            said,
            [
                "0.5 ms", "1 ms", "2 ms", "5 ms", "10 ms", "20 ms", "50 ms", "100 ms", "200 ms"
            ]
        );
        assert!(marks.iter().all(|m| is_mark(ms(m.value))));
        assert_eq!(words(y(2_000.0)), "2 s");
        assert_eq!(words(y(0.1)), "0.1 ms");
        assert!(!is_mark(3.0) && is_mark(0.05) && is_mark(1_000.0));
    }

    #[test]
    fn a_span_is_whole_decades_and_at_least_one() {
        assert_eq!(span(1.2, 1.3), (0.0, 1.0));
        assert_eq!(span(0.8, 40.0), (-1.0, 2.0));
        assert_eq!(y(0.0), -3.0, "a zero sits on the floor");
    }
}
