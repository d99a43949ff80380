//! The runs: the list of them (`list.rs`), the one in flight (`active.rs`) with the window's
//! CPU while it is measured (`cpu.rs`), and the [`RunController`] that owns both with the
//! history worker (`controller.rs`).

mod active;
mod controller;
mod cpu;
mod list;

pub use active::Progress;
pub use list::{RunEntry, RunSource};

pub(super) use active::{ActiveRun, Ended};
pub(super) use controller::{Drained, RunController};
pub(super) use list::{RunList, names};
