//! What a reader should notice in one run beyond its summary: whether the first iteration was a
//! slow cold start, and which timed iterations were outliers.
//!
//! The rules are [`stats::first_sample`] with [`stats::is_slow_first`], over the total times of
//! the iterations that ended `Ok`, in run order and warm-ups included (the cold iteration is the
//! very first one, usually a warm-up); and [`stats::outliers`] with [`OUTLIER_THRESHOLD`] (the
//! MAD rule) over the totals of the timed iterations. And whether the statistics the query mode
//! asked for came back at all ([`missing_statistics`]). And whether the window, in whose process
//! a run it started was measured, took more than [`WINDOW_CORES`] of a core meanwhile
//! ([`BusyWindow`]).

use crate::part::Part;
use crate::report::{IterationRecord, QueryMode, RunReport, Status, WindowCpu};
use crate::stats::{self, OUTLIER_THRESHOLD};
use crate::text::ms;

/// The first successful iteration of a run set against the others.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FirstIteration {
    /// The iteration's number (a warm-up's, when the run had one).
    pub iteration: u32,
    /// Its total time in milliseconds.
    pub total_ms: f64,
    /// The median total of the other successful iterations, in milliseconds.
    pub rest_median_ms: f64,
    /// `total_ms / rest_median_ms`: how many times slower the first iteration was.
    pub ratio: f64,
    /// Whether it was a slow cold start by [`stats::is_slow_first`]; otherwise the run had no
    /// cold-start penalty.
    pub slow: bool,
}

/// A timed iteration whose total is an outlier of the run by the MAD rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlier {
    /// The iteration's number.
    pub iteration: u32,
    /// Its total time in milliseconds.
    pub total_ms: f64,
    /// Whether most of its extra time over the median total was its client's thread off the CPU
    /// (its `descheduled_ms` above the run's median by at least half the extra time).
    pub mostly_descheduled: bool,
}

/// A run whose client was off the CPU for a notable share of its own timed work: the machine was
/// busy, and the decode was not slow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Busy {
    /// The median iteration's share of the client's timed work (decode and its own work) spent
    /// off the CPU (0 to 1).
    pub share: f64,
    /// The median time off the CPU per iteration (the `descheduled` part), milliseconds.
    pub descheduled_ms: f64,
    /// The median decode CPU time per iteration, milliseconds.
    pub decode_cpu_ms: f64,
    /// Whether the server was the local instance, in the same process: it competed with the
    /// client for the CPU ([`Findings::of`] only: the iterations alone do not say the target).
    pub local_instance: bool,
}

/// The share of the client's timed work off the CPU from which a run is called busy.
pub const BUSY_SHARE: f64 = 0.2;

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the machine was busy: the client's thread was off the CPU for {:.0}% of its timed \
             work ({} descheduled per iteration); decode itself took {} of CPU per iteration",
            self.share * 100.0,
            crate::text::ms(self.descheduled_ms),
            crate::text::ms(self.decode_cpu_ms)
        )?;
        if self.local_instance {
            f.write_str(
                "; the local instance runs in this process and competed with the client for the CPU",
            )?;
        }
        Ok(())
    }
}

/// A run measured in the window's process while the window kept a notable share of a core busy
/// (drawing, with software GL its rasteriser's threads too): the process's cores were shared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BusyWindow {
    /// The cores the window kept busy on average while the run was measured.
    pub cores: f64,
    /// Whether the server was the local instance, which runs in the same process.
    pub local_instance: bool,
}

/// The share of a core the window may take during a run before the run says so.
pub const WINDOW_CORES: f64 = 0.05;

impl BusyWindow {
    /// The finding, when the window took more than [`WINDOW_CORES`] of a core during the run.
    pub fn of(cpu: &WindowCpu, local_instance: bool) -> Option<BusyWindow> {
        let cores = cpu.cores();
        (cores > WINDOW_CORES).then_some(BusyWindow {
            cores,
            local_instance,
        })
    }
}

impl std::fmt::Display for BusyWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let used = if self.cores >= 1.05 {
            format!("{:.1} cores", self.cores)
        } else if self.cores >= 0.095 {
            format!("{:.1} of a core", self.cores)
        } else {
            format!("{:.2} of a core", self.cores)
        };
        write!(f, "the window used {used} while this run was measured")?;
        if self.local_instance {
            f.write_str("; the local instance shares this process")?;
        }
        Ok(())
    }
}

/// The query statistics a run asked for (WITH_STATS or PROFILE) and did not get: no successful
/// iteration carried the server's time or row count, so the server's share of the time and the
/// lost-row check (the server's row count against the rows decoded) are unavailable. The Cloud
/// Spanner emulator does this in WITH_STATS mode; it returns them in PROFILE mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingStatistics {
    /// The query mode that asked for them.
    pub mode: QueryMode,
}

impl std::fmt::Display for MissingStatistics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "no query statistics returned: server time and the lost-row check are unavailable",
        )?;
        if self.mode != QueryMode::Profile {
            f.write_str("; the emulator returns them only in profile mode")?;
        }
        Ok(())
    }
}

/// Whether a run in `query_mode` asked for statistics that none of its successful `records` got.
/// `None` in normal mode (it asks for none) and before an iteration succeeded.
pub fn missing_statistics(
    query_mode: QueryMode,
    records: &[IterationRecord],
) -> Option<MissingStatistics> {
    if !query_mode.asks_for_statistics() {
        return None;
    }
    let mut ok = records
        .iter()
        .filter(|r| r.status() == Status::Ok)
        .peekable();
    ok.peek()?;
    ok.all(|r| !has_statistics(r))
        .then_some(MissingStatistics { mode: query_mode })
}

/// Whether an iteration carried the server's statistics: its query's time or row count, or, for
/// a read-write transaction, the time of one of its streamed statements.
fn has_statistics(r: &IterationRecord) -> bool {
    let statement_timed = r.transaction.as_ref().is_some_and(|t| {
        t.attempts
            .iter()
            .flat_map(|a| a.statements())
            .any(|q| q.server_elapsed_ms.is_some())
    });
    r.query.server_elapsed_ms.is_some() || r.answer.server_rows.is_some() || statement_timed
}

/// Everything [`findings`] noticed about a run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    /// The first iteration against the rest; `None` with fewer than two successful iterations
    /// (or no finite total to compare).
    pub first: Option<FirstIteration>,
    /// The outlying timed iterations, in run order.
    pub outliers: Vec<Outlier>,
    /// The statistics the mode asked for and did not get ([`Findings::of`] only: the
    /// iterations alone do not say the mode).
    pub missing_statistics: Option<MissingStatistics>,
    /// Whether the client was off the CPU for a notable share ([`BUSY_SHARE`]) of its timed work.
    pub busy: Option<Busy>,
    /// Whether the window took a notable share of a core while the run was measured
    /// ([`Findings::of`] only: the report's configuration keeps the window's CPU).
    pub window: Option<BusyWindow>,
    /// The timed iterations whose `untimed` part was more than max(1 ms, 3%) of their total:
    /// something the client did was not timed.
    pub untimed: Vec<u32>,
    /// A read-write run's transactions: attempts per transaction, aborts by step ([`Findings::of`]
    /// only).
    pub transactions: Option<super::Transactions>,
}

impl Findings {
    /// The findings of a whole run.
    pub fn of(report: &RunReport) -> Self {
        let mut found = findings(&report.iterations);
        let local = report.config.target == "local";
        if let Some(busy) = &mut found.busy {
            busy.local_instance = local;
        }
        Findings {
            missing_statistics: missing_statistics(report.config.query_mode, &report.iterations),
            window: report
                .config
                .window_cpu
                .as_ref()
                .and_then(|cpu| BusyWindow::of(cpu, local)),
            transactions: super::Transactions::of(report),
            ..found
        }
    }

    /// The first iteration, if it was a slow cold start.
    pub fn slow_start(&self) -> Option<&FirstIteration> {
        self.first.as_ref().filter(|first| first.slow)
    }

    /// The iterations with a notable `untimed`, in words; `None` without any.
    pub fn untimed_words(&self) -> Option<String> {
        (!self.untimed.is_empty()).then(|| {
            let numbers: Vec<String> = self.untimed.iter().map(|n| format!("#{n}")).collect();
            format!(
                "untimed was more than max(1 ms, 3%) of iterations {}: the client did something \
                 it did not time",
                numbers.join(", ")
            )
        })
    }

    /// The outlying iterations in words (each with its total, and whether it was mostly off the
    /// CPU); `None` without any.
    pub fn outlier_words(&self) -> Option<String> {
        (!self.outliers.is_empty()).then(|| {
            let flagged: Vec<String> = self
                .outliers
                .iter()
                .map(|o| {
                    let off = if o.mostly_descheduled {
                        ", mostly descheduled"
                    } else {
                        ""
                    };
                    format!("#{} ({}{off})", o.iteration, ms(o.total_ms))
                })
                .collect();
            format!("outlying iterations (MAD rule): {}", flagged.join(", "))
        })
    }

    /// Every finding in words, in the order the command line prints them: statistics that did
    /// not come, the first iteration, a busy machine, a busy window, untimed work, outliers.
    pub fn sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.transactions.as_ref().map(ToString::to_string));
        out.extend(self.missing_statistics.as_ref().map(ToString::to_string));
        out.extend(self.first.as_ref().map(ToString::to_string));
        out.extend(self.busy.as_ref().map(ToString::to_string));
        out.extend(self.window.as_ref().map(ToString::to_string));
        out.extend(self.untimed_words());
        out.extend(self.outlier_words());
        out
    }
}

impl std::fmt::Display for FirstIteration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.slow {
            "a slow cold start"
        } else {
            "no cold-start penalty"
        };
        write!(
            f,
            "first iteration (#{}) {}, {:.2}× the median of the rest ({}): {verdict}",
            self.iteration,
            ms(self.total_ms),
            self.ratio,
            ms(self.rest_median_ms)
        )
    }
}

/// The findings of a run's iterations (every one, in the order they ran: warm-ups, failures and
/// all; the rules pick the ones they need). See the [module documentation](self) for the rules.
pub fn findings(records: &[IterationRecord]) -> Findings {
    Findings {
        first: first_iteration(records),
        outliers: outliers(records),
        missing_statistics: None,
        busy: busy(records),
        window: None,
        untimed: records
            .iter()
            .filter(|r| r.is_timed() && r.accounting().untimed_is_notable(r.total_ms))
            .map(|r| r.iteration)
            .collect(),
        transactions: None,
    }
}

fn median_of(
    records: &[&IterationRecord],
    f: impl Fn(&IterationRecord) -> Option<f64>,
) -> Option<f64> {
    stats::summarize(&records.iter().filter_map(|r| f(r)).collect::<Vec<_>>()).map(|s| s.median)
}

fn busy(records: &[IterationRecord]) -> Option<Busy> {
    let timed: Vec<&IterationRecord> = records.iter().filter(|r| r.is_timed()).collect();
    let parts = |r: &IterationRecord| r.accounting().parts;
    let off = median_of(&timed, |r| parts(r).get(Part::Descheduled))?;
    let cpu = |r: &IterationRecord| {
        let p = parts(r);
        p.ms(Part::WireDecode) + p.ms(Part::RowDecode) + p.ms(Part::ClientWork)
    };
    let share = median_of(&timed, |r| {
        let off = parts(r).get(Part::Descheduled)?;
        let work = off + cpu(r);
        (work > 0.0).then(|| off / work)
    })?;
    let decode_cpu = median_of(&timed, |r| {
        let p = parts(r);
        Some(p.ms(Part::WireDecode) + p.ms(Part::RowDecode))
    })?;
    (share.is_finite() && share >= BUSY_SHARE).then_some(Busy {
        share: share.min(1.0),
        descheduled_ms: off,
        decode_cpu_ms: decode_cpu,
        local_instance: false,
    })
}

fn first_iteration(records: &[IterationRecord]) -> Option<FirstIteration> {
    let ok: Vec<&IterationRecord> = records
        .iter()
        .filter(|r| r.status() == Status::Ok)
        .collect();
    let totals: Vec<f64> = ok.iter().map(|r| r.total_ms).collect();
    let cold = stats::first_sample(&totals)?;
    Some(FirstIteration {
        iteration: ok.first()?.iteration,
        total_ms: cold.first,
        rest_median_ms: cold.rest_median,
        ratio: cold.ratio,
        slow: stats::is_slow_first(&cold),
    })
}

fn outliers(records: &[IterationRecord]) -> Vec<Outlier> {
    let timed: Vec<&IterationRecord> = records.iter().filter(|r| r.is_timed()).collect();
    let totals: Vec<f64> = timed.iter().map(|r| r.total_ms).collect();
    let median_total = median_of(&timed, |r| Some(r.total_ms));
    let median_off = median_of(&timed, |r| r.query.descheduled_ms);
    stats::outliers(&totals, OUTLIER_THRESHOLD)
        .into_iter()
        .filter_map(|k| timed.get(k))
        .map(|r| {
            let extra = median_total.map(|m| r.total_ms - m);
            let more_off = r.query.descheduled_ms.zip(median_off).map(|(d, m)| d - m);
            Outlier {
                iteration: r.iteration,
                total_ms: r.total_ms,
                mostly_descheduled: matches!((extra, more_off), (Some(e), Some(d)) if e > 0.0 && d >= 0.5 * e),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;

    fn record(iteration: u32, warmup: bool, total_ms: f64) -> IterationRecord {
        IterationRecord {
            total_ms,
            ..IterationRecord::new("r", iteration, warmup, "2026-01-02T03:04:05Z")
        }
    }

    /// Iterations numbered from 0 with these totals, the first `warmups` of them warm-ups.
    fn run(warmups: usize, totals: &[f64]) -> Vec<IterationRecord> {
        (0u32..)
            .zip(totals)
            .map(|(i, &t)| record(i, (i as usize) < warmups, t))
            .collect()
    }

    #[test]
    fn a_cold_warm_up_and_an_outlier_are_found_with_their_figures() {
        // Rest of the ok totals sorted: 9.8 9.9 10 10 10.1 10.2 10.3 10.5 40, median 10.1,
        // MAD 0.2: 50 is a slow start. Timed totals (50 left out): median 10.1, MAD 0.2, so 40
        // scores 0.6745 · 29.9 / 0.2 ≈ 100.8.
        let records = run(
            1,
            &[50.0, 10.0, 10.5, 9.8, 10.2, 10.1, 9.9, 10.0, 10.3, 40.0],
        );
        let found = findings(&records);
        assert_eq!(
            found.first,
            Some(FirstIteration {
                iteration: 0,
                total_ms: 50.0,
                rest_median_ms: 10.1,
                ratio: 50.0 / 10.1,
                slow: true,
            })
        );
        assert_eq!(
            found.outliers,
            vec![Outlier {
                iteration: 9,
                total_ms: 40.0,
                mostly_descheduled: false,
            }]
        );
        assert_eq!(found.slow_start().map(|f| f.iteration), Some(0));
    }

    #[test]
    fn a_first_iteration_like_the_rest_has_no_penalty() {
        let records = run(0, &[10.4, 10.0, 10.2, 9.9, 10.1]);
        let found = findings(&records);
        let first = found.first.expect("five successful iterations");
        assert_eq!((first.iteration, first.total_ms), (0, 10.4));
        assert_eq!(first.rest_median_ms, 10.05);
        assert!(!first.slow);
        assert_eq!(found.slow_start(), None);
        assert!(found.outliers.is_empty());
    }

    #[test]
    fn the_first_is_the_first_that_succeeded_and_outliers_keep_their_numbers() {
        let mut records = run(0, &[1.0, 60.0, 10.0, 10.0, 11.0, 10.0, 90.0]);
        records[0].outcome = Outcome::failed("failed", None);
        records[3].outcome = Outcome::cancelled();
        let found = findings(&records);
        // Ok totals in order: 60, 10, 11, 10, 90; the rest's median 10.5.
        let first = found.first.expect("enough successes");
        assert_eq!((first.iteration, first.rest_median_ms), (1, 10.5));
        // Timed totals 60, 10, 11, 10, 90: median 11, MAD 1; 60 and 90 are far out, the failed
        // iteration's 1 ms is not looked at.
        let numbers: Vec<u32> = found.outliers.iter().map(|o| o.iteration).collect();
        assert_eq!(numbers, vec![1, 6]);
    }

    #[test]
    fn warm_ups_count_for_the_cold_start_but_are_never_outliers() {
        // The warm-up (80) against the rest is slow; among the timed ones, all equal, none is out.
        let found = findings(&run(1, &[80.0, 10.0, 10.0, 10.0, 10.0]));
        assert!(found.slow_start().is_some());
        assert!(found.outliers.is_empty());
    }

    #[test]
    fn too_few_successes_give_no_first_iteration() {
        assert_eq!(findings(&[]), Findings::default());
        assert_eq!(findings(&run(0, &[12.0])).first, None);
        let mut two = run(0, &[12.0, 30.0]);
        two[1].outcome = Outcome::failed("failed", None);
        assert_eq!(findings(&two).first, None);
    }

    #[test]
    fn a_window_over_a_twentieth_of_a_core_is_a_finding_in_words() {
        let mut report = RunReport::with_totals("r", &[10.0, 11.0, 12.0]);
        // The command line's run (no window) and a window that stayed idle say nothing.
        assert_eq!(Findings::of(&report).window, None);
        let cpu = |cpu_s: f64| WindowCpu { cpu_s, wall_s: 1.0 };
        for quiet in [0.0, 0.03, 0.05] {
            report.config.window_cpu = Some(cpu(quiet));
            assert_eq!(Findings::of(&report).window, None, "{quiet}");
        }
        report.config.window_cpu = Some(WindowCpu {
            cpu_s: 0.28,
            wall_s: 0.7,
        });
        let found = Findings::of(&report);
        assert!(
            found.sentences().contains(
                &"the window used 0.4 of a core while this run was measured; the local instance \
              shares this process"
                    .to_string()
            )
        );
        report.config.target = "endpoint 127.0.0.1:9010".into();
        report.config.window_cpu = Some(cpu(0.06));
        assert_eq!(
            Findings::of(&report)
                .window
                .map(|w| w.to_string())
                .as_deref(),
            Some("the window used 0.06 of a core while this run was measured")
        );
        report.config.window_cpu = Some(cpu(1.5));
        assert_eq!(
            Findings::of(&report)
                .window
                .map(|w| w.to_string())
                .as_deref(),
            Some("the window used 1.5 cores while this run was measured")
        );
    }

    #[test]
    fn statistics_asked_for_and_never_returned_are_a_finding() {
        let mut records = run(0, &[10.0, 11.0, 12.0]);
        let missing = missing_statistics(crate::kind::QueryMode::WithStats, &records);
        assert_eq!(
            missing.as_ref().map(ToString::to_string).as_deref(),
            Some(
                "no query statistics returned: server time and the lost-row check are \
                 unavailable; the emulator returns them only in profile mode"
            )
        );
        // Profile mode: the same finding, without the advice to use it.
        let missing =
            missing_statistics(crate::kind::QueryMode::Profile, &records).map(|m| m.to_string());
        assert_eq!(
            missing.as_deref(),
            Some(
                "no query statistics returned: server time and the lost-row check are unavailable"
            )
        );
        // Normal mode asks for none; no success yet says nothing either.
        assert_eq!(
            missing_statistics(crate::kind::QueryMode::Normal, &records),
            None
        );
        assert_eq!(
            missing_statistics(crate::kind::QueryMode::WithStats, &[]),
            None
        );
        // One successful iteration with the server's row count is enough, and a failed one
        // without statistics does not count against it.
        records[1].answer.server_rows = Some(500);
        records[2].outcome = Outcome::failed("failed", None);
        assert_eq!(
            missing_statistics(crate::kind::QueryMode::WithStats, &records),
            None
        );
        records[1].answer.server_rows = None;
        records[0].query.server_elapsed_ms = Some(1.5);
        assert_eq!(
            missing_statistics(crate::kind::QueryMode::WithStats, &records),
            None
        );
    }

    #[test]
    fn a_transactions_statements_with_the_servers_time_are_statistics_returned() {
        use crate::report::{
            Action, ActionKind, Attempt, AttemptOutcome, QueryTimings, StoredTimings,
            TransactionRecord,
        };
        let mut records = run(0, &[10.0, 11.0]);
        let statement = |elapsed: Option<f64>| Action {
            kind: Some(ActionKind::Dml),
            query: Some(StoredTimings::from(&QueryTimings {
                server_elapsed_ms: elapsed,
                ..QueryTimings::default()
            })),
            ..Action::default()
        };
        let transaction = |elapsed: Option<f64>| {
            let mut attempt = Attempt::new(AttemptOutcome::Committed);
            attempt.actions = vec![statement(elapsed)];
            TransactionRecord {
                attempts: vec![attempt],
                ..TransactionRecord::default()
            }
        };
        for r in &mut records {
            r.transaction = Some(transaction(None));
        }
        assert!(missing_statistics(crate::kind::QueryMode::WithStats, &records).is_some());
        records[1].transaction = Some(transaction(Some(0.4)));
        assert_eq!(
            missing_statistics(crate::kind::QueryMode::WithStats, &records),
            None
        );
    }

    #[test]
    fn findings_of_a_report_are_those_of_its_iterations() {
        let report = RunReport {
            config: crate::report::RunConfig {
                label: "r".into(),
                target: "local".into(),
                sql: "SELECT 1".into(),
                params: vec![],
                query_mode: QueryMode::Normal,
                iterations: 4,
                warmup: 1,
                decoder: crate::kind::Reader::Fast,
                ..Default::default()
            },
            started_at: "2026-01-02T03:04:05Z".into(),
            iterations: run(1, &[70.0, 10.0, 10.0, 11.0, 30.0]),
            plans: Default::default(),
            stopped: None,
        };
        assert_eq!(Findings::of(&report), findings(&report.iterations));
        let asked = RunReport {
            config: crate::report::RunConfig {
                query_mode: QueryMode::WithStats,
                ..report.config.clone()
            },
            ..report
        };
        assert_eq!(
            Findings::of(&asked).missing_statistics,
            Some(MissingStatistics {
                mode: crate::kind::QueryMode::WithStats
            })
        );
    }

    fn decoded(iteration: u32, total_ms: f64, wall: f64, cpu: f64) -> IterationRecord {
        {
            let mut r = record(iteration, false, total_ms);
            r.query.wire_decode_wall_ms = Some(wall / 2.0);
            r.query.row_decode_wall_ms = Some(wall / 2.0);
            r.query.wire_decode_cpu_ms = Some(cpu / 2.0);
            r.query.row_decode_cpu_ms = Some(cpu / 2.0);
            r.query.descheduled_ms = Some(wall - cpu);
            r
        }
    }

    #[test]
    fn a_client_off_the_cpu_is_called_busy_and_its_outlier_descheduled() {
        let mut records: Vec<IterationRecord> = (0..9)
            .map(|i| decoded(i, 10.0 + f64::from(i) * 0.01, 4.0, 2.0))
            .collect();
        records.push(decoded(9, 30.0, 24.0, 2.0));
        let found = findings(&records);
        let busy = found.busy.expect("half of decode off the CPU");
        assert!((busy.share - 0.5).abs() < 1e-9, "{busy:?}");
        assert!(busy.to_string().contains("off the CPU for 50%"), "{busy}");
        assert_eq!(found.outliers.len(), 1);
        assert!(found.outliers[0].mostly_descheduled);

        let idle: Vec<IterationRecord> = (0..9).map(|i| decoded(i, 10.0, 4.0, 3.9)).collect();
        assert_eq!(findings(&idle).busy, None);
    }

    #[test]
    fn an_outlier_that_waited_on_the_network_is_not_descheduled() {
        let mut records: Vec<IterationRecord> = (0..9)
            .map(|i| decoded(i, 10.0 + f64::from(i) * 0.01, 4.0, 3.9))
            .collect();
        records.push(decoded(9, 30.0, 4.0, 3.9));
        let found = findings(&records);
        assert_eq!(found.outliers.len(), 1);
        assert!(!found.outliers[0].mostly_descheduled);
    }
}
