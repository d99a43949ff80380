//! What the local store does when the plain way fails: a file it may only read (opened read-only,
//! so it can still be listed), ids SQLite has spent (a row numbered `i64::MAX`: free ids below it
//! are found), and a damaged page (the readable runs copied into a fresh store, so one page never
//! costs the whole history).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// Opens `path` for reading only. A store in WAL mode needs its shared-memory file, which a
/// directory that cannot be written refuses: then the file is read as immutable (what its last
/// writer checkpointed, which a cleanly closed store holds whole).
pub fn read_only(path: &Path) -> Result<Connection, rusqlite::Error> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let readable = |c: Connection| {
        c.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|_| c)
    };
    match Connection::open_with_flags(path, flags).and_then(readable) {
        Ok(c) => Ok(c),
        Err(_) => Connection::open_with_flags(immutable_uri(path), flags).and_then(readable),
    }
}

/// `file:PATH?immutable=1`, the path percent-encoded where a URI needs it.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'?' | b'#' | b'%' | 0..=0x20 | 0x7f.. => uri.push_str(&format!("%{byte:02X}")),
            b => uri.push(char::from(*b)),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// A table whose rows are numbered by SQLite's AUTOINCREMENT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Numbered {
    /// `runs`.
    Runs,
    /// `load_runs`.
    LoadRuns,
}

impl Numbered {
    /// The table's name.
    pub fn table(self) -> &'static str {
        match self {
            Numbered::Runs => "runs",
            Numbered::LoadRuns => "load_runs",
        }
    }
}

/// Whether `table` has spent SQLite's ids: its sequence, or a row, at `i64::MAX`, after which
/// every insert fails as "database or disk is full".
pub fn ids_spent(c: &Connection, table: Numbered) -> bool {
    let name = table.table();
    c.query_row(
        "SELECT seq FROM sqlite_sequence WHERE name = ?1",
        [name],
        |row| row.get::<_, i64>(0),
    )
    .is_ok_and(|seq| seq == i64::MAX)
        || c.query_row(&format!("SELECT MAX(id) FROM {name}"), [], |row| {
            row.get::<_, i64>(0)
        })
        .is_ok_and(|max| max == i64::MAX)
}

/// The `n` lowest ids no row of `table` has.
pub fn free_ids(c: &Connection, table: Numbered, n: usize) -> Result<Vec<i64>, rusqlite::Error> {
    let mut taken = c.prepare(&format!("SELECT id FROM {} ORDER BY id", table.table()))?;
    let taken = taken
        .query_map([], |row| row.get::<_, i64>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let mut free = Vec::with_capacity(n);
    let mut next = 1i64;
    let mut taken = taken.into_iter().filter(|&id| id >= 1).peekable();
    while free.len() < n && next < i64::MAX {
        while taken.next_if(|&id| id < next).is_some() {}
        if taken.next_if_eq(&next).is_none() {
            free.push(next);
        }
        next += 1;
    }
    Ok(free)
}

/// What a salvage copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Salvaged {
    /// Runs copied whole.
    pub copied: u64,
    /// Runs whose row could not be read.
    pub lost: u64,
}

/// Copies every run of the damaged store at `damaged` that can still be read into `fresh` (an
/// empty store of the same schema), one row at a time, so a bad page loses only what it holds.
pub fn salvage(fresh: &Connection, damaged: &Path) -> Result<Salvaged, rusqlite::Error> {
    fresh.execute("ATTACH DATABASE ?1 AS damaged", [damaged.to_string_lossy()])?;
    let copied = copy_rows(fresh);
    let detached = fresh.execute("DETACH DATABASE damaged", []);
    let copied = copied?;
    detached?;
    Ok(copied)
}

fn copy_rows(fresh: &Connection) -> Result<Salvaged, rusqlite::Error> {
    let mut copy =
        fresh.prepare("INSERT INTO main.runs SELECT * FROM damaged.runs WHERE id = ?1")?;
    let mut salvaged = Salvaged { copied: 0, lost: 0 };
    for id in readable_ids(fresh)? {
        match copy.execute([id]) {
            Ok(_) => salvaged.copied += 1,
            Err(_) => salvaged.lost += 1,
        }
    }
    Ok(salvaged)
}

/// The ids of the damaged table, each found by a seek from the last: past a leaf that cannot be
/// read, seeks from further on (1, 2, 4... ids on) find where the readable part goes on.
fn readable_ids(fresh: &Connection) -> Result<Vec<i64>, rusqlite::Error> {
    let mut after =
        fresh.prepare("SELECT id FROM damaged.runs WHERE id > ?1 ORDER BY id LIMIT 1")?;
    let mut next = |from: i64| -> Result<Option<i64>, ()> {
        after
            .query_row([from], |row| row.get::<_, i64>(0))
            .map(Some)
            .or_else(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                _ => Err(()),
            })
    };
    let mut ids = Vec::new();
    let mut last = i64::MIN;
    'walk: loop {
        match next(last) {
            Ok(Some(id)) => {
                ids.push(id);
                last = id;
            }
            Ok(None) => break,
            Err(()) => {
                let mut step = 1i64;
                loop {
                    let Some(from) = last.checked_add(step) else {
                        break 'walk;
                    };
                    match next(from) {
                        Ok(Some(id)) => {
                            ids.push(id);
                            last = id;
                            continue 'walk;
                        }
                        Ok(None) => break 'walk,
                        Err(()) => step = step.saturating_mul(2),
                    }
                }
            }
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ids_are_the_lowest_no_run_has() {
        let c = Connection::open_in_memory().expect("opens");
        c.execute_batch(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY);
             INSERT INTO runs VALUES (1), (2), (4), (9223372036854775807);",
        )
        .expect("a table");
        assert_eq!(free_ids(&c, Numbered::Runs, 3).expect("found"), [3, 5, 6]);
    }

    #[test]
    fn an_odd_path_is_a_uri_still() {
        assert_eq!(
            immutable_uri(Path::new("/a b/c?d#%.sqlite")),
            "file:/a%20b/c%3Fd%23%25.sqlite?immutable=1"
        );
    }
}
