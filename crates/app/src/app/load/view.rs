//! The Load tab: a load test of the query panel's first query (or its read-write transaction, the
//! panel's switch on) on the connection panel's target,
//! its controls (the model and its levels, the step's length, the bound on requests in flight,
//! the built-in instance's queue, the parameters each request draws, and for a read-write run
//! whether to read the target's own statistics after it; the side panel's Run load and Cancel
//! start and stop it); while
//! it runs, each step that ends appears at once as a row, a point of the curve, a stacked bar of
//! its parts and a line of its percentiles (a read-write run's goodput against its attempts and
//! its aborts per transaction too), and the knee found so far is marked; once it ends (or
//! is stopped), the run's own knee and its exports, and the target's statistics beside the run's
//! figures when they were asked for. The tab scrolls, its charts a minimum height.
//!
//! The run is the app's `RunController`'s, as every run is; the view draws what the run reported,
//! handed to it once per frame, and remakes its figures only when a step ends ([`LoadFigures`],
//! [`LoadParts`], [`LoadPercentiles`]).

use super::chart::LoadFigures;
use super::controls::{self, ControlsContext};
use super::draw_controls::DrawCheck;
use super::goodput::LoadGoodput;
use super::parts::LoadParts;
use super::percentiles::{LevelScale, LoadPercentiles};
use super::progress::{self, LoadProgress, WaitWords};
use super::settings::LoadSettings;
use super::target_stats::LoadTargetStats;
use crate::app::command::Command;
use crate::app::theme;
use crate::engine::LoadEvent;
use crate::engine::load::InFlightCount;
use crate::export::{Format, RunKind};
use crate::load::{KneeRule, LoadReport, LoadSteps, StepResult, find_knee};

/// The narrowest a chart is drawn (it keeps this height at any window size; the tab scrolls).
const CHART_MIN_HEIGHT: f32 = 180.0;
/// The tallest a chart is drawn.
const CHART_MAX_HEIGHT: f32 = 320.0;
/// From this width on, the curve and the parts share a row (both have the level as x).
const TWO_COLUMNS_FROM: f32 = 760.0;

/// How a drained load run ended, when it did.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadEnded {
    /// Its report arrived; what the status bar says of it.
    Finished(String),
    /// It could not start: why.
    Failed(String),
}

/// The knee shown above the curve: its words, and the rule it was found by.
#[derive(Debug, Clone, Default)]
struct KneeText {
    words: String,
    rule: String,
}

/// The Load tab's state: where the run in flight is, and what the last run measured.
#[derive(Default)]
pub struct LoadView {
    /// Whether a run is in flight: from its start to its report (or its failure).
    running: bool,
    progress: LoadProgress,
    /// The plan's levels' spread: each step's colour among them.
    scale: LevelScale,
    steps: Vec<StepResult>,
    figures: LoadFigures,
    /// A read-write run's goodput against its attempts (empty for a query run).
    goodput: LoadGoodput,
    parts: LoadParts,
    percentiles: LoadPercentiles,
    knee: Option<KneeText>,
    report: Option<LoadReport>,
    /// Why the last run could not start, or failed.
    error: Option<String>,
    /// What was adjusted or noticed before the run (a capped rate, a knob ignored).
    notices: Vec<String>,
    /// The draw settings as last read (kept across runs).
    draw_check: DrawCheck,
    /// The target's own statistics of the last run, when it asked for them (made once, as it
    /// ended).
    target_stats: Option<LoadTargetStats>,
}

impl LoadView {
    /// Whether a load run is in flight.
    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The steps the run in flight (or the last run) measured, in order.
    pub fn steps(&self) -> &[StepResult] {
        &self.steps
    }

    /// The last run's report, once it ended.
    pub fn report(&self) -> Option<&LoadReport> {
        self.report.as_ref()
    }

    /// Why the last run could not start or failed, as the view says it.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The knee in words as the view shows it (so far, while a run is in flight).
    pub fn knee_words(&self) -> Option<&str> {
        self.knee.as_ref().map(|k| k.words.as_str())
    }

    /// The curve and the steps' table, as drawn.
    pub fn figures(&self) -> &LoadFigures {
        &self.figures
    }

    /// A read-write run's goodput against its attempts and aborts per transaction, as drawn.
    pub fn goodput(&self) -> &LoadGoodput {
        &self.goodput
    }

    /// The stacked bars of the steps' parts, as drawn.
    pub fn parts_chart(&self) -> &LoadParts {
        &self.parts
    }

    /// The percentile plot's lines, as drawn.
    pub fn percentile_plot(&self) -> &LoadPercentiles {
        &self.percentiles
    }

    /// The target's own statistics of the last run beside its figures, when it asked for them.
    pub fn target_stats(&self) -> Option<&LoadTargetStats> {
        self.target_stats.as_ref()
    }

    /// What is wrong with the Load tab's draw parameters, as the tab says it.
    pub fn draw_error(&self) -> Option<&str> {
        self.draw_check.error()
    }

    /// Where the run in flight is, while one is.
    pub fn progress(&self) -> Option<&LoadProgress> {
        self.running.then_some(&self.progress)
    }

    /// A run of `plan` started, its requests in flight counted by `in_flight`, what it says when
    /// it waits for the target's statistics in `waiting`: what the last run showed goes. Keeps
    /// the percentile plot's toggle.
    pub(in crate::app) fn started(
        &mut self,
        plan: &LoadSteps,
        notices: Vec<String>,
        in_flight: InFlightCount,
        waiting: WaitWords,
    ) {
        let scale = LevelScale::of(plan.levels.iter().map(|l| l.value()));
        let mut percentiles = LoadPercentiles::new(scale);
        percentiles.every_actual = self.percentiles.every_actual;
        let mut parts = LoadParts::new(plan.model);
        parts.in_ms = self.parts.in_ms;
        let progress = LoadProgress::new(plan)
            .counting(in_flight)
            .waiting_on(waiting);
        *self = LoadView {
            running: true,
            progress,
            scale,
            figures: LoadFigures::new(plan.model),
            goodput: LoadGoodput::new(plan.model),
            parts,
            percentiles,
            notices,
            draw_check: std::mem::take(&mut self.draw_check),
            ..LoadView::default()
        };
    }

    /// A run could not start: `why` is said above what the last run showed.
    pub(in crate::app) fn refused(&mut self, why: String) {
        self.error = Some(why);
    }

    /// The run in flight was asked to stop: the progress says so; the steps it measured stay.
    pub(in crate::app) fn stopping(&mut self) {
        if self.running {
            self.progress.stop();
        }
    }

    /// Draws what the run in flight reported; returns how the run ended once it has.
    pub(in crate::app) fn apply(&mut self, event: LoadEvent) -> Option<LoadEnded> {
        if !self.running {
            return None;
        }
        match event {
            LoadEvent::Connected(target) => self.progress.connected(target),
            LoadEvent::StepStarted { index, level } => self.progress.step_started(index, level),
            LoadEvent::StepDone(step) => {
                self.progress.step_done();
                self.figures.push(&step);
                self.goodput.push(&step);
                self.parts.push(&step);
                self.percentiles.push(&step);
                self.steps.push(*step);
                self.knee_so_far();
            }
            LoadEvent::Finished(report) => return Some(self.finished(*report)),
            LoadEvent::Failed(error) => {
                let why = error.to_string();
                self.running = false;
                self.error = Some(why.clone());
                return Some(LoadEnded::Failed(why));
            }
        }
        None
    }

    /// The knee among the steps that ended so far, by the rule the report will use.
    fn knee_so_far(&mut self) {
        let rule = KneeRule::DEFAULT;
        let knee = find_knee(&self.steps, &rule);
        self.figures
            .set_knee(knee.as_ref().map(|k| (k.index, k.level.value())));
        let words = match knee {
            Some(k) => format!("Knee so far at {}: {}", k.level.describe(), k.words),
            None if self.steps.len() < 2 => "No knee yet: a knee needs two steps or more".into(),
            None => "No knee so far: every step kept the first one's behaviour".into(),
        };
        self.knee = Some(KneeText {
            words,
            rule: rule.describe(),
        });
    }

    /// The run's report arrived: its steps, its knee and its notices are what the view shows.
    fn finished(&mut self, report: LoadReport) -> LoadEnded {
        self.running = false;
        // The report carries the notices said before the run, with its own.
        self.notices.clear();
        let mut figures = LoadFigures::new(report.model);
        let mut goodput = LoadGoodput::new(report.model);
        for step in &report.steps {
            figures.push(step);
            goodput.push(step);
        }
        self.goodput = goodput;
        if report.steps != self.steps {
            // The steps said as they ended are the report's; read again only if not.
            let in_ms = self.parts.in_ms;
            self.parts = LoadParts::new(report.model);
            self.parts.in_ms = in_ms;
            let mut percentiles = LoadPercentiles::new(self.scale);
            percentiles.every_actual = self.percentiles.every_actual;
            for step in &report.steps {
                self.parts.push(step);
                percentiles.push(step);
            }
            self.percentiles = percentiles;
        }
        let knee = report.knee.and_then(|level| {
            let index = report
                .steps
                .iter()
                .position(|s| s.level().value() == level)?;
            Some((index, level))
        });
        figures.set_knee(knee);
        self.figures = figures;
        let words = match knee {
            Some((index, _)) => format!(
                "Knee at {}: {}",
                report.steps[index].level().describe(),
                report.knee_words
            ),
            None => crate::text::capitalised(&report.knee_words),
        };
        self.knee = Some(KneeText {
            words,
            rule: report.knee_rule.clone(),
        });
        self.steps = report.steps.clone();
        self.target_stats = LoadTargetStats::of(&report);
        let ended = if report.cancelled {
            "stopped"
        } else {
            "finished"
        };
        let said = format!(
            "load run {ended}: {} steps measured",
            crate::text::count(report.steps.len() as u64)
        );
        self.report = Some(report);
        LoadEnded::Finished(said)
    }

    /// The tab, in one vertical scroll: the controls, the run's state, the knee, the curve and
    /// the parts, the table, the percentiles; the command a click asked for. `local` says
    /// whether the target is the built-in instance (the queue's knobs apply there only),
    /// `read_write` whether the query panel's read-write switch is on (a read-write run may read
    /// the target's statistics).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut LoadSettings,
        local: bool,
        read_write: bool,
    ) -> Option<Command> {
        self.draw_check.refresh(settings);
        // The charts' height from the tab's own (inside the scroll, the height is unbounded).
        let chart_height = (ui.available_height() * 0.4).clamp(CHART_MIN_HEIGHT, CHART_MAX_HEIGHT);
        egui::ScrollArea::vertical()
            .id_salt("load-tab")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                self.contents(ui, settings, (local, read_write), chart_height)
            })
            .inner
    }

    fn contents(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut LoadSettings,
        (local, read_write): (bool, bool),
        chart_height: f32,
    ) -> Option<Command> {
        let mut command = None;
        let at = ControlsContext {
            idle: !self.is_running(),
            local,
            read_write,
            draws: &self.draw_check,
        };
        controls::controls_ui(ui, settings, &at);
        controls::queue_ui(ui, &mut settings.queue, local, !self.is_running());
        ui.separator();
        self.state_ui(ui);
        if let Some(error) = &self.error {
            error_ui(ui, error);
        }
        for notice in self
            .notices
            .iter()
            .chain(self.report.iter().flat_map(|r| &r.notices))
        {
            ui.colored_label(theme::WARN, format!("note: {notice}"));
        }
        if self.figures.is_empty() {
            if !self.is_running() && self.error.is_none() {
                ui.label(
                    "No load run yet: set the levels and press Run load (below the query \
                     panel, or Ctrl+Enter).",
                );
            }
            return command;
        }
        if let Some(knee) = &self.knee {
            ui.label(egui::RichText::new(&knee.words).strong())
                .on_hover_text(format!("The rule: {}", knee.rule));
        }
        if self.report.is_some() {
            ui.horizontal(|ui| {
                for format in Format::of(RunKind::Load) {
                    if ui.button(format!("Export {}…", format.name())).clicked() {
                        command = Some(Command::Export(format, RunKind::Load));
                    }
                }
            });
        }
        self.charts(ui, chart_height);
        command
    }

    /// The curve and the parts side by side where the tab is wide enough (both have the level
    /// as x), else one above the other; the steps' table, a read-write run's goodput, then the
    /// percentiles, the whole width.
    fn charts(&mut self, ui: &mut egui::Ui, height: f32) {
        if ui.available_width() >= TWO_COLUMNS_FROM {
            ui.columns(2, |columns| {
                self.figures.plot(&mut columns[0], height);
                self.parts.plot(&mut columns[1], height);
            });
        } else {
            self.figures.plot(ui, height);
            ui.add_space(4.0);
            self.parts.plot(ui, height);
        }
        ui.add_space(4.0);
        self.figures.table(ui);
        self.figures.sentences_ui(ui);
        if !self.goodput.is_empty() {
            ui.add_space(8.0);
            self.goodput.ui(ui, height);
        }
        if let Some(stats) = &self.target_stats {
            ui.add_space(8.0);
            stats.ui(ui);
        }
        ui.add_space(8.0);
        self.percentiles.plot(ui, height);
        ui.add_space(4.0);
    }

    /// Where the run in flight is (its step, that step's progress or drain, or that it is
    /// stopping); or how the last run ended.
    fn state_ui(&self, ui: &mut egui::Ui) {
        if self.is_running() {
            self.progress.state_ui(ui);
        } else if let Some(report) = &self.report {
            let how = if report.cancelled {
                "Stopped: the steps measured before the stop are kept (the last one is partial)"
            } else {
                "Finished"
            };
            ui.label(format!(
                "{how} · {} · {}",
                report.target,
                // A script's statements on one line (its newlines were shown escaped).
                crate::text::printable(&crate::app::labels::one_line(&report.sql, 80))
            ));
        }
    }

    /// The side panel's Run load and Cancel and the run's progress, for the Load tab;
    /// `iterations_running` says whether a run is in flight in Iterations, `empty` whether the
    /// query panel's query is empty; Run load waits for `settings`' draws to be read.
    pub fn run_bar(
        &mut self,
        ui: &mut egui::Ui,
        settings: &LoadSettings,
        iterations_running: bool,
        empty: bool,
    ) -> Option<Command> {
        // The side panel is drawn before the tab: read the draws as they are this frame.
        self.draw_check.refresh(settings);
        let blocked = if iterations_running {
            Some("A run is in flight in Iterations: wait for it or cancel it first")
        } else if empty {
            Some("The query is empty: write one to run")
        } else if self.draw_check.error().is_some() {
            Some("The draw parameters cannot be read: the Load tab says why")
        } else {
            None
        };
        progress::run_bar(ui, self.progress(), blocked, iterations_running)
    }
}

/// Why the run could not start or failed, where the curve would be.
fn error_ui(ui: &mut egui::Ui, why: &str) {
    egui::Frame::group(ui.style())
        .stroke(egui::Stroke::new(1.0, theme::ERROR))
        .show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.colored_label(
                theme::ERROR,
                egui::RichText::new("The load run could not run").strong(),
            );
            ui.label(why);
        });
    ui.add_space(6.0);
}
