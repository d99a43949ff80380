//! The Load tab: a load test of the query panel's first query on the connection panel's target,
//! its controls (the model and its levels, the step's length, the bound on requests in flight,
//! the built-in instance's queue), Run load and Stop; while it runs, each step that ends appears
//! at once as a row and a point of the curve, and the knee found so far is marked; once it ends,
//! the run's own knee and its exports.
//!
//! The engine runs on its own thread; the view reads what it reported once per frame and remakes
//! its figures only when a step ends ([`LoadFigures`]).

use std::time::{Duration, Instant};

use super::command::Command;
use super::export::LoadExportFormat;
use super::load_chart::LoadFigures;
use super::load_settings::{LoadModel, LoadSettings, QueueSettings};
use super::theme::{self, form_row};
use crate::engine::load::{LoadEvent, LoadRun};
use crate::load::{KneeRule, LoadPlan, LoadReport, StepLevel, StepResult, find_knee};

/// How a drained load run ended, when it did.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadEnded {
    /// Its report arrived; what the status bar says of it.
    Finished(String),
    /// It could not start: why.
    Failed(String),
}

/// The step running now.
#[derive(Debug, Clone, Copy)]
struct RunningStep {
    index: usize,
    level: StepLevel,
    began: Instant,
}

/// The knee shown above the curve: its words, and the rule it was found by.
#[derive(Debug, Clone, Default)]
struct KneeText {
    words: String,
    rule: String,
}

/// The Load tab's state: the run in flight, and what the last run measured.
#[derive(Default)]
pub struct LoadView {
    run: Option<LoadRun>,
    stopping: bool,
    target: Option<String>,
    running: Option<RunningStep>,
    planned: usize,
    step_duration: Duration,
    steps: Vec<StepResult>,
    figures: LoadFigures,
    knee: Option<KneeText>,
    report: Option<LoadReport>,
    /// Why the last run could not start, or failed.
    error: Option<String>,
    /// What was adjusted or noticed before the run (a capped rate, a knob ignored).
    notices: Vec<String>,
}

impl LoadView {
    /// Whether a load run is in flight.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
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

    /// A run of `plan` started: what the last run showed goes.
    pub(super) fn started(&mut self, run: LoadRun, plan: &LoadPlan, notices: Vec<String>) {
        *self = LoadView {
            run: Some(run),
            planned: plan.levels.len(),
            step_duration: plan.step_duration,
            figures: LoadFigures::new(plan.model),
            notices,
            ..LoadView::default()
        };
    }

    /// A run could not start: `why` is said above what the last run showed.
    pub(super) fn refused(&mut self, why: String) {
        self.error = Some(why);
    }

    /// Asks the run in flight to stop; the steps it measured stay.
    pub(super) fn stop(&mut self) {
        if let Some(run) = &self.run {
            run.cancel();
            self.stopping = true;
        }
    }

    /// Reads every waiting event (never blocks); returns how the run ended once it has.
    pub(super) fn drain(&mut self) -> Option<LoadEnded> {
        while let Some(event) = self.run.as_ref()?.try_next() {
            match event {
                LoadEvent::Connected(target) => self.target = Some(target),
                LoadEvent::StepStarted { index, level } => {
                    self.running = Some(RunningStep {
                        index,
                        level,
                        began: Instant::now(),
                    });
                }
                LoadEvent::StepDone(step) => {
                    self.running = None;
                    self.figures.push(&step);
                    self.steps.push(*step);
                    self.knee_so_far();
                }
                LoadEvent::Finished(report) => return Some(self.finished(*report)),
                LoadEvent::Failed(error) => {
                    let why = error.to_string();
                    self.run = None;
                    self.running = None;
                    self.error = Some(why.clone());
                    return Some(LoadEnded::Failed(why));
                }
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
        self.run = None;
        self.running = None;
        // The report carries the notices said before the run, with its own.
        self.notices.clear();
        let mut figures = LoadFigures::new(report.model);
        for step in &report.steps {
            figures.push(step);
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

    /// The tab: the controls, the run's state, the knee, the curve and the table; the command a
    /// click asked for. `local` says whether the target is the built-in instance (the queue's
    /// knobs apply there only).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut LoadSettings,
        local: bool,
    ) -> Option<Command> {
        let mut command = self.controls(ui, settings);
        queue_ui(ui, &mut settings.queue, local, !self.is_running());
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
                ui.label("No load run yet: set the levels and press Run load.");
            }
            return command;
        }
        if let Some(knee) = &self.knee {
            ui.label(egui::RichText::new(&knee.words).strong())
                .on_hover_text(format!("The rule: {}", knee.rule));
        }
        if self.report.is_some() {
            ui.horizontal(|ui| {
                for format in LoadExportFormat::ALL {
                    if ui.button(format.label()).clicked() {
                        command = Some(Command::ExportLoad(format));
                    }
                }
            });
        }
        let height = (ui.available_height() * 0.5).clamp(160.0, 360.0);
        self.figures.plot(ui, height);
        ui.add_space(4.0);
        self.figures.table(ui);
        command
    }

    /// The model, its levels, the step, the bound in flight, and Run load or Stop.
    fn controls(&self, ui: &mut egui::Ui, settings: &mut LoadSettings) -> Option<Command> {
        let mut command = None;
        let idle = !self.is_running();
        ui.add_enabled_ui(idle, |ui| {
            egui::Grid::new("load-controls")
                .num_columns(2)
                .spacing([8.0, 4.0])
                .show(ui, |ui| {
                    ui.label("Model");
                    ui.horizontal(|ui| {
                        ui.radio_value(&mut settings.model, LoadModel::Open, "Open (rates)")
                            .on_hover_text(
                                "Requests arrive at a steady rate whatever the answers do \
                                 (wrk2, k6's arrival-rate executors)",
                            );
                        ui.radio_value(
                            &mut settings.model,
                            LoadModel::Closed,
                            "Closed (concurrency)",
                        )
                        .on_hover_text(
                            "A fixed number of clients, each starting its next request when its \
                             last one ended",
                        );
                    });
                    ui.end_row();
                    match settings.model {
                        LoadModel::Open => form_row(
                            ui,
                            "Rates",
                            Some("Requests a second, a step each: 50,100,200"),
                            egui::TextEdit::singleline(&mut settings.rates).desired_width(220.0),
                        ),
                        LoadModel::Closed => form_row(
                            ui,
                            "Concurrency",
                            Some("Clients, a step each: 1,2,4,8"),
                            egui::TextEdit::singleline(&mut settings.concurrencies)
                                .desired_width(220.0),
                        ),
                    };
                    form_row(
                        ui,
                        "Step duration",
                        Some("How long each step generates requests"),
                        egui::DragValue::new(&mut settings.step_seconds)
                            .range(0.1..=86_400.0)
                            .speed(0.1)
                            .suffix(" s"),
                    );
                    if settings.model == LoadModel::Open {
                        form_row(
                            ui,
                            "Max in flight",
                            Some(
                                "Requests in flight at most: a start past it waits (counted \
                                 late), one still waiting when its step ends is dropped",
                            ),
                            egui::DragValue::new(&mut settings.max_in_flight)
                                .range(1..=crate::load::MAX_IN_FLIGHT),
                        );
                    }
                });
        });
        ui.horizontal(|ui| {
            if idle {
                if ui
                    .button(egui::RichText::new("Run load").strong())
                    .on_hover_text("Runs the query panel's first query at each level in turn")
                    .clicked()
                {
                    command = Some(Command::RunLoad);
                }
            } else if ui
                .add_enabled(!self.stopping, egui::Button::new("Stop"))
                .on_hover_text("Stops generating; the steps measured so far are kept")
                .clicked()
            {
                command = Some(Command::StopLoad);
            }
            ui.label(
                egui::RichText::new("the query panel's first query, on the connection's target")
                    .small()
                    .color(theme::MUTED),
            );
        });
        command
    }

    /// Where the run in flight is: its step, that step's progress, or that it is stopping; or how
    /// the last run ended.
    fn state_ui(&self, ui: &mut egui::Ui) {
        if self.is_running() {
            let target = self.target.as_deref().unwrap_or("connecting");
            let (said, fraction) = match self.running {
                Some(step) => {
                    let elapsed = step.began.elapsed();
                    let length = self.step_duration.as_secs_f64().max(1e-9);
                    let within = (elapsed.as_secs_f64() / length).min(1.0);
                    let draining = if elapsed > self.step_duration {
                        " · waiting for the requests in flight"
                    } else {
                        ""
                    };
                    (
                        format!(
                            "step {} of {}: {} · {:.1} s of {:.1} s{draining}",
                            step.index + 1,
                            self.planned,
                            step.level.describe(),
                            elapsed.as_secs_f64().min(length),
                            length
                        ),
                        (step.index as f64 + within) / self.planned.max(1) as f64,
                    )
                }
                None => (
                    format!("{} of {} steps done", self.steps.len(), self.planned),
                    self.steps.len() as f64 / self.planned.max(1) as f64,
                ),
            };
            ui.horizontal(|ui| {
                ui.spinner();
                if self.stopping {
                    ui.colored_label(
                        theme::WARN,
                        "stopping: the step in flight is being reported",
                    );
                } else {
                    ui.label(format!("{said} · {target}"));
                }
            });
            ui.add(egui::ProgressBar::new(fraction as f32).desired_height(6.0));
        } else if let Some(report) = &self.report {
            let how = if report.cancelled {
                "Stopped: the steps measured before the stop are kept (the last one is partial)"
            } else {
                "Finished"
            };
            ui.label(format!(
                "{how} · {} · {}",
                report.target,
                crate::text::excerpt(&report.sql, 80)
            ));
        }
    }
}

/// The built-in instance's queue: query threads, their service time, periodic freezes.
fn queue_ui(ui: &mut egui::Ui, queue: &mut QueueSettings, local: bool, idle: bool) {
    egui::CollapsingHeader::new("Built-in instance's queue")
        .default_open(queue.is_set())
        .show(ui, |ui| {
            if !local {
                ui.label(
                    egui::RichText::new(
                        "These shape the built-in instance only: choose Local in the \
                         connection panel to use them",
                    )
                    .small()
                    .color(theme::MUTED),
                );
            }
            ui.add_enabled_ui(local && idle, |ui| {
                egui::Grid::new("load-queue")
                    .num_columns(2)
                    .spacing([8.0, 4.0])
                    .show(ui, |ui| {
                        form_row(
                            ui,
                            "Query threads",
                            Some(
                                "A query waits, first come first served, for one of N threads \
                                 (0: no queue); N threads of D ms serve at most N / D a second",
                            ),
                            egui::DragValue::new(&mut queue.query_threads)
                                .range(0..=crate::server::queue::MAX_QUERY_THREADS),
                        );
                        form_row(
                            ui,
                            "Service time",
                            Some("How long a query thread holds each query"),
                            egui::DragValue::new(&mut queue.service_ms)
                                .range(0..=86_400_000)
                                .suffix(" ms"),
                        );
                        form_row(
                            ui,
                            "Freeze every",
                            Some("Every S ms (the first S after the start) all answers pause"),
                            egui::DragValue::new(&mut queue.freeze_every_ms)
                                .range(0..=86_400_000)
                                .suffix(" ms"),
                        );
                        form_row(
                            ui,
                            "Freeze for",
                            Some("How long each pause lasts (at most the period)"),
                            egui::DragValue::new(&mut queue.freeze_ms)
                                .range(0..=86_400_000)
                                .suffix(" ms"),
                        );
                    });
            });
        });
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
