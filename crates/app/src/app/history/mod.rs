//! The History tab (`view.rs`) and the thread that reads the store for it (`reader.rs`).

mod reader;
mod view;

pub use view::HistoryView;

pub(super) use reader::HistoryReader;
pub(super) use view::HistoryEvent;
