//! The Compare tab (`view.rs`), its part charts (`charts.rs`) and the verdicts it shows
//! (`verdicts.rs`).

mod charts;
mod verdicts;
mod view;

pub use charts::{Curve, SweepAxis};
pub use view::CompareView;
