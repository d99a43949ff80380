//! The Compare tab (`view.rs`): its run list (`list.rs`), each pair of picked runs read as a diff
//! (`diff.rs`) from the verdicts computed off the UI thread (`verdicts.rs`), and its part charts
//! (`charts.rs`).

mod charts;
mod diff;
mod list;
mod verdicts;
mod view;

pub use charts::{Curve, SweepAxis};
pub use view::CompareView;
