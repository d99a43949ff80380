//! The retry check (`spanprof client --read-write`): a subject's read-write calls, as the local
//! instance saw them, held against SPANNER_WIRE's "a correct retry", rule by rule, with the
//! amplification (attempts per logical transaction) and the transactions that starved.
//!
//! An attempt is a transaction the instance began (explicitly or inline); the calls naming it
//! are its. A logical transaction is an attempt and its retries: a retry is linked to the
//! attempt it carries on from by what the server knows (the aborted attempt whose age it kept,
//! or the previous transaction its begin named), or else guessed: the latest aborted attempt not
//! yet retried with the same transaction tag, on the same session first. A guess is what lets a
//! retry that broke the rules (another session, no previous id) be told from a new transaction;
//! a program that gives up on an abort and starts something else under the same tag is guessed
//! to have retried.

use std::collections::HashMap;

use crate::retry_lab::{
    ABORTED, Amplification, Evidence, RetryCheck, Rule, RuleVerdict, RwRequest, RwRpc,
    STARVED_ATTEMPTS, Starved, Verdict,
};

/// One attempt: a transaction the instance began, and its calls.
struct Attempt {
    txn: u64,
    begin: usize,
    calls: Vec<usize>,
    multiplexed: bool,
    previous_named: Option<u64>,
    previous_kept: Option<u64>,
    /// The first call answered ABORTED.
    aborted: Option<usize>,
    committed: bool,
    /// The attempt it retries.
    retries: Option<usize>,
    retried: bool,
    /// Its logical transaction, and its place in it (from 0).
    chain: usize,
    place: usize,
}

struct Seen<'a> {
    calls: &'a [RwRequest],
    attempts: Vec<Attempt>,
    chains: Vec<Vec<usize>>,
}

/// What a rule's pass over the attempts found.
#[derive(Default)]
struct Tally {
    checked: u32,
    first: Option<(f64, Evidence)>,
}

impl Tally {
    fn fail(&mut self, at: f64, evidence: Evidence) {
        if self.first.as_ref().is_none_or(|(t, _)| at < *t) {
            self.first = Some((at, evidence));
        }
    }

    fn verdict(self, rule: Rule, why_not: &str) -> RuleVerdict {
        let verdict = match (self.first, self.checked) {
            (Some((_, evidence)), checked) => Verdict::Fail { checked, evidence },
            (None, 0) => Verdict::NotExercised {
                why: why_not.to_owned(),
            },
            (None, checked) => Verdict::Pass { checked },
        };
        RuleVerdict { rule, verdict }
    }
}

/// The retry check of `calls` (in any order); `overflow`: the instance kept only the first.
pub fn retry_check(calls: &[RwRequest], overflow: bool) -> RetryCheck {
    let seen = Seen::new(calls);
    let rules = vec![
        seen.links(Rule::SameSession).verdict(
            Rule::SameSession,
            "no attempt on a regular session was aborted and retried",
        ),
        seen.links(Rule::PreviousTransaction).verdict(
            Rule::PreviousTransaction,
            "no attempt on a multiplexed session was aborted and retried",
        ),
        seen.tags()
            .verdict(Rule::SameTag, "no request carried a transaction tag"),
        seen.tokens().verdict(
            Rule::LatestToken,
            "no commit on a multiplexed session after a precommit token",
        ),
        seen.links(Rule::RetryDelay).verdict(
            Rule::RetryDelay,
            "no ABORTED with a RetryInfo delay was retried",
        ),
        seen.rollbacks().verdict(
            Rule::RollbackAfterFailure,
            "no request of a transaction failed with an error other than ABORTED",
        ),
    ];
    RetryCheck {
        rules,
        amplification: seen.amplification(),
        starved: seen.starved(),
        requests: calls.len(),
        overflow,
    }
}

fn short_session(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

impl<'a> Seen<'a> {
    fn new(calls: &'a [RwRequest]) -> Self {
        let mut order: Vec<usize> = (0..calls.len()).collect();
        order.sort_by(|a, b| calls[*a].arrived_ms.total_cmp(&calls[*b].arrived_ms));
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut by_txn: HashMap<u64, usize> = HashMap::new();
        for i in order {
            let call = &calls[i];
            if let Some(began) = call.began {
                by_txn.insert(began.txn, attempts.len());
                attempts.push(Attempt {
                    txn: began.txn,
                    begin: i,
                    calls: vec![i],
                    multiplexed: began.multiplexed,
                    previous_named: began.previous_named,
                    previous_kept: began.previous_kept,
                    aborted: None,
                    committed: false,
                    retries: None,
                    retried: false,
                    chain: 0,
                    place: 0,
                });
            } else if let Some(a) = call.named.and_then(|t| by_txn.get(&t)) {
                attempts[*a].calls.push(i);
            }
        }
        for attempt in &mut attempts {
            attempt.aborted = attempt
                .calls
                .iter()
                .copied()
                .find(|c| calls[*c].code == ABORTED);
            attempt.committed = attempt
                .calls
                .iter()
                .any(|c| calls[*c].rpc == RwRpc::Commit && calls[*c].code == 0);
        }
        let mut seen = Seen {
            calls,
            attempts,
            chains: Vec::new(),
        };
        seen.link(&by_txn);
        seen
    }

    /// Links each attempt to the one it retries, and numbers the logical transactions.
    fn link(&mut self, by_txn: &HashMap<u64, usize>) {
        for a in 0..self.attempts.len() {
            let known = |t: Option<u64>| t.and_then(|t| by_txn.get(&t).copied()).filter(|p| *p < a);
            let attempt = &self.attempts[a];
            let previous = known(attempt.previous_kept)
                .or_else(|| known(attempt.previous_named))
                .or_else(|| self.guess(a));
            match previous {
                Some(p) => {
                    self.attempts[p].retried = true;
                    let (chain, place) = (self.attempts[p].chain, self.attempts[p].place + 1);
                    let attempt = &mut self.attempts[a];
                    (attempt.retries, attempt.chain, attempt.place) = (Some(p), chain, place);
                    self.chains[chain].push(a);
                }
                None => {
                    self.attempts[a].chain = self.chains.len();
                    self.chains.push(vec![a]);
                }
            }
        }
    }

    /// The aborted attempt `a` most likely retries when the server knows of none: the latest
    /// aborted before `a` began, not yet retried, with its tag, on its session first.
    fn guess(&self, a: usize) -> Option<usize> {
        let begin = &self.calls[self.attempts[a].begin];
        let candidates = self.attempts[..a].iter().enumerate().filter(|(_, p)| {
            let call = &self.calls[p.begin];
            !p.retried
                && call.tag == begin.tag
                && p.aborted
                    .is_some_and(|c| self.calls[c].answered_ms <= begin.arrived_ms)
        });
        let latest = |(i, p): (usize, &Attempt)| {
            let same = self.calls[p.begin].session == begin.session;
            let at = p.aborted.map_or(0.0, |c| self.calls[c].answered_ms);
            (same, at, i)
        };
        candidates
            .map(latest)
            .max_by(|x, y| x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)))
            .map(|(_, _, i)| i)
    }

    fn evidence(&self, a: usize, call: usize, expected: String, seen: String) -> Evidence {
        let attempt = &self.attempts[a];
        let c = &self.calls[call];
        Evidence {
            transaction: u32::try_from(attempt.chain + 1).unwrap_or(u32::MAX),
            attempt: u32::try_from(attempt.place + 1).unwrap_or(u32::MAX),
            request: format!(
                "{} of transaction {:016x} at {:.1} ms",
                c.rpc.label(),
                attempt.txn,
                c.arrived_ms
            ),
            expected,
            seen,
        }
    }

    /// The rules on a retry after an ABORTED: its session, the previous id it names, its wait.
    fn links(&self, rule: Rule) -> Tally {
        let mut tally = Tally::default();
        for (a, attempt) in self.attempts.iter().enumerate() {
            let Some(p) = attempt.retries else { continue };
            let prev = &self.attempts[p];
            let Some(abort) = prev.aborted else { continue };
            let (begin, was) = (&self.calls[attempt.begin], &self.calls[prev.begin]);
            let at = begin.arrived_ms;
            match rule {
                Rule::SameSession if !prev.multiplexed => {
                    tally.checked += 1;
                    if begin.session != was.session {
                        let expected = format!("session {}", short_session(&was.session));
                        let seen = format!("session {}", short_session(&begin.session));
                        tally.fail(at, self.evidence(a, attempt.begin, expected, seen));
                    }
                }
                Rule::PreviousTransaction if prev.multiplexed => {
                    tally.checked += 1;
                    if attempt.previous_named != Some(prev.txn) {
                        let expected = format!("previous transaction id {:016x}", prev.txn);
                        let seen = match attempt.previous_named {
                            None => "none".to_owned(),
                            Some(t) => format!("{t:016x}"),
                        };
                        tally.fail(at, self.evidence(a, attempt.begin, expected, seen));
                    }
                }
                Rule::RetryDelay => {
                    let abort = &self.calls[abort];
                    let Some(delay) = abort.retry_delay_ms else {
                        continue;
                    };
                    tally.checked += 1;
                    let waited = at - abort.answered_ms;
                    if waited + 1e-6 < delay {
                        let expected = format!("at least {delay:.1} ms after the ABORTED");
                        let seen = format!("{waited:.1} ms after it");
                        tally.fail(at, self.evidence(a, attempt.begin, expected, seen));
                    }
                }
                _ => {}
            }
        }
        tally
    }

    /// The same tag on every request of a logical transaction (Rollback carries none).
    fn tags(&self) -> Tally {
        let mut tally = Tally::default();
        for chain in &self.chains {
            let mut calls: Vec<(usize, usize)> = chain
                .iter()
                .flat_map(|a| self.attempts[*a].calls.iter().map(move |c| (*a, *c)))
                .filter(|(_, c)| self.calls[*c].rpc != RwRpc::Rollback)
                .collect();
            calls.sort_by(|x, y| {
                self.calls[x.1]
                    .arrived_ms
                    .total_cmp(&self.calls[y.1].arrived_ms)
            });
            let Some(tag) = calls
                .iter()
                .map(|(_, c)| &self.calls[*c].tag)
                .find(|t| !t.is_empty())
            else {
                continue;
            };
            tally.checked += 1;
            if let Some((a, c)) = calls.iter().find(|(_, c)| self.calls[*c].tag != *tag) {
                let seen = format!("tag {:?}", self.calls[*c].tag);
                let at = self.calls[*c].arrived_ms;
                tally.fail(at, self.evidence(*a, *c, format!("tag {tag:?}"), seen));
            }
        }
        tally
    }

    /// A multiplexed commit's precommit token against the latest its attempt was handed.
    fn tokens(&self) -> Tally {
        let mut tally = Tally::default();
        for (a, attempt) in self.attempts.iter().enumerate() {
            for c in attempt.calls.iter().copied() {
                let call = &self.calls[c];
                let Some(latest) = call.token_latest.filter(|l| *l > 0) else {
                    continue;
                };
                if call.rpc != RwRpc::Commit || !attempt.multiplexed {
                    continue;
                }
                tally.checked += 1;
                if call.token_sent != Some(latest) {
                    let seen = call
                        .token_sent
                        .map_or("no precommit token".to_owned(), |s| {
                            format!("token seq {s}")
                        });
                    let expected = format!("token seq {latest}");
                    tally.fail(call.arrived_ms, self.evidence(a, c, expected, seen));
                }
            }
        }
        tally
    }

    /// After a failure other than ABORTED of a request that named its transaction, a Rollback
    /// (or a commit that went through).
    fn rollbacks(&self) -> Tally {
        let mut tally = Tally::default();
        for (a, attempt) in self.attempts.iter().enumerate() {
            let failed = attempt.calls.iter().copied().find(|c| {
                let call = &self.calls[*c];
                call.code != 0
                    && call.code != ABORTED
                    && call.named.is_some()
                    && !matches!(call.rpc, RwRpc::Commit | RwRpc::Rollback)
            });
            let Some(f) = failed else { continue };
            tally.checked += 1;
            let after = self.calls[f].answered_ms;
            let ended = attempt.calls.iter().any(|c| {
                let call = &self.calls[*c];
                call.arrived_ms >= after
                    && (call.rpc == RwRpc::Rollback
                        || (call.rpc == RwRpc::Commit && call.code == 0))
            });
            if !ended {
                let expected = "a Rollback of the transaction".to_owned();
                let seen = format!(
                    "none after its {} failed (code {}): its locks stay until the idle reaper",
                    self.calls[f].rpc.label(),
                    self.calls[f].code
                );
                tally.fail(
                    self.calls[f].arrived_ms,
                    self.evidence(a, f, expected, seen),
                );
            }
        }
        tally
    }

    fn amplification(&self) -> Amplification {
        let transactions = self.chains.len() as u32;
        let attempts = self.attempts.len() as u32;
        let committed = self
            .chains
            .iter()
            .filter(|c| c.last().is_some_and(|a| self.attempts[*a].committed))
            .count() as u32;
        Amplification {
            transactions,
            committed,
            attempts,
            attempts_per_transaction: f64::from(attempts) / f64::from(transactions.max(1)),
            attempts_per_commit: (committed > 0)
                .then(|| f64::from(attempts) / f64::from(committed)),
            max_attempts: self
                .chains
                .iter()
                .map(|c| c.len() as u32)
                .max()
                .unwrap_or(0),
        }
    }

    fn starved(&self) -> Vec<Starved> {
        let mut starved = Vec::new();
        for (n, chain) in self.chains.iter().enumerate() {
            let attempts = chain.len() as u32;
            if attempts < STARVED_ATTEMPTS {
                continue;
            }
            let retries = chain.iter().skip(1).map(|a| &self.attempts[*a]);
            let lost = retries
                .clone()
                .filter(|r| r.previous_kept != r.retries.map(|p| self.attempts[p].txn));
            let kept_age = lost.clone().count() == 0;
            let named_none = lost.clone().all(|r| r.previous_named.is_none());
            let why = match (kept_age, named_none) {
                (true, _) => "its retries kept their age".to_owned(),
                (false, true) if self.attempts[chain[0]].multiplexed => {
                    "retries did not keep their age — they named no previous transaction".to_owned()
                }
                (false, true) => {
                    "retries did not keep their age — they ran on another session".to_owned()
                }
                (false, false) => {
                    "retries did not keep their age — they named another transaction".to_owned()
                }
            };
            let committed = chain.last().is_some_and(|a| self.attempts[*a].committed);
            starved.push(Starved {
                transaction: n as u32 + 1,
                tag: self.calls[self.attempts[chain[0]].begin].tag.clone(),
                attempts,
                committed,
                kept_age,
                note: format!("starved: {attempts} attempts, {why}"),
            });
        }
        starved
    }
}

#[cfg(test)]
mod tests;
