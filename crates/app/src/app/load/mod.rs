//! The Load tab (`view.rs`): its controls in plain words (`controls.rs`), its curve, table and
//! sentences (`chart.rs`, the latency on a log axis: `log_axis.rs`), a read-write run's goodput
//! against its attempts and aborts per transaction (`goodput.rs`) with its hottest keys under it
//! (`conflicts.rs`) and the target's own statistics beside the run's figures (`target_stats.rs`),
//! parts (`parts.rs`), percentiles (`percentiles.rs`), where the load run in flight is
//! (`progress.rs`), the parameters each request draws and the statistics' switch
//! (`draw_controls.rs`) and what the tab persists (`settings.rs`).

mod chart;
mod conflicts;
mod controls;
mod draw_controls;
mod goodput;
mod log_axis;
mod parts;
mod percentiles;
mod progress;
mod settings;
mod target_stats;
mod view;

pub use chart::{CurveLine, LoadFigures};
pub use conflicts::LoadConflicts;
pub use draw_controls::{DRAW_PARAMETERS, READ_TARGET_STATS};
pub use goodput::{ATTEMPTS_LINE, GOODPUT_LINE, LoadGoodput};
pub use parts::LoadParts;
pub use percentiles::LoadPercentiles;
pub use progress::{LoadProgress, Phase, WaitWords};
pub use settings::{Drawing, LoadModel, LoadSettings, QueueSettings, TargetStatsSettings};
pub use target_stats::{LoadTargetStats, STATS_HEADINGS};
pub use view::LoadView;

pub(super) use view::LoadEnded;
