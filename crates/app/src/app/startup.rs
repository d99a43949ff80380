//! How the app starts ([`AppOptions`]: persistence, the file dialogs, scripts' status and
//! frame-time files, reports to open) and the start-up overrides of the saved settings
//! (`spanprof --rows`, `--sql`, `--iterations`, `--start-mode`, `--start-tab`, `--start-emulator`,
//! or their `SPANPROF_*` variables).

use std::path::PathBuf;

use super::files::DialogBackend;
use super::settings::{Settings, Tab};
use crate::engine::QueryMode;

/// How the app starts.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// Load and save settings through eframe's storage (off for tests).
    pub persist: bool,
    /// Rows in the local instance's Seed23, overriding the saved settings.
    pub local_rows: Option<u64>,
    /// SQL to start with (the first variant's), overriding the saved settings.
    pub sql: Option<String>,
    /// Timed iterations without warm-up, overriding the saved settings.
    pub iterations: Option<u32>,
    /// Record frame times while runs stream, appended to this CSV file.
    pub frame_stats: Option<PathBuf>,
    /// Write the state of the last run to this file (`running`, `finished ...`), for scripts.
    pub status_file: Option<PathBuf>,
    /// Which file dialogs to open.
    pub file_dialogs: DialogBackend,
    /// The query mode to start with, overriding the saved settings.
    pub mode: Option<QueryMode>,
    /// The tab to show first, overriding the saved settings.
    pub tab: Option<Tab>,
    /// Start the emulator on this `host:port` and seed it at once, as "Start emulator and seed"
    /// does (`--start-emulator`, for scripts and the tests that end the window).
    pub start_emulator: Option<String>,
    /// Where finished runs are saved (off by default, and in tests).
    pub history: crate::history::Location,
    /// JSON reports to open at start (`spanprof a.json b.json`): their runs are listed, and when
    /// they hold two or more, picked in Compare, which is shown unless another tab was asked for.
    pub open: Vec<PathBuf>,
}

impl AppOptions {
    /// No persistence, the local instance with `rows` rows, the in-window file dialogs: quick,
    /// repeatable tests.
    pub fn in_memory(rows: u64) -> Self {
        AppOptions {
            persist: false,
            local_rows: Some(rows),
            file_dialogs: DialogBackend::BuiltIn,
            ..AppOptions::default()
        }
    }

    /// The settings to start with: `saved` (when the options persist and something was saved),
    /// else the defaults, with the overrides applied.
    pub fn settings(&self, saved: Option<Settings>) -> Settings {
        let mut settings = saved.filter(|_| self.persist).unwrap_or_default();
        if let Some(rows) = self.local_rows {
            settings.connection.local.seed23_rows = rows;
        }
        if let Some(sql) = &self.sql {
            settings.query.first_mut().sql = sql.clone();
        }
        if let Some(mode) = self.mode {
            settings.query.mode = mode;
        }
        if let Some(host_port) = &self.start_emulator {
            settings.connection.emulator.host_port = host_port.clone();
        }
        if let Some(tab) = self.tab {
            settings.tab = tab;
        }
        if let Some(iterations) = self.iterations {
            settings.query.iterations = iterations.max(1);
            settings.query.warmup = 0;
        }
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_what_was_saved_and_saved_settings_need_persistence() {
        let mut saved = Settings::default();
        saved.query.first_mut().sql = "SELECT 1".into();
        saved.query.warmup = 3;
        saved.tab = Tab::Details;
        let options = AppOptions {
            persist: true,
            sql: Some("SELECT 2".into()),
            iterations: Some(0),
            tab: Some(Tab::Plan),
            ..AppOptions::default()
        };
        let settings = options.settings(Some(saved.clone()));
        assert_eq!(settings.query.first_sql(), "SELECT 2");
        assert_eq!((settings.query.iterations, settings.query.warmup), (1, 0));
        assert_eq!(settings.tab, Tab::Plan);
        let kept = AppOptions {
            persist: true,
            ..AppOptions::default()
        };
        assert_eq!(kept.settings(Some(saved.clone())), saved);
        let memory = AppOptions::in_memory(500).settings(Some(saved));
        assert_eq!(memory.query.first_sql(), crate::app::DEFAULT_SQL);
        assert_eq!(memory.connection.local.seed23_rows, 500);
    }
}
