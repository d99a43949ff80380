//! The compare view: every run since the app started and every run re-opened from a JSON report,
//! listed; two or more picked are overlaid (total time per iteration side by side, and their
//! distributions as box plots named by run on their axis), with each one's verdict against the
//! first in words. The legend is a row above the bars, never over them.

use std::collections::BTreeSet;

use egui_plot::{Bar, BarChart, BoxElem, BoxPlot, BoxSpread, Plot};

use super::charts::{self, Curve, SweepAxis, one_mark_per_run, run_label};
use super::verdicts::{Verdict, Verdicts};
use crate::analysis::totals_distribution;
use crate::app::runs::{self, RunEntry};
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

    /// The picked runs' ids, in the order the runs were listed.
    pub fn picked(&self) -> &BTreeSet<RunId> {
        &self.picked
    }

    /// Takes in the verdicts computed off the UI thread since the last frame.
    pub fn drain(&mut self) {
        self.verdicts.drain();
    }

    /// The verdicts shown last, one per picked run after the first whose verdict is computed.
    pub fn verdicts_shown(&self, runs: &[RunEntry]) -> Vec<String> {
        let picked: Vec<&RunEntry> = runs
            .iter()
            .filter(|r| self.picked.contains(&r.id))
            .collect();
        let Some((a, rest)) = picked.split_first() else {
            return Vec::new();
        };
        rest.iter()
            .filter_map(|b| match self.verdicts.get((a.id, b.id)) {
                Some(Verdict::Ready(Some(text))) => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    /// Draws the list of `runs` and the overlay of the picked ones.
    pub fn ui(&mut self, ui: &mut egui::Ui, runs: &mut [RunEntry]) {
        if runs.is_empty() {
            ui.label("No runs yet: run a query, or open a JSON report (File > Open report…).");
            return;
        }
        self.list(ui, runs);
        let picked: Vec<(usize, &RunEntry)> = runs
            .iter()
            .filter(|r| self.picked.contains(&r.id))
            .enumerate()
            .collect();
        ui.add_space(6.0);
        if picked.len() < 2 {
            self.curves.clear();
            ui.label("Pick two or more runs to compare them.");
            return;
        }
        let names = runs::names(&picked.iter().map(|&(_, r)| r).collect::<Vec<_>>());
        let (_, a) = picked[0];
        for &(k, b) in &picked[1..] {
            let verdict = self.verdicts.request(
                (a.id, &a.report, &names[0]),
                (b.id, &b.report, &names[k]),
                ui.ctx(),
            );
            verdict_line(ui, k, verdict, &names[0], &names[k]);
            crate::app::plan_view::diff_ui(ui, (a.id, &a.report), (b.id, &b.report));
        }
        ui.add_space(4.0);
        theme::legend(
            ui,
            picked
                .iter()
                .map(|&(k, _)| (names[k].as_str(), theme::run_color(k))),
        );
        let reports: Vec<&crate::report::RunReport> =
            picked.iter().map(|(_, r)| &r.report).collect();
        let sweep = charts::sweep_of(&reports);
        let charts = if sweep.is_some() { 4.0 } else { 3.0 };
        let height = (ui.available_height() / charts - 24.0).max(140.0);
        egui::ScrollArea::vertical()
            .id_salt("compare-charts")
            .show(ui, |ui| {
                self.curves = match &sweep {
                    Some(sweep) => charts::sweep_curve(ui, sweep, &mut self.sweep_axis, height),
                    None => Vec::new(),
                };
                charts::part_means_chart(ui, &picked, &names, height);
                overlay_bars(ui, &picked, &names, height);
                box_plots(ui, &picked, &names, height);
            });
    }

    fn list(&mut self, ui: &mut egui::Ui, runs: &mut [RunEntry]) {
        egui::ScrollArea::vertical()
            .id_salt("compare-list")
            .max_height(160.0)
            .show(ui, |ui| {
                egui::Grid::new("compare-runs")
                    .striped(true)
                    .num_columns(7)
                    .spacing([12.0, 3.0])
                    .show(ui, |ui| {
                        for heading in [
                            "compare", "export", "started", "target", "query", "timed", "median",
                        ] {
                            ui.label(egui::RichText::new(heading).strong());
                        }
                        ui.end_row();
                        for run in runs.iter_mut() {
                            let mut picked = self.picked.contains(&run.id);
                            if ui.checkbox(&mut picked, run.title()).changed() {
                                self.set_picked(run.id, picked);
                            }
                            ui.checkbox(&mut run.export, "")
                                .on_hover_text("Include this run in exports");
                            let started = run.started().map_or_else(
                                || "—".to_owned(),
                                |t| t.format("%Y-%m-%d %H:%M:%S").to_string(),
                            );
                            ui.monospace(started);
                            ui.label(&run.report.config.target);
                            let sql: String = run.report.config.sql.chars().take(48).collect();
                            ui.monospace(sql).on_hover_text(&run.report.config.sql);
                            ui.monospace(run.report.timed().count().to_string());
                            let median = totals_distribution(&run.report)
                                .map_or_else(|| "—".to_owned(), |d| ms(d.median));
                            ui.monospace(median);
                            ui.end_row();
                        }
                    });
            });
    }
}

/// One run's verdict against the first picked, in its colour: the words once they are computed.
fn verdict_line(ui: &mut egui::Ui, k: usize, verdict: &Verdict, a_label: &str, b_label: &str) {
    let text = match verdict {
        Verdict::Ready(Some(text)) => text.clone(),
        Verdict::Ready(None) => {
            format!("{b_label} cannot be compared with {a_label}: a run without timed iterations")
        }
        Verdict::Pending => format!("comparing {b_label} with {a_label}…"),
        Verdict::Failed(why) => format!("{b_label} cannot be compared with {a_label}: {why}"),
    };
    let text = egui::RichText::new(text);
    let text = if matches!(verdict, Verdict::Pending) {
        text.italics()
    } else {
        text.strong()
    };
    ui.colored_label(theme::run_color(k), text);
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
}
