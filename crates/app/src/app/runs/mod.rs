//! The runs: the list of them (`list.rs`), the one in flight (`active.rs`) with the window's
//! CPU while it is measured (`cpu.rs`), and the [`RunController`] that owns both with the
//! history worker (`controller.rs`), which reads a run's records back from the history when the
//! list had dropped them (`records.rs`) and hands the memory a finished run freed back to the
//! system (`trim.rs`).

mod active;
mod controller;
mod cpu;
mod list;
mod records;
mod trim;

pub use active::Progress;
pub use list::{RECORDS_HELD, RunEntry, RunSource};

pub(super) use active::{ActiveRun, Ended};
pub(super) use controller::{Drained, RunController};
pub(super) use list::{RunList, names};
