//! The local instance's sessions, kept as production keeps them: a session unused for the idle
//! timeout is deleted (later calls get NOT_FOUND), names and labels are bounded, and each session
//! holds its own read-only transactions (a few, the most recent), which go with it.
//!
//! Each session remembers the connections that created or used it. A multiplexed session, which
//! nobody may delete, goes when every such connection has closed (production keeps one for days;
//! a client that reconnects creates another, as after its expiry), so a `--cold` iteration's
//! leaves nothing behind. At most `max_sessions` exist at once; a new one past it makes room by
//! deleting a session whose connections have all closed, else the least recently used session of
//! the connection that created the most, if that is more than the asking connection would hold:
//! no client keeps the instance full against the others. Only then is it RESOURCE_EXHAUSTED.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tonic::Status;

use crate::proto::google::spanner::v1 as pb;
use crate::server::knobs::KnobSettings;
use crate::server::link::Link;

/// Read-only transactions a session keeps; beginning another forgets the oldest.
const TRANSACTIONS_PER_SESSION: usize = 16;
/// Labels a session may carry, and the longest key or value, as in production.
const MAX_LABELS: usize = 64;
const MAX_LABEL_BYTES: usize = 63;
/// Expired sessions are swept out at most this often (each call checks its own session anyway).
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// Connections a session remembers having been used from (the closed ones forgotten first).
const LINKS_PER_SESSION: usize = 4;

/// The open sessions.
#[derive(Debug)]
pub struct SessionStore {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    by_name: HashMap<String, Entry>,
    swept: Instant,
}

#[derive(Debug)]
struct Entry {
    session: pb::Session,
    used: Instant,
    transactions: VecDeque<Vec<u8>>,
    /// The connection that created it, whose share it counts in (`None`: made without one).
    creator: Option<u64>,
    /// The connections that created or used it, the latest last.
    links: Vec<Weak<Link>>,
}

impl Entry {
    fn new(session: pb::Session, via: Option<&Arc<Link>>) -> Self {
        Entry {
            session,
            used: Instant::now(),
            transactions: VecDeque::new(),
            creator: via.map(|link| link.id()),
            links: via.map(Arc::downgrade).into_iter().collect(),
        }
    }

    /// Remembers that it was used from `via`.
    fn used_via(&mut self, via: Option<&Arc<Link>>) {
        let Some(link) = via else {
            return;
        };
        if self
            .links
            .iter()
            .any(|known| known.as_ptr() == Arc::as_ptr(link))
        {
            return;
        }
        if self.links.len() >= LINKS_PER_SESSION {
            self.links.retain(is_open);
        }
        if self.links.len() >= LINKS_PER_SESSION {
            self.links.remove(0);
        }
        self.links.push(Arc::downgrade(link));
    }

    /// Every connection that created or used it has closed (never, if it was made without one).
    fn orphaned(&self) -> bool {
        !self.links.is_empty() && !self.links.iter().any(is_open)
    }
}

fn is_open(link: &Weak<Link>) -> bool {
    link.upgrade().is_some_and(|link| !link.is_closed())
}

impl Default for SessionStore {
    fn default() -> Self {
        SessionStore {
            inner: Mutex::new(Inner {
                by_name: HashMap::new(),
                swept: Instant::now(),
            }),
        }
    }
}

impl SessionStore {
    /// Creates a session in `database` named with `id` for the connection `via`, copying the
    /// template's labels, role and kind; at the cap, another session makes room if one may.
    pub fn create(
        &self,
        database: &str,
        template: Option<&pb::Session>,
        (id, via): (u64, Option<&Arc<Link>>),
        knobs: &KnobSettings,
    ) -> Result<pb::Session, Status> {
        check_database_name(database, knobs.max_name_bytes)?;
        if let Some(t) = template {
            check_template(t, knobs.max_name_bytes)?;
        }
        let name = format!("{database}/sessions/{id:016x}");
        let session = pb::Session {
            name: name.clone(),
            labels: template.map(|t| t.labels.clone()).unwrap_or_default(),
            create_time: Some(now()),
            approximate_last_use_time: Some(now()),
            creator_role: template.map(|t| t.creator_role.clone()).unwrap_or_default(),
            multiplexed: template.is_some_and(|t| t.multiplexed),
        };
        let mut inner = self.lock();
        inner.sweep(idle(knobs), true);
        if inner.by_name.len() as u64 >= knobs.max_sessions
            && !inner.make_room(via.map(|link| link.id()))
        {
            return Err(Status::resource_exhausted(format!(
                "the local instance holds {} sessions, its limit (max_sessions), and no other \
                 connection holds more of them than this one: delete some first",
                inner.by_name.len()
            )));
        }
        inner.by_name.insert(name, Entry::new(session.clone(), via));
        Ok(session)
    }

    /// The session named `name`, marked used now from the connection `via`; NOT_FOUND if it does
    /// not exist or has expired.
    pub fn touch(
        &self,
        name: &str,
        via: Option<&Arc<Link>>,
        knobs: &KnobSettings,
    ) -> Result<pb::Session, Status> {
        self.with(name, knobs, |entry| {
            entry.used_via(via);
            entry.session.clone()
        })
    }

    /// Deletes the session and its transactions. A multiplexed session may not be deleted
    /// (production's INVALID_ARGUMENT and words): it expires as an idle one does.
    pub fn delete(&self, name: &str) -> Result<(), Status> {
        let mut inner = self.lock();
        match inner.by_name.get(name) {
            None => Err(not_found(name)),
            Some(entry) if entry.session.multiplexed => Err(Status::invalid_argument(
                "Multiplexed sessions may not be deleted",
            )),
            Some(_) => {
                inner.by_name.remove(name);
                Ok(())
            }
        }
    }

    /// Records a read-only transaction `id` begun in the session.
    pub fn add_transaction(
        &self,
        name: &str,
        id: Vec<u8>,
        knobs: &KnobSettings,
    ) -> Result<(), Status> {
        self.with(name, knobs, |entry| {
            if entry.transactions.len() >= TRANSACTIONS_PER_SESSION {
                entry.transactions.pop_front();
            }
            entry.transactions.push_back(id);
        })
    }

    /// Whether the session holds transaction `id`; with `end`, it is forgotten (commit, rollback).
    pub fn has_transaction(
        &self,
        name: &str,
        id: &[u8],
        end: bool,
        knobs: &KnobSettings,
    ) -> Result<bool, Status> {
        self.with(name, knobs, |entry| {
            let at = entry.transactions.iter().position(|t| t == id);
            if let (Some(at), true) = (at, end) {
                entry.transactions.remove(at);
            }
            at.is_some()
        })
    }

    /// Sessions held now, expired ones included until the next sweep (multiplexed ones whose
    /// connections have all closed are not).
    pub fn len(&self) -> usize {
        let mut inner = self.lock();
        inner.by_name.retain(|_, entry| !gone(entry));
        inner.by_name.len()
    }

    fn with<R>(
        &self,
        name: &str,
        knobs: &KnobSettings,
        f: impl FnOnce(&mut Entry) -> R,
    ) -> Result<R, Status> {
        let idle = idle(knobs);
        let mut inner = self.lock();
        inner.sweep(idle, false);
        match inner.by_name.get_mut(name) {
            Some(entry) if entry.used.elapsed() < idle => {
                entry.used = Instant::now();
                entry.session.approximate_last_use_time = Some(now());
                return Ok(f(entry));
            }
            Some(_) => {
                inner.by_name.remove(name);
            }
            None => {}
        }
        Err(not_found(name))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every update is one map operation: a panic cannot leave the table half-updated.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Inner {
    /// Drops the sessions idle for `idle` or longer, and the multiplexed ones whose connections
    /// have all closed, at most once a second unless `now`.
    fn sweep(&mut self, idle: Duration, now: bool) {
        if now || self.swept.elapsed() >= SWEEP_EVERY {
            self.by_name
                .retain(|_, entry| entry.used.elapsed() < idle && !gone(entry));
            self.swept = Instant::now();
        }
    }

    /// Deletes one session to make room for one that connection `asking` creates: one whose
    /// connections have all closed (the least recently used), else the least recently used of
    /// the connection that created the most, if that is more than `asking` would hold. Whether
    /// one was deleted.
    fn make_room(&mut self, asking: Option<u64>) -> bool {
        let victim = self
            .by_name
            .iter()
            .filter(|(_, entry)| entry.orphaned())
            .min_by_key(|(_, entry)| entry.used)
            .map(|(name, _)| name.clone())
            .or_else(|| self.largest_share_over(asking));
        victim.is_some_and(|name| self.by_name.remove(&name).is_some())
    }

    /// The least recently used session of the connection that created the most, if it holds
    /// more than `asking` will once its new session is made.
    fn largest_share_over(&self, asking: Option<u64>) -> Option<String> {
        let mut held: HashMap<Option<u64>, usize> = HashMap::new();
        for entry in self.by_name.values() {
            *held.entry(entry.creator).or_default() += 1;
        }
        let mine = held.get(&asking).copied().unwrap_or(0);
        let (top, most) = held
            .into_iter()
            .filter(|(creator, _)| *creator != asking)
            .max_by_key(|(_, n)| *n)?;
        if most <= mine + 1 {
            return None;
        }
        self.by_name
            .iter()
            .filter(|(_, entry)| entry.creator == top)
            .min_by_key(|(_, entry)| entry.used)
            .map(|(name, _)| name.clone())
    }
}

/// A multiplexed session whose connections have all closed: nobody can delete it, so it goes.
fn gone(entry: &Entry) -> bool {
    entry.session.multiplexed && entry.orphaned()
}

fn idle(knobs: &KnobSettings) -> Duration {
    Duration::from_millis(knobs.session_idle_timeout_ms)
}

fn not_found(name: &str) -> Status {
    Status::not_found(format!("Session not found: {}", shown(name)))
}

/// A name from a request, cut short for an error message.
pub fn shown(name: &str) -> String {
    const SHOWN: usize = 96;
    match name.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}... ({} bytes)", &name[..at], name.len()),
        None => name.to_owned(),
    }
}

fn now() -> prost_types::Timestamp {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}

/// `projects/P/instances/I/databases/D`, no part empty, at most `max_bytes` in all.
pub fn check_database_name(name: &str, max_bytes: u64) -> Result<(), Status> {
    if name.len() as u64 > max_bytes {
        return Err(Status::invalid_argument(format!(
            "Invalid database name: {} bytes is longer than the {max_bytes} allowed",
            name.len()
        )));
    }
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        ["projects", p, "instances", i, "databases", d]
            if ![p, i, d].iter().any(|s| s.is_empty()) =>
        {
            Ok(())
        }
        _ => Err(Status::invalid_argument(format!(
            "Invalid database name: {:?}; expected projects/P/instances/I/databases/D",
            shown(name)
        ))),
    }
}

/// A session template's labels (at most 64, keys and values at most 63 bytes) and role.
fn check_template(template: &pb::Session, max_name_bytes: u64) -> Result<(), Status> {
    let labels = &template.labels;
    let too_long = |s: &String| s.len() > MAX_LABEL_BYTES;
    if labels.len() > MAX_LABELS || labels.iter().any(|(k, v)| too_long(k) || too_long(v)) {
        return Err(Status::invalid_argument(format!(
            "a session has at most {MAX_LABELS} labels, each key and value at most \
             {MAX_LABEL_BYTES} bytes"
        )));
    }
    if template.creator_role.len() as u64 > max_name_bytes {
        return Err(Status::invalid_argument(format!(
            "the creator role is longer than the {max_name_bytes} bytes allowed"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DB: &str = "projects/p/instances/i/databases/d";

    fn knobs(idle_ms: u64, max: u64) -> KnobSettings {
        KnobSettings {
            session_idle_timeout_ms: idle_ms,
            max_sessions: max,
            ..KnobSettings::default()
        }
    }

    #[test]
    fn a_multiplexed_session_is_granted_and_not_deleted() {
        let sessions = SessionStore::default();
        let template = pb::Session {
            multiplexed: true,
            ..pb::Session::default()
        };
        let knobs = knobs(60_000, 10);
        let multiplexed = sessions
            .create(DB, Some(&template), (1, None), &knobs)
            .expect("created");
        assert!(multiplexed.multiplexed, "granted as asked");
        let refused = sessions
            .delete(&multiplexed.name)
            .expect_err("not deletable");
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert!(
            sessions.touch(&multiplexed.name, None, &knobs).is_ok(),
            "still there"
        );
        let regular = sessions
            .create(DB, None, (2, None), &knobs)
            .expect("created");
        assert!(!regular.multiplexed);
        assert!(sessions.delete(&regular.name).is_ok());
    }

    #[test]
    fn database_names_are_checked_and_bounded() {
        let limit = KnobSettings::default().max_name_bytes;
        assert!(check_database_name(DB, limit).is_ok());
        for bad in [
            "",
            "projects/p",
            "projects//instances/i/databases/d",
            "x/p/instances/i/databases/d",
        ] {
            assert!(check_database_name(bad, limit).is_err(), "{bad}");
        }
        let huge = format!("{DB}{}", "x".repeat(1 << 20));
        let err = check_database_name(&huge, limit).expect_err("too long");
        assert!(err.message().len() < 200, "{}", err.message());
        let shown = shown(&"y".repeat(1000));
        assert!(
            shown.len() < 150 && shown.ends_with("(1000 bytes)"),
            "{shown}"
        );
    }

    #[test]
    fn idle_sessions_expire_and_used_ones_do_not() {
        let sessions = SessionStore::default();
        let k = knobs(150, 10);
        let used = sessions
            .create(DB, None, (1, None), &k)
            .expect("created")
            .name;
        let idle = sessions
            .create(DB, None, (2, None), &k)
            .expect("created")
            .name;
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(50));
            sessions.touch(&used, None, &k).expect("kept alive by use");
        }
        let err = sessions.touch(&idle, None, &k).expect_err("expired");
        assert_eq!(err.code(), tonic::Code::NotFound);
        assert_eq!(sessions.len(), 1);
    }

    #[test]
    fn sessions_are_capped_and_a_delete_makes_room() {
        let sessions = SessionStore::default();
        let k = knobs(60_000, 2);
        let a = sessions
            .create(DB, None, (1, None), &k)
            .expect("first")
            .name;
        sessions.create(DB, None, (2, None), &k).expect("second");
        let err = sessions
            .create(DB, None, (3, None), &k)
            .expect_err("the cap");
        assert_eq!(err.code(), tonic::Code::ResourceExhausted);
        sessions.delete(&a).expect("deleted");
        sessions
            .create(DB, None, (3, None), &k)
            .expect("room again");
    }

    #[test]
    fn transactions_belong_to_their_session_and_are_bounded() {
        let sessions = SessionStore::default();
        let k = knobs(60_000, 10);
        let a = sessions.create(DB, None, (1, None), &k).expect("a").name;
        let b = sessions.create(DB, None, (2, None), &k).expect("b").name;
        for t in 0..=TRANSACTIONS_PER_SESSION as u8 {
            sessions.add_transaction(&a, vec![t], &k).expect("added");
        }
        assert_eq!(
            sessions.has_transaction(&a, &[0], false, &k).ok(),
            Some(false),
            "oldest forgotten"
        );
        assert_eq!(
            sessions.has_transaction(&a, &[1], false, &k).ok(),
            Some(true)
        );
        assert_eq!(
            sessions.has_transaction(&b, &[1], false, &k).ok(),
            Some(false)
        );
        assert_eq!(
            sessions.has_transaction(&a, &[1], true, &k).ok(),
            Some(true),
            "ended"
        );
        assert_eq!(
            sessions.has_transaction(&a, &[1], false, &k).ok(),
            Some(false)
        );
    }

    #[test]
    fn templates_with_too_many_or_too_long_labels_are_refused() {
        let sessions = SessionStore::default();
        let k = KnobSettings::default();
        let labels = |n: usize, len: usize| pb::Session {
            labels: (0..n).map(|i| (format!("k{i}"), "v".repeat(len))).collect(),
            ..Default::default()
        };
        assert!(
            sessions
                .create(DB, Some(&labels(64, 63)), (1, None), &k)
                .is_ok()
        );
        assert!(
            sessions
                .create(DB, Some(&labels(65, 1)), (2, None), &k)
                .is_err()
        );
        assert!(
            sessions
                .create(DB, Some(&labels(1, 64)), (3, None), &k)
                .is_err()
        );
    }

    #[test]
    fn a_connection_that_created_the_most_makes_room_and_closed_ones_go_first() {
        let sessions = SessionStore::default();
        let k = knobs(60_000, 4);
        let (a, b) = (Arc::new(Link::accepted(1)), Arc::new(Link::accepted(2)));
        let oldest_of_a = sessions
            .create(DB, None, (1, Some(&a)), &k)
            .expect("a 1")
            .name;
        for n in 2..=3 {
            sessions.create(DB, None, (n, Some(&a)), &k).expect("a");
        }
        let of_b = sessions
            .create(DB, None, (4, Some(&b)), &k)
            .expect("b 1")
            .name;
        // Full: a holds 3, more than b would with one more, so a's oldest makes room.
        sessions
            .create(DB, None, (5, Some(&b)), &k)
            .expect("room made");
        assert_eq!(
            sessions
                .touch(&oldest_of_a, None, &k)
                .expect_err("gone")
                .code(),
            tonic::Code::NotFound
        );
        // Now a and b hold 2 each: neither may take the other's place.
        let refused = sessions
            .create(DB, None, (6, Some(&b)), &k)
            .expect_err("full");
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        // A session whose connection has closed makes room first, whoever holds the most.
        drop(sessions.touch(&of_b, Some(&a), &k));
        b.close();
        sessions
            .create(DB, None, (7, Some(&a)), &k)
            .expect("b's other session makes room");
        assert!(
            sessions.touch(&of_b, None, &k).is_ok(),
            "still used from an open connection"
        );
    }

    #[test]
    fn a_multiplexed_session_goes_with_the_last_connection_that_used_it() {
        let sessions = SessionStore::default();
        let k = knobs(60_000, 10);
        let template = pb::Session {
            multiplexed: true,
            ..pb::Session::default()
        };
        let (first, second) = (Arc::new(Link::accepted(1)), Arc::new(Link::accepted(2)));
        let name = sessions
            .create(DB, Some(&template), (1, Some(&first)), &k)
            .expect("created")
            .name;
        sessions
            .create(DB, None, (2, Some(&first)), &k)
            .expect("a regular one");
        sessions
            .touch(&name, Some(&second), &k)
            .expect("used from another");
        drop(first);
        assert_eq!(sessions.len(), 2, "the second connection still has it");
        drop(second);
        assert_eq!(
            sessions.len(),
            1,
            "gone with its last connection; the regular one stays"
        );
        assert_eq!(
            sessions.touch(&name, None, &k).expect_err("gone").code(),
            tonic::Code::NotFound
        );
    }
}
