//! The Compare tab (`view.rs`), its part charts (`phases.rs`) and the verdicts it shows
//! (`verdicts.rs`).

mod phases;
mod verdicts;
mod view;

pub use phases::{Curve, SweepAxis};
pub use view::CompareView;
