//! The Iterations tab (`view.rs`), an iteration in words (`words.rs`) and the summary tables under
//! the chart (`summary.rs`).

mod summary;
mod view;
mod words;

pub use view::IterationsView;

pub(super) use view::tooltip;
