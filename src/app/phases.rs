//! Runs side by side, phase by phase, in the compare view: each picked run's median of every phase
//! as one stacked bar named by the run on its axis (where the difference between two variants is),
//! and, when the picked runs are the points of a sweep, the curve of each phase's median against
//! the swept value, the rows or the megabytes, with its band from the 10th to the 90th percentile
//! (how the time grows with the answer).

use egui_plot::{Bar, BarChart, FilledArea, GridInput, GridMark, Line, Plot, PlotPoints};
use serde::{Deserialize, Serialize};

use super::iterations::{SEGMENTS, segments};
use super::run_list::RunEntry;
use super::theme;
use crate::analysis::{self, Sweep};
use crate::report::{Phase, RunReport};
use crate::stats::median;

/// What the sweep curve's x axis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum SweepAxis {
    /// The swept parameter's value.
    #[default]
    Value,
    /// The median rows returned.
    Rows,
    /// The median megabytes received.
    Megabytes,
}

impl SweepAxis {
    fn label(self) -> &'static str {
        match self {
            SweepAxis::Value => "value",
            SweepAxis::Rows => "rows",
            SweepAxis::Megabytes => "MB",
        }
    }
}

/// The phases a sweep's curve draws.
const CURVE_PHASES: [Phase; 5] = [
    Phase::Total,
    Phase::Server,
    Phase::Network,
    Phase::WireDecode,
    Phase::RowDecode,
];

/// One phase's curve as drawn: its points (x, median).
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The phase.
    pub phase: Phase,
    /// Its points, in x order.
    pub points: Vec<[f64; 2]>,
}

/// Each picked run's medians per phase as one stacked bar.
pub fn phase_medians(ui: &mut egui::Ui, picked: &[(usize, &RunEntry)], height: f32) {
    ui.label(egui::RichText::new("Median per phase").strong())
        .on_hover_text("Each run's median of every phase, stacked: where the runs differ");
    theme::legend(ui, SEGMENTS.iter().copied().zip(theme::SEGMENT_COLORS));
    let medians: Vec<[f64; 5]> = picked
        .iter()
        .map(|(_, run)| median_segments(&run.report))
        .collect();
    let mut charts: Vec<BarChart> = Vec::with_capacity(SEGMENTS.len());
    for (k, name) in SEGMENTS.iter().enumerate() {
        let bars = medians
            .iter()
            .enumerate()
            .map(|(x, m)| Bar::new(x as f64, m[k]).width(0.6))
            .collect();
        let chart = BarChart::new(format!("median {name}"), bars)
            .color(theme::SEGMENT_COLORS[k])
            .element_formatter(Box::new(|_, _| String::new()));
        let below: Vec<&BarChart> = charts.iter().collect();
        let chart = chart.stack_on(&below);
        charts.push(chart);
    }
    let labels: Vec<String> = picked
        .iter()
        .map(|(_, r)| r.report.config.label.clone())
        .collect();
    let runs = picked.len();
    let names = labels.clone();
    let plot = Plot::new("compare-phases")
        .height(height)
        .include_y(0.0)
        .include_x(-0.5)
        .include_x(runs as f64 - 0.5)
        .y_axis_label("median ms")
        .x_grid_spacer(move |input| one_mark_per_run(input, runs))
        .x_axis_formatter(move |mark, _| run_label(&names, mark.value))
        .show_x(false)
        .allow_scroll(false)
        .show(ui, |plot| {
            for chart in charts {
                plot.bar_chart(chart);
            }
        });
    let Some(pos) = plot.response.hover_pos() else {
        return;
    };
    let x = plot.transform.value_from_position(pos).x;
    let k = x.round();
    if (x - k).abs() > 0.3 || k < 0.0 {
        return;
    }
    if let (Some(label), Some(m)) = (labels.get(k as usize), medians.get(k as usize)) {
        plot.response.on_hover_ui_at_pointer(|ui| {
            let mut text = format!("{label}: medians");
            for (name, ms) in SEGMENTS.iter().zip(m) {
                text.push_str(&format!("\n{name} {ms:.3} ms"));
            }
            ui.label(text);
        });
    }
}

/// The median of each segment over a run's timed iterations.
fn median_segments(report: &RunReport) -> [f64; 5] {
    let rows: Vec<[f64; 5]> = report.timed().map(segments).collect();
    std::array::from_fn(|k| {
        let mut values: Vec<f64> = rows.iter().map(|r| r[k]).collect();
        median(&mut values).unwrap_or(0.0)
    })
}

/// The sweep among `reports`, if they hold one.
pub fn sweep_of(reports: &[&RunReport]) -> Option<Sweep> {
    analysis::sweep(reports)
}

/// The curves of a sweep along `axis`: one per phase measured at every point.
pub fn curves(sweep: &Sweep, axis: SweepAxis) -> Vec<(Curve, Vec<[f64; 2]>)> {
    let x = |row: &analysis::SweepRow, i: usize| match axis {
        SweepAxis::Value => row.x.unwrap_or(i as f64),
        SweepAxis::Rows => row.rows,
        SweepAxis::Megabytes => row.wire_bytes / 1e6,
    };
    CURVE_PHASES
        .into_iter()
        .filter_map(|phase| {
            let bands: Option<Vec<_>> = sweep
                .rows
                .iter()
                .enumerate()
                .map(|(i, row)| row.band(phase).map(|b| (x(row, i), *b)))
                .collect();
            let mut bands = bands?;
            bands.sort_by(|a, b| a.0.total_cmp(&b.0));
            let points = bands.iter().map(|(x, b)| [*x, b.median]).collect();
            let spread = bands.iter().map(|(_, b)| [b.p10, b.p90]).collect();
            Some((Curve { phase, points }, spread))
        })
        .collect()
}

/// Draws the sweep's curves along `axis` (which the user picks here); returns what it drew.
pub fn sweep_curve(
    ui: &mut egui::Ui,
    sweep: &Sweep,
    axis: &mut SweepAxis,
    height: f32,
) -> Vec<Curve> {
    ui.horizontal(|ui| {
        ui.label(egui::RichText::new(format!("Sweep of @{}", sweep.param)).strong())
            .on_hover_text("Each phase's median at each value, with its 10th to 90th percentile");
        let along = ui.label("x:");
        egui::ComboBox::from_id_salt("sweep-axis")
            .selected_text(axis.label())
            .width(64.0)
            .show_ui(ui, |ui| {
                for a in [SweepAxis::Value, SweepAxis::Rows, SweepAxis::Megabytes] {
                    ui.selectable_value(axis, a, a.label());
                }
            })
            .response
            .labelled_by(along.id);
    });
    for m in &sweep.models {
        if m.phase == Phase::Total {
            let mb = m
                .mb_per_s
                .map_or_else(String::new, |mb| format!(", {mb:.1} MB/s"));
            ui.label(
                egui::RichText::new(format!(
                    "total ≈ {:.2} ms + {:.3} ms per 1,000 rows{mb} (R² {:.2})",
                    m.fixed_ms, m.ms_per_1000_rows, m.r_squared
                ))
                .small()
                .color(theme::MUTED),
            );
        }
    }
    let drawn = curves(sweep, *axis);
    let colours = |phase: Phase| match phase {
        Phase::Total => theme::SELECTED,
        Phase::Server => theme::SEGMENT_COLORS[0],
        Phase::Network => theme::SEGMENT_COLORS[1],
        Phase::WireDecode => theme::SEGMENT_COLORS[2],
        Phase::RowDecode => theme::SEGMENT_COLORS[3],
        _ => theme::SEGMENT_COLORS[4],
    };
    theme::legend(
        ui,
        drawn
            .iter()
            .map(|(c, _)| (c.phase.label(), colours(c.phase))),
    );
    let x_label = match axis {
        SweepAxis::Value => format!("@{}", sweep.param),
        SweepAxis::Rows => "rows".to_owned(),
        SweepAxis::Megabytes => "MB".to_owned(),
    };
    let items = drawn.clone();
    Plot::new("compare-sweep")
        .height(height)
        .include_y(0.0)
        .y_axis_label("median ms")
        .x_axis_label(x_label)
        .allow_scroll(false)
        .show(ui, |plot| {
            for (curve, spread) in items {
                let colour = colours(curve.phase);
                let xs: Vec<f64> = curve.points.iter().map(|p| p[0]).collect();
                let lows: Vec<f64> = spread.iter().map(|s| s[0]).collect();
                let highs: Vec<f64> = spread.iter().map(|s| s[1]).collect();
                plot.add(
                    FilledArea::new(
                        format!("{} p10–p90", curve.phase.label()),
                        &xs,
                        &lows,
                        &highs,
                    )
                    .fill_color(colour.linear_multiply(0.18)),
                );
                plot.line(
                    Line::new(curve.phase.label(), PlotPoints::from(curve.points.clone()))
                        .color(colour)
                        .width(2.0),
                );
            }
        });
    drawn.into_iter().map(|(c, _)| c).collect()
}

/// Axis marks at each of the `runs` runs' places (0, 1, …) in view, none between them.
pub fn one_mark_per_run(input: GridInput, runs: usize) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let first = lo.ceil().max(0.0) as i64;
    let last = hi.floor().min(runs as f64 - 1.0) as i64;
    (first..=last)
        .map(|k| GridMark {
            value: k as f64,
            step_size: 1.0,
        })
        .collect()
}

/// The name on an axis of runs at `value`: the label of the run drawn there.
pub fn run_label(labels: &[String], value: f64) -> String {
    if value.fract() != 0.0 || value < 0.0 {
        return String::new();
    }
    labels.get(value as usize).cloned().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::SweepPoint;

    fn point(n: u64) -> RunReport {
        let totals: Vec<f64> = (0..5)
            .map(|k| 1.0 + n as f64 / 1000.0 + k as f64 * 0.01)
            .collect();
        let mut run = RunReport::with_totals(&format!("n={n}"), &totals);
        run.config.sweep = Some(SweepPoint {
            param: "n".into(),
            type_name: "INT64".into(),
            value: n.to_string(),
        });
        for it in &mut run.iterations {
            it.rows = n;
            it.wire_bytes = n * 1000;
        }
        run
    }

    #[test]
    fn a_sweeps_curves_follow_the_axis_asked_for_in_ascending_order() {
        let runs = [point(4000), point(1000), point(2000)];
        let refs: Vec<&RunReport> = runs.iter().collect();
        let sweep = sweep_of(&refs).expect("a sweep");
        let by_value = curves(&sweep, SweepAxis::Value);
        let total = &by_value[0].0;
        assert_eq!(total.phase, Phase::Total);
        let xs: Vec<f64> = total.points.iter().map(|p| p[0]).collect();
        assert_eq!(xs, [1000.0, 2000.0, 4000.0]);
        assert!(total.points.windows(2).all(|w| w[1][1] > w[0][1]), "grows");
        let by_mb = curves(&sweep, SweepAxis::Megabytes);
        assert_eq!(by_mb[0].0.points[2][0], 4.0);
        assert_eq!(by_value.len(), 1, "only the total was measured");
    }

    #[test]
    fn a_run_axis_names_each_run_where_it_is_drawn() {
        let labels = vec!["wide".to_owned(), "narrow".to_owned()];
        assert_eq!(run_label(&labels, 1.0), "narrow");
        assert_eq!(run_label(&labels, 0.5), "");
        assert_eq!(run_label(&labels, 2.0), "");
    }
}
