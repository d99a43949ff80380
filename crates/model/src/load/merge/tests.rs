use std::time::Duration;

use super::*;
use crate::load::Model;
use crate::load::step::{Ended, StepCpu, StepTally};
use crate::report::Parts;

/// A run of one process: two steps at `rates`, each request's latencies in `samples` (ms from
/// the intended start; from the actual start half of that).
fn run(label: &str, rates: [f64; 2], samples: [&[u64]; 2]) -> LoadReport {
    let steps = rates
        .iter()
        .zip(samples)
        .map(|(&rate, ms)| {
            let mut tally = StepTally::new(StepLevel::Rate(rate));
            for &m in ms {
                tally.ok(
                    &Ended {
                        from_intended: Duration::from_millis(m),
                        from_start: Duration::from_millis(m / 2),
                        at: Duration::from_secs(1),
                        rows: 10,
                        bytes: 1000,
                        decode_cpu: Duration::from_micros(500),
                        work_cpu: Duration::from_micros(100),
                    },
                    &Parts::default(),
                );
            }
            tally.error("UNAVAILABLE", Duration::from_millis(10));
            tally.finish(Duration::ZERO, Duration::from_secs(2), StepCpu::default())
        })
        .collect();
    let plan = LoadSteps {
        model: Model::Open,
        levels: rates.iter().map(|&r| StepLevel::Rate(r)).collect(),
        step_duration: Duration::from_secs(2),
        max_in_flight: 10,
        drain: Duration::from_secs(1),
    };
    let facts = RunFacts {
        label: label.into(),
        sql: "SELECT 1".into(),
        started_at: format!("2026-12-03T10:00:0{}Z", label.len()),
        cores: 2,
        ..RunFacts::default()
    };
    LoadReport::new(facts, &plan, steps)
}

#[test]
fn merged_counts_add_and_percentiles_are_one_histogram_s_of_every_sample() {
    let a = run(
        "a",
        [50.0, 100.0],
        [&[5, 6, 7, 8, 300], &[9, 10, 11, 400, 500]],
    );
    let b = run("bb", [50.0, 100.0], [&[4, 5, 900], &[12, 13, 14, 15]]);
    let all = run(
        "all",
        [100.0, 200.0],
        [
            &[5, 6, 7, 8, 300, 4, 5, 900],
            &[9, 10, 11, 400, 500, 12, 13, 14, 15],
        ],
    );
    let merged = merge(&[a.clone(), b.clone()]).expect("merged");
    for (k, step) in merged.steps.iter().enumerate() {
        let one = &all.steps[k];
        assert_eq!(step.count, a.steps[k].count + b.steps[k].count);
        assert_eq!(step.errors, 2);
        assert_eq!(step.errors_by_status.get("UNAVAILABLE"), Some(&2));
        assert_eq!(
            step.target_rate, one.target_rate,
            "the load asked is the sum"
        );
        for (got, want) in [
            (step.p50_ms, one.p50_ms),
            (step.p90_ms, one.p90_ms),
            (step.p99_ms, one.p99_ms),
            (step.p999_ms, one.p999_ms),
            (step.max_ms, one.max_ms),
            (step.p99_uncorrected_ms, one.p99_uncorrected_ms),
            (step.over_100ms_share, one.over_100ms_share),
        ] {
            assert_eq!(got, want, "step {k}");
        }
        assert_eq!(step.histogram, one.histogram, "the same histogram, exactly");
        assert_eq!(step.processes.len(), 2, "each process kept apart");
        assert_eq!(step.processes[1].count, b.steps[k].count);
        assert_eq!(step.rows, 10 * step.count);
    }
    assert!(
        merged
            .notices
            .iter()
            .any(|n| n.starts_with("merged from 2 runs"))
    );
    // Merging a merge with a third run keeps every process apart.
    let again = merge(&[merged, a]).expect("merged again");
    assert_eq!(again.steps[0].processes.len(), 3);
}

#[test]
fn runs_that_do_not_match_are_refused_by_name() {
    let a = run("a", [50.0, 100.0], [&[5], &[6]]);
    assert_eq!(merge(std::slice::from_ref(&a)), Err(MergeError::TooFew(1)));
    let mut other = a.clone();
    other.sql = "SELECT 2".into();
    assert!(matches!(
        merge(&[a.clone(), other]),
        Err(MergeError::Mismatch { index: 2, .. })
    ));
    let mut shorter = a.clone();
    shorter.steps.pop();
    let error = merge(&[a.clone(), shorter]).expect_err("fewer steps");
    assert!(error.to_string().contains("1 steps, not 2"), "{error}");
    let (mut here, mut there) = (a.clone(), a.clone());
    here.database = "orders".into();
    there.database = "orders-copy".into();
    let error = merge(&[here.clone(), there]).expect_err("another database");
    assert!(error.to_string().contains("another database"), "{error}");
    assert!(
        merge(&[here, a.clone()]).is_ok(),
        "a report that does not name its database is taken"
    );
    let mut broken = a.clone();
    broken.steps[1].histogram = "not base64!".into();
    assert!(matches!(
        merge(&[a, broken]),
        Err(MergeError::Histogram {
            index: 2,
            step: 2,
            ..
        })
    ));
}

#[test]
fn sums_past_their_type_are_refused_not_wrapped() {
    let a = run("a", [50.0, 100.0], [&[5], &[6]]);
    let mut b = run("bb", [50.0, 100.0], [&[7], &[8]]);
    let mut huge = b.clone();
    huge.steps[1].count = u64::MAX;
    assert_eq!(
        merge(&[a.clone(), huge]),
        Err(MergeError::Overflow {
            step: 2,
            what: "count"
        })
    );
    b.max_in_flight = u32::MAX;
    assert_eq!(
        merge(&[a.clone(), b.clone()]),
        Err(MergeError::Overflow {
            step: 0,
            what: "max_in_flight"
        })
    );
    // Finite figures whose sum is not.
    let mut wide = run("bb", [50.0, 100.0], [&[7], &[8]]);
    let mut wider = a.clone();
    wide.steps[0].bytes_per_s = f64::MAX;
    wider.steps[0].bytes_per_s = f64::MAX;
    assert_eq!(
        merge(&[wider, wide]),
        Err(MergeError::Overflow {
            step: 1,
            what: "bytes_per_s"
        })
    );
}

#[test]
fn a_report_spanprof_would_not_write_does_not_read_back() {
    let good = run("a", [50.0, 100.0], [&[5], &[6]]);
    let read = |r: &LoadReport| {
        LoadReport::from_json(&serde_json::to_vec(r).expect("serialises"))
            .map_err(|e| e.to_string())
    };
    assert_eq!(read(&good), Ok(good.clone()));
    let mut version = good.clone();
    version.version = 99;
    assert!(
        read(&version).is_err_and(|e| e.contains("version 99")),
        "{:?}",
        read(&version)
    );
    let mut many = good.clone();
    many.steps = vec![good.steps[0].clone(); crate::load::MAX_STEPS + 1];
    assert!(
        read(&many).is_err_and(|e| e.contains("1001 steps")),
        "{:?}",
        read(&many)
    );
    let mut long = good.clone();
    long.step_duration_s = 1e308;
    assert!(
        read(&long).is_err_and(|e| e.contains("step duration")),
        "{:?}",
        read(&long)
    );
    let mut figure = good.clone();
    figure.steps[1].duration_s = 1e308;
    assert!(
        read(&figure).is_err_and(|e| e.contains("step 2's duration_s")),
        "{:?}",
        read(&figure)
    );
    let mut part = good;
    part.steps[0].parts.insert("server".into(), -1e300);
    assert!(
        read(&part).is_err_and(|e| e.contains("server")),
        "{:?}",
        read(&part)
    );
}

/// A read-write step of `committed` transactions, `retried` of them after one abort at commit.
fn read_write_step(committed: u64, retried: u64) -> StepResult {
    use crate::report::{ActionKind, Attempt, AttemptOutcome, TransactionRecord};
    let mut tally = StepTally::read_write(StepLevel::Concurrency(2));
    for i in 0..committed {
        let mut attempts = Vec::new();
        if i < retried {
            attempts.push(Attempt {
                ended_at: Some(ActionKind::Commit),
                ..Attempt::new(AttemptOutcome::Aborted)
            });
        }
        attempts.push(Attempt::new(AttemptOutcome::Committed));
        tally.ok(
            &Ended {
                at: Duration::from_millis(500),
                ..Ended::default()
            },
            &Parts::default(),
        );
        tally.transaction(&TransactionRecord {
            attempts,
            ..TransactionRecord::default()
        });
    }
    tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default())
}

#[test]
fn read_write_steps_merge_their_attempts_aborts_and_conflicts_and_query_steps_gain_none() {
    let (mut a, b) = (read_write_step(10, 2), read_write_step(30, 0));
    a.conflicts = Some(crate::report::Conflicts {
        waits: 2,
        wait_ms: 8.0,
        wounds: 0,
        keys: vec![crate::report::KeyConflicts {
            key: "accounts(1)".into(),
            waits: 2,
            wait_ms: 8.0,
            ..Default::default()
        }],
    });
    let merged = merge_transactions(&[&a, &b]);
    let conflicts = merged.conflicts.as_ref().expect("the conflicts are kept");
    assert_eq!((conflicts.waits, conflicts.wait_ms), (2, 8.0));
    assert_eq!(conflicts.keys[0].key, "accounts(1)");
    assert_eq!(merged.committed, Some(40));
    assert_eq!(merged.committed_per_s, Some(40.0));
    assert_eq!(merged.attempts_per_s, Some(42.0));
    assert_eq!(merged.attempts, BTreeMap::from([(1, 38), (2, 2)]));
    assert_eq!(merged.aborts_at, BTreeMap::from([("commit".to_owned(), 2)]));
    assert_eq!(merged.aborts_per_transaction, Some(0.05));
    let query = StepTally::new(StepLevel::Rate(1.0)).finish(
        Duration::ZERO,
        Duration::from_secs(1),
        StepCpu::default(),
    );
    let none = merge_transactions(&[&query, &query]);
    assert_eq!(none.committed, None);
    assert!(none.attempts.is_empty());
    assert!(none.conflicts.is_none());
}

#[test]
fn a_mix_s_shares_add_up_across_processes_and_one_seed_twice_is_said() {
    let names = ["transfer".to_owned(), "audit".to_owned()];
    let run_of = |seed: u64, committed: u32| {
        let mut tally = StepTally::read_write(StepLevel::Concurrency(1)).with_scripts(&names);
        for _ in 0..committed {
            tally.script_ended(0, Some(Duration::from_millis(3)), None);
        }
        tally.script_ended(1, None, None);
        let step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        let mut r = run("rw", [10.0, 20.0], [&[5], &[6]]);
        r.steps = vec![StepResult {
            committed: Some(u64::from(committed)),
            ..step
        }];
        r.draws = Some(crate::load::Draws {
            seed,
            ..Default::default()
        });
        r
    };
    let merged = merge(&[run_of(1, 3), run_of(1, 4)]).expect("merges");
    let scripts = &merged.steps[0].scripts;
    assert_eq!(scripts.len(), 2);
    assert_eq!(
        (scripts[0].script.as_str(), scripts[0].committed),
        ("transfer", 7)
    );
    assert_eq!((scripts[1].requests, scripts[1].errors), (2, 2));
    assert_eq!(scripts[0].p50_ms, None, "percentiles are not added");
    assert!(merged.draws.is_none());
    assert!(
        merged
            .notices
            .iter()
            .any(|n| n.contains("drew the same keys")),
        "{:?}",
        merged.notices
    );
    let apart = merge(&[run_of(1, 3), run_of(2, 4)]).expect("merges");
    assert!(!apart.notices.iter().any(|n| n.contains("same keys")));
}

#[test]
fn the_targets_statistics_are_kept_only_when_every_run_read_the_same() {
    use crate::load::server_stats::{ServedStats, ServerStats, StatsRead};
    let stats = |from: &str, attempts: u64| ServerStats {
        tag: "spanprof-load-0a1b2c3d".into(),
        run_from: from.into(),
        run_to: from.into(),
        read: StatsRead::Served(ServedStats {
            intervals: vec![format!("2026-12-05T18:0{attempts}:00Z")],
            ..ServedStats::default()
        }),
        lock_free: false,
    };
    let mut a = run("a", [50.0, 100.0], [&[5], &[6]]);
    let mut b = run("bb", [50.0, 100.0], [&[5], &[6]]);
    a.server_stats = Some(stats("2026-12-05T18:00:01Z", 1));
    b.server_stats = Some(stats("2026-12-05T18:00:02Z", 1));
    let merged = merge(&[a.clone(), b.clone()]).expect("merges");
    assert_eq!(
        merged.server_stats.as_ref().map(|s| &s.read),
        a.server_stats.as_ref().map(|s| &s.read),
        "the same rows, read by two processes, are the merged run's"
    );
    b.server_stats = Some(stats("2026-12-05T18:00:02Z", 2));
    let merged = merge(&[a.clone(), b.clone()]).expect("merges");
    assert_eq!(
        merged.server_stats, None,
        "never one run's passed off as both's"
    );
    assert!(
        merged
            .notices
            .iter()
            .any(|n| n.contains("own statistics are left out")),
        "{:?}",
        merged.notices
    );
    b.server_stats = None;
    let merged = merge(&[a, b]).expect("merges");
    assert_eq!(merged.server_stats, None);
    assert!(merged.notices.iter().any(|n| n.contains("1 of the 2 runs")));
}
