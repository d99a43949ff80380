//! Who blocked whom, as a server that knows says it (the local instance: its lock table is a
//! model of Spanner's locking): each wait for a lock a statement or commit went through, on what
//! key, in which mode, for how long, behind which transactions ([`LockWaitSeen`]); the older
//! transaction that wounded an attempt ([`WoundSeen`]); and, over many transactions, the keys
//! waited on most ([`Conflicts`]). The server sends the first two as JSON text (a statement's
//! `query_stats` key `lock_waits`, a commit's `spanprof-lock-waits` header, an abort's
//! `spanprof-wounded-by` trailer), the client keeps them on the actions and attempts they belong
//! to, and a load step sums them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The waits one answer lists at most (the rest are in its lock wait, not named).
pub const MAX_WAITS_SENT: usize = 16;
/// The holders one wait lists at most.
pub const MAX_HOLDERS_SENT: usize = 8;
/// The keys a [`Conflicts`] keeps, the most waited on first.
pub const MAX_CONFLICT_KEYS: usize = 20;
/// The keys a [`Conflicts`] tallies before it keeps only those it has (a bound on memory).
const MAX_TALLIED_KEYS: usize = 10_000;

/// One wait for a lock, as the server measured it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LockWaitSeen {
    /// The rows asked for, in words: `accounts(1)` (a row), `accounts[(1)..(5))` (a range),
    /// `accounts[..)` (the whole table).
    pub key: String,
    /// The column, lower-cased, when one cell of each row was asked for (none: whole rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// The mode asked for (`ReaderShared`, `WriterShared`, `Exclusive`, `WriterSharedTimestamp`).
    pub mode: String,
    /// How long it waited, in milliseconds.
    pub ms: f64,
    /// The transactions it waited behind (their ids in hex, as attempts' `transaction_id`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<String>,
}

/// The older transaction that wounded an attempt (the attempt was aborted for it).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct WoundSeen {
    /// The older transaction's id, in hex.
    pub by: String,
    /// The rows it asked for, in words.
    pub key: String,
    /// The column, when it asked for one cell of each row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// In which mode.
    pub mode: String,
}

/// The waits and wounds of many transactions, by key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Conflicts {
    /// Waits in all.
    pub waits: u64,
    /// Their time in all, in milliseconds.
    pub wait_ms: f64,
    /// Attempts wounded in all.
    pub wounds: u64,
    /// The keys waited on or wounded over most, the most wait first (at most
    /// [`MAX_CONFLICT_KEYS`]).
    pub keys: Vec<KeyConflicts>,
}

/// One key's waits and wounds (a row's, or a range's: the cells of a row count as the row).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct KeyConflicts {
    /// The rows, in words.
    pub key: String,
    /// The columns asked for one by one among them (at most [`MAX_HOLDERS_SENT`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// Waits on it.
    pub waits: u64,
    /// Their time, in milliseconds.
    pub wait_ms: f64,
    /// Attempts wounded by a request for it.
    pub wounds: u64,
}

impl Conflicts {
    /// Several processes' conflicts as one (`load merge`): the counts and times added, and each
    /// key's added where more than one names it. Each process kept only its top
    /// [`MAX_CONFLICT_KEYS`] keys, so a key below one process's cut counts only the others'
    /// share; the totals are exact. `None` when none had any.
    pub fn merged<'a>(all: impl IntoIterator<Item = &'a Conflicts>) -> Option<Conflicts> {
        let mut tally = ConflictTally::default();
        let mut any = false;
        for c in all {
            any = true;
            tally.waits = tally.waits.saturating_add(c.waits);
            tally.wait_ms += c.wait_ms;
            tally.wounds = tally.wounds.saturating_add(c.wounds);
            for k in &c.keys {
                let Some(into) = tally.key(&k.key, None) else {
                    continue;
                };
                into.waits = into.waits.saturating_add(k.waits);
                into.wait_ms += k.wait_ms;
                into.wounds = into.wounds.saturating_add(k.wounds);
                for column in &k.columns {
                    if into.columns.len() < MAX_HOLDERS_SENT && !into.columns.contains(column) {
                        into.columns.push(column.clone());
                    }
                }
            }
        }
        any.then(|| tally.conflicts())
    }
}

/// A running tally of waits and wounds, by key, turned into [`Conflicts`] at the end.
#[derive(Debug, Clone, Default)]
pub struct ConflictTally {
    waits: u64,
    wait_ms: f64,
    wounds: u64,
    keys: BTreeMap<String, KeyConflicts>,
}

impl ConflictTally {
    /// Counts a wait.
    pub fn wait(&mut self, wait: &LockWaitSeen) {
        self.waits += 1;
        self.wait_ms += wait.ms;
        if let Some(key) = self.key(&wait.key, wait.column.as_deref()) {
            key.waits += 1;
            key.wait_ms += wait.ms;
        }
    }

    /// Counts a wound.
    pub fn wound(&mut self, wound: &WoundSeen) {
        self.wounds += 1;
        if let Some(key) = self.key(&wound.key, wound.column.as_deref()) {
            key.wounds += 1;
        }
    }

    /// Whether it has counted nothing.
    pub fn is_empty(&self) -> bool {
        self.waits == 0 && self.wounds == 0
    }

    /// The tally, its keys the most waited on first (then the most wounded over, then by name).
    pub fn conflicts(&self) -> Conflicts {
        let mut keys: Vec<KeyConflicts> = self.keys.values().cloned().collect();
        keys.sort_by(|a, b| {
            b.wait_ms
                .total_cmp(&a.wait_ms)
                .then(b.wounds.cmp(&a.wounds))
                .then(b.waits.cmp(&a.waits))
                .then_with(|| a.key.cmp(&b.key))
        });
        keys.truncate(MAX_CONFLICT_KEYS);
        Conflicts {
            waits: self.waits,
            wait_ms: self.wait_ms,
            wounds: self.wounds,
            keys,
        }
    }

    fn key(&mut self, key: &str, column: Option<&str>) -> Option<&mut KeyConflicts> {
        if !self.keys.contains_key(key) && self.keys.len() >= MAX_TALLIED_KEYS {
            return None;
        }
        let entry = self
            .keys
            .entry(key.to_owned())
            .or_insert_with(|| KeyConflicts {
                key: key.to_owned(),
                ..KeyConflicts::default()
            });
        if let Some(column) = column
            && entry.columns.len() < MAX_HOLDERS_SENT
            && !entry.columns.iter().any(|c| c == column)
        {
            entry.columns.push(column.to_owned());
        }
        Some(entry)
    }
}

/// The waits a server sent as JSON text; none when the text is not that (a server's text is not
/// trusted: it is parsed, never assumed), at most [`MAX_WAITS_SENT`].
pub fn waits_from_text(text: &str) -> Vec<LockWaitSeen> {
    let mut waits: Vec<LockWaitSeen> = serde_json::from_str(text).unwrap_or_default();
    waits.truncate(MAX_WAITS_SENT);
    for wait in &mut waits {
        wait.holders.truncate(MAX_HOLDERS_SENT);
        if !wait.ms.is_finite() || wait.ms < 0.0 {
            wait.ms = 0.0;
        }
    }
    waits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(key: &str, ms: f64) -> LockWaitSeen {
        LockWaitSeen {
            key: key.into(),
            column: Some("balance".into()),
            mode: "ReaderShared".into(),
            ms,
            holders: vec!["00000000000000ff".into()],
        }
    }

    #[test]
    fn the_hottest_key_comes_first_and_wounds_count_on_their_key() {
        let mut tally = ConflictTally::default();
        tally.wait(&wait("accounts(2)", 3.0));
        tally.wait(&wait("accounts(1)", 5.0));
        tally.wait(&wait("accounts(1)", 5.0));
        tally.wound(&WoundSeen {
            by: "01".into(),
            key: "accounts(1)".into(),
            column: None,
            mode: "Exclusive".into(),
        });
        let c = tally.conflicts();
        assert_eq!((c.waits, c.wait_ms, c.wounds), (3, 13.0, 1));
        assert_eq!(c.keys[0].key, "accounts(1)");
        assert_eq!(c.keys[0].columns, ["balance"], "its cells count as the row");
        assert_eq!((c.keys[0].waits, c.keys[0].wounds), (2, 1));
        assert_eq!(c.keys[1].key, "accounts(2)");
    }

    #[test]
    fn merged_conflicts_add_their_totals_and_each_keys_figures() {
        let mut a = ConflictTally::default();
        a.wait(&wait("accounts(1)", 5.0));
        a.wait(&wait("accounts(2)", 1.0));
        let mut b = ConflictTally::default();
        b.wait(&wait("accounts(1)", 7.0));
        b.wound(&WoundSeen {
            by: "02".into(),
            key: "accounts(3)".into(),
            column: Some("name".into()),
            mode: "Exclusive".into(),
        });
        let m = Conflicts::merged([&a.conflicts(), &b.conflicts()]).expect("merged");
        assert_eq!((m.waits, m.wait_ms, m.wounds), (3, 13.0, 1));
        let keys: Vec<(&str, u64, f64, u64)> = m
            .keys
            .iter()
            .map(|k| (k.key.as_str(), k.waits, k.wait_ms, k.wounds))
            .collect();
        assert_eq!(
            keys,
            [
                ("accounts(1)", 2, 12.0, 0),
                ("accounts(2)", 1, 1.0, 0),
                ("accounts(3)", 0, 0.0, 1)
            ]
        );
        assert_eq!(m.keys[2].columns, ["name"]);
        assert!(Conflicts::merged([]).is_none());
    }

    #[test]
    fn a_server_s_text_is_parsed_and_bounded_never_trusted() {
        assert!(waits_from_text("not json").is_empty());
        assert!(waits_from_text("{\"key\":1}").is_empty());
        let many: Vec<LockWaitSeen> = (0..40).map(|i| wait(&format!("t({i})"), 1.0)).collect();
        let text = serde_json::to_string(&many).expect("JSON");
        assert_eq!(waits_from_text(&text).len(), MAX_WAITS_SENT);
        let negative = "[{\"key\":\"t(1)\",\"mode\":\"ReaderShared\",\"ms\":-4}]";
        assert_eq!(waits_from_text(negative)[0].ms, 0.0);
    }
}
