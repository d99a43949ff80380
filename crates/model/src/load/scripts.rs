//! A mix's scripts within one step (`load --read-write --mix`): per script, its requests, the
//! transactions committed and failed, the aborts per transaction and the committed ones' latencies
//! from the intended start, folded as they end ([`ScriptTally`]) and reported beside the step's
//! totals ([`ScriptShare`], the JSON's `steps[].scripts[]`), which they add up to.

use std::time::Duration;

use super::histogram::Latencies;

/// The most scripts a mix holds.
pub const MAX_MIX_SCRIPTS: usize = 16;

/// One script's figures while its step runs.
#[derive(Debug, Clone)]
pub struct ScriptTally {
    name: String,
    committed: Latencies,
    errors: u64,
    transactions: u64,
    aborts: u64,
}

impl ScriptTally {
    /// An empty tally for the script `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ScriptTally {
            name: name.into(),
            committed: Latencies::new(),
            errors: 0,
            transactions: 0,
            aborts: 0,
        }
    }

    /// One of its requests ended: committed with `latency` from its intended start, or failed
    /// (`None`); `aborts` of its `attempts` aborted (a request that made no attempt has none).
    pub fn ended(&mut self, latency: Option<Duration>, attempts: usize, aborts: u64) {
        match latency {
            Some(l) => self.committed.record(l),
            None => self.errors += 1,
        }
        if attempts > 0 {
            self.transactions += 1;
            self.aborts += aborts;
        }
    }

    /// Its figures over a step that lasted `span` seconds.
    pub fn finish(&self, span: f64) -> ScriptShare {
        let committed = self.committed.count();
        ScriptShare {
            script: self.name.clone(),
            requests: committed + self.errors,
            committed,
            errors: self.errors,
            committed_per_s: if span > 0.0 {
                committed as f64 / span
            } else {
                0.0
            },
            aborts_per_transaction: (self.transactions > 0)
                .then(|| self.aborts as f64 / self.transactions as f64),
            p50_ms: self.committed.quantile_ms(0.5),
            p90_ms: self.committed.quantile_ms(0.9),
            p99_ms: self.committed.quantile_ms(0.99),
        }
    }
}

/// One script's figures in a step of a mix. Latencies are the committed transactions', from the
/// intended start; `None` when none committed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ScriptShare {
    /// The script's name (its file's stem).
    pub script: String,
    /// Its requests that ended (committed or failed).
    pub requests: u64,
    /// Its transactions committed.
    pub committed: u64,
    /// Its requests that failed.
    pub errors: u64,
    /// Committed a second.
    pub committed_per_s: f64,
    /// Aborted attempts per transaction.
    pub aborts_per_transaction: Option<f64>,
    /// Median latency.
    pub p50_ms: Option<f64>,
    /// 90th percentile.
    pub p90_ms: Option<f64>,
    /// 99th percentile.
    pub p99_ms: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_counts_its_requests_commits_and_aborts() {
        let mut t = ScriptTally::new("transfer");
        t.ended(Some(Duration::from_millis(10)), 1, 0);
        t.ended(Some(Duration::from_millis(30)), 3, 2);
        t.ended(None, 2, 2);
        t.ended(None, 0, 0);
        let s = t.finish(2.0);
        assert_eq!(s.script, "transfer");
        assert_eq!((s.requests, s.committed, s.errors), (4, 2, 2));
        assert_eq!(s.committed_per_s, 1.0);
        assert_eq!(s.aborts_per_transaction, Some(4.0 / 3.0));
        assert!(
            s.p99_ms.is_some_and(|ms| (29.0..31.0).contains(&ms)),
            "{s:?}"
        );
        let none = ScriptTally::new("idle").finish(1.0);
        assert_eq!(
            (none.requests, none.p50_ms, none.aborts_per_transaction),
            (0, None, None)
        );
    }
}
