//! The runs: the list of them (`list.rs`), the one in flight (`active.rs`), and the
//! [`RunController`] that owns both with the history worker (`controller.rs`).

mod active;
mod controller;
mod list;

pub use active::Progress;
pub use list::{RunEntry, RunSource};

pub(super) use active::{ActiveRun, Ended};
pub(super) use controller::{Drained, RunController};
pub(super) use list::{RunList, names};
