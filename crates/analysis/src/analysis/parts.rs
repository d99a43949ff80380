//! The parts of a run's time, summarised once for every view: each part's statistics over the
//! timed iterations, the overlap beside them, the headline a person reads first, and two runs'
//! parts compared so that the changes add up to the change of the total.
//!
//! Every iteration's parts add up to its total ([`IterationRecord::accounting`]); a part an
//! iteration did not have counts as 0 in it, so the means of the parts add up to the mean total.
//! Medians, percentiles and extremes of the parts do not add up (the median iteration of one part
//! is not the median of another), and the tables say so.

use crate::part::{Measure, Part, Split};
use crate::report::{Accounting, IterationRecord, RunReport};
use crate::stats::{self, Summary};

/// One part over the iterations summarised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartSummary {
    /// The part.
    pub part: Part,
    /// Its statistics in milliseconds, 0 for an iteration that did not have it.
    pub summary: Summary,
    /// Its mean's share of the mean total (0 to 1).
    pub share: f64,
}

/// A run's (or a selection's) time, part by part.
#[derive(Debug, Clone, PartialEq)]
pub struct PartStats {
    /// The total's statistics.
    pub total: Summary,
    /// Every part some iteration had, in [`Part::ALL`] order.
    pub parts: Vec<PartSummary>,
    /// The server's work beside the client's own (not a part), where a server time came back.
    pub overlap: Option<Summary>,
    /// How the waits were split (the most common way among the iterations).
    pub split: Split,
    /// Iterations whose client work was not timed (older reports): it is in their `untimed`.
    pub client_work_untimed: usize,
    /// Iterations whose `untimed` was more than max(1 ms, 3%) of their total.
    pub untimed_notable: Vec<u32>,
}

impl PartStats {
    /// The statistics over `records` that count: timed (not warm-ups, ended ok). `None` without
    /// one.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a IterationRecord>) -> Option<PartStats> {
        let timed: Vec<(&IterationRecord, Accounting)> = records
            .into_iter()
            .filter(|r| r.is_timed() && r.total_ms.is_finite())
            .map(|r| (r, r.accounting()))
            .collect();
        let totals: Vec<f64> = timed.iter().map(|(_, a)| a.parts.sum_ms()).collect();
        let total = stats::summarize(&totals)?;
        let parts = Part::ALL
            .into_iter()
            .filter(|&p| timed.iter().any(|(_, a)| a.parts.has(p)))
            .filter_map(|part| {
                let samples: Vec<f64> = timed.iter().map(|(_, a)| a.parts.ms(part)).collect();
                let summary = stats::summarize(&samples)?;
                let share = if total.mean > 0.0 {
                    summary.mean / total.mean
                } else {
                    0.0
                };
                Some(PartSummary {
                    part,
                    summary,
                    share,
                })
            })
            .collect();
        let overlaps: Vec<f64> = timed.iter().filter_map(|(_, a)| a.overlap_ms).collect();
        Some(PartStats {
            total,
            parts,
            overlap: stats::summarize(&overlaps),
            split: most_common_split(timed.iter().map(|(_, a)| a.split)),
            client_work_untimed: timed.iter().filter(|(_, a)| !a.client_work_timed).count(),
            untimed_notable: timed
                .iter()
                .filter(|(r, a)| a.untimed_is_notable(r.total_ms))
                .map(|(r, _)| r.iteration)
                .collect(),
        })
    }

    /// A run's statistics over its timed iterations.
    pub fn of_run(report: &RunReport) -> Option<PartStats> {
        PartStats::of(&report.iterations)
    }

    /// A part's summary, if some iteration had it.
    pub fn part(&self, part: Part) -> Option<&PartSummary> {
        self.parts.iter().find(|p| p.part == part)
    }

    /// A measure's summary: the total's, or a part's.
    pub fn measure(&self, measure: Measure) -> Option<&Summary> {
        match measure {
            Measure::Total => Some(&self.total),
            Measure::Part(part) => self.part(part).map(|p| &p.summary),
        }
    }

    /// The parts with the largest means, largest first, each at least 5% of the total; at most
    /// `n` of them.
    pub fn largest(&self, n: usize) -> Vec<&PartSummary> {
        let mut parts: Vec<&PartSummary> = self.parts.iter().filter(|p| p.share >= 0.05).collect();
        parts.sort_by(|a, b| b.summary.mean.total_cmp(&a.summary.mean));
        parts.truncate(n);
        parts
    }

    /// The headline of the run, as a person reads it first.
    pub fn headline(&self) -> Headline {
        Headline {
            total: self.total,
            largest: self
                .largest(3)
                .into_iter()
                .map(|p| (p.part, p.share))
                .collect(),
        }
    }
}

/// The total, then every part some iteration of `records` had, in [`Part::ALL`] order: what a
/// table or a chart of those records has a row or a series for.
pub fn measures_had<'a>(records: impl IntoIterator<Item = &'a IterationRecord>) -> Vec<Measure> {
    let mut had = 0u32;
    for record in records.into_iter().filter(|r| r.is_timed()) {
        for (part, _) in record.accounting().parts.iter() {
            had |= 1 << part.index();
        }
    }
    std::iter::once(Measure::Total)
        .chain(
            Part::ALL
                .into_iter()
                .filter(|p| had & (1 << p.index()) != 0)
                .map(Measure::Part),
        )
        .collect()
}

fn most_common_split(splits: impl Iterator<Item = Split>) -> Split {
    let mut counts = [
        (Split::Measured, 0),
        (Split::Estimated, 0),
        (Split::None, 0),
    ];
    for split in splits {
        if let Some((_, n)) = counts.iter_mut().find(|(s, _)| *s == split) {
            *n += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .map_or(Split::None, |(s, _)| s)
}

/// What a person reads first about a run, as hyperfine writes it: the mean ± σ, the range, the
/// iterations, and the largest parts in a few words.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// The total's statistics.
    pub total: Summary,
    /// The largest parts with their share of the mean total, largest first.
    pub largest: Vec<(Part, f64)>,
}

impl std::fmt::Display for Headline {
    /// `Time (mean ± σ): 45.6 ms ± 3.10 ms [40.2 ms … 52.0 ms], 20 iterations; server 52%, row
    /// decode 31%`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::text::ms;
        let t = &self.total;
        let iterations = if t.count == 1 {
            "1 iteration".to_owned()
        } else {
            format!("{} iterations", crate::text::count(t.count as u64))
        };
        write!(
            f,
            "Time (mean ± σ): {} ± {} [{} … {}], {iterations}",
            ms(t.mean),
            ms(t.std_dev),
            ms(t.min),
            ms(t.max)
        )?;
        for (i, (part, share)) in self.largest.iter().enumerate() {
            let sep = if i == 0 { "; " } else { ", " };
            write!(f, "{sep}{} {:.0}%", part.label(), share * 100.0)?;
        }
        Ok(())
    }
}

/// One part in two runs: the change of its mean.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartChange {
    /// The part.
    pub part: Part,
    /// Its mean in run A (the baseline), milliseconds; 0 where A did not have it.
    pub a_mean: f64,
    /// Its mean in run B, milliseconds.
    pub b_mean: f64,
}

impl PartChange {
    /// B's mean less A's, milliseconds (negative: B spent less in it).
    pub fn change(&self) -> f64 {
        self.b_mean - self.a_mean
    }
}

/// Two runs' parts compared: the changes of the parts' means add up to the change of the mean
/// total.
#[derive(Debug, Clone, PartialEq)]
pub struct PartComparison {
    /// A's mean total, milliseconds.
    pub a_mean: f64,
    /// B's mean total, milliseconds.
    pub b_mean: f64,
    /// Every part either run had, in [`Part::ALL`] order.
    pub parts: Vec<PartChange>,
}

impl PartComparison {
    /// Run B's parts against run A's.
    pub fn of(a: &PartStats, b: &PartStats) -> PartComparison {
        let mean = |s: &PartStats, part: Part| s.part(part).map_or(0.0, |p| p.summary.mean);
        let parts = Part::ALL
            .into_iter()
            .filter(|&p| a.part(p).is_some() || b.part(p).is_some())
            .map(|part| PartChange {
                part,
                a_mean: mean(a, part),
                b_mean: mean(b, part),
            })
            .collect();
        PartComparison {
            a_mean: a.total.mean,
            b_mean: b.total.mean,
            parts,
        }
    }

    /// B's mean total less A's, milliseconds.
    pub fn total_change(&self) -> f64 {
        self.b_mean - self.a_mean
    }

    /// The parts by the size of their change, largest first, leaving out changes under 0.005 ms.
    pub fn largest_changes(&self) -> Vec<&PartChange> {
        let mut changes: Vec<&PartChange> = self
            .parts
            .iter()
            .filter(|c| c.change().abs() >= 0.005)
            .collect();
        changes.sort_by(|x, y| y.change().abs().total_cmp(&x.change().abs()));
        changes
    }

    /// The change in words: `+12.3 ms in the mean: server +10.1 ms, row decode +2.20 ms`.
    pub fn in_words(&self) -> String {
        let changes: Vec<String> = self
            .largest_changes()
            .into_iter()
            .map(|c| format!("{} {}", c.part.label(), crate::text::signed_ms(c.change())))
            .collect();
        let mut text = format!(
            "{} in the mean",
            crate::text::signed_ms(self.total_change())
        );
        if !changes.is_empty() {
            text.push_str(": ");
            text.push_str(&changes.join(", "));
        }
        text
    }
}

#[cfg(test)]
#[path = "parts/tests.rs"]
mod tests;
