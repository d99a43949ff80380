//! Runs side by side, part by part, in the compare view: each picked run's mean of every part as
//! one stacked bar named by the run on its axis (the means add up to the mean total, so the bars'
//! differences are the parts' changes), and, when the picked runs are the points of a sweep, the
//! curve of the total's and each part's median against the swept value, the rows or the
//! megabytes, with its band from the 10th to the 90th percentile (how the time grows with the
//! answer).

use egui_plot::{Bar, BarChart, FilledArea, GridInput, GridMark, Line, Plot, PlotPoints};
use serde::{Deserialize, Serialize};

use crate::analysis::{self, PartStats, Sweep};
use crate::app::runs::RunEntry;
use crate::app::theme;
use crate::part::{Measure, Part};
use crate::report::RunReport;
use crate::text::ms;

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

/// One curve as drawn: its points (x, median).
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// The total, or the part.
    pub measure: Measure,
    /// Its points, in x order.
    pub points: Vec<[f64; 2]>,
}

/// The means of each part of each picked run (0 where a run did not have the part), and the
/// parts any of them had.
pub fn part_means(picked: &[(usize, &RunEntry)]) -> (Vec<Part>, Vec<Vec<f64>>) {
    let stats: Vec<Option<PartStats>> = picked
        .iter()
        .map(|(_, run)| PartStats::of_run(&run.report))
        .collect();
    let parts: Vec<Part> = Part::ALL
        .into_iter()
        .filter(|&p| stats.iter().flatten().any(|s| s.part(p).is_some()))
        .collect();
    let means = stats
        .iter()
        .map(|s| {
            parts
                .iter()
                .map(|&p| {
                    s.as_ref()
                        .and_then(|s| s.part(p))
                        .map_or(0.0, |p| p.summary.mean)
                })
                .collect()
        })
        .collect();
    (parts, means)
}

/// Each picked run's mean per part as one stacked bar.
pub fn part_means_chart(
    ui: &mut egui::Ui,
    picked: &[(usize, &RunEntry)],
    names: &[String],
    height: f32,
) {
    ui.label(egui::RichText::new("Mean per part").strong())
        .on_hover_text(
            "Each run's mean of every part, stacked: they add up to its mean total, so the bars \
         differ where the runs do",
        );
    let (parts, means) = part_means(picked);
    theme::legend(ui, parts.iter().map(|p| (p.label(), theme::part(*p))));
    let mut charts: Vec<BarChart> = Vec::with_capacity(parts.len());
    for (k, part) in parts.iter().enumerate() {
        let bars = means
            .iter()
            .enumerate()
            .map(|(x, m)| Bar::new(x as f64, m[k]).width(0.6).fill(theme::part(*part)))
            .collect();
        let chart = BarChart::new(format!("mean {}", part.label()), bars)
            .color(theme::part(*part))
            .element_formatter(Box::new(|_, _| String::new()));
        let below: Vec<&BarChart> = charts.iter().collect();
        let chart = chart.stack_on(&below);
        charts.push(chart);
    }
    let labels: Vec<String> = names.to_vec();
    let runs = picked.len();
    let names = labels.clone();
    let plot = Plot::new("compare-phases")
        .height(height)
        .include_y(0.0)
        .include_x(-0.5)
        .include_x(runs as f64 - 0.5)
        .y_axis_label("mean")
        .y_axis_formatter(|mark, _| ms(mark.value))
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
    if let (Some(label), Some(m)) = (labels.get(k as usize), means.get(k as usize)) {
        plot.response.on_hover_ui_at_pointer(|ui| {
            ui.label(means_text(label, &parts, m));
        });
    }
}

/// A run's means as the hover text of its bar: the total, then each part.
pub fn means_text(label: &str, parts: &[Part], means: &[f64]) -> String {
    let mut text = format!("{label}: means\ntotal {}", ms(means.iter().sum()));
    for (part, value) in parts.iter().zip(means) {
        text.push_str(&format!("\n{} {}", part.label(), ms(*value)));
    }
    text
}

/// The sweep among `reports`, if they hold one.
pub fn sweep_of(reports: &[&RunReport]) -> Option<Sweep> {
    analysis::sweep(reports)
}

/// The curves of a sweep along `axis`: one per measure (the total or a part) measured at every point.
pub fn curves(sweep: &Sweep, axis: SweepAxis) -> Vec<(Curve, Vec<[f64; 2]>)> {
    let x = |row: &analysis::SweepRow, i: usize| match axis {
        SweepAxis::Value => row.x.unwrap_or(i as f64),
        SweepAxis::Rows => row.rows,
        SweepAxis::Megabytes => row.wire_bytes / 1e6,
    };
    sweep
        .models
        .iter()
        .map(|m| m.measure)
        .filter_map(|measure| {
            let bands: Option<Vec<_>> = sweep
                .rows
                .iter()
                .enumerate()
                .map(|(i, row)| row.band(measure).map(|b| (x(row, i), *b)))
                .collect();
            let mut bands = bands?;
            bands.sort_by(|a, b| a.0.total_cmp(&b.0));
            let points = bands.iter().map(|(x, b)| [*x, b.median]).collect();
            let spread = bands.iter().map(|(_, b)| [b.p10, b.p90]).collect();
            Some((Curve { measure, points }, spread))
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
            .on_hover_text("The total's and each part's median at each value, with its 10th to 90th percentile");
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
        if m.measure == Measure::Total {
            let mb = m
                .mb_per_s
                .map_or_else(String::new, |mb| format!(", {mb:.1} MB/s"));
            ui.label(
                egui::RichText::new(format!(
                    "total ≈ {} + {} per 1,000 rows{mb} (R² {:.2})",
                    ms(m.fixed_ms),
                    ms(m.ms_per_1000_rows),
                    m.r_squared
                ))
                .small()
                .color(theme::MUTED),
            );
        }
    }
    let drawn = curves(sweep, *axis);
    let colours = |measure: Measure| match measure {
        Measure::Total => theme::SELECTED,
        Measure::Part(part) => theme::part(part),
    };
    theme::legend(
        ui,
        drawn
            .iter()
            .map(|(c, _)| (c.measure.label(), colours(c.measure))),
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
        .y_axis_label("median")
        .y_axis_formatter(|mark, _| ms(mark.value))
        .x_axis_label(x_label)
        .allow_scroll(false)
        .show(ui, |plot| {
            for (curve, spread) in items {
                let colour = colours(curve.measure);
                let xs: Vec<f64> = curve.points.iter().map(|p| p[0]).collect();
                let lows: Vec<f64> = spread.iter().map(|s| s[0]).collect();
                let highs: Vec<f64> = spread.iter().map(|s| s[1]).collect();
                plot.add(
                    FilledArea::new(
                        format!("{} p10–p90", curve.measure.label()),
                        &xs,
                        &lows,
                        &highs,
                    )
                    .fill_color(colour.linear_multiply(0.18)),
                );
                plot.line(
                    Line::new(
                        curve.measure.label(),
                        PlotPoints::from(curve.points.clone()),
                    )
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
            it.answer.rows = n;
            it.answer.wire_bytes = n * 1000;
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
        assert_eq!(total.measure, Measure::Total);
        let xs: Vec<f64> = total.points.iter().map(|p| p[0]).collect();
        assert_eq!(xs, [1000.0, 2000.0, 4000.0]);
        assert!(total.points.windows(2).all(|w| w[1][1] > w[0][1]), "grows");
        let by_mb = curves(&sweep, SweepAxis::Megabytes);
        assert_eq!(by_mb[0].0.points[2][0], 4.0);
        let drawn: Vec<Measure> = by_value.iter().map(|(c, _)| c.measure).collect();
        assert_eq!(
            drawn,
            [Measure::Total, Measure::Part(Part::Untimed)],
            "nothing was timed but the total"
        );
    }

    #[test]
    fn a_run_axis_names_each_run_where_it_is_drawn() {
        let labels = vec!["wide".to_owned(), "narrow".to_owned()];
        assert_eq!(run_label(&labels, 1.0), "narrow");
        assert_eq!(run_label(&labels, 0.5), "");
        assert_eq!(run_label(&labels, 2.0), "");
    }
}
