//! The History tab (`view.rs`, its runs' rows in `rows.rs`), the thread that reads the store for
//! it (`reader.rs`), and how the store's fingerprints become the list's entries (`groups.rs`).

mod groups;
mod reader;
mod rows;
mod view;

pub use view::HistoryView;

pub(super) use reader::HistoryReader;
pub(super) use view::HistoryEvent;
