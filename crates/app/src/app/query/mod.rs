//! The query panel (`panel.rs`), what it persists (`settings.rs`), a variant's request options
//! (`options.rs`) and a read-write variant's transaction options (`transaction.rs`), and the mode
//! remembered per kind of target (`by_target.rs`).

mod by_target;
mod options;
mod panel;
mod settings;
mod transaction;

pub use by_target::{ModesByTarget, mode_word};
pub use options::{OptionSettings, Replicas};
pub use settings::{DEFAULT_SQL, QuerySettings, VariantSettings};
pub use transaction::{IsolationChoice, LockChoice, TransactionSettings};

pub(super) use panel::{QueryPanel, Refusal};
