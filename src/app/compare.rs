//! The compare view: every run since the app started and every run re-opened from a JSON report,
//! listed; two or more picked are overlaid (total time per iteration side by side, and their
//! distributions as box plots), with each one's verdict against the first in words.

use std::collections::BTreeSet;

use egui_plot::{Bar, BarChart, BoxElem, BoxPlot, BoxSpread, Legend, Plot};

use super::verdicts::{Verdict, Verdicts};
use super::{RunEntry, theme};
use crate::analysis::totals_distribution;

/// The compare view's state: which runs are picked, and the verdicts asked for so far.
#[derive(Debug, Default)]
pub struct CompareView {
    picked: BTreeSet<u64>,
    verdicts: Verdicts,
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
            ui.label("Pick two or more runs to compare them.");
            return;
        }
        let (_, a) = picked[0];
        for &(k, b) in &picked[1..] {
            let verdict = self
                .verdicts
                .request((a.id, &a.report), (b.id, &b.report), ui.ctx());
            verdict_line(
                ui,
                k,
                verdict,
                &a.report.config.label,
                &b.report.config.label,
            );
            super::plan::diff_ui(ui, (a.id, &a.report), (b.id, &b.report));
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
                            ui.monospace(run.report.timed().count().to_string());
                            let median = totals_distribution(&run.report)
                                .map_or_else(|| "—".to_owned(), |d| format!("{:.3} ms", d.median));
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
            let d = totals_distribution(&run.report)?;
            let spread = BoxSpread::new(d.min, d.q1, d.median, d.q3, d.max);
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
