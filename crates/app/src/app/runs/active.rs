//! A run in flight: the engine handle, and what its events said so far (progress, the iterations
//! that ended, each variant's last iteration's details). The app drains it once per frame; when
//! the run ends, its records are moved into its reports, never copied.

use std::time::Instant;

use crate::engine::{
    Engine, EngineEvent, IterationDetails, Job, Notifier, ProfileSpec, QueryMode, ReportCollector,
    SubjectSpec, Target,
};
use crate::report::{IterationRecord, RunReport};

use super::cpu::WindowMeter;

/// Where a run is, for the progress bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// The 0-based step of the schedule streaming now; `None` while connecting.
    pub iteration: Option<u32>,
    /// Iterations in all, every variant's warm-ups included.
    pub of: u32,
    /// The variant streaming now, when the run has several.
    pub variant: Option<usize>,
    /// Rows streamed so far in this iteration.
    pub rows: u64,
    /// Rows per second in this iteration so far.
    pub rows_per_s: Option<f64>,
    /// Megabytes (10^6 bytes) per second in this iteration so far; before its first message, those of
    /// the last iteration that ended.
    pub mb_per_s: Option<f64>,
    /// Milliseconds since the iteration streaming now started.
    pub elapsed_ms: f64,
    /// Wire bytes streamed so far in this iteration.
    pub wire_bytes: u64,
}

impl Progress {
    /// The fraction of the run done, iterations ended counting whole.
    pub fn fraction(&self) -> f32 {
        match self.iteration {
            Some(i) if self.of > 0 => i as f32 / self.of as f32,
            _ => 0.0,
        }
    }
}

/// How a drained run ended, when it did.
#[derive(Debug)]
pub enum Ended {
    /// The engine finished; one report per variant holds its iterations (possibly none, if
    /// cancelled while connecting), with each variant's last details when they came.
    Finished(Vec<RunReport>, Vec<IterationDetails>),
    /// The run could not start: why, and whether the target was at fault (the connection or
    /// the session, not the query panel's input).
    Failed(String, bool),
}

/// A run in flight.
pub struct ActiveRun {
    engine: Engine,
    labels: Vec<String>,
    mode: QueryMode,
    of: u32,
    iteration: Option<u32>,
    variant: usize,
    /// Rows and message bytes of the iteration streaming now, as its last progress event said.
    rows: u64,
    wire_bytes: u64,
    iteration_started: Instant,
    /// Each variant's records so far: the app's only copy until the run ends.
    records: ReportCollector,
    details: Vec<IterationDetails>,
    target: Option<String>,
    /// MB/s of the last iteration that ended.
    mb_per_s: Option<f64>,
    cancelled: bool,
    /// The window's own CPU from the run's start: each report keeps it when the run ends.
    window: Option<WindowMeter>,
}

impl ActiveRun {
    /// Starts `spec` on `target`; `notify` asks for a repaint whenever an event is waiting.
    pub fn start(target: Target, spec: ProfileSpec, notify: Notifier) -> std::io::Result<Self> {
        let labels: Vec<String> = spec.variants.iter().map(|v| v.label.clone()).collect();
        let per_variant = spec.warmup + spec.iterations;
        let of = per_variant.saturating_mul(u32::try_from(labels.len()).unwrap_or(u32::MAX));
        let mode = spec.variants.first().map(|v| v.mode).unwrap_or_default();
        let engine = Engine::start(Job::Profile(target, spec), notify)?;
        Ok(Self::of_engine(engine, labels, mode, of))
    }

    /// Starts a subject's profile (`spanprof client`); `notify` as for [`ActiveRun::start`].
    pub fn start_subject(spec: SubjectSpec, notify: Notifier) -> std::io::Result<Self> {
        let labels = spec.labels();
        let per_run = spec.warmup + spec.iterations;
        let of = per_run.saturating_mul(u32::try_from(labels.len()).unwrap_or(u32::MAX));
        let engine = Engine::start(Job::Subject(spec), notify)?;
        Ok(Self::of_engine(engine, labels, QueryMode::Normal, of))
    }

    fn of_engine(engine: Engine, labels: Vec<String>, mode: QueryMode, of: u32) -> Self {
        ActiveRun {
            engine,
            labels,
            mode,
            of,
            iteration: None,
            variant: 0,
            rows: 0,
            wire_bytes: 0,
            iteration_started: Instant::now(),
            records: ReportCollector::default(),
            details: Vec::new(),
            target: None,
            mb_per_s: None,
            cancelled: false,
            window: WindowMeter::start(),
        }
    }

    /// Reads every waiting event (never blocks); returns how the run ended once it has, and each
    /// failed iteration's message through `on_error`.
    pub fn drain(&mut self, mut on_error: impl FnMut(String)) -> Option<Ended> {
        while let Some(event) = self.engine.try_next() {
            let Some(event) = event.into_profile() else {
                continue;
            };
            match event {
                EngineEvent::Connected { target, .. } => {
                    self.target = Some(target);
                    self.start_iteration(0);
                }
                EngineEvent::Progress {
                    step,
                    variant,
                    rows,
                    wire_bytes,
                    ..
                } => {
                    if self.iteration != Some(step) {
                        self.start_iteration(step);
                    }
                    self.variant = variant;
                    self.rows = rows;
                    self.wire_bytes = wire_bytes;
                }
                EngineEvent::Iteration {
                    variant,
                    mut record,
                } => {
                    // A query cancelled while it streamed ends with no answer's counts: what had
                    // arrived by its last progress report is kept, so its bar says it.
                    if record.outcome.is_cancelled()
                        && record.answer.rows == 0
                        && self.iteration == Some(record.seq.unwrap_or(record.iteration))
                    {
                        record.answer.rows = self.rows;
                        record.answer.wire_bytes = self.wire_bytes;
                    }
                    if let Some(error) = record.error()
                        && !(self.cancelled && record.outcome.is_cancelled())
                    {
                        on_error(format!("{} #{}: {error}", record.run, record.iteration));
                    }
                    if record.total_ms > 0.0 && record.answer.wire_bytes > 0 {
                        self.mb_per_s =
                            Some(record.answer.wire_bytes as f64 / record.total_ms / 1e3);
                    }
                    let next = record.seq.map_or(record.iteration, |s| s) + 1;
                    self.start_iteration(next);
                    self.records.push(variant, *record);
                }
                EngineEvent::Details(details) => self.details.push(*details),
                EngineEvent::Finished(heads) => {
                    let mut reports = self.records.finish(heads);
                    let window_cpu = self.window.as_ref().and_then(WindowMeter::read);
                    for report in &mut reports {
                        report.config.window_cpu = window_cpu;
                    }
                    return Some(Ended::Finished(reports, std::mem::take(&mut self.details)));
                }
                EngineEvent::Failed(error) => {
                    let target = matches!(
                        error,
                        crate::engine::EngineError::Client(_)
                            | crate::engine::EngineError::StartLocal(_)
                    );
                    return Some(Ended::Failed(error.to_string(), target));
                }
            }
        }
        None
    }

    fn start_iteration(&mut self, iteration: u32) {
        self.iteration = Some(iteration.min(self.of.saturating_sub(1)));
        self.rows = 0;
        self.wire_bytes = 0;
        self.iteration_started = Instant::now();
    }

    /// The query mode it runs in.
    pub fn mode(&self) -> QueryMode {
        self.mode
    }

    /// Asks the engine to stop; the iteration streaming now is abandoned at once.
    pub fn cancel(&mut self) {
        self.cancelled = true;
        self.engine.cancel();
    }

    /// The run's label (its first variant's).
    pub fn label(&self) -> &str {
        self.labels.first().map_or("", String::as_str)
    }

    /// Every variant's label, in order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The target, once connected.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }

    /// The iterations of the variant at `variant` (its place among [`ActiveRun::labels`]) that
    /// ended so far, in the order they ended.
    pub fn records(&self, variant: usize) -> &[IterationRecord] {
        self.records.records(variant)
    }

    /// Whether every iteration it was to run has ended (its end is near: the sessions close).
    pub fn all_ended(&self) -> bool {
        let ended: usize = (0..self.labels.len())
            .map(|v| self.records.records(v).len())
            .sum();
        ended >= self.of as usize
    }

    /// Where the run is.
    pub fn progress(&self) -> Progress {
        let elapsed = self.iteration_started.elapsed().as_secs_f64();
        Progress {
            iteration: self.iteration,
            of: self.of,
            variant: (self.labels.len() > 1 && self.iteration.is_some()).then_some(self.variant),
            rows: self.rows,
            rows_per_s: (self.iteration.is_some() && elapsed > 0.05 && self.rows > 0)
                .then(|| self.rows as f64 / elapsed),
            mb_per_s: if self.iteration.is_some() && elapsed > 0.05 && self.wire_bytes > 0 {
                Some(self.wire_bytes as f64 / elapsed / 1e6)
            } else {
                self.mb_per_s
            },
            elapsed_ms: elapsed * 1e3,
            wire_bytes: self.wire_bytes,
        }
    }
}
