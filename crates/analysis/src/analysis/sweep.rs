//! How a query's time grows with its answer: the runs of a parameter sweep (`LIMIT @n` over 100,
//! 1,000, 10,000...) as one table per value, and for the total and each part a cost model fitted
//! to every timed iteration, `fixed ms + ms per 1,000 rows`, with the throughput it sustains (MB/s
//! of wire bytes). Ordinary least squares over the iterations (not the medians), so the fit weighs
//! every measurement once; its R² says how well a line describes the part.

use super::parts::measures_had;
use crate::part::Measure;
use crate::report::RunReport;
use crate::stats::{percentile, summarize};

/// The total or a part of one sweep value: its median with the band from the 10th to the 90th
/// percentile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The total, or the part.
    pub measure: Measure,
    /// Median, milliseconds.
    pub median: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
}

/// One value of the swept parameter: its run, how much it returned, and each measure's band.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// The run's label.
    pub label: String,
    /// The parameter's value, as written.
    pub value: String,
    /// The value as a number, when it is one.
    pub x: Option<f64>,
    /// Median rows returned.
    pub rows: f64,
    /// Median wire bytes received.
    pub wire_bytes: f64,
    /// The bands of the total and of the parts the sweep's runs had, in [`Part::ALL`] order.
    ///
    /// [`Part::ALL`]: crate::part::Part::ALL
    pub bands: Vec<Band>,
}

impl SweepRow {
    /// The band of `measure`, when the sweep's runs had it.
    pub fn band(&self, measure: Measure) -> Option<&Band> {
        self.bands.iter().find(|b| b.measure == measure)
    }
}

/// The cost of the total or a part as a line in the answer's size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// The total, or the part.
    pub measure: Measure,
    /// Milliseconds it costs whatever the answer (the intercept).
    pub fixed_ms: f64,
    /// Milliseconds it costs per 1,000 rows (the slope).
    pub ms_per_1000_rows: f64,
    /// Wire megabytes per second it sustains (from the slope against bytes); `None` when it does
    /// not grow with the bytes.
    pub mb_per_s: Option<f64>,
    /// How much of its variation the line explains, 0 to 1.
    pub r_squared: f64,
}

/// A sweep: its parameter, a row per value, and a model of the total and of each part.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// The swept parameter's name.
    pub param: String,
    /// One row per value, in ascending order when every value is a number (else as run).
    pub rows: Vec<SweepRow>,
    /// A model of the total and of each part, over at least two different answer sizes.
    pub models: Vec<CostModel>,
}

/// The sweep among `runs`: the runs that hold a point of a sweep of the same parameter (the first
/// such run's). `None` when fewer than two runs are points of it.
pub fn sweep(runs: &[&RunReport]) -> Option<Sweep> {
    let param = runs
        .iter()
        .find_map(|r| r.config.sweep.as_ref())?
        .param
        .clone();
    let points: Vec<&RunReport> = runs
        .iter()
        .copied()
        .filter(|r| r.config.sweep.as_ref().is_some_and(|s| s.param == param))
        .collect();
    if points.len() < 2 {
        return None;
    }
    let measures = measures_had(points.iter().flat_map(|r| &r.iterations));
    let mut rows: Vec<SweepRow> = points.iter().map(|r| row(r, &measures)).collect();
    if rows.iter().all(|r| r.x.is_some()) {
        rows.sort_by(|a, b| a.x.unwrap_or(0.0).total_cmp(&b.x.unwrap_or(0.0)));
    }
    let models = measures
        .iter()
        .filter_map(|&measure| model(&points, measure))
        .collect();
    Some(Sweep {
        param,
        rows,
        models,
    })
}

fn row(run: &RunReport, measures: &[Measure]) -> SweepRow {
    let point = run.config.sweep.as_ref();
    let median = |values: Vec<f64>| summarize(&values).map_or(0.0, |s| s.median);
    let sorted = |mut v: Vec<f64>| {
        v.retain(|x| x.is_finite());
        v.sort_by(f64::total_cmp);
        v
    };
    SweepRow {
        label: run.config.label.clone(),
        value: point.map(|p| p.value.clone()).unwrap_or_default(),
        x: point.and_then(|p| p.number()),
        rows: median(run.timed().map(|i| i.answer.rows as f64).collect()),
        wire_bytes: median(run.timed().map(|i| i.answer.wire_bytes as f64).collect()),
        bands: measures
            .iter()
            .filter_map(|&measure| {
                let values = sorted(run.samples(measure));
                Some(Band {
                    measure,
                    median: percentile(&values, 50.0)?,
                    p10: percentile(&values, 10.0)?,
                    p90: percentile(&values, 90.0)?,
                })
            })
            .collect(),
    }
}

/// The least-squares line of `measure` against rows (and the slope against bytes) over every
/// timed iteration of `runs`; `None` with fewer than two distinct row counts.
fn model(runs: &[&RunReport], measure: Measure) -> Option<CostModel> {
    let mut by_rows = Vec::new();
    let mut by_bytes = Vec::new();
    for it in runs.iter().flat_map(|r| r.timed()) {
        let ms = it.measure_ms(measure);
        if ms.is_finite() {
            by_rows.push((it.answer.rows as f64, ms));
            by_bytes.push((it.answer.wire_bytes as f64, ms));
        }
    }
    let (slope, intercept, r_squared) = least_squares(&by_rows)?;
    let mb_per_s = least_squares(&by_bytes)
        .map(|(ms_per_byte, _, _)| ms_per_byte)
        .filter(|s| *s > 0.0)
        .map(|ms_per_byte| 1e-3 / ms_per_byte);
    Some(CostModel {
        measure,
        fixed_ms: intercept,
        ms_per_1000_rows: slope * 1000.0,
        mb_per_s,
        r_squared,
    })
}

/// `(slope, intercept, R²)` of the least-squares line through `points`; `None` when the x values
/// do not vary.
pub fn least_squares(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let syy: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    if sxx <= f64::EPSILON * n * mean_x.abs().max(1.0) {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    let r_squared = if syy > 0.0 {
        (sxy * sxy / (sxx * syy)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    Some((slope, intercept, r_squared))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::Part;
    use crate::report::SweepPoint;

    /// A sweep point `n` whose iterations return `n` rows of 100 bytes each and take
    /// `2 + 0.5 ms per 1,000 rows` in total (±1%), `1 ms + 0.3 per 1,000` in row decode.
    fn point(n: u64) -> RunReport {
        let totals: Vec<f64> = (0..9)
            .map(|k| (2.0 + 0.0005 * n as f64) * (0.99 + 0.0025 * k as f64))
            .collect();
        let mut run = RunReport::with_totals(&format!("n={n}"), &totals);
        run.config.sweep = Some(SweepPoint {
            param: "n".into(),
            type_name: "INT64".into(),
            value: n.to_string(),
        });
        for it in &mut run.iterations {
            it.answer.rows = n;
            it.answer.wire_bytes = n * 100;
            it.query.row_decode_wall_ms = Some(1.0 + 0.0003 * n as f64);
        }
        run
    }

    #[test]
    fn a_sweep_gives_a_row_per_value_and_recovers_the_cost_of_each_part() {
        let runs = [point(10_000), point(100), point(1_000), point(100_000)];
        let sweep = sweep(&runs.iter().collect::<Vec<_>>()).expect("four points");
        assert_eq!(sweep.param, "n");
        let values: Vec<&str> = sweep.rows.iter().map(|r| r.value.as_str()).collect();
        assert_eq!(values, ["100", "1000", "10000", "100000"], "ascending");
        assert_eq!(sweep.rows[2].rows, 10_000.0);
        let total = sweep.rows[3].band(Measure::Total).expect("measured");
        assert!(total.p10 <= total.median && total.median <= total.p90);
        let model = |measure| sweep.models.iter().find(|m| m.measure == measure).copied();
        let t = model(Measure::Total).expect("a model of the total");
        assert!((t.ms_per_1000_rows - 0.5).abs() < 0.02, "{t:?}");
        assert!((t.fixed_ms - 2.0).abs() < 0.5, "{t:?}");
        assert!(t.r_squared > 0.99, "{t:?}");
        // 0.5 ms per 1,000 rows of 100 bytes: 100 kB in 0.5 ms, 200 MB/s.
        let mb = t.mb_per_s.expect("grows with bytes");
        assert!((mb - 200.0).abs() < 10.0, "{mb}");
        let r = model(Measure::Part(Part::RowDecode)).expect("a model of row decode");
        assert!(
            (r.ms_per_1000_rows - 0.3).abs() < 1e-6 && (r.fixed_ms - 1.0).abs() < 1e-6,
            "{r:?}"
        );
        assert!(
            model(Measure::Part(Part::Server)).is_none(),
            "no iteration had it"
        );
    }

    #[test]
    fn runs_that_are_not_a_sweep_make_none() {
        assert!(sweep(&[&point(10)]).is_none(), "one point");
        let plain = RunReport::with_totals("plain", &[1.0, 2.0]);
        assert!(sweep(&[&plain, &plain]).is_none());
    }

    #[test]
    fn a_line_needs_x_values_that_vary() {
        assert_eq!(least_squares(&[(1.0, 2.0), (1.0, 3.0)]), None);
        let (slope, intercept, r2) =
            least_squares(&[(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)]).expect("a line");
        assert!(
            (slope - 2.0).abs() < 1e-12
                && (intercept - 1.0).abs() < 1e-12
                && (r2 - 1.0).abs() < 1e-12
        );
    }
}
