//! The compare view: every run since the app started and every run re-opened from a JSON report
//! or the history, listed with how many there are (`list.rs`); two or more picked are read as a
//! diff, oldest first: `A -> B` with the settings they differ in, the verdict, and per part A, B,
//! Δ and its interval (`diff.rs`), each later run against the first; then their charts (total
//! time per iteration side by side, their distributions as box plots named by run on their axis,
//! each part's mean). The whole tab scrolls up and down and is never wider than the window; the
//! legend is a row above the bars, never over them.

use std::collections::BTreeSet;

use egui_plot::{Bar, BarChart, BoxElem, BoxPlot, BoxSpread, Plot};

use super::charts::{self, Curve, SweepAxis, one_mark_per_run, run_label};
use super::verdicts::{Verdict, Verdicts};
use super::{diff, list};
use crate::analysis::totals_distribution;
use crate::app::runs::RunEntry;
use crate::app::theme;
use crate::report::RunId;
use crate::text::ms;

/// The compare view's state: which runs are picked, and the verdicts asked for so far.
#[derive(Debug, Default)]
pub struct CompareView {
    picked: BTreeSet<RunId>,
    verdicts: Verdicts,
    sweep_axis: SweepAxis,
    /// The sweep curves drawn in the last frame (none when the picked runs are no sweep).
    curves: Vec<Curve>,
}

impl CompareView {
    /// Picks (or unpicks) run `id`.
    pub fn set_picked(&mut self, id: RunId, picked: bool) {
        if picked {
            self.picked.insert(id);
        } else {
            self.picked.remove(&id);
        }
    }

    /// The sweep curves drawn in the last frame: one per measure, when the picked runs are the
    /// points of a sweep.
    pub fn sweep_curves(&self) -> &[Curve] {
        &self.curves
    }

    /// Picks exactly these runs (the variants of a run just finished).
    pub fn pick_only(&mut self, ids: &[RunId]) {
        self.picked = ids.iter().copied().collect();
    }

    /// The picked runs' ids.
    pub fn picked(&self) -> &BTreeSet<RunId> {
        &self.picked
    }

    /// The runs File > Export writes besides those ticked: what is in view, on the Compare tab
    /// (`on_compare`) the runs picked there, elsewhere the run `shown`.
    pub fn in_view(&self, on_compare: bool, shown: Option<RunId>) -> Vec<RunId> {
        if on_compare {
            self.picked.iter().copied().collect()
        } else {
            shown.into_iter().collect()
        }
    }

    /// Takes in the verdicts computed off the UI thread since the last frame.
    pub fn drain(&mut self) {
        self.verdicts.drain();
    }

    /// The verdicts shown last, one per picked run after the first (the oldest) whose verdict
    /// is computed.
    pub fn verdicts_shown(&self, runs: &[RunEntry]) -> Vec<String> {
        let picked = in_time_order(runs, &self.picked);
        let Some((a, rest)) = picked.split_first() else {
            return Vec::new();
        };
        rest.iter()
            .filter_map(|b| match self.verdicts.get((a.id, b.id)) {
                Some(Verdict::Ready(diff)) => diff.words.clone(),
                _ => None,
            })
            .collect()
    }

    /// Draws the list of `runs` and the diff of the picked ones, scrolling up and down.
    pub fn ui(&mut self, ui: &mut egui::Ui, runs: &mut [RunEntry]) {
        if runs.is_empty() {
            ui.label("No runs yet: run a query, or open a JSON report (File > Open report…).");
            return;
        }
        let view_height = ui.available_height();
        egui::ScrollArea::vertical()
            .id_salt("compare-tab")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                list::ui(ui, runs, &mut self.picked);
                ui.add_space(8.0);
                self.picked_ui(ui, runs, view_height);
            });
    }

    /// The diff of the picked runs, then their charts.
    fn picked_ui(&mut self, ui: &mut egui::Ui, runs: &[RunEntry], view_height: f32) {
        let picked = in_time_order(runs, &self.picked);
        if picked.len() < 2 {
            self.curves.clear();
            ui.label("Pick two or more runs to compare them.");
            return;
        }
        let names = list::short_names(&picked);
        let a = picked[0];
        for (k, b) in picked.iter().enumerate().skip(1) {
            let verdict = self.verdicts.request(
                (a.id, &a.report, &names[0]),
                (b.id, &b.report, &names[k]),
                ui.ctx(),
            );
            diff::ui(ui, (a, &names[0]), (b, &names[k]), verdict);
            crate::app::plan_view::diff_ui(ui, (a.id, &a.report), (b.id, &b.report));
            ui.separator();
        }
        let picked: Vec<(usize, &RunEntry)> = picked.into_iter().enumerate().collect();
        theme::legend(
            ui,
            picked
                .iter()
                .map(|&(k, _)| (names[k].as_str(), theme::run_color(k))),
        );
        let reports: Vec<&crate::report::RunReport> =
            picked.iter().map(|(_, r)| &r.report).collect();
        let sweep = charts::sweep_of(&reports);
        let height = (view_height * 0.45).clamp(160.0, 320.0);
        self.curves = match &sweep {
            Some(sweep) => charts::sweep_curve(ui, sweep, &mut self.sweep_axis, height),
            None => Vec::new(),
        };
        charts::part_means_chart(ui, &picked, &names, height);
        overlay_bars(ui, &picked, &names, height);
        box_plots(ui, &picked, &names, height);
    }
}

/// The runs of `runs` in `picked`, in the order they started (A before B), the list's order
/// where that does not tell (a report without a start time after those with one).
pub fn in_time_order<'a>(runs: &'a [RunEntry], picked: &BTreeSet<RunId>) -> Vec<&'a RunEntry> {
    let mut chosen: Vec<(usize, &RunEntry)> = runs
        .iter()
        .enumerate()
        .filter(|(_, r)| picked.contains(&r.id))
        .collect();
    chosen.sort_by_key(|&(at, r)| {
        let started = r.started().map(|t| t.timestamp_micros());
        (started.is_none(), started, at)
    });
    chosen.into_iter().map(|(_, r)| r).collect()
}

fn overlay_bars(ui: &mut egui::Ui, picked: &[(usize, &RunEntry)], names: &[String], height: f32) {
    let width = 0.8 / picked.len() as f64;
    let offset = |k: usize| (k as f64 - (picked.len() as f64 - 1.0) / 2.0) * width;
    let charts: Vec<BarChart> = picked
        .iter()
        .map(|&(k, run)| {
            // Each bar at its iteration's number, as the Iterations tab and the CSV number it.
            let bars = run
                .report
                .timed()
                .map(|r| {
                    Bar::new(f64::from(r.iteration) + offset(k), r.total_ms)
                        .width(width * 0.95)
                        .name(format!("{} #{}", names[k], r.iteration))
                })
                .collect();
            // No text beside the hovered bar (drawn to its right, past the window's edge for the
            // last ones): egui's tooltip below instead.
            BarChart::new(format!("{} ({})", names[k], run.id), bars)
                .color(theme::run_color(k))
                .element_formatter(Box::new(|_, _| String::new()))
        })
        .collect();
    let plot = Plot::new("compare-bars")
        .height(height)
        .include_y(0.0)
        .y_axis_label("total")
        .y_axis_formatter(|mark, _| ms(mark.value))
        .x_axis_label("iteration")
        .allow_scroll(false)
        .show(ui, |plot| {
            for chart in charts {
                plot.bar_chart(chart);
            }
        });
    let Some(x) = hovered_x(&plot) else { return };
    let hit = picked.iter().find_map(|&(k, run)| {
        let n = (x - offset(k)).round();
        let record = run.report.timed().find(|r| f64::from(r.iteration) == n)?;
        ((x - (n + offset(k))).abs() <= width * 0.95 / 2.0).then_some((k, record))
    });
    if let Some((k, r)) = hit {
        plot.response.on_hover_ui_at_pointer(|ui| {
            ui.label(format!(
                "{}\n{}",
                names[k],
                crate::app::iterations::tooltip(r)
            ));
        });
    }
}

/// The plot value under the pointer, along x, while the pointer is over the plot.
fn hovered_x(plot: &egui_plot::PlotResponse<()>) -> Option<f64> {
    let pos = plot.response.hover_pos()?;
    Some(plot.transform.value_from_position(pos).x)
}

fn box_plots(ui: &mut egui::Ui, picked: &[(usize, &RunEntry)], names: &[String], height: f32) {
    let plots: Vec<BoxPlot> = picked
        .iter()
        .filter_map(|&(k, run)| {
            let d = totals_distribution(&run.report)?;
            let spread = BoxSpread::new(d.min, d.q1, d.median, d.q3, d.max);
            let elem = BoxElem::new(k as f64, spread)
                .name(&names[k])
                .box_width(0.5);
            Some(
                BoxPlot::new(
                    format!("{} ({}) distribution", names[k], run.id),
                    vec![elem],
                )
                .color(theme::run_color(k))
                .element_formatter(Box::new(|_, _| String::new())),
            )
        })
        .collect();
    let runs = picked.len();
    let labels: Vec<String> = names.to_vec();
    let plot = Plot::new("compare-boxes")
        .height(height)
        .include_y(0.0)
        .include_x(-0.5)
        .include_x(picked.len() as f64 - 0.5)
        .y_axis_label("total")
        .y_axis_formatter(|mark, _| ms(mark.value))
        .x_axis_label("run")
        .x_grid_spacer(move |input| one_mark_per_run(input, runs))
        .x_axis_formatter(move |mark, _| run_label(&labels, mark.value))
        .show_x(false)
        .allow_scroll(false)
        .show(ui, |plot| {
            for p in plots {
                plot.box_plot(p);
            }
        });
    let Some(x) = hovered_x(&plot) else { return };
    let k = x.round();
    let hit = picked
        .get(k.max(0.0) as usize)
        .filter(|_| (x - k).abs() <= 0.25)
        .and_then(|&(k, run)| Some((k, totals_distribution(&run.report)?)));
    if let Some((k, d)) = hit {
        plot.response.on_hover_ui_at_pointer(|ui| {
            ui.label(format!(
                "{}: total\nmax {}\nq3 {}\nmedian {}\nq1 {}\nmin {}",
                names[k],
                ms(d.max),
                ms(d.q3),
                ms(d.median),
                ms(d.q1),
                ms(d.min)
            ));
        });
    }
}

#[cfg(test)]
mod tests {
    use egui_plot::GridInput;

    use super::*;

    #[test]
    fn the_box_plot_axis_names_each_run_where_it_is_drawn_and_nothing_between() {
        let labels = vec!["wide".to_owned(), "narrow".to_owned()];
        assert_eq!(run_label(&labels, 0.0), "wide");
        assert_eq!(run_label(&labels, 1.0), "narrow");
        assert_eq!(run_label(&labels, 0.5), "");
        assert_eq!(run_label(&labels, 2.0), "");
        assert_eq!(run_label(&labels, -1.0), "");
        let marks = |lo, hi| -> Vec<f64> {
            let input = GridInput {
                bounds: (lo, hi),
                base_step_size: 0.01,
            };
            one_mark_per_run(input, 2).iter().map(|m| m.value).collect()
        };
        assert_eq!(marks(-0.5, 1.5), [0.0, 1.0]);
        // Zoomed far out, still one mark per run.
        assert_eq!(marks(-1e12, 1e12), [0.0, 1.0]);
    }

    #[test]
    fn picked_runs_are_read_oldest_first_whatever_order_the_list_holds_them_in() {
        let mut list = crate::app::runs::RunList::default();
        // Opened from the history newest first, as it lists them; one without a start time.
        for (label, started) in [
            ("newer", "2026-12-05T01:40:00Z"),
            ("older", "2026-12-05T01:30:00Z"),
            ("timeless", ""),
            ("unpicked", "2026-12-05T01:00:00Z"),
        ] {
            let report = crate::report::RunReport {
                started_at: started.into(),
                ..crate::report::RunReport::with_totals(label, &[1.0])
            };
            list.add(report, None, crate::app::runs::RunSource::Live);
        }
        let runs = list.entries();
        let picked: BTreeSet<RunId> = runs[..3].iter().map(|r| r.id).collect();
        let labels: Vec<&str> = in_time_order(runs, &picked)
            .iter()
            .map(|r| r.report.config.label.as_str())
            .collect();
        assert_eq!(labels, ["older", "newer", "timeless"]);
    }
}
