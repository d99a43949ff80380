//! Handing back to the system the memory a finished run freed. SQLite and the C side of the
//! TLS and gRPC stacks allocate through the C library's `malloc`; glibc keeps what a thread freed
//! in that thread's arena for reuse, and every run's threads are new. When each run built the
//! local instance's database (100,000 Seed23 rows by default, some 25 MB), the window grew by
//! about a database a run (239 MB after one default run, 473 MB after 21) though nothing held
//! it; the window now keeps one instance across its runs (`engine::LocalKeeper`), and a trim
//! still returns what a run's own threads, or an instance replaced when a knob changed, freed.
//! `malloc_trim` returns every arena's free pages to the system; the Rust side's allocator
//! (mimalloc) gives its own back by itself.

#![allow(unsafe_code)]

use std::time::Duration;

/// How long after a run's end its memory is handed back: its engine thread drops the local
/// instance (and with it the database) just after it reports the end.
pub const TRIM_AFTER: Duration = Duration::from_millis(500);

/// Hands the C heap's free memory back to the system, on a thread of its own (a trim walks
/// every arena; a frame never waits for it). Does nothing where the C library is not glibc.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let spawned = std::thread::Builder::new()
            .name("spanprof-trim".into())
            .spawn(|| {
                // SAFETY: malloc_trim takes no pointer and touches only glibc's own arenas,
                // each under its lock; it may be called from any thread at any time.
                unsafe { malloc_trim(0) };
            });
        // Without a thread the memory stays with the process until the next run's end.
        drop(spawned);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe extern "C" {
    /// glibc's: releases free memory at the top of the heap and in every arena's free pages.
    fn malloc_trim(pad: usize) -> std::ffi::c_int;
}
