//! The timeline of one iteration (`view.rs`): its rows as data (`rows.rs`), painted
//! (`paint.rs`), its causes in words (`cause_words.rs`).

mod cause_words;
mod paint;
mod rows;
mod view;

pub use view::{StallShown, TimelineView};
