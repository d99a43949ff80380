//! The compare view: every run since the app started and every run re-opened from a JSON report,
//! listed; two or more picked are overlaid (total time per iteration side by side, and their
//! distributions as box plots), with each one's verdict against the first in words.

use std::collections::{BTreeSet, HashMap};

use egui_plot::{Bar, BarChart, BoxElem, BoxPlot, BoxSpread, Legend, Plot};

use super::{RunEntry, theme};
use crate::report::{Phase, RunReport};
use crate::stats::{self, percentile};

/// Confidence level of the comparisons.
const CONFIDENCE: f64 = 0.95;
/// Bootstrap resamples per comparison.
const RESAMPLES: usize = 2000;
/// The bootstrap's seed: a comparison is a pure function of the two runs.
const SEED: u64 = 0x5ba_17ab;

/// The timed totals of a run, in run order.
fn totals(report: &RunReport) -> Vec<f64> {
    report.phase_samples(Phase::Total)
}

/// "B is 1.8× ± 0.1 faster than A …" for run `b` against run `a`, on the total time; `None` when
/// either has no timed iteration.
pub fn verdict(a: &RunReport, b: &RunReport) -> Option<String> {
    let c = stats::compare(&totals(a), &totals(b), CONFIDENCE, RESAMPLES, SEED)?;
    Some(stats::verdict(&c, &a.config.label, &b.config.label))
}

/// The compare view's state: which runs are picked, and the verdicts computed so far.
#[derive(Debug, Default)]
pub struct CompareView {
    picked: BTreeSet<u64>,
    verdicts: HashMap<(u64, u64), Option<String>>,
}

impl CompareView {
    /// Picks (or unpicks) run `id`.
    pub fn set_picked(&mut self, id: u64, picked: bool) {
        if picked {
            self.picked.insert(id);
        } else {
            self.picked.remove(&id);
        }
    }

    /// The picked runs' ids, in the order the runs were listed.
    pub fn picked(&self) -> &BTreeSet<u64> {
        &self.picked
    }

    /// The verdicts shown last, one per picked run after the first.
    pub fn verdicts_shown(&self, runs: &[RunEntry]) -> Vec<String> {
        let picked: Vec<&RunEntry> = runs
            .iter()
            .filter(|r| self.picked.contains(&r.id))
            .collect();
        let Some((a, rest)) = picked.split_first() else {
            return Vec::new();
        };
        rest.iter()
            .filter_map(|b| self.verdicts.get(&(a.id, b.id)).cloned().flatten())
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
            ui.label("Pick two or more runs to compare them.");
            return;
        }
        let (_, a) = picked[0];
        for &(k, b) in &picked[1..] {
            let text = self
                .verdicts
                .entry((a.id, b.id))
                .or_insert_with(|| verdict(&a.report, &b.report))
                .clone()
                .unwrap_or_else(|| {
                    format!(
                        "{} cannot be compared with {}: a run without timed iterations",
                        b.report.config.label, a.report.config.label
                    )
                });
            ui.colored_label(theme::run_color(k), egui::RichText::new(text).strong());
        }
        ui.add_space(4.0);
        let height = (ui.available_height() / 2.0 - 8.0).max(140.0);
        overlay_bars(ui, &picked, height);
        box_plots(ui, &picked, height);
    }

    fn list(&mut self, ui: &mut egui::Ui, runs: &mut [RunEntry]) {
        egui::ScrollArea::vertical()
            .id_salt("compare-list")
            .max_height(160.0)
            .show(ui, |ui| {
                egui::Grid::new("compare-runs")
                    .striped(true)
                    .num_columns(6)
                    .spacing([12.0, 3.0])
                    .show(ui, |ui| {
                        for heading in ["compare", "export", "target", "query", "timed", "median"] {
                            ui.label(egui::RichText::new(heading).strong());
                        }
                        ui.end_row();
                        for run in runs.iter_mut() {
                            let mut picked = self.picked.contains(&run.id);
                            if ui.checkbox(&mut picked, &run.report.config.label).changed() {
                                self.set_picked(run.id, picked);
                            }
                            ui.checkbox(&mut run.export, "")
                                .on_hover_text("Include this run in exports");
                            ui.label(&run.report.config.target);
                            let sql: String = run.report.config.sql.chars().take(48).collect();
                            ui.monospace(sql).on_hover_text(&run.report.config.sql);
                            let totals = totals(&run.report);
                            ui.monospace(totals.len().to_string());
                            let median = stats::summarize(&totals)
                                .map_or_else(|| "—".to_owned(), |s| format!("{:.3} ms", s.median));
                            ui.monospace(median);
                            ui.end_row();
                        }
                    });
            });
    }
}

fn overlay_bars(ui: &mut egui::Ui, picked: &[(usize, &RunEntry)], height: f32) {
    let width = 0.8 / picked.len() as f64;
    let charts: Vec<BarChart> = picked
        .iter()
        .map(|&(k, run)| {
            let offset = (k as f64 - (picked.len() as f64 - 1.0) / 2.0) * width;
            let bars = run
                .report
                .timed()
                .enumerate()
                .map(|(n, r)| {
                    Bar::new(n as f64 + offset, r.total_ms)
                        .width(width * 0.95)
                        .name(format!("{} #{}", run.report.config.label, r.iteration))
                })
                .collect();
            BarChart::new(format!("{} ({})", run.report.config.label, run.id), bars)
                .color(theme::run_color(k))
        })
        .collect();
    Plot::new("compare-bars")
        .height(height)
        .legend(Legend::default().follow_insertion_order(true))
        .include_y(0.0)
        .y_axis_label("total ms")
        .x_axis_label("timed iteration")
        .allow_scroll(false)
        .show(ui, |plot| {
            for chart in charts {
                plot.bar_chart(chart);
            }
        });
}

fn box_plots(ui: &mut egui::Ui, picked: &[(usize, &RunEntry)], height: f32) {
    let plots: Vec<BoxPlot> = picked
        .iter()
        .filter_map(|&(k, run)| {
            let mut sorted = totals(&run.report);
            sorted.sort_by(f64::total_cmp);
            let q = |p| percentile(&sorted, p);
            let spread = BoxSpread::new(q(0.0)?, q(25.0)?, q(50.0)?, q(75.0)?, q(100.0)?);
            let elem = BoxElem::new(k as f64, spread)
                .name(&run.report.config.label)
                .box_width(0.5);
            Some(
                BoxPlot::new(
                    format!("{} ({}) distribution", run.report.config.label, run.id),
                    vec![elem],
                )
                .color(theme::run_color(k)),
            )
        })
        .collect();
    Plot::new("compare-boxes")
        .height(height)
        .include_y(0.0)
        .y_axis_label("total ms")
        .show_x(false)
        .allow_scroll(false)
        .show(ui, |plot| {
            for p in plots {
                plot.box_plot(p);
            }
        });
}
