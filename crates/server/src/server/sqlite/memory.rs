//! A bound on each block of memory SQLite asks for on a query thread, so that what a query builds is
//! held to the value cap while it grows, not only once it is finished.
//!
//! SQLite's length limit (`SQLITE_LIMIT_LENGTH`, the value cap) stops `printf`, `group_concat`,
//! `string_agg`, `zeroblob`, `replace` and `||` before they grow past it, but its JSON builders
//! (`json_group_array`, `json_group_object`, `json_array`, `json_object`, `json_set` and their
//! `jsonb_` forms) grow their buffer by doubling and check the limit only on the finished value:
//! `json_group_array(printf('%.*c', 1000000, 'x'))` over 5,000 rows grew to about 2 GB first. Any
//! value SQLite builds lives in one block, so a query thread refuses any single block larger than
//! twice the value cap and a mebibyte (room for a buffer's last doubling): the builder fails with
//! SQLite's out-of-memory error, which [`take_refusal`] turns into one that names the cap.
//!
//! SQLite's allocator can only be replaced before SQLite starts: [`install`] is called at the start
//! of the program and of the local instance, before any connection is opened. Other threads (the
//! database's setup, the history store) are not bounded.

#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

use rusqlite::ffi;

/// Room above twice the value cap for a growing buffer's bookkeeping.
const SLACK_BYTES: u64 = 1 << 20;

thread_local! {
    /// The largest block this thread may ask SQLite for (0: unbounded).
    static LIMIT: Cell<u64> = const { Cell::new(0) };
    /// The largest block refused since the last [`take_refusal`] (0: none).
    static REFUSED: Cell<u64> = const { Cell::new(0) };
}

/// SQLite's own allocator, which the bounded one calls.
struct Original(ffi::sqlite3_mem_methods);

// SAFETY: the methods are plain C function pointers and SQLite's own `pAppData` (null for its
// default allocator), which SQLite itself calls from every thread.
unsafe impl Send for Original {}
// SAFETY: as above; the struct is never changed once stored.
unsafe impl Sync for Original {}

/// SQLite's allocator, stored before the bounded one is put in front of it.
static ORIGINAL: OnceLock<Original> = OnceLock::new();
/// Whether the bounded allocator is in place.
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Puts the bounded allocator in front of SQLite's; whether it is in place. Does nothing (and says
/// false) once SQLite has started without it, as it must not change allocators under live memory.
pub fn install() -> bool {
    *INSTALLED.get_or_init(replace_allocator)
}

fn replace_allocator() -> bool {
    let mut original = ffi::sqlite3_mem_methods {
        xMalloc: None,
        xFree: None,
        xRealloc: None,
        xSize: None,
        xRoundup: None,
        xInit: None,
        xShutdown: None,
        pAppData: std::ptr::null_mut(),
    };
    // SAFETY: SQLITE_CONFIG_GETMALLOC writes the current methods into the struct it is given, which
    // lives through the call; before SQLite starts it succeeds, after it returns SQLITE_MISUSE.
    let got = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_GETMALLOC, &raw mut original) };
    if got != ffi::SQLITE_OK || original.xMalloc.is_none() || original.xRealloc.is_none() {
        return false;
    }
    let bounded = ffi::sqlite3_mem_methods {
        xMalloc: Some(bounded_malloc),
        xRealloc: Some(bounded_realloc),
        ..original
    };
    // The originals are readable before SQLite can call the bounded methods.
    if ORIGINAL.set(Original(original)).is_err() {
        return false;
    }
    // SAFETY: SQLITE_CONFIG_MALLOC copies the struct; SQLite has not started (GETMALLOC succeeded
    // just now, and `install` runs once, before any connection).
    let set = unsafe { ffi::sqlite3_config(ffi::SQLITE_CONFIG_MALLOC, &raw const bounded) };
    set == ffi::SQLITE_OK
}

/// Bounds this thread's SQLite blocks by the value cap `max_value_bytes` (a query thread calls it
/// before it opens its connection); `None` lifts the bound.
pub fn bound_this_thread(max_value_bytes: Option<u64>) {
    let limit = max_value_bytes.map_or(0, |v| v.saturating_mul(2).saturating_add(SLACK_BYTES));
    // A thread's own cell; never fails for a `const` cell without a destructor.
    let _ = LIMIT.try_with(|l| l.set(limit));
    let _ = REFUSED.try_with(|r| r.set(0));
}

/// A block this thread was refused since the last call, if one was (and forgets it): its size and
/// the value cap it was held to.
pub fn take_refusal() -> Option<Refusal> {
    let refused = REFUSED.try_with(|r| r.replace(0)).unwrap_or(0);
    let limit = LIMIT.try_with(Cell::get).unwrap_or(0);
    (refused > 0).then(|| Refusal {
        block_bytes: refused,
        max_value_bytes: limit.saturating_sub(SLACK_BYTES) / 2,
    })
}

/// A block SQLite was refused on a query thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The largest block asked for.
    pub block_bytes: u64,
    /// The value cap the thread was held to.
    pub max_value_bytes: u64,
}

/// Whether this thread may have a block of `bytes`; a refusal is remembered.
fn allowed(bytes: c_int) -> bool {
    let limit = LIMIT.try_with(Cell::get).unwrap_or(0);
    let bytes = u64::try_from(bytes).unwrap_or(0);
    if limit == 0 || bytes <= limit {
        return true;
    }
    let _ = REFUSED.try_with(|r| r.set(r.get().max(bytes)));
    false
}

fn original() -> Option<&'static ffi::sqlite3_mem_methods> {
    ORIGINAL.get().map(|o| &o.0)
}

unsafe extern "C" fn bounded_malloc(bytes: c_int) -> *mut c_void {
    match original().and_then(|o| o.xMalloc) {
        // SAFETY: SQLite's own xMalloc, called as SQLite would.
        Some(malloc) if allowed(bytes) => unsafe { malloc(bytes) },
        _ => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn bounded_realloc(block: *mut c_void, bytes: c_int) -> *mut c_void {
    match original().and_then(|o| o.xRealloc) {
        // SAFETY: SQLite's own xRealloc on a block its xMalloc gave; a refusal leaves the block as
        // it was, as a failed realloc does.
        Some(realloc) if allowed(bytes) => unsafe { realloc(block, bytes) },
        _ => std::ptr::null_mut(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_refuses_blocks_past_twice_the_value_cap_and_says_so() {
        std::thread::spawn(|| {
            assert!(allowed(1 << 30), "unbounded until told");
            bound_this_thread(Some(1000));
            assert!(allowed(2000 + (1 << 20)));
            assert_eq!(take_refusal(), None);
            assert!(!allowed(2001 + (1 << 20)));
            assert!(!allowed(5 << 20));
            let refusal = take_refusal().map(|r| (r.block_bytes, r.max_value_bytes));
            assert_eq!(refusal, Some((5 << 20, 1000)));
            assert_eq!(take_refusal(), None, "taken");
            bound_this_thread(None);
            assert!(allowed(1 << 30));
        })
        .join()
        .expect("the thread's checks pass");
    }
}
