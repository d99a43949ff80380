//! The read-write transactions room of the local instance: the transactions themselves (their
//! options, DML kept for replay, answers by `seqno`, how they ended, the aborts `abort_every`
//! scripts), commits batched by `max_commit_delay`, and ABORTED with its RetryInfo; the one
//! read-write connection their statements and commits run on (`write`: replay, the rows each
//! statement reads and writes, validation, commits and DDL). The calls are in `service/`.
//!
//! The model of Spanner's locking the transactions run under (`locking` takes the locks for the
//! service): the lock table (`locks`: lock modes, wound-wait, bounded waits; `held`:
//! the locks it holds), its journal (`journal`), the words they share (`lock_key`) and the
//! lock-free reads' versions (`versions`); and, on the read-write connection, the rows each
//! statement wrote, by key and column (`rows_written`), and the keys and ranges it read, from its
//! bytecode (`rows_read`), their keys from SQLite's values by `row_key`; a commit's mutations'
//! keys (`mutation_keys`).

pub mod aborted;
pub mod batch;
pub mod held;
pub mod journal;
pub mod lock_key;
pub mod locking;
pub mod locks;
pub mod mutation_keys;
pub mod row_key;
pub mod rows_read;
pub mod rows_written;
pub mod store;
pub mod sys_stats;
pub mod versions;
pub mod write;
