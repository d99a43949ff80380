//! The connection panel (`panel.rs`) with its timeouts (`timeouts.rs`) and the emulator it can
//! start and seed (`emulator.rs`).

mod emulator;
mod panel;
mod timeouts;

pub use emulator::EmulatorSettings;
pub use panel::{ConnectionPanel, ConnectionSettings, LocalSettings, TargetKind, TestOutcome};

pub(super) use emulator::EmulatorProcess;
pub(super) use panel::repaint_notifier;
