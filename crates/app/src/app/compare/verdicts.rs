//! The compare view's diffs, each computed once per pair of runs, on a thread of its own: the
//! bootstraps behind one (the verdict's, [`analysis::compare_runs`], and each measure's change,
//! [`analysis::deltas`], at [`BootstrapSettings::DEFAULT`]) take tens of milliseconds for two
//! 100-iteration runs in a release build, more than a frame, and the UI never waits for them.
//! The result is drained on the next frame.

use std::collections::HashMap;
use std::sync::mpsc;

use crate::analysis::{self, BootstrapSettings, Deltas, SettingChange};
use crate::report::{RunId, RunReport};

/// Two runs' ids, the baseline's first.
pub type Pair = (RunId, RunId);

/// Run B against run A as a diff: the verdict in words, each measure's change with its
/// interval, and the settings they differ in.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The verdict with where the difference is, as `spanprof compare` prints it; `None` when
    /// the runs cannot be compared (one of them has no timed iteration).
    pub words: Option<String>,
    /// Each measure in A and B with the change's interval; `None` as for `words`.
    pub deltas: Option<Deltas>,
    /// The settings the runs differ in.
    pub settings: Vec<SettingChange>,
}

/// Where the diff of a pair of runs stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Being computed on its thread.
    Pending,
    /// Computed.
    Ready(Box<Diff>),
    /// The thread ended without a result; the words say why.
    Failed(String),
}

/// Every verdict asked for since the view opened (with the names it called the runs by), and
/// the threads still computing some.
#[derive(Debug, Default)]
pub struct Verdicts {
    known: HashMap<Pair, (Names, Verdict)>,
    pending: Vec<(Pair, Names, mpsc::Receiver<Diff>)>,
}

/// The names a verdict calls its two runs by, the baseline's first.
type Names = (String, String);

impl Verdicts {
    /// Where the verdict of `pair` stands; `None` if it was never asked for.
    pub fn get(&self, pair: Pair) -> Option<&Verdict> {
        self.known.get(&pair).map(|(_, v)| v)
    }

    /// The verdict of run `b` against run `a` (ids first, the names it calls them by last):
    /// known under those names, or started now on a named thread that calls
    /// `ctx.request_repaint()` when it is done (or [`Verdict::Failed`] if no thread can be
    /// started).
    pub fn request(
        &mut self,
        (a_id, a, a_name): (RunId, &RunReport, &str),
        (b_id, b, b_name): (RunId, &RunReport, &str),
        ctx: &egui::Context,
    ) -> &Verdict {
        let pair = (a_id, b_id);
        let names = (a_name.to_owned(), b_name.to_owned());
        if self.known.get(&pair).is_none_or(|(n, _)| *n != names) {
            let named = |report: &RunReport, name: &str| {
                let mut report = report.clone();
                report.config.label = name.to_owned();
                report
            };
            let (a, b) = (named(a, a_name), named(b, b_name));
            let state = self.start(pair, names.clone(), a, b, ctx.clone());
            self.known.insert(pair, (names, state));
        }
        &self.known[&pair].1
    }

    fn start(
        &mut self,
        pair: Pair,
        names: Names,
        a: RunReport,
        b: RunReport,
        ctx: egui::Context,
    ) -> Verdict {
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("spanprof-verdict".into())
            .spawn(move || {
                // The receiver is gone only if the view is: nobody to tell.
                let _ = tx.send(verdict(&a, &b));
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => {
                self.pending.push((pair, names, rx));
                Verdict::Pending
            }
            Err(_) => Verdict::Failed("no thread could be started to compare the runs".into()),
        }
    }

    /// Takes in the verdicts computed since the last call (a result under names no longer asked
    /// for is dropped).
    pub fn drain(&mut self) {
        let known = &mut self.known;
        self.pending.retain(|(pair, names, rx)| {
            let state = match rx.try_recv() {
                Ok(diff) => Verdict::Ready(Box::new(diff)),
                Err(mpsc::TryRecvError::Empty) => return true,
                Err(mpsc::TryRecvError::Disconnected) => {
                    Verdict::Failed("the comparison stopped without a result".into())
                }
            };
            if known.get(pair).is_some_and(|(n, _)| n == names) {
                known.insert(*pair, (names.clone(), state));
            }
            false
        });
    }
}

/// `b` against `a`: the verdict in words with the parts the difference is in, as `spanprof
/// compare` prints it, each measure's change with its interval, and the settings that differ.
fn verdict(a: &RunReport, b: &RunReport) -> Diff {
    Diff {
        words: analysis::compare_runs(a, b, BootstrapSettings::DEFAULT).verdict_with_deltas(),
        deltas: analysis::deltas(a, b, BootstrapSettings::DEFAULT),
        settings: analysis::setting_changes(a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, totals: &[f64]) -> RunReport {
        RunReport::with_totals(label, totals)
    }

    /// The `n`th id a run list hands out.
    fn id(n: u64) -> RunId {
        (1..n).fold(RunId::FIRST, |id, _| id.next())
    }

    /// Drains `verdicts` until `pair` is no longer pending, for at most 60 s.
    fn wait(verdicts: &mut Verdicts, pair: Pair) -> Verdict {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            verdicts.drain();
            match verdicts.get(pair) {
                Some(Verdict::Pending) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                other => return other.cloned().unwrap_or(Verdict::Pending),
            }
        }
    }

    #[test]
    fn a_verdict_is_asked_for_without_waiting_and_arrives_on_a_later_drain() {
        let ctx = egui::Context::default();
        let (a, b) = (run("a", &[10.0, 11.0, 12.0]), run("b", &[20.0, 21.0, 22.0]));
        let mut verdicts = Verdicts::default();
        assert_eq!(verdicts.get((id(1), id(2))), None);
        assert_eq!(
            verdicts.request((id(1), &a, "a"), (id(2), &b, "b"), &ctx),
            &Verdict::Pending
        );
        let expected =
            analysis::compare_runs(&a, &b, BootstrapSettings::DEFAULT).verdict_with_deltas();
        assert!(expected.is_some());
        let Verdict::Ready(diff) = wait(&mut verdicts, (id(1), id(2))) else {
            panic!("a diff")
        };
        assert_eq!(diff.words, expected);
        assert_eq!(
            diff.deltas,
            analysis::deltas(&a, &b, BootstrapSettings::DEFAULT)
        );
        // Asked again, it is known: no second computation.
        assert_eq!(
            verdicts.request((id(1), &a, "a"), (id(2), &b, "b"), &ctx),
            &Verdict::Ready(diff)
        );
        assert!(verdicts.pending.is_empty());
    }

    #[test]
    fn runs_that_cannot_be_compared_get_a_ready_none() {
        let ctx = egui::Context::default();
        let (a, empty) = (run("a", &[10.0, 11.0]), run("empty", &[]));
        let mut verdicts = Verdicts::default();
        verdicts.request((id(1), &a, "a"), (id(3), &empty, "empty"), &ctx);
        let Verdict::Ready(diff) = wait(&mut verdicts, (id(1), id(3))) else {
            panic!("a diff")
        };
        assert_eq!((diff.words, diff.deltas), (None, None));
    }

    #[test]
    fn a_verdict_calls_the_runs_by_the_names_asked_for_and_again_when_they_change() {
        let ctx = egui::Context::default();
        let (a, b) = (
            run("run 1", &[10.0, 11.0, 12.0]),
            run("run 1", &[20.0, 21.0, 22.0]),
        );
        let mut verdicts = Verdicts::default();
        verdicts.request(
            (id(1), &a, "run 1 · 10:00"),
            (id(2), &b, "run 1 · 11:00"),
            &ctx,
        );
        let Verdict::Ready(diff) = wait(&mut verdicts, (id(1), id(2))) else {
            panic!("a verdict")
        };
        let text = diff.words.unwrap_or_default();
        assert!(
            text.contains("run 1 · 11:00") && text.contains("run 1 · 10:00"),
            "{text}"
        );
        verdicts.request(
            (id(1), &a, "run 1 · Dec 2 10:00"),
            (id(2), &b, "run 1 · Dec 3 11:00"),
            &ctx,
        );
        let Verdict::Ready(diff) = wait(&mut verdicts, (id(1), id(2))) else {
            panic!("a verdict")
        };
        let text = diff.words.unwrap_or_default();
        assert!(
            text.contains("Dec 3 11:00") && text.contains("Dec 2 10:00"),
            "{text}"
        );
    }
}
