//! The Load tab (`view.rs`): its controls in plain words (`controls.rs`), its curve, table and
//! sentences (`chart.rs`, the latency on a log axis: `log_axis.rs`), a read-write run's goodput
//! against its attempts and aborts per transaction (`goodput.rs`) with its hottest keys under it
//! (`conflicts.rs`), parts (`parts.rs`),
//! percentiles (`percentiles.rs`), where the load run in flight is (`progress.rs`) and what the
//! tab persists (`settings.rs`).

mod chart;
mod conflicts;
mod controls;
mod goodput;
mod log_axis;
mod parts;
mod percentiles;
mod progress;
mod settings;
mod view;

pub use chart::{CurveLine, LoadFigures};
pub use conflicts::LoadConflicts;
pub use goodput::{ATTEMPTS_LINE, GOODPUT_LINE, LoadGoodput};
pub use parts::LoadParts;
pub use percentiles::LoadPercentiles;
pub use progress::{LoadProgress, Phase};
pub use settings::{LoadModel, LoadSettings, QueueSettings};
pub use view::LoadView;

pub(super) use view::LoadEnded;
