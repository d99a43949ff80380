//! Latencies in an HDR histogram (Gil Tene's HdrHistogram, through the `hdrhistogram` crate):
//! whole microseconds from 1 µs to an hour at three significant digits, so any percentile is
//! within 0.1% of the recorded value, in a fixed ~190 KB whatever the count. Histograms merge
//! exactly (counts add), and travel as HdrHistogram's standard compressed encoding (V2, deflate,
//! base64), the form its interval logs and other implementations read.

use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};

mod v2;

/// The longest latency kept apart, in microseconds (an hour); longer ones count as an hour.
pub const HIGHEST_US: u64 = 3_600_000_000;
/// Significant digits kept.
pub const SIGFIG: u8 = 3;
/// The longest encoded histogram read back, in base64 (spanprof's compress to a few tens of KB;
/// the most counts its bounds hold, each at its longest, about 200 KB before compression).
pub const MAX_ENCODED: usize = 1 << 20;

/// Why an encoded histogram cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistogramError {
    /// Not base64.
    #[error("the histogram is not base64")]
    Base64,
    /// Longer than [`MAX_ENCODED`].
    #[error("the histogram's encoding is {0} bytes, more than a histogram takes")]
    TooLong(usize),
    /// Not HdrHistogram's V2 encoding, or its counts malformed.
    #[error("the histogram does not decode: {0}")]
    Decode(String),
    /// A length in it claims more bytes than it holds, or than its bounds take.
    #[error("the histogram claims {claimed} bytes where it holds (or its bounds take) {held}")]
    Claims {
        /// What it claims.
        claimed: u64,
        /// What is there (or the most its bounds take).
        held: usize,
    },
    /// A compressed histogram that inflates past what any histogram of spanprof's bounds takes.
    #[error("the compressed histogram inflates past {0} bytes, more than a histogram takes")]
    Inflates(usize),
    /// Decoded, but with other bounds than spanprof records with.
    #[error("the histogram's range is {0}..={1} at {2} digits, not spanprof's")]
    Bounds(u64, u64, u8),
}

/// A histogram of latencies (or lags) in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Latencies {
    h: Histogram<u64>,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::new()
    }
}

fn empty() -> Histogram<u64> {
    match Histogram::new_with_bounds(1, HIGHEST_US, SIGFIG) {
        Ok(h) => h,
        // The bounds are constants the crate accepts (1 <= low, high >= 2 * low, sigfig <= 5).
        Err(e) => unreachable!("constant histogram bounds refused: {e:?}"),
    }
}

/// `d` in whole microseconds, at least 1 (the histogram's floor), at most [`HIGHEST_US`].
fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros())
        .unwrap_or(u64::MAX)
        .clamp(1, HIGHEST_US)
}

impl Latencies {
    /// An empty histogram.
    pub fn new() -> Self {
        Latencies { h: empty() }
    }

    /// Records one latency.
    pub fn record(&mut self, d: Duration) {
        self.h.saturating_record(micros(d));
    }

    /// Adds every count of `other` (the same bounds: always, for spanprof's own).
    pub fn add(&mut self, other: &Latencies) {
        // Both were made by `empty()`, so the addition cannot fail for want of range.
        if self.h.add(&other.h).is_err() {
            for v in other.h.iter_recorded() {
                self.h
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// How many were recorded.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// The value at quantile `q` (0 to 1) in milliseconds, `None` when empty.
    pub fn quantile_ms(&self, q: f64) -> Option<f64> {
        (!self.h.is_empty()).then(|| self.h.value_at_quantile(q) as f64 / 1e3)
    }

    /// The largest recorded, in milliseconds.
    pub fn max_ms(&self) -> Option<f64> {
        (!self.h.is_empty()).then(|| self.h.max() as f64 / 1e3)
    }

    /// How many are above `d` (to the histogram's resolution: values within 0.1% of `d` count
    /// as `d`).
    pub fn count_above(&self, d: Duration) -> u64 {
        let at = micros(d);
        let highest_at = self.h.highest_equivalent(at);
        self.h
            .iter_recorded()
            .filter(|v| v.value_iterated_to() > highest_at)
            .map(|v| v.count_at_value())
            .sum()
    }

    /// The histogram itself (for interval logs).
    pub fn histogram(&self) -> &Histogram<u64> {
        &self.h
    }

    /// HdrHistogram's compressed encoding (V2 with deflate) in base64, as interval logs hold it.
    pub fn encode(&self) -> String {
        let mut bytes = Vec::new();
        // Serialising into a Vec fails only on an encoder bug; an empty string then reads back
        // as an error, never as a wrong histogram.
        if V2DeflateSerializer::new()
            .serialize(&self.h, &mut bytes)
            .is_err()
        {
            return String::new();
        }
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads [`Latencies::encode`]'s form back; refuses what spanprof would not have written,
    /// in memory and time bounded by the text's length (every length and count checked first,
    /// by [`v2::checked`]).
    pub fn decode(text: &str) -> Result<Latencies, HistogramError> {
        if text.len() > MAX_ENCODED {
            return Err(HistogramError::TooLong(text.len()));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| HistogramError::Base64)?;
        let plain = v2::checked(&bytes)?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut plain.as_slice())
            .map_err(|e| HistogramError::Decode(format!("{e:?}")))?;
        if h.low() != 1 || h.high() < HIGHEST_US || h.sigfig() != SIGFIG {
            return Err(HistogramError::Bounds(h.low(), h.high(), h.sigfig()));
        }
        let mut ours = Latencies::new();
        for v in h.iter_recorded() {
            ours.h
                .saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
        Ok(ours)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn percentiles_are_within_a_tenth_of_a_percent_and_counts_above_exact() {
        let mut h = Latencies::new();
        for i in 1..=1000u64 {
            h.record(ms(i));
        }
        assert_eq!(h.count(), 1000);
        let p99 = h.quantile_ms(0.99).expect("not empty");
        assert!((p99 - 990.0).abs() <= 1.0, "{p99}");
        let p50 = h.quantile_ms(0.5).expect("not empty");
        assert!((p50 - 500.0).abs() <= 0.5, "{p50}");
        assert_eq!(h.count_above(ms(100)), 900);
        assert_eq!(Latencies::new().quantile_ms(0.5), None);
    }

    #[test]
    fn extremes_are_clamped_not_lost() {
        let mut h = Latencies::new();
        h.record(Duration::ZERO);
        h.record(Duration::from_secs(10 * 3600));
        assert_eq!(h.count(), 2);
        assert!(h.max_ms().expect("not empty") >= 3_600_000.0 * 0.999);
    }

    #[test]
    fn merged_histograms_equal_one_of_all_samples_and_encodings_read_back() {
        let (mut a, mut b, mut all) = (Latencies::new(), Latencies::new(), Latencies::new());
        for i in 0..5000u64 {
            let d = Duration::from_micros(37 * i % 250_000 + 1);
            let half = if i % 3 == 0 { &mut a } else { &mut b };
            half.record(d);
            all.record(d);
        }
        let mut merged = a.clone();
        merged.add(&b);
        assert_eq!(merged.count(), a.count() + b.count());
        assert_eq!(merged, all);
        let back = Latencies::decode(&merged.encode()).expect("its own encoding");
        assert_eq!(back, all);
        assert_eq!(back.quantile_ms(0.99), all.quantile_ms(0.99));
    }

    #[test]
    fn what_is_not_a_histogram_is_refused() {
        assert_eq!(
            Latencies::decode("not base64!"),
            Err(HistogramError::Base64)
        );
        assert!(matches!(
            Latencies::decode("AAAA"),
            Err(HistogramError::Decode(_))
        ));
        let huge = "A".repeat(MAX_ENCODED + 1);
        assert!(matches!(
            Latencies::decode(&huge),
            Err(HistogramError::TooLong(_))
        ));
        let mut other = Histogram::<u64>::new_with_bounds(1, 1000, 2).expect("bounds");
        other.record(5).expect("in range");
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&other, &mut bytes)
            .expect("serialises");
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        assert!(matches!(
            Latencies::decode(&text),
            Err(HistogramError::Bounds(1, _, 2))
        ));
    }
}
