//! The read-write transactions room of the local instance: the transactions themselves (their
//! options, DML kept for replay, answers by `seqno`, how they ended, the aborts `abort_every`
//! scripts), commits batched by `max_commit_delay`, and ABORTED with its RetryInfo. The SQLite side
//! (replay, validation, mutations) is `sqlite/write.rs`; the calls are in `service/`.

pub mod aborted;
pub mod batch;
pub mod store;
