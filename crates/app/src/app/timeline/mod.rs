//! The timeline of one iteration (`view.rs`): its rows as data (`rows.rs`), painted
//! (`paint.rs`), its causes in words (`cause_words.rs`), the server's share beside it
//! (`server_share.rs`); a read-write transaction's, one lane per attempt, as data (`attempts.rs`)
//! and drawn (`attempts_view.rs`).

mod attempts;
mod attempts_view;
mod cause_words;
mod paint;
mod rows;
mod server_share;
mod view;

pub use attempts_view::AttemptsTimeline;
pub use view::{StallShown, TimelineView};
