//! The runs: the list of them (`list.rs`) and the one in flight (`active.rs`).

mod active;
mod list;

pub use active::Progress;
pub use list::{RunEntry, RunSource};

pub(super) use active::{ActiveRun, Ended};
pub(super) use list::{RunList, names};
