//! One accounting of an iteration's time: its parts ([`Part`]), disjoint, adding up to its total
//! exactly (whole microseconds), and the overlap beside them. Derived from what the record
//! measured, here and nowhere else; every view and export reads [`IterationRecord::accounting`].
//!
//! A query's client time is, in order: a cold start's actions; a partitioned read's PartitionQuery;
//! its waits for the transport; resume back-offs; its decode and own work, each as the CPU time its
//! thread got; the off-CPU time of that work (`descheduled`); and what nothing measured
//! (`untimed`). The waits are split between `server` and `network` by the server's work `W`:
//! its elapsed time less the time it reported waiting on the client to read (measured, the local
//! instance), or its elapsed time alone (estimated, Cloud Spanner and the emulator). The server's
//! work can only be seen by the client while the client waits, so `server = min(wait, W)`,
//! `network = wait - server`, and what is left of `W` ran beside the client's own work: the
//! overlap, reported and never added.
//!
//! A read-write transaction's time (`profile --read-write`) is its aborted attempts whole, the
//! back-off slept before each retry, and the attempt that ended it: begin, each streamed
//! statement split as a query's is, batch DML, think time and commit.
//!
//! A client program's time as the server saw it (`spanprof client`) splits into start-up, first
//! byte, streaming (first to last message, less the server's wait on the program), blocked (that
//! wait), to exit and untimed.

use crate::part::{Part, Split};

use super::transaction::{ActionKind, TransactionRecord};
use super::{IterationRecord, QueryTimings, SubjectTimings};

/// Microseconds in whole numbers, so that parts add up exactly: a non-finite or negative
/// figure counts as 0.
fn us(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        // Saturates at u64::MAX for absurd figures (a hostile report), never panics.
        (ms * 1000.0).round() as u64
    } else {
        0
    }
}

fn to_ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// The parts of one iteration, in whole microseconds; a part the iteration did not have is absent
/// (a warm iteration has no cold-start actions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Parts {
    us: [u64; Part::ALL.len()],
    present: u32,
}

impl Parts {
    fn set(&mut self, part: Part, us: u64) {
        self.us[part.index()] = us;
        self.present |= 1 << part.index();
    }

    /// Adds `us` to the part (present from then on).
    fn add(&mut self, part: Part, us: u64) {
        let slot = &mut self.us[part.index()];
        *slot = slot.saturating_add(us);
        self.present |= 1 << part.index();
    }

    fn put(&mut self, part: Part, ms: Option<f64>) {
        if let Some(ms) = ms {
            self.set(part, us(ms));
        }
    }

    /// The part's time in milliseconds, when the iteration had it.
    pub fn get(&self, part: Part) -> Option<f64> {
        self.has(part).then(|| to_ms(self.us[part.index()]))
    }

    /// The part's time in milliseconds, 0 when the iteration did not have it.
    pub fn ms(&self, part: Part) -> f64 {
        to_ms(self.us[part.index()])
    }

    /// Whether the iteration had the part.
    pub fn has(&self, part: Part) -> bool {
        self.present & (1 << part.index()) != 0
    }

    /// The parts the iteration had, with their milliseconds, in [`Part::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Part, f64)> + '_ {
        Part::ALL
            .into_iter()
            .filter_map(|part| Some((part, self.get(part)?)))
    }

    /// Whether it has no part at all.
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    fn sum_us(&self) -> u64 {
        self.us.iter().fold(0u64, |sum, &us| sum.saturating_add(us))
    }

    /// The sum of the parts, in milliseconds: the iteration's total.
    pub fn sum_ms(&self) -> f64 {
        to_ms(self.sum_us())
    }

    /// Takes `excess` microseconds out of `from`, in that order, as far as each goes.
    fn take_out(&mut self, mut excess: u64, from: &[Part]) {
        for part in from {
            let slot = &mut self.us[part.index()];
            let taken = excess.min(*slot);
            *slot -= taken;
            excess -= taken;
        }
    }

    /// Sets `untimed` to what the other parts leave of `total_us`; where they came to more (a
    /// clock's rounding), the excess comes out of `give_back` first.
    fn close(&mut self, total_us: u64, give_back: &[Part]) {
        self.set(Part::Untimed, 0);
        let sum = self.sum_us();
        if sum > total_us {
            self.take_out(sum - total_us, give_back);
        }
        let untimed = total_us.saturating_sub(self.sum_us());
        self.set(Part::Untimed, untimed);
    }
}

/// An iteration's time accounted for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Accounting {
    /// Its parts, adding up to its total.
    pub parts: Parts,
    /// Server work that ran beside the client's decode and own work (not a part: the client was
    /// busy then), in milliseconds; `None` without a server time.
    pub overlap_ms: Option<f64>,
    /// How the wait was split between server and network.
    pub split: Split,
    /// Whether the client's own work was timed (reports before it was count it as untimed).
    pub client_work_timed: bool,
}

impl Accounting {
    /// Whether `untimed` is more than max(1 ms, 3%) of the total: worth saying.
    pub fn untimed_is_notable(&self, total_ms: f64) -> bool {
        self.parts.ms(Part::Untimed) > (0.03 * total_ms).max(1.0)
    }
}

impl IterationRecord {
    /// Where this iteration's time went: its parts, which add up to `total_ms` to the microsecond,
    /// and the overlap beside them.
    pub fn accounting(&self) -> Accounting {
        if let Some(subject) = self
            .subject
            .filter(|s| s.startup_ms.is_some() || s.first_byte_ms.is_some())
        {
            return self.subject_accounting(&subject);
        }
        if let Some(transaction) = &self.transaction {
            return self.transaction_accounting(transaction);
        }
        let mut parts = Parts::default();
        for (action, ms) in self.cold.iter().flat_map(|c| c.iter()) {
            parts.put(Part::Cold(action), Some(ms));
        }
        parts.put(Part::PartitionQuery, self.query.partition_query_ms);
        let work = self.client_work();
        let (split, overlap_ms) = query_parts(&self.query, work, &mut parts);
        parts.close(
            us(self.total_ms),
            &[
                Part::Network,
                Part::Server,
                Part::Descheduled,
                Part::ClientWork,
            ],
        );
        Accounting {
            parts,
            overlap_ms,
            split,
            client_work_timed: work.is_some() || self.query.stream_wait_ms.is_none(),
        }
    }

    /// A read-write transaction's parts: its aborted attempts whole and the back-off after each,
    /// then the attempt that ended it action by action: begin, each streamed statement's query parts
    /// (summed), batch DML, think time and commit; `untimed` closes the total.
    fn transaction_accounting(&self, t: &TransactionRecord) -> Accounting {
        let mut parts = Parts::default();
        let (ended, before) = match t.attempts.split_last() {
            Some((last, before)) => (Some(last), before),
            None => (None, &[][..]),
        };
        if !before.is_empty() {
            let aborted = before
                .iter()
                .fold(0u64, |sum, a| sum.saturating_add(us(a.total_ms)));
            parts.set(Part::Aborted, aborted);
        }
        let backoff = t.attempts.iter().fold(0u64, |sum, a| {
            sum.saturating_add(a.backoff_ms.map_or(0, us))
        });
        if backoff > 0 {
            parts.set(Part::Backoff, backoff);
        }
        let (mut split, mut overlap) = (Split::None, None::<f64>);
        if let Some(last) = ended {
            for (kind, part) in [
                (ActionKind::Begin, Part::Begin),
                (ActionKind::BatchDml, Part::BatchDml),
                (ActionKind::Think, Part::Think),
            ] {
                if last.actions.iter().any(|s| s.kind == Some(kind)) {
                    parts.set(part, us(last.ms_of(kind)));
                }
            }
            if last
                .actions
                .iter()
                .any(|s| s.kind == Some(ActionKind::Commit))
            {
                // The server's own account of the commit's wait for locks, carved out of it.
                let commit = us(last.ms_of(ActionKind::Commit));
                let locked = last
                    .actions
                    .iter()
                    .filter(|s| s.kind == Some(ActionKind::Commit))
                    .filter_map(|s| s.server_lock_wait_ms)
                    .fold(0u64, |sum, ms| sum.saturating_add(us(ms)))
                    .min(commit);
                parts.set(Part::Commit, commit - locked);
                if locked > 0 {
                    parts.add(Part::LockWait, locked);
                }
            }
            for q in last.statements() {
                let work = q.client_work_wall_ms.map(|wall| {
                    let wall = us(wall);
                    (wall, q.client_work_cpu_ms.map_or(wall, us).min(wall))
                });
                let (s, o) = query_parts(&q, work, &mut parts);
                if split == Split::None {
                    split = s;
                }
                if let Some(o) = o {
                    overlap = Some(overlap.unwrap_or(0.0) + o);
                }
            }
        }
        parts.close(
            us(self.total_ms),
            &[
                Part::Network,
                Part::Server,
                Part::LockWait,
                Part::Descheduled,
                Part::ClientWork,
                Part::Think,
                Part::Commit,
                Part::Aborted,
            ],
        );
        Accounting {
            parts,
            overlap_ms: overlap,
            split,
            client_work_timed: true,
        }
    }

    /// The client's own work between its spans, (wall, CPU) in microseconds: recorded, or for a
    /// report that predates the figure, summed from its timeline's lanes.
    fn client_work(&self) -> Option<(u64, u64)> {
        if let Some(wall) = self.query.client_work_wall_ms.map(us) {
            let cpu = self.query.client_work_cpu_ms.map_or(wall, us).min(wall);
            return Some((wall, cpu));
        }
        let lanes = &self.timeline.as_ref()?.lanes;
        let sum = |f: fn(&crate::report::Lane) -> u64| {
            lanes.iter().fold(0u64, |sum, l| sum.saturating_add(f(l)))
        };
        let wall = sum(|l| l.between.wall_us);
        let cpu = sum(|l| l.between.cpu_us);
        (wall > 0).then_some((wall, cpu.min(wall)))
    }

    fn subject_accounting(&self, s: &SubjectTimings) -> Accounting {
        let mut parts = Parts::default();
        let transfer = s.transfer_ms.map(us);
        let blocked = s.blocked_ms.map(us).map(|b| b.min(transfer.unwrap_or(0)));
        parts.put(Part::Startup, s.startup_ms);
        parts.put(Part::FirstByte, s.first_byte_ms);
        if let Some(transfer) = transfer {
            parts.set(Part::Streaming, transfer - blocked.unwrap_or(0));
        }
        if let Some(blocked) = blocked {
            parts.set(Part::Blocked, blocked);
        }
        parts.put(Part::Tail, s.tail_ms);
        parts.close(
            us(self.total_ms),
            &[Part::Startup, Part::Tail, Part::Streaming],
        );
        Accounting {
            parts,
            overlap_ms: None,
            split: Split::None,
            client_work_timed: true,
        }
    }
}

/// The server's work in microseconds and how it was known: its elapsed time less its reported
/// wait on the client, or its elapsed time alone.
fn server_work_us(q: &QueryTimings) -> (Split, Option<u64>) {
    match (q.server_elapsed_ms.map(us), q.server_client_wait_ms.map(us)) {
        (Some(elapsed), Some(blocked)) => (Split::Measured, Some(elapsed.saturating_sub(blocked))),
        (Some(elapsed), None) => (Split::Estimated, Some(elapsed)),
        (None, _) => (Split::None, None),
    }
}

/// Adds one streamed call's parts to `parts`: its waits split between `server` and `network`, a
/// resume's back-off, its decodes' and own work's CPU time (`work`: wall and CPU in microseconds)
/// and their time off the CPU. Returns how the wait was split and the server's work that ran
/// beside the client's (the overlap, never a part).
fn query_parts(
    q: &QueryTimings,
    work: Option<(u64, u64)>,
    parts: &mut Parts,
) -> (Split, Option<f64>) {
    let (split, work_us) = server_work_us(q);
    let mut overlap_ms = None;
    if let Some(wait) = q.stream_wait_ms.map(us) {
        let server = work_us.map_or(0, |work| work.min(wait));
        if let Some(work) = work_us {
            // The server's own account of its wait for locks, as far as the client waited on it.
            let locked = q.server_lock_wait_ms.map(|ms| us(ms).min(server));
            if let Some(locked) = locked {
                parts.add(Part::LockWait, locked);
            }
            parts.add(Part::Server, server - locked.unwrap_or(0));
            overlap_ms = Some(to_ms(work - server));
            parts.add(Part::Network, wait - server);
        } else {
            // No statistics (a read has none): the server's own account of its wait for locks,
            // when its answer gives one, is the only part of the wait known to be the server's.
            let locked = q.server_lock_wait_ms.map_or(0, |ms| us(ms).min(wait));
            if locked > 0 {
                parts.add(Part::LockWait, locked);
            }
            parts.add(Part::Network, wait - locked);
        }
    }
    // A resume's back-off, where there was one (0 is no part: nothing broke).
    if let Some(ms) = q.backoff_ms.filter(|ms| *ms > 0.0) {
        parts.add(Part::Backoff, us(ms));
    }
    let decode = [
        (
            Part::WireDecode,
            q.wire_decode_wall_ms,
            q.wire_decode_cpu_ms,
        ),
        (Part::RowDecode, q.row_decode_wall_ms, q.row_decode_cpu_ms),
    ];
    let mut off_cpu = 0u64;
    for (part, wall, cpu) in decode {
        if let Some(wall) = wall.map(us) {
            let cpu = cpu.map_or(wall, us).min(wall);
            parts.add(part, cpu);
            off_cpu = off_cpu.saturating_add(wall - cpu);
        }
    }
    if let Some((wall, cpu)) = work {
        parts.add(Part::ClientWork, cpu);
        off_cpu = off_cpu.saturating_add(wall - cpu);
    }
    match q.descheduled_ms {
        // The recorded figure is the same sum, taken span by span.
        Some(ms) => parts.add(Part::Descheduled, us(ms)),
        None if off_cpu > 0 => parts.add(Part::Descheduled, off_cpu),
        None => {}
    }
    let split = if work_us.is_some() {
        split
    } else {
        Split::None
    };
    (split, overlap_ms)
}

#[cfg(test)]
#[path = "accounting/tests.rs"]
mod tests;
