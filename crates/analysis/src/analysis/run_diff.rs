//! Two runs read as a diff, the way a person reads a before and after: each measure's mean in
//! run A and run B ([`PartComparison`]'s figures, the same everywhere they are shown), the change
//! B − A with its percentile bootstrap interval, and the settings the runs differ in (mode,
//! decoder, rows returned, target, options...).
//!
//! The interval resamples each run's timed iterations with replacement (whole iterations, so the
//! parts of one draw still add up to its total), takes the difference of the means of every
//! measure at once, and reads the interval off the percentiles of those differences, under the
//! same [`BootstrapSettings`] as the verdict.

use super::comparison::BootstrapSettings;
use super::parts::{PartComparison, PartStats};
use crate::part::{Measure, Part};
use crate::report::{IterationRecord, RunReport};
use crate::stats::{self, random::SplitMix64};

/// One measure (the total, or a part) in two runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasureDelta {
    /// The total, or the part.
    pub measure: Measure,
    /// Its mean in run A (the baseline), milliseconds; 0 where A did not have it.
    pub a_mean: f64,
    /// Its mean in run B, milliseconds.
    pub b_mean: f64,
    /// The lower end of the interval of B's mean less A's, milliseconds.
    pub low: f64,
    /// The upper end of that interval.
    pub high: f64,
}

impl MeasureDelta {
    /// B's mean less A's, milliseconds (negative: B spent less in it).
    pub fn change(&self) -> f64 {
        self.b_mean - self.a_mean
    }

    /// Whether the interval leaves out 0: the runs differ in it at the interval's level.
    pub fn is_clear(&self) -> bool {
        self.low > 0.0 || self.high < 0.0
    }
}

/// Run B against run A, measure by measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Deltas {
    /// The confidence level of every interval, between 0 and 1.
    pub confidence: f64,
    /// The total first, then every part either run had, in [`Part::ALL`] order.
    pub rows: Vec<MeasureDelta>,
}

/// Each measure of run `b` against run `a`: the means as [`PartComparison`] gives them and the
/// interval of their difference; `None` when either run has no timed iteration. The cost is
/// about `settings.resamples · (a + b) · measures` additions: tens of milliseconds for two runs
/// of 100 iterations, too long for a UI thread.
pub fn deltas(a: &RunReport, b: &RunReport, settings: BootstrapSettings) -> Option<Deltas> {
    let (stats_a, stats_b) = (PartStats::of_run(a)?, PartStats::of_run(b)?);
    let compared = PartComparison::of(&stats_a, &stats_b);
    let parts: Vec<Part> = compared.parts.iter().map(|c| c.part).collect();
    let (rows_a, rows_b) = (values(a, &parts), values(b, &parts));
    let intervals = intervals(&rows_a, &rows_b, parts.len() + 1, settings)?;
    let means = std::iter::once((Measure::Total, compared.a_mean, compared.b_mean)).chain(
        compared
            .parts
            .iter()
            .map(|c| (Measure::Part(c.part), c.a_mean, c.b_mean)),
    );
    let rows = means
        .zip(intervals)
        .map(|((measure, a_mean, b_mean), (low, high))| MeasureDelta {
            measure,
            a_mean,
            b_mean,
            low,
            high,
        })
        .collect();
    Some(Deltas {
        confidence: settings.confidence,
        rows,
    })
}

/// Each timed iteration of `run` (as [`PartStats`] counts them) as its total (the parts' sum)
/// followed by each of `parts`, milliseconds.
fn values(run: &RunReport, parts: &[Part]) -> Vec<Vec<f64>> {
    run.iterations
        .iter()
        .filter(|r| r.is_timed() && r.total_ms.is_finite())
        .map(IterationRecord::accounting)
        .map(|a| {
            std::iter::once(a.parts.sum_ms())
                .chain(parts.iter().map(|&p| a.parts.ms(p)))
                .collect()
        })
        .collect()
}

/// The bootstrap interval of the difference of the means of each of `width` columns, `b` less
/// `a`; `None` when either has no row or the settings are not usable.
fn intervals(
    a: &[Vec<f64>],
    b: &[Vec<f64>],
    width: usize,
    settings: BootstrapSettings,
) -> Option<Vec<(f64, f64)>> {
    let usable = settings.confidence > 0.0 && settings.confidence < 1.0 && settings.resamples > 0;
    if a.is_empty() || b.is_empty() || !usable {
        return None;
    }
    let mut rng = SplitMix64::new(settings.seed);
    let mut differences: Vec<Vec<f64>> = vec![Vec::with_capacity(settings.resamples); width];
    let (mut mean_a, mut mean_b) = (vec![0.0; width], vec![0.0; width]);
    for _ in 0..settings.resamples {
        resampled_means(a, &mut rng, &mut mean_a);
        resampled_means(b, &mut rng, &mut mean_b);
        for (k, column) in differences.iter_mut().enumerate() {
            column.push(mean_b[k] - mean_a[k]);
        }
    }
    let tail = (1.0 - settings.confidence) / 2.0 * 100.0;
    differences
        .into_iter()
        .map(|mut column| {
            column.sort_by(f64::total_cmp);
            Some((
                stats::percentile(&column, tail)?,
                stats::percentile(&column, 100.0 - tail)?,
            ))
        })
        .collect()
}

/// The means of every column over `rows.len()` rows drawn from `rows` with replacement, into
/// `means`.
fn resampled_means(rows: &[Vec<f64>], rng: &mut SplitMix64, means: &mut [f64]) {
    means.iter_mut().for_each(|m| *m = 0.0);
    for _ in 0..rows.len() {
        for (m, v) in means.iter_mut().zip(&rows[rng.below(rows.len())]) {
            *m += v;
        }
    }
    let n = rows.len() as f64;
    means.iter_mut().for_each(|m| *m /= n);
}

/// A setting two runs differ in, as each has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingChange {
    /// The setting's name: `mode`, `decoder`, `rows`, `target`, `options`...
    pub name: &'static str,
    /// Run A's.
    pub a: String,
    /// Run B's.
    pub b: String,
}

/// The settings runs `a` and `b` differ in, in the order a person checks them: the query mode,
/// the decoder, the rows returned (the median over timed iterations), the target and database,
/// the request options, then the SQL, its parameters, the iterations asked for, the warm-up,
/// cold starts, the session kind, how the local instance streamed, and the client's machine.
pub fn setting_changes(a: &RunReport, b: &RunReport) -> Vec<SettingChange> {
    let settings = |run: &RunReport| -> [(&'static str, String); 14] {
        let c = &run.config;
        [
            ("mode", c.query_mode.to_string()),
            ("decoder", c.decoder.to_string()),
            ("rows", median_rows(run)),
            ("target", c.target.clone()),
            ("database", c.database.clone()),
            ("options", pairs(&c.options)),
            (
                "SQL",
                c.sql.split_whitespace().collect::<Vec<_>>().join(" "),
            ),
            ("parameters", pairs(&c.params)),
            ("iterations", c.iterations.to_string()),
            ("warm-up", c.warmup.to_string()),
            ("cold starts", if c.cold { "yes" } else { "no" }.to_owned()),
            (
                "session",
                c.session.map_or_else(String::new, |s| s.to_string()),
            ),
            ("streaming", pairs(&c.stream)),
            ("client", c.client_host.clone()),
        ]
    };
    settings(a)
        .into_iter()
        .zip(settings(b))
        .filter(|((_, x), (_, y))| x != y)
        .map(|((name, a), (_, b))| SettingChange { name, a, b })
        .collect()
}

/// The median rows returned over `run`'s timed iterations, as a count; `—` without one.
fn median_rows(run: &RunReport) -> String {
    let mut rows: Vec<f64> = run.timed().map(|r| r.answer.rows as f64).collect();
    stats::median(&mut rows).map_or_else(|| "—".to_owned(), |m| crate::text::count(m as u64))
}

/// `name value` pairs as one line (`priority low, tag x`); `none` when there are none.
fn pairs(pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return "none".to_owned();
    }
    let each: Vec<String> = pairs.iter().map(|(k, v)| format!("{k} {v}")).collect();
    each.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::{QueryMode, Reader};

    fn run(label: &str, totals: &[f64]) -> RunReport {
        RunReport::with_totals(label, totals)
    }

    #[test]
    fn the_means_are_the_part_comparison_s_and_the_interval_holds_the_change() {
        let a = run("a", &[10.0, 11.0, 12.0, 10.5, 11.5, 10.2, 11.8]);
        let b = run("b", &[20.0, 21.0, 22.0, 20.5, 21.5, 20.2, 21.8]);
        let d = deltas(&a, &b, BootstrapSettings::DEFAULT).expect("deltas");
        let parts = PartComparison::of(
            &PartStats::of_run(&a).expect("a"),
            &PartStats::of_run(&b).expect("b"),
        );
        assert_eq!(d.rows[0].measure, Measure::Total);
        assert_eq!(d.rows[0].a_mean, parts.a_mean);
        assert_eq!(d.rows[0].b_mean, parts.b_mean);
        assert_eq!(d.rows.len(), parts.parts.len() + 1);
        let total = d.rows[0];
        assert!((total.change() - 10.0).abs() < 1e-9, "{total:?}");
        assert!(total.low <= total.change() && total.change() <= total.high);
        assert!(
            total.is_clear() && total.low > 8.0 && total.high < 12.0,
            "{total:?}"
        );
        assert_eq!(d.confidence, 0.95);
        // A pure function of the runs: the same interval every time.
        assert_eq!(deltas(&a, &b, BootstrapSettings::DEFAULT), Some(d));
    }

    #[test]
    fn runs_alike_have_an_interval_around_zero_and_one_without_timed_iterations_none() {
        let a = run("a", &[10.0, 12.0, 11.0, 13.0, 10.5, 12.5]);
        let b = run("b", &[12.0, 10.0, 13.0, 11.0, 12.5, 10.5]);
        let d = deltas(&a, &b, BootstrapSettings::DEFAULT).expect("deltas");
        assert!(!d.rows[0].is_clear(), "{:?}", d.rows[0]);
        assert!(d.rows[0].low < 0.0 && d.rows[0].high > 0.0);
        assert_eq!(
            deltas(&a, &run("empty", &[]), BootstrapSettings::DEFAULT),
            None
        );
    }

    #[test]
    fn settings_that_differ_are_named_with_each_run_s_value_and_alike_ones_left_out() {
        let a = run("a", &[10.0, 11.0]);
        let mut b = run("b", &[10.0, 11.0]);
        assert_eq!(setting_changes(&a, &b), []);
        b.config.query_mode = QueryMode::Profile;
        b.config.decoder = Reader::Reference;
        b.config.options = vec![("priority".into(), "low".into())];
        for r in &mut b.iterations {
            r.answer.rows = 300;
        }
        let changes = setting_changes(&a, &b);
        let names: Vec<&str> = changes.iter().map(|c| c.name).collect();
        assert_eq!(names, ["mode", "decoder", "rows", "options"]);
        assert_eq!(
            (changes[0].a.as_str(), changes[0].b.as_str()),
            ("normal", "profile")
        );
        assert_eq!(changes[2].b, "300");
        assert_eq!(
            (changes[3].a.as_str(), changes[3].b.as_str()),
            ("none", "priority low")
        );
    }
}
