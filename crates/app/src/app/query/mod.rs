//! The query panel (`panel.rs`), what it persists (`settings.rs`) and a variant's request options
//! (`options.rs`).

mod options;
mod panel;
mod settings;

pub use options::{OptionSettings, Replicas};
pub use settings::{DEFAULT_SQL, QuerySettings, VariantSettings};

pub(super) use panel::{QueryPanel, Refusal, mode_label};
