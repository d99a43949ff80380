//! The Iterations tab (`view.rs`), its bars (`bars.rs`), an iteration in words (`words.rs`), the
//! summary tables under the chart (`summary.rs`), a transaction's attempts (`attempts.rs`) and a
//! read-write run's conflict view, who blocked whom (`conflicts.rs`).

mod attempts;
mod bars;
mod conflicts;
mod summary;
mod view;
mod words;

pub use view::IterationsView;

pub(super) use view::tooltip;
