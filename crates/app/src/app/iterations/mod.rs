//! The Iterations tab (`view.rs`), its bars (`bars.rs`), an iteration in words (`words.rs`) and
//! the summary tables under the chart (`summary.rs`).

mod bars;
mod summary;
mod view;
mod words;

pub use view::IterationsView;

pub(super) use view::tooltip;
