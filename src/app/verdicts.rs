//! The compare view's verdicts, each computed once per pair of runs, on a thread of its own: the
//! bootstrap behind one ([`analysis::compare_runs`] at [`BootstrapSettings::DEFAULT`]) takes
//! about 27 ms for two 100-iteration runs in a release build, more than a frame, and the UI
//! never waits for it. The result is drained on the next frame.

use std::collections::HashMap;
use std::sync::mpsc;

use crate::analysis::{self, BootstrapSettings};
use crate::report::RunReport;

/// Two runs' ids, the baseline's first.
pub type Pair = (u64, u64);

/// Where the verdict of a pair of runs stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Being computed on its thread.
    Pending,
    /// Computed: the verdict in words, or `None` when the runs cannot be compared (one of them
    /// has no timed iteration).
    Ready(Option<String>),
    /// The thread ended without a result; the words say why.
    Failed(String),
}

/// Every verdict asked for since the view opened, and the threads still computing some.
#[derive(Debug, Default)]
pub struct Verdicts {
    known: HashMap<Pair, Verdict>,
    pending: Vec<(Pair, mpsc::Receiver<Option<String>>)>,
}

impl Verdicts {
    /// Where the verdict of `pair` stands; `None` if it was never asked for.
    pub fn get(&self, pair: Pair) -> Option<&Verdict> {
        self.known.get(&pair)
    }

    /// The verdict of run `b` against run `a` (ids first): known, or started now on a named
    /// thread that calls `ctx.request_repaint()` when it is done (or [`Verdict::Failed`] if no
    /// thread can be started).
    pub fn request(
        &mut self,
        (a_id, a): (u64, &RunReport),
        (b_id, b): (u64, &RunReport),
        ctx: &egui::Context,
    ) -> &Verdict {
        let pair = (a_id, b_id);
        if !self.known.contains_key(&pair) {
            let state = self.start(pair, a.clone(), b.clone(), ctx.clone());
            self.known.insert(pair, state);
        }
        &self.known[&pair]
    }

    fn start(&mut self, pair: Pair, a: RunReport, b: RunReport, ctx: egui::Context) -> Verdict {
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
                self.pending.push((pair, rx));
                Verdict::Pending
            }
            Err(_) => Verdict::Failed("no thread could be started to compare the runs".into()),
        }
    }

    /// Takes in the verdicts computed since the last call.
    pub fn drain(&mut self) {
        let known = &mut self.known;
        self.pending.retain(|(pair, rx)| {
            let state = match rx.try_recv() {
                Ok(verdict) => Verdict::Ready(verdict),
                Err(mpsc::TryRecvError::Empty) => return true,
                Err(mpsc::TryRecvError::Disconnected) => {
                    Verdict::Failed("the comparison stopped without a result".into())
                }
            };
            known.insert(*pair, state);
            false
        });
    }
}

/// The verdict of `b` against `a` in words, with the phases the difference is in, as `spanprof
/// compare` prints it.
fn verdict(a: &RunReport, b: &RunReport) -> Option<String> {
    analysis::compare_runs(a, b, BootstrapSettings::DEFAULT).verdict_with_deltas()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, totals: &[f64]) -> RunReport {
        RunReport::with_totals(label, totals)
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
        assert_eq!(verdicts.get((1, 2)), None);
        assert_eq!(verdicts.request((1, &a), (2, &b), &ctx), &Verdict::Pending);
        let expected =
            analysis::compare_runs(&a, &b, BootstrapSettings::DEFAULT).verdict_with_deltas();
        assert!(expected.is_some());
        assert_eq!(
            wait(&mut verdicts, (1, 2)),
            Verdict::Ready(expected.clone())
        );
        // Asked again, it is known: no second computation.
        assert_eq!(
            verdicts.request((1, &a), (2, &b), &ctx),
            &Verdict::Ready(expected)
        );
        assert!(verdicts.pending.is_empty());
    }

    #[test]
    fn runs_that_cannot_be_compared_get_a_ready_none() {
        let ctx = egui::Context::default();
        let (a, empty) = (run("a", &[10.0, 11.0]), run("empty", &[]));
        let mut verdicts = Verdicts::default();
        verdicts.request((1, &a), (3, &empty), &ctx);
        assert_eq!(wait(&mut verdicts, (1, 3)), Verdict::Ready(None));
    }
}
