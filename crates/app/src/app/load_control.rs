//! A load run's start and end as the app sees it: the spec made from the panels (the query
//! panel's first query, the connection panel's target and timeouts, the Load tab's plan, the
//! built-in instance's queue), refused in words when it cannot run; and what its end says in the
//! status bar, the log and the status file (as an Iterations run's: `running`, then `finished
//! LABEL ok=N other=M` with N the requests that ended ok and M the others, or `failed MESSAGE`);
//! the finished run saved in the history.

use super::SpanprofApp;
use super::connection::repaint_notifier;
use super::load::LoadEnded;
use super::status_file::RunState;
use crate::engine::Target;
use crate::engine::load::{LoadRun, LoadSpec};

impl SpanprofApp {
    /// Starts a load run of what the panels and the Load tab describe, unless one is in flight;
    /// the view says why it cannot.
    pub(super) fn start_load(&mut self) {
        if self.load.is_running() {
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
        let (target, spec) = match self.load_spec() {
            Ok(made) => made,
            Err(why) => return self.load.refused(why),
        };
        let plan = spec.plan.clone();
        let notices = spec.notices.clone();
        match LoadRun::start(target, spec, repaint_notifier(&self.ctx)) {
            Ok(run) => {
                let sql = self.settings.query.first_sql().to_owned();
                self.settings.query.remember(&sql);
                self.load.started(run, &plan, notices);
                self.notice = None;
                self.write_status(RunState::Running);
            }
            Err(e) => self
                .load
                .refused(format!("cannot start the load generator: {e}")),
        }
    }

    /// The target and the spec of the next load run, or what is wrong with the input.
    fn load_spec(&self) -> Result<(Target, LoadSpec), String> {
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
        let variant = query.load_variant(label)?;
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
        };
        Ok((target, spec))
    }

    /// Reads what the load run in flight reported since the last frame; its end is said in the
    /// status bar (a failure in the log too) and the status file.
    pub(super) fn drain_load(&mut self) {
        match self.load.drain() {
            None => {}
            Some(LoadEnded::Finished(said)) => {
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
            Some(LoadEnded::Failed(why)) => {
                self.error(format!("the load run failed: {why}"));
                self.write_status(RunState::Failed(why));
            }
        }
    }
}
