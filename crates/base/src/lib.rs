//! Helpers every floor of spanprof uses: words and figures for people, units of time, FNV hashing,
//! files opened without blocking, child processes that never outlive spanprof, sample statistics.
//! The lowest floor: it names no other spanprof crate.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod children;
pub mod files;
pub mod fnv;
pub mod stats;
pub mod text;
pub mod units;
