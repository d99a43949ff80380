//! A run's life as the app sees it, of any kind, the runs' controller (`runs::RunController`)
//! holding the one in flight: starting one from the panels (the query's variants on the
//! connection panel's target, a client program on the local instance, or a load run of the query
//! panel's first query with the Load tab's plan and draws, a read-write one tagged when it reads
//! the target's own statistics after it, refused in words when it cannot run), reading
//! what the engine reported each frame, and what its end does: the runs join the list, the status
//! file says how it went (`running`, then `finished LABEL ok=N other=M` or `failed MESSAGE`; a
//! load run's N the requests that ended ok and M the others), the frame times are written, a run
//! of several variants opens the comparison, and a finished load run is saved in the history.
//!
//! While a run is measured the window draws at most every [`RUN_REPAINT`] (input still repaints
//! at once): its painting shares the process, and the cores, with the local instance.

use std::sync::Arc;
use std::time::Duration;

use super::SpanprofApp;
use super::connection::{ConnectionSettings, TargetKind, repaint_notifier};
use super::load::{LoadEnded, WaitWords};
use super::runs::{ActiveRun, Drained, Ended};
use super::settings::Tab;
use super::status_file::RunState;
use crate::engine::load::{DEFAULT_STATS_WAIT, LoadSpec, ServerStatsAsk, set_stats_interval};
use crate::engine::{Engine, IterationDetails, Job, Notifier, Target};
use crate::report::{RunId, RunReport, Status};

/// How often the window draws while a run is measured and nothing is pressed: the progress and
/// the partial bars move four times a second, and the CPU is left to the run.
pub(super) const RUN_REPAINT: Duration = Duration::from_millis(250);

/// The notifier a run's engine is given: a repaint of `ctx` within [`RUN_REPAINT`], never one
/// per event (a run sends several a millisecond as rows stream).
pub(super) fn run_notifier(ctx: &egui::Context) -> Notifier {
    let ctx = ctx.clone();
    Arc::new(move || ctx.request_repaint_after(RUN_REPAINT))
}

impl SpanprofApp {
    /// Starts a run of what the panels describe, unless one is in flight; says why it cannot.
    pub(super) fn start_run(&mut self) {
        if self.runs.is_running() {
            return;
        }
        if self.runs.is_loading() {
            self.notice =
                Some("a load run is in flight (Load tab): stop it first, or wait for it".into());
            return;
        }
        let query = &self.settings.query;
        if !query.subject && query.variants.iter().all(|v| v.sql.trim().is_empty()) {
            // Said, not logged: there is nothing wrong to keep.
            self.notice = Some("nothing to run: the query is empty".into());
            return;
        }
        let notify = run_notifier(&self.ctx);
        let started = if self.settings.query.subject {
            self.start_subject(notify)
        } else {
            self.start_query(notify)
        };
        match started {
            Ok(run) => {
                let sql = self.settings.query.first_sql().to_owned();
                self.settings.query.remember(&sql);
                self.runs.begin(run);
                self.notice = None;
                self.failed_run = None;
                self.write_status(RunState::Running);
            }
            Err(message) => self.error(message),
        }
    }

    /// The query panel's variants on the connection panel's target.
    fn start_query(&self, notify: Notifier) -> Result<ActiveRun, String> {
        let (target, database) = self.settings.connection.target()?;
        let target = self.runs.on_kept_instance(target);
        let label = self.runs.next_label(
            self.settings.query.run_label(),
            self.settings.query.first_sql(),
            chrono::Local::now(),
        );
        let mut spec = self.settings.query.spec(label, database)?;
        spec.timeouts = self.settings.connection.timeouts.timeouts()?;
        spec.headers = self.settings.connection.headers;
        ActiveRun::start(target, spec, notify).map_err(|e| format!("cannot start the engine: {e}"))
    }

    /// A subject's run: on the local instance the connection panel describes (its rows and
    /// knobs), the only kind a program can be profiled against.
    fn start_subject(&self, notify: Notifier) -> Result<ActiveRun, String> {
        let server = match self.settings.connection.target()? {
            (Target::Local(server), _) => server,
            _ => {
                return Err(
                    "a client program runs against the local instance: choose Local \
                            in the connection panel"
                        .into(),
                );
            }
        };
        let mut spec = self.settings.query.subject_spec(String::new(), server)?;
        // The program's run is named as the user named it, else by the program; a name already
        // taken gets a number, as a query's run does.
        let wanted = match self.settings.query.run_label() {
            "" => spec.command.short_name(),
            label => label.to_owned(),
        };
        spec.label = self.runs.next_label(&wanted, "", chrono::Local::now());
        spec.timeouts = self.settings.connection.timeouts.timeouts()?;
        ActiveRun::start_subject(spec, notify).map_err(|e| format!("cannot start the engine: {e}"))
    }

    /// Reads what the run in flight reported since the last frame; each failed iteration's
    /// message goes to the log (the last one to the status bar), a load run's events to the Load
    /// tab, and an end is acted on.
    pub(super) fn drain_run(&mut self) {
        let mut errors = Vec::new();
        let Drained { ended, load, saved } = self.runs.drain(&mut errors);
        for event in load {
            if let Some(ended) = self.load.apply(event) {
                self.load_ended(ended);
            }
        }
        if saved {
            // A run of this launch is in the history now: the History view shows it.
            self.history_view.refresh();
        }
        if let Some(last) = errors.last() {
            self.notice = Some(last.clone());
        }
        for e in errors {
            self.log.push(e);
        }
        match ended {
            None => {}
            Some(Ended::Failed(message, target)) => {
                self.finish_frames();
                self.runs.end();
                self.write_status(RunState::Failed(message.clone()));
                let message = with_next_step(message, target, &self.settings.connection);
                if target {
                    // The fields at fault are marked until they change; the words are said
                    // once, in the central area.
                    self.connection.run_failed(&self.settings.connection);
                }
                // Where the eye is: the central area says it, not the previous run's figures;
                // the status bar points there, the log keeps the whole message.
                self.failed_run = Some(message.clone());
                self.runs.list_mut().show(None);
                self.log.push(message);
                self.notice = Some("the run could not start".into());
            }
            Some(Ended::Finished(reports, details)) => {
                self.finish_frames();
                if let Some((id, _)) = self.runs.end() {
                    self.finished(id, reports, details);
                }
            }
        }
    }

    /// What each frame does after the drain: the records kept to what is in view, the memory
    /// a finished run freed handed back to the system (a frame is asked for when that is due),
    /// and a refusal the SQL editor no longer holds no longer said.
    pub(super) fn after_drain(&mut self) {
        self.keep_in_view();
        if let Some(wait) = self.runs.trim_when_due() {
            self.ctx.request_repaint_after(wait);
        }
        self.forget_fixed_refusal();
    }

    /// Once the editor no longer holds the query the server refused (the newest run stopped on
    /// it), the status bar stops saying that error, and the Iterations tab stops pointing at a
    /// message beside the editor that is gone.
    fn forget_fixed_refusal(&mut self) {
        let editor = self.settings.query.first_sql();
        let refused = self
            .runs
            .entries()
            .last()
            .filter(|r| r.report.stopped.is_some())
            .map(|r| (r.report.config.label.as_str(), r.report.config.sql.as_str()));
        let edited = refused.is_some_and(|(_, sql)| sql != editor);
        self.iterations.set_query_edited(edited);
        if let (true, Some((label, _)), Some(notice)) = (edited, refused, &self.notice)
            && notice.starts_with(&format!("{label} #"))
        {
            self.notice = None;
        }
    }

    /// Keeps in memory the records of the runs on screen (the one shown, the Iterations tab's,
    /// and on the Compare tab those picked) and of the newest, the others' left to the history:
    /// the window's memory is bounded by what it shows, not by how many runs it made.
    pub(super) fn keep_in_view(&mut self) {
        let mut in_view: Vec<RunId> = self.runs.list().shown_id().into_iter().collect();
        in_view.extend(self.iterations.run());
        if self.settings.tab == Tab::Compare {
            in_view.extend(self.compare.picked().iter().copied());
        }
        self.runs.keep_in_view(&in_view);
    }

    /// A run that ended: one report per variant joins the list with its own last details; a run
    /// of several variants (or a sweep) is shown in the Compare tab; the first keeps `run`, the
    /// id it had in flight.
    fn finished(&mut self, run: RunId, reports: Vec<RunReport>, details: Vec<IterationDetails>) {
        let iterations = || reports.iter().flat_map(|r| &r.iterations);
        let ok = iterations().filter(|i| i.status() == Status::Ok).count();
        let other = iterations().count() - ok;
        let first = reports
            .first()
            .map(|r| r.config.label.clone())
            .unwrap_or_default();
        self.write_status(RunState::Finished {
            label: first.clone(),
            ok,
            other,
        });
        if iterations().next().is_none() {
            self.notice = Some(format!("{first} was cancelled before it connected"));
            return;
        }
        // Saved under the database each report's configuration names, the one the run was
        // started on: what the panel says now plays no part.
        let saving = self.runs.history().is_some().then(|| reports.clone());
        let several = reports.len() > 1;
        let ids = self.runs.add_live(run, reports, details);
        if let Some(reports) = saving {
            self.runs.save(ids.clone(), reports);
        }
        if several {
            // A comparison was asked for: show it.
            self.compare.pick_only(&ids);
            self.runs.list_mut().show(ids.first().copied());
            self.settings.tab = Tab::Compare;
        }
    }

    /// Starts a load run of what the panels and the Load tab describe, unless one is in flight;
    /// the view says why it cannot.
    pub(super) fn start_load(&mut self) {
        if self.runs.is_loading() {
            return;
        }
        if self.runs.is_running() {
            self.load.refused(
                "a run is in flight in Iterations: wait for it or cancel it, so that the two do \
                 not measure each other"
                    .into(),
            );
            return;
        }
        let waiting = WaitWords::default();
        let (target, spec) = match self.load_spec(&waiting) {
            Ok(made) => made,
            Err(why) => return self.load.refused(why),
        };
        let plan = spec.plan.clone();
        let notices = spec.notices.clone();
        let target = self.runs.on_kept_instance(target);
        match Engine::start(Job::Load(target, spec), repaint_notifier(&self.ctx)) {
            Ok(engine) => {
                let sql = self.settings.query.first_sql().to_owned();
                self.settings.query.remember(&sql);
                self.load
                    .started(&plan, notices, engine.in_flight(), waiting);
                self.runs.begin_load(engine);
                self.notice = None;
                self.write_status(RunState::Running);
            }
            Err(e) => self
                .load
                .refused(format!("cannot start the load generator: {e}")),
        }
    }

    /// The target and the spec of the next load run, or what is wrong with the input; a
    /// read-write run that reads the target's statistics tells `waiting` when it waits for them.
    fn load_spec(&self, waiting: &WaitWords) -> Result<(Target, LoadSpec), String> {
        let query = &self.settings.query;
        if query.subject {
            return Err(
                "a load run runs the query panel's SQL, not a client program: choose the query \
                 in the query panel"
                    .into(),
            );
        }
        let (plan, mut notices) = self.settings.load.plan()?;
        let label = match query.run_label() {
            "" => "load".to_owned(),
            label => label.to_owned(),
        };
        let drawing = self.settings.load.drawing()?;
        let mut variant = query.load_variant(label)?;
        variant.params.extend(drawing.typed);
        if query.variants.len() > 1 || !query.sweep.trim().is_empty() {
            notices.push(
                "the load runs the first query only; its variants and sweep are Iterations' own"
                    .into(),
            );
        }
        let (mut target, database) = self.settings.connection.target()?;
        let queue = self.settings.load.queue;
        match &mut target {
            Target::Local(server) => server.knobs = queue.apply(server.knobs),
            _ if queue.is_set() => notices.push(
                "the queue's knobs shape the built-in instance only: ignored for this target"
                    .into(),
            ),
            _ => {}
        }
        let stats = self.settings.load.target_stats;
        let server_stats = if variant.read_write.is_some() && stats.read {
            let notice = waiting.notice(&self.ctx);
            let ask = ServerStatsAsk::tagging(&mut variant, DEFAULT_STATS_WAIT, notice)
                .map_err(|e| e.to_string())?;
            // The built-in instance's interval; another target's is its own.
            set_stats_interval(&mut target, stats.interval());
            Some(ask)
        } else {
            None
        };
        let mut timeouts = self.settings.connection.timeouts.timeouts()?;
        // No request may outlive its step's drain by much.
        timeouts.iteration = timeouts.iteration.min(plan.step_duration + plan.drain);
        let spec = LoadSpec {
            database,
            variant,
            plan,
            decoder: query.decoder,
            timeouts,
            headers: self.settings.connection.headers,
            notices,
            stop_at_knee: self.settings.load.stop_at_knee,
            draws: drawing.draws,
            server_stats,
        };
        Ok((target, spec))
    }

    /// A load run's end, as the Load tab drew it: said in the status bar (a failure in the log
    /// too) and the status file; a finished run kept in the history.
    fn load_ended(&mut self, ended: LoadEnded) {
        match ended {
            LoadEnded::Finished(said) => {
                self.notice = Some(said);
                if let Some(report) = self.load.report() {
                    // Kept in the history as `spanprof load` keeps its runs.
                    if let Some(history) = self.runs.history() {
                        history.save_load(report.clone());
                    }
                    let steps = &report.steps;
                    let state = RunState::Finished {
                        label: report.label.clone(),
                        ok: steps.iter().map(|s| s.count).sum::<u64>() as usize,
                        other: steps
                            .iter()
                            .map(|s| s.errors + s.dropped + s.unfinished)
                            .sum::<u64>() as usize,
                    };
                    self.write_status(state);
                }
            }
            LoadEnded::Failed(why) => {
                self.error(format!("the load run failed: {why}"));
                self.write_status(RunState::Failed(why));
            }
        }
    }

    /// Appends the frame times recorded while the run streamed (`SPANPROF_FRAME_STATS`).
    fn finish_frames(&mut self) {
        let label = self
            .runs
            .active()
            .map(|r| r.label().to_owned())
            .unwrap_or_default();
        if let Some(stats) = &mut self.frame_stats
            && let Err(e) = stats.flush(&label)
        {
            self.log
                .push(format!("cannot write the frame statistics: {e}"));
        }
    }
}

/// A run's failure to start, with the next step where one is plain: a target nobody answers at
/// that is the emulator's address is most likely an emulator not started yet. A cause the
/// error's chain says twice in a row ("tcp connect error: tcp connect error") is said once.
fn with_next_step(message: String, target: bool, connection: &ConnectionSettings) -> String {
    let message = without_repeats(&message);
    let refused = message.contains("Connection refused") || message.contains("os error 111");
    if target && refused && connection.kind == TargetKind::Emulator {
        let at = connection.emulator.host_port.trim();
        format!(
            "{message}\n\nNothing answers at {at}. Is the emulator running? Press \"Start emulator \
             and seed\" in the connection panel to start it there, or correct Host:port."
        )
    } else {
        message
    }
}

/// `message` with each `: `-separated part that repeats the one before it left out.
fn without_repeats(message: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in message.split(": ") {
        if parts.last() != Some(&part) {
            parts.push(part);
        }
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[test]
    fn a_dead_emulator_port_is_said_once_with_the_next_step() {
        let connection = ConnectionSettings {
            kind: TargetKind::Emulator,
            ..ConnectionSettings::default()
        };
        let said = with_next_step(
            "cannot reach h:1: transport error: tcp connect error: tcp connect error: \
             Connection refused (os error 111)"
                .into(),
            true,
            &connection,
        );
        assert!(
            said.starts_with(
                "cannot reach h:1: transport error: tcp connect error: Connection refused"
            ),
            "{said}"
        );
        assert!(said.contains("Start emulator and seed"), "{said}");
        // Another failure, or another kind of target: no step that does not fit.
        let other = with_next_step("bad token".into(), true, &connection);
        assert_eq!(other, "bad token");
        let local = ConnectionSettings::default();
        let said = with_next_step("x: Connection refused".into(), true, &local);
        assert!(!said.contains("Start emulator"), "{said}");
    }

    #[test]
    fn a_run_s_events_ask_for_a_repaint_within_a_quarter_second_not_at_once() {
        let ctx = egui::Context::default();
        let delays = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&delays);
        ctx.set_request_repaint_callback(move |info| {
            seen.lock().expect("not poisoned").push(info.delay)
        });
        let notify = run_notifier(&ctx);
        for _ in 0..100 {
            notify();
        }
        // One repaint is scheduled for a hundred events, a quarter of a second away.
        let delays = delays.lock().expect("not poisoned").clone();
        assert_eq!(delays, vec![Duration::from_millis(250)]);
    }
}
