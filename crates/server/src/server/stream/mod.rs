//! The stream room of the local instance: how an answer becomes messages and reaches the client.
//! The query thread's rows go into a sink (`sink.rs`), the message builder cuts them into
//! size-limited PartialResultSets with a resume token on each (`builder.rs`, `token.rs`), a live
//! stream paces, fails and sends them (`live.rs`), a faulted one is parked for its resume
//! (`parked.rs`) or remembered for its restart (`restarts.rs`), and the tap watches (`tap.rs`). The
//! bytes between the query thread and the transport are held to a budget (`budget.rs`), the
//! response leaves in pieces that show whether its client reads (`drain.rs`), and the streams
//! whose clients read none of it are capped (`unread.rs`).

pub mod budget;
pub mod builder;
pub mod drain;
pub mod live;
pub mod parked;
pub mod restarts;
pub(crate) mod sink;
pub mod tap;
pub mod token;
pub mod unread;

pub use builder::{MessageBuilder, ResumePoint, TokenStamp, encode_stream, encode_stream_shaped};
