//! Where a load run in flight is, as the window says it: the step running and how far it got,
//! the drain once the step stops generating (the engine then waits, up to the plan's drain of
//! 30 s, for its requests still in flight; no event says so, so it is read off the clock: the
//! step has run its length and has not ended), the report awaited after the last step (or the
//! wait for the target's statistics interval, in the run's own words), a stop being reported;
//! and the side panel's Run load and Cancel, which on the Load tab start and
//! stop a load run rather than an Iterations run.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::app::command::Command;
use crate::app::theme;
use crate::engine::load::{InFlightCount, WaitNotice};
use crate::load::{LoadSteps, StepLevel};
use crate::text;

/// The words a run hands the window when it starts waiting for the target's statistics
/// interval: set once from the run's thread, read each frame without a lock.
#[derive(Debug, Clone, Default)]
pub struct WaitWords(Arc<OnceLock<String>>);

impl WaitWords {
    /// The notice the run's ask tells: it keeps the words and asks `ctx` for a frame.
    pub fn notice(&self, ctx: &egui::Context) -> WaitNotice {
        let (words, ctx) = (Arc::clone(&self.0), ctx.clone());
        WaitNotice(Arc::new(move |said: &str| {
            let _ = words.set(said.to_owned());
            ctx.request_repaint();
        }))
    }

    /// What the run said, once it waits.
    pub fn get(&self) -> Option<&str> {
        self.0.get().map(String::as_str)
    }
}

/// The step running now.
#[derive(Debug, Clone, Copy)]
struct RunningStep {
    index: usize,
    level: StepLevel,
    began: Instant,
}

/// What the run in flight has said of its steps so far.
#[derive(Debug, Clone, Default)]
pub struct LoadProgress {
    target: Option<String>,
    running: Option<RunningStep>,
    planned: usize,
    step_duration: Duration,
    drain: Duration,
    done: usize,
    stopping: bool,
    /// The run's requests in flight, read while a step drains.
    in_flight: Option<InFlightCount>,
    /// What the run said when it began waiting for the target's statistics.
    waiting: WaitWords,
}

/// Where the run is, in words and as a share of the whole run; `drain` the drain's own share
/// when the step is draining.
#[derive(Debug, Clone, PartialEq)]
pub struct Phase {
    /// What is happening, for people.
    pub words: String,
    /// How far the whole run is, 0 to 1.
    pub fraction: f32,
    /// How far the drain is toward its limit, 0 to 1, while a step drains.
    pub drain: Option<f32>,
}

impl LoadProgress {
    /// A run of `plan` starting.
    pub fn new(plan: &LoadSteps) -> Self {
        LoadProgress {
            planned: plan.levels.len(),
            step_duration: plan.step_duration,
            drain: plan.drain,
            ..LoadProgress::default()
        }
    }

    /// Reads the run's requests in flight from `count` (while a step drains, the words say how
    /// many are left).
    pub fn counting(mut self, count: InFlightCount) -> Self {
        self.in_flight = Some(count);
        self
    }

    /// Says what `words` hold once the run waits for the target's statistics interval.
    pub fn waiting_on(mut self, words: WaitWords) -> Self {
        self.waiting = words;
        self
    }

    /// What the run said when it began waiting for the target's statistics, once it has.
    pub fn waiting(&self) -> Option<&str> {
        self.waiting.get()
    }

    /// The session exists on `target`.
    pub fn connected(&mut self, target: String) {
        self.target = Some(target);
    }

    /// Step `index` began at `level`.
    pub fn step_started(&mut self, index: usize, level: StepLevel) {
        self.running = Some(RunningStep {
            index,
            level,
            began: Instant::now(),
        });
    }

    /// The step running ended.
    pub fn step_done(&mut self) {
        self.running = None;
        self.done += 1;
    }

    /// A stop was asked for.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// Whether a stop was asked for.
    pub fn stopping(&self) -> bool {
        self.stopping
    }

    /// Where the run is `now`.
    pub fn phase(&self, now: Instant) -> Phase {
        self.phase_with(now, self.in_flight.as_ref().map(InFlightCount::get))
    }

    /// Where the run is `now`, with `in_flight` requests in flight when that is known.
    fn phase_with(&self, now: Instant, in_flight: Option<u32>) -> Phase {
        let planned = self.planned.max(1) as f32;
        let Some(step) = self.running else {
            let words = if self.target.is_none() {
                "connecting…".to_owned()
            } else if let Some(words) = self.waiting.get() {
                words.to_owned()
            } else if self.done >= self.planned {
                "the last step ended: closing the session and writing the report…".to_owned()
            } else {
                format!("{} of {} steps done", self.done, self.planned)
            };
            return Phase {
                words,
                fraction: self.done as f32 / planned,
                drain: None,
            };
        };
        let elapsed = now.saturating_duration_since(step.began);
        let length = self.step_duration.as_secs_f64().max(1e-9);
        let within = (elapsed.as_secs_f64() / length).min(1.0) as f32;
        let head = format!(
            "step {} of {}: {}",
            step.index + 1,
            self.planned,
            step.level.describe()
        );
        let fraction = (step.index as f32 + within) / planned;
        match elapsed.checked_sub(self.step_duration) {
            Some(draining) if !draining.is_zero() => {
                let limit = self.drain.as_secs_f64().max(1e-9);
                let left = match in_flight {
                    Some(1) => "the 1 request".to_owned(),
                    Some(n) => format!("the {} requests", text::count(u64::from(n))),
                    None => "the requests".to_owned(),
                };
                Phase {
                    words: format!(
                        "{head} · generated {length:.1} s · draining {left} still in flight: \
                         {:.1} s (up to {} s)",
                        draining.as_secs_f64(),
                        self.drain.as_secs()
                    ),
                    fraction,
                    drain: Some((draining.as_secs_f64() / limit).min(1.0) as f32),
                }
            }
            _ => Phase {
                words: format!(
                    "{head} · {:.1} s of {length:.1} s",
                    elapsed.as_secs_f64().min(length)
                ),
                fraction,
                drain: None,
            },
        }
    }

    /// The tab's line on the run in flight: a spinner, where it is and its target, the run's
    /// progress, and the drain's while a step drains.
    pub fn state_ui(&self, ui: &mut egui::Ui) {
        let phase = self.phase(Instant::now());
        let target = self.target.as_deref().unwrap_or("connecting");
        ui.horizontal_wrapped(|ui| {
            ui.spinner();
            if self.stopping && self.waiting.get().is_some() {
                ui.colored_label(
                    theme::WARN,
                    "stopping: the wait for the target's statistics ends; the steps measured are \
                     kept",
                );
            } else if self.stopping {
                ui.colored_label(
                    theme::WARN,
                    "stopping: the requests in flight are abandoned and the steps measured \
                     reported",
                );
            } else if phase.drain.is_some() {
                ui.colored_label(theme::WARN, format!("{} · {target}", phase.words));
            } else {
                ui.label(format!("{} · {target}", phase.words));
            }
        });
        ui.add(egui::ProgressBar::new(phase.fraction).desired_height(6.0));
        if let Some(drain) = phase.drain {
            ui.add(
                egui::ProgressBar::new(drain)
                    .desired_height(4.0)
                    .fill(theme::WARN),
            )
            .on_hover_text(
                "The step stopped generating; its requests still in flight may take up to the \
                 drain to end, and are counted unfinished past it",
            );
        }
    }
}

/// The side panel's Run load and Cancel on the Load tab, and a line on the run in flight;
/// `progress` while one is in flight, `blocked` why none can start (a run in Iterations, an
/// empty query), `other_run` whether a run is in flight in Iterations (Cancel cancels it). The
/// command a click asked for.
pub fn run_bar(
    ui: &mut egui::Ui,
    progress: Option<&LoadProgress>,
    blocked: Option<&str>,
    other_run: bool,
) -> Option<Command> {
    let mut command = None;
    ui.add_space(4.0);
    ui.horizontal(|ui| {
        let ready = progress.is_none() && blocked.is_none();
        let button = theme::primary_button("Run load", ready, egui::vec2(96.0, 28.0));
        let run = ui
            .add_enabled(ready, button)
            .on_hover_text(
                "Runs the query panel's first query (its read-write transaction when the \
                 Read-write switch is on) at each of the Load tab's levels in turn (Ctrl+Enter)",
            )
            .on_disabled_hover_text(match (progress, blocked) {
                (Some(_), _) => "A load run is in flight: Cancel it first",
                (None, Some(why)) => why,
                (None, None) => "",
            });
        if run.clicked() {
            command = Some(Command::RunLoad);
        }
        // With no load run, Cancel still reaches a run in flight in Iterations (what blocks).
        let (can_cancel, asks) = match progress {
            Some(p) => (!p.stopping(), Command::StopLoad),
            None => (other_run, Command::Cancel),
        };
        let cancel = ui
            .add_enabled(can_cancel, egui::Button::new("Cancel"))
            .on_hover_text(if progress.is_some() {
                "Stops the load run; the steps measured so far are kept"
            } else {
                "Cancels the run in flight in Iterations"
            });
        if cancel.clicked() {
            command = Some(asks);
        }
    });
    match progress {
        Some(p) => {
            let phase = p.phase(Instant::now());
            let text = match phase.drain {
                Some(_) => "draining the requests in flight…".to_owned(),
                None => phase.words.clone(),
            };
            ui.add(
                egui::ProgressBar::new(phase.fraction)
                    .text(egui::RichText::new(text).small())
                    .animate(false),
            );
        }
        None => {
            let said = blocked.unwrap_or("a load run of the query panel's first query");
            ui.label(egui::RichText::new(said).small().color(theme::MUTED));
        }
    }
    ui.add_space(2.0);
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Model;

    fn plan() -> LoadSteps {
        LoadSteps {
            model: Model::Open,
            levels: vec![StepLevel::Rate(10.0), StepLevel::Rate(20.0)],
            step_duration: Duration::from_secs(2),
            max_in_flight: 100,
            drain: Duration::from_secs(30),
        }
    }

    #[test]
    fn a_step_past_its_length_is_draining_and_after_the_last_the_report_is_awaited() {
        let mut p = LoadProgress::new(&plan());
        assert_eq!(p.phase(Instant::now()).words, "connecting…");
        p.connected("local".into());
        p.step_started(1, StepLevel::Rate(20.0));
        let began = p.running.expect("running").began;
        let generating = p.phase(began + Duration::from_secs(1));
        assert_eq!(generating.drain, None);
        assert!((generating.fraction - 0.75).abs() < 1e-6);
        assert!(
            generating
                .words
                .starts_with("step 2 of 2: 20 req/s · 1.0 s of 2.0 s")
        );
        let draining = p.phase(began + Duration::from_millis(5_000));
        assert!(
            draining
                .words
                .contains("draining the requests still in flight: 3.0 s (up to 30 s)"),
            "{}",
            draining.words
        );
        assert_eq!(draining.drain, Some(0.1));
        let counted = p.phase_with(began + Duration::from_millis(5_000), Some(1_234));
        assert!(
            counted
                .words
                .contains("draining the 1,234 requests still in flight: 3.0 s (up to 30 s)"),
            "{}",
            counted.words
        );
        let one = p.phase_with(began + Duration::from_millis(5_000), Some(1));
        assert!(
            one.words.contains("draining the 1 request still"),
            "{}",
            one.words
        );
        assert!((draining.fraction - 1.0).abs() < 1e-6);
        p.step_done();
        p.step_done();
        let after = p.phase(Instant::now());
        assert!(
            after.words.starts_with("the last step ended"),
            "{}",
            after.words
        );
        assert_eq!(after.fraction, 1.0);
        let words = WaitWords::default();
        let waiting = LoadProgress {
            waiting: words.clone(),
            ..p
        };
        (words.notice(&egui::Context::default()).0)("waiting for the interval");
        assert_eq!(
            waiting.phase(Instant::now()).words,
            "waiting for the interval"
        );
    }
}
