//! The Iterations tab (`view.rs`), its bars (`bars.rs`), an iteration in words (`words.rs`), the
//! summary tables under the chart (`summary.rs`) and a transaction's attempts (`attempts.rs`).

mod attempts;
mod bars;
mod summary;
mod view;
mod words;

pub use view::IterationsView;

pub(super) use view::tooltip;
