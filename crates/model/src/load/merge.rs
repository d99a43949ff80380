//! Load runs of one query made at the same time by several processes (on several machines),
//! merged into the run they made together: each step's histograms added exactly (counts add, so
//! the merged percentiles are those of one histogram of every sample), its counts, rates, bytes
//! and CPU summed, its parts weighted by each process's requests, its level the sum of theirs
//! (the load asked of the server); each process's generator figures kept apart, since one
//! machine's lagging generator is not the others'. The knee is found again on the merged steps.

use std::collections::BTreeMap;
use std::time::Duration;

use super::histogram::{HistogramError, Latencies};
use super::report::{LoadReport, RunFacts};
use super::step::{ProcessStep, SLOW, StepCpu, StepResult, StepTally};
use super::{LoadSteps, StepLevel};

/// Why runs cannot be merged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MergeError {
    /// Fewer than two runs.
    #[error("merge needs two runs or more, not {0}")]
    TooFew(usize),
    /// Runs of different queries, models or steps.
    #[error("run {index} does not match the first: {why}")]
    Mismatch {
        /// Its position among the runs given (from 1).
        index: usize,
        /// What differs.
        why: String,
    },
    /// A sum over the runs that does not fit its type (or is no longer finite): one of the runs
    /// holds figures no real run has.
    #[error("step {step}: {what} summed over the runs overflows")]
    Overflow {
        /// The step's position (from 1), 0 for the run's own figures.
        step: usize,
        /// The figure's name.
        what: &'static str,
    },
    /// A step's histogram does not read back.
    #[error("run {index}, step {step}: {error}")]
    Histogram {
        /// Its position among the runs given (from 1).
        index: usize,
        /// The step's position (from 1).
        step: usize,
        /// Why.
        error: HistogramError,
    },
}

/// The run `runs` made together. They must be runs of one query in one model with the same
/// number of steps (each process's levels may differ: a step's level is their sum).
pub fn merge(runs: &[LoadReport]) -> Result<LoadReport, MergeError> {
    let [first, rest @ ..] = runs else {
        return Err(MergeError::TooFew(0));
    };
    if rest.is_empty() {
        return Err(MergeError::TooFew(1));
    }
    for (i, run) in rest.iter().enumerate() {
        let mismatch = |why: String| MergeError::Mismatch { index: i + 2, why };
        if run.sql != first.sql {
            return Err(mismatch("another query".into()));
        }
        // Reports written before the database was kept say nothing of it: only two names differ.
        if !run.database.is_empty() && !first.database.is_empty() && run.database != first.database
        {
            return Err(mismatch(format!(
                "another database ({}, not {})",
                run.database, first.database
            )));
        }
        if run.model != first.model {
            return Err(mismatch("another model (open against closed)".into()));
        }
        if run.steps.len() != first.steps.len() {
            return Err(mismatch(format!(
                "{} steps, not {}",
                run.steps.len(),
                first.steps.len()
            )));
        }
    }
    let steps = (0..first.steps.len())
        .map(|k| merge_step(runs, k))
        .collect::<Result<Vec<_>, _>>()?;
    let overflow = |what| MergeError::Overflow { step: 0, what };
    let plan = LoadSteps {
        model: first.model,
        levels: steps.iter().map(StepResult::level).collect(),
        step_duration: first.step_duration(),
        max_in_flight: checked_sum(runs.iter().map(|r| r.max_in_flight))
            .ok_or_else(|| overflow("max_in_flight"))?,
        drain: std::time::Duration::ZERO,
    };
    let mut notices: Vec<String> = runs.iter().flat_map(|r| r.notices.clone()).collect();
    notices.push(format!(
        "merged from {} runs: {}",
        runs.len(),
        runs.iter().map(run_name).collect::<Vec<_>>().join("; ")
    ));
    notices.extend(draws_notice(runs));
    let (server_stats, stats_notice) = merged_server_stats(runs);
    notices.extend(stats_notice);
    let facts = RunFacts {
        label: first.label.clone(),
        sql: first.sql.clone(),
        target: first.target.clone(),
        database: first.database.clone(),
        started_at: runs
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        decoder: first.decoder.clone(),
        notices,
        cores: checked_sum(runs.iter().map(|r| r.cores as u64))
            .and_then(|c| usize::try_from(c).ok())
            .ok_or_else(|| overflow("cores"))?,
        cancelled: runs.iter().any(|r| r.cancelled),
    };
    let mut merged = LoadReport::new(facts, &plan, steps);
    merged.server_stats = server_stats;
    Ok(merged)
}

/// The target's statistics the merged run keeps: those of the first run when every run read the
/// same rows for the same tag (several processes of one run, reading one target's tables), else
/// none, with a notice saying so (never some runs' statistics passed off as the merged run's).
fn merged_server_stats(
    runs: &[LoadReport],
) -> (Option<super::server_stats::ServerStats>, Option<String>) {
    let first = runs.first().and_then(|r| r.server_stats.as_ref());
    let same = runs.iter().all(|r| match (&r.server_stats, first) {
        (Some(s), Some(f)) => s.tag == f.tag && s.read == f.read,
        _ => false,
    });
    if same {
        return (first.cloned(), None);
    }
    let had = runs.iter().filter(|r| r.server_stats.is_some()).count();
    if had == 0 {
        return (None, None);
    }
    let notice = format!(
        "the target's own statistics are left out: {had} of the {} runs read them, and not the \
         same rows for one tag",
        runs.len()
    );
    (None, Some(notice))
}

/// The sum of `values`, `None` past `T`'s range.
fn checked_sum<T: Into<u64> + TryFrom<u64>>(values: impl IntoIterator<Item = T>) -> Option<T> {
    let total = values
        .into_iter()
        .try_fold(0u64, |total, v| total.checked_add(v.into()))?;
    T::try_from(total).ok()
}

fn run_name(run: &LoadReport) -> String {
    format!("{} at {}", run.label, run.started_at)
}

/// Step `k`'s histograms, from the intended and from the actual start, each the sum of every
/// run's.
fn histograms(steps: &[&StepResult], k: usize) -> Result<(Latencies, Latencies), MergeError> {
    let (mut corrected, mut uncorrected) = (Latencies::new(), Latencies::new());
    for (i, step) in steps.iter().enumerate() {
        let read = |text: &str| {
            Latencies::decode(text).map_err(|error| MergeError::Histogram {
                index: i + 1,
                step: k + 1,
                error,
            })
        };
        corrected.add(&read(&step.histogram)?);
        uncorrected.add(&read(&step.histogram_uncorrected)?);
    }
    Ok((corrected, uncorrected))
}

/// The steps' failures by status, summed; `None` past a `u64`.
fn errors_by_status(steps: &[&StepResult]) -> Option<BTreeMap<String, u64>> {
    let mut sums: BTreeMap<String, u64> = BTreeMap::new();
    for s in steps {
        for (status, n) in &s.errors_by_status {
            let total = sums.entry(status.clone()).or_default();
            *total = total.checked_add(*n)?;
        }
    }
    Some(sums)
}

/// Step `k` of every run, merged.
fn merge_step(runs: &[LoadReport], k: usize) -> Result<StepResult, MergeError> {
    let steps: Vec<&StepResult> = runs.iter().map(|r| &r.steps[k]).collect();
    let (corrected, uncorrected) = histograms(&steps, k)?;
    let overflow = |what| MergeError::Overflow { step: k + 1, what };
    let sum = |what, f: fn(&StepResult) -> u64| {
        checked_sum(steps.iter().map(|s| f(s))).ok_or_else(|| overflow(what))
    };
    let sum_f = |what, f: fn(&StepResult) -> f64| {
        let total = steps.iter().map(|s| f(s)).sum::<f64>();
        if total.is_finite() {
            Ok(total)
        } else {
            Err(overflow(what))
        }
    };
    let count = sum("count", |s| s.count)?;
    // A mean per request, weighted by each process's requests.
    let per_request = |f: fn(&StepResult) -> Option<f64>| -> Option<f64> {
        let (mut total, mut n) = (0.0, 0u64);
        for s in &steps {
            if let Some(v) = f(s) {
                total += v * s.count as f64;
                n += s.count;
            }
        }
        (n > 0).then(|| total / n as f64)
    };
    let errors_by_status = errors_by_status(&steps).ok_or_else(|| overflow("errors_by_status"))?;
    let mut parts: BTreeMap<String, f64> = BTreeMap::new();
    if count > 0 {
        for s in &steps {
            for (key, mean) in &s.parts {
                *parts.entry(key.clone()).or_default() += mean * s.count as f64 / count as f64;
            }
        }
    }
    let share = |h: &Latencies| {
        let n = h.count();
        (n > 0).then(|| h.count_above(SLOW) as f64 / n as f64)
    };
    let level = match steps[0].level() {
        StepLevel::Rate(_) => StepLevel::Rate(sum_f("target_rate", |s| s.level().value())?),
        StepLevel::Concurrency(_) => StepLevel::Concurrency(
            checked_sum(steps.iter().map(|s| s.concurrency.unwrap_or(0)))
                .ok_or_else(|| overflow("concurrency"))?,
        ),
    };
    let (target_rate, concurrency) = match level {
        StepLevel::Rate(r) => (Some(r), None),
        StepLevel::Concurrency(c) => (None, Some(c)),
    };
    let processes = runs
        .iter()
        .zip(&steps)
        .flat_map(|(run, s)| process_steps(run, s))
        .collect();
    Ok(StepResult {
        target_rate,
        concurrency,
        started_s: steps
            .iter()
            .map(|s| s.started_s)
            .fold(f64::INFINITY, f64::min),
        duration_s: steps.iter().map(|s| s.duration_s).fold(0.0, f64::max),
        achieved_rate: sum_f("achieved_rate", |s| s.achieved_rate)?,
        p50_ms: corrected.quantile_ms(0.5),
        p90_ms: corrected.quantile_ms(0.9),
        p99_ms: corrected.quantile_ms(0.99),
        p999_ms: corrected.quantile_ms(0.999),
        max_ms: corrected.max_ms(),
        p50_uncorrected_ms: uncorrected.quantile_ms(0.5),
        p90_uncorrected_ms: uncorrected.quantile_ms(0.9),
        p99_uncorrected_ms: uncorrected.quantile_ms(0.99),
        over_100ms_share: share(&corrected),
        over_100ms_share_uncorrected: share(&uncorrected),
        count,
        errors: sum("errors", |s| s.errors)?,
        errors_by_status,
        late: sum("late", |s| s.late)?,
        dropped: sum("dropped", |s| s.dropped)?,
        unfinished: sum("unfinished", |s| s.unfinished)?,
        // The worst process's: the merged step is as trustworthy as its laggiest generator.
        generator_lag_p99_ms: steps
            .iter()
            .filter_map(|s| s.generator_lag_p99_ms)
            .reduce(f64::max),
        generator_lag_max_ms: steps
            .iter()
            .filter_map(|s| s.generator_lag_max_ms)
            .reduce(f64::max),
        generator_cpu_ms: steps
            .iter()
            .filter_map(|s| s.generator_cpu_ms)
            .reduce(|a, b| a + b),
        process_cpu_ms: sum_f("process_cpu_ms", |s| s.process_cpu_ms)?,
        rows: sum("rows", |s| s.rows)?,
        bytes: sum("bytes", |s| s.bytes)?,
        rows_per_s: sum_f("rows_per_s", |s| s.rows_per_s)?,
        bytes_per_s: sum_f("bytes_per_s", |s| s.bytes_per_s)?,
        decode_cpu_ms_per_query: per_request(|s| s.decode_cpu_ms_per_query),
        client_cpu_ms_per_query: per_request(|s| s.client_cpu_ms_per_query),
        parts,
        server_queue_ms: per_request(|s| s.server_queue_ms),
        histogram: corrected.encode(),
        histogram_uncorrected: uncorrected.encode(),
        processes,
        ..merge_transactions(&steps)
    })
}

/// `from`'s counts added to `into`'s, key by key.
fn add_counts<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, n) in from {
        let slot = into.entry(k.clone()).or_insert(0);
        *slot = slot.saturating_add(*n);
    }
}

/// The steps' read-write figures merged, on an otherwise empty step: counts and rates summed,
/// the attempts' histogram, the aborts and who blocked whom added, the aborts per transaction
/// recomputed from them.
/// Nothing when no step is a read-write one.
fn merge_transactions(steps: &[&StepResult]) -> StepResult {
    let mut merged = StepTally::new(StepLevel::Rate(0.0)).finish(
        Duration::ZERO,
        Duration::ZERO,
        StepCpu::default(),
    );
    if steps.iter().all(|s| s.committed.is_none()) {
        return merged;
    }
    for s in steps {
        add_counts(&mut merged.attempts, &s.attempts);
        add_counts(&mut merged.aborts_at, &s.aborts_at);
    }
    let sum = |f: fn(&StepResult) -> Option<f64>| Some(steps.iter().filter_map(|s| f(s)).sum());
    merged.committed = Some(steps.iter().filter_map(|s| s.committed).sum());
    merged.committed_per_s = sum(|s| s.committed_per_s);
    merged.attempts_per_s = sum(|s| s.attempts_per_s);
    let transactions: u64 = merged.attempts.values().sum();
    let aborts: u64 = merged.aborts_at.values().sum();
    merged.aborts_per_transaction = (transactions > 0).then(|| aborts as f64 / transactions as f64);
    merged.scripts = merge_scripts(steps);
    merged.conflicts =
        crate::report::Conflicts::merged(steps.iter().filter_map(|s| s.conflicts.as_ref()));
    merged
}

/// A mix's per-script shares across the steps, by name in their first order: counts and rates
/// summed; the aborts per transaction and percentiles kept only when one step had the script
/// (they cannot be added without each script's transactions and histograms).
fn merge_scripts(steps: &[&StepResult]) -> Vec<super::ScriptShare> {
    let mut merged: Vec<(super::ScriptShare, usize)> = Vec::new();
    for x in steps.iter().flat_map(|s| &s.scripts) {
        match merged.iter_mut().find(|(m, _)| m.script == x.script) {
            Some((m, seen)) => {
                *seen += 1;
                m.requests = m.requests.saturating_add(x.requests);
                m.committed = m.committed.saturating_add(x.committed);
                m.errors = m.errors.saturating_add(x.errors);
                m.committed_per_s += x.committed_per_s;
                m.aborts_per_transaction = None;
                (m.p50_ms, m.p90_ms, m.p99_ms) = (None, None, None);
            }
            None => merged.push((x.clone(), 1)),
        }
    }
    merged.into_iter().map(|(m, _)| m).collect()
}

/// What the merged run says of its runs' draws: that it keeps none, and which runs drew with one
/// seed (their processes drew the same keys, in the same order).
fn draws_notice(runs: &[LoadReport]) -> Option<String> {
    let seeds: Vec<u64> = runs
        .iter()
        .filter_map(|r| Some(r.draws.as_ref()?.seed))
        .collect();
    if seeds.is_empty() {
        return None;
    }
    let mut words = "each run drew its own parameters: the merged run keeps no draws, and a mix's \
                     per-script percentiles are left out"
        .to_owned();
    let mut sorted = seeds.clone();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        words.push_str("; some runs drew with one seed, so their processes drew the same keys");
    }
    Some(words)
}

/// A step's processes: its own, or, for a step merged before, the ones it holds.
fn process_steps(run: &LoadReport, step: &StepResult) -> Vec<ProcessStep> {
    if !step.processes.is_empty() {
        return step.processes.clone();
    }
    vec![ProcessStep {
        run: run_name(run),
        level: step.level().value(),
        achieved_rate: step.achieved_rate,
        count: step.count,
        generator_lag_p99_ms: step.generator_lag_p99_ms,
        generator_lag_max_ms: step.generator_lag_max_ms,
        generator_cpu_ms: step.generator_cpu_ms,
    }]
}

#[cfg(test)]
mod tests;
