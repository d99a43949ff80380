//! SQLite's own per-element counters of a statement that ran: for each element of its query plan
//! (each loop over a table or index, each temporary b-tree for a sort or a grouping) how many
//! times it ran, how many rows it visited, and how many CPU time-stamp-counter cycles its
//! instructions took, read with `sqlite3_stmt_scanstatus_v2` (`SQLITE_SCANSTAT_COMPLEX`).
//!
//! SQLite keeps these only when built with `SQLITE_ENABLE_STMT_SCANSTATUS` (set for the bundled
//! build in `.cargo/config.toml`) and only for statements prepared and stepped while the
//! connection's `SQLITE_DBCONFIG_STMT_SCANSTATUS` is on; the local instance turns it on for
//! PROFILE queries only ([`enable`]), so other queries run without the counting.
//!
//! A loop's cycles are those of the instructions on its cursor (SQLite charges an element the
//! instructions that touch its cursor, or a range of addresses for a sorter); instructions that
//! touch no cursor (expressions, aggregate steps, the result row) belong to no element and only
//! appear in the statement's total ([`ScanStatus::total_cycles`]).
//!
//! Unsafe: rusqlite exposes no statement handle and no scanstatus call, so this module calls
//! SQLite's C API on the connection's handle. Each `unsafe` block is argued where it is; the
//! rest of the server sees plain data.
#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr;

use rusqlite::{Connection, ffi};

/// Elements read at most (a statement's plan has a handful; the bound keeps a pathological one
/// cheap).
const MAX_ELEMENTS: c_int = 4096;

/// One element of a statement's plan, as SQLite counted it.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// Its id: the first column of `EXPLAIN QUERY PLAN` (`SQLITE_SCANSTAT_SELECTID`).
    pub id: i64,
    /// Its parent's id (0 at the top).
    pub parent: i64,
    /// Its `EXPLAIN QUERY PLAN` text, when it has one.
    pub explain: Option<String>,
    /// The table or index a loop reads.
    pub name: Option<String>,
    /// How many times it ran (`NLOOP`), when counted.
    pub loops: Option<u64>,
    /// Rows it visited over all its runs (`NVISIT`), when counted.
    pub visited: Option<u64>,
    /// Time-stamp-counter cycles of its instructions (`NCYCLE`), when counted.
    pub cycles: Option<u64>,
}

/// Every element of a statement, and the cycles of all its instructions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanStatus {
    /// The elements, in SQLite's order.
    pub elements: Vec<Element>,
    /// Cycles of every instruction of the statement, whichever element they belong to.
    pub total_cycles: u64,
}

/// Turns the counting on or off for statements `conn` prepares from now on.
pub fn enable(conn: &Connection, on: bool) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_STMT_SCANSTATUS,
        on,
    )
    .map(drop)
}

/// The counters of the one statement `conn` has prepared and not finalized, which must be
/// `sql`'s; `None` when there is not exactly one such statement or SQLite kept no counters.
///
/// Call it on the thread that owns `conn` while the statement is alive, after its last step.
pub fn read(conn: &Connection, sql: &str) -> Option<ScanStatus> {
    // SAFETY: `handle` returns the connection's live `sqlite3*`; it stays valid while `conn` is
    // borrowed, and this function neither closes it nor keeps it past its return.
    let db = unsafe { conn.handle() };
    let stmt = the_statement(db, sql)?;
    let mut status = ScanStatus::default();
    let mut total: i64 = 0;
    // SAFETY: `stmt` is a live statement of `db` (found just now on this thread, which owns the
    // connection, and nothing finalizes it meanwhile); `total` is an `i64` as NCYCLE writes one.
    let rc = unsafe {
        ffi::sqlite3_stmt_scanstatus_v2(
            stmt,
            -1,
            ffi::SQLITE_SCANSTAT_NCYCLE,
            ffi::SQLITE_SCANSTAT_COMPLEX,
            ptr::from_mut(&mut total).cast::<c_void>(),
        )
    };
    if rc != 0 {
        return None;
    }
    status.total_cycles = u64::try_from(total).unwrap_or(0);
    for idx in 0..MAX_ELEMENTS {
        match element(stmt, idx) {
            Some(e) => status.elements.push(e),
            None => break,
        }
    }
    Some(status)
}

/// The only live statement of `db`, provided its text is `sql` (less surrounding blanks).
fn the_statement(db: *mut ffi::sqlite3, sql: &str) -> Option<*mut ffi::sqlite3_stmt> {
    let mut found = None;
    let mut live = 0;
    // SAFETY: `db` is a live connection used by this thread only; `sqlite3_next_stmt` walks its
    // list of prepared statements and returns null at the end.
    let mut stmt = unsafe { ffi::sqlite3_next_stmt(db, ptr::null_mut()) };
    while !stmt.is_null() {
        live += 1;
        // SAFETY: `stmt` is a live statement of `db`; `sqlite3_sql` returns its text, owned by
        // the statement and NUL-terminated, or null. It is copied before anything else happens.
        let text = unsafe { ffi::sqlite3_sql(stmt) };
        if !text.is_null() {
            // SAFETY: non-null, NUL-terminated text that lives as long as `stmt`, read at once.
            let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
            if text.trim().trim_end_matches(';').trim() == sql.trim().trim_end_matches(';').trim() {
                found = Some(stmt);
            }
        }
        // SAFETY: as above; the next statement of `db` after `stmt`, or null.
        stmt = unsafe { ffi::sqlite3_next_stmt(db, stmt) };
    }
    found.filter(|_| live == 1)
}

/// Element `idx` of `stmt`, or `None` past the last one.
fn element(stmt: *mut ffi::sqlite3_stmt, idx: c_int) -> Option<Element> {
    let mut id: c_int = -1;
    // SAFETY: `stmt` is live (see `read`); SELECTID writes an `int`. A non-zero return means
    // `idx` is past the last element and nothing was written.
    if unsafe { scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_SELECTID, &mut id) } != 0 {
        return None;
    }
    let mut parent: c_int = -1;
    let (mut loops, mut visited, mut cycles): (i64, i64, i64) = (-1, -1, -1);
    let (mut explain, mut name): (*const c_char, *const c_char) = (ptr::null(), ptr::null());
    // SAFETY: `idx` is in range (SELECTID answered); each call writes the type its opcode
    // documents: PARENTID an `int`, NLOOP, NVISIT and NCYCLE an `sqlite3_int64`, EXPLAIN and NAME
    // a `const char*` owned by the statement (or null).
    unsafe {
        scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_PARENTID, &mut parent);
        scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_NLOOP, &mut loops);
        scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_NVISIT, &mut visited);
        scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_NCYCLE, &mut cycles);
        scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_EXPLAIN, &mut explain);
        scan_status(stmt, idx, ffi::SQLITE_SCANSTAT_NAME, &mut name);
    }
    let count = |n: i64| u64::try_from(n).ok();
    Some(Element {
        id: i64::from(id),
        parent: i64::from(parent),
        // SAFETY: each is null or NUL-terminated text owned by the live statement, copied now.
        explain: (!explain.is_null()).then(|| {
            unsafe { CStr::from_ptr(explain) }
                .to_string_lossy()
                .into_owned()
        }),
        // SAFETY: as for `explain`.
        name: (!name.is_null()).then(|| {
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        }),
        loops: count(loops),
        visited: count(visited),
        cycles: count(cycles),
    })
}

/// `sqlite3_stmt_scanstatus_v2` with the COMPLEX flag, writing into `out`.
///
/// # Safety
/// `stmt` must be a live statement, and `T` the type SQLite writes for `op`.
unsafe fn scan_status<T>(
    stmt: *mut ffi::sqlite3_stmt,
    idx: c_int,
    op: c_int,
    out: &mut T,
) -> c_int {
    // SAFETY: the caller's contract; `out` is a valid, writable `T`.
    unsafe {
        ffi::sqlite3_stmt_scanstatus_v2(
            stmt,
            idx,
            op,
            ffi::SQLITE_SCANSTAT_COMPLEX,
            ptr::from_mut(out).cast::<c_void>(),
        )
    }
}
