//! The status file scripts ask for (`spanprof --status-file PATH`, or `SPANPROF_STATUS_FILE`):
//! what the window shows, as lines a shell can `grep`. `scripts/window-check` waits on it.
//!
//! The protocol, one line each, in this order, a line only when there is something to say:
//! - the last run's state: `running`, `finished LABEL ok=N other=M` (LABEL the first variant's
//!   run, N the iterations that succeeded, M the others; for a load run its label, N the
//!   requests that ended ok, M the failed, dropped and unfinished) or `failed MESSAGE` (it could
//!   not start);
//! - `notice TEXT`: the notice the status bar shows, on one line, at most 500 characters;
//! - `dialog PATH`: spanprof's own file dialog is open, proposing PATH (its folder and name).
//!
//! The file is replaced whole (`export::write_atomically`) and only when what it says changed.

use std::fmt;
use std::path::{Path, PathBuf};

use super::labels::one_line;
use crate::export::{ExportError, write_atomically};

/// The most characters of a notice the file repeats.
const NOTICE_CHARS: usize = 500;

/// The last run's state, as the first line says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunState {
    /// A run is in flight.
    Running,
    /// The run ended: its first run's label, the iterations that succeeded and the others.
    Finished {
        /// The label of its first run (variant).
        label: String,
        /// Iterations with status ok, every variant's.
        ok: usize,
        /// Every other iteration.
        other: usize,
    },
    /// The run could not start, or its engine failed: why.
    Failed(String),
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunState::Running => f.write_str("running"),
            RunState::Finished { label, ok, other } => {
                write!(f, "finished {label} ok={ok} other={other}")
            }
            RunState::Failed(message) => write!(f, "failed {message}"),
        }
    }
}

/// The status file could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the status file {}: {source}", path.display())]
pub struct StatusFileError {
    /// The file.
    pub path: PathBuf,
    /// Why not.
    pub source: ExportError,
}

/// The status file, when scripts asked for one: what it should say and what it says.
#[derive(Debug, Default)]
pub struct StatusFile {
    path: Option<PathBuf>,
    run: Option<RunState>,
    written: String,
}

impl StatusFile {
    /// Writes to `path` when there is one; otherwise every call does nothing.
    pub fn new(path: Option<PathBuf>) -> Self {
        StatusFile {
            path,
            ..StatusFile::default()
        }
    }

    /// The last run's state from now on (written at the next [`StatusFile::flush`]).
    pub fn set_run(&mut self, state: RunState) {
        self.run = Some(state);
    }

    /// Writes the file if what it says changed: the run's state, `notice`, and `dialog` (the
    /// path spanprof's own dialog proposes while it is open). An error is reported once; the
    /// file is not tried again until what it says changes.
    pub fn flush(
        &mut self,
        notice: Option<&str>,
        dialog: Option<&Path>,
    ) -> Result<(), StatusFileError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let status = contents(self.run.as_ref(), notice, dialog);
        if status == self.written {
            return Ok(());
        }
        let result = write_atomically(path, status.as_bytes()).map_err(|source| StatusFileError {
            path: path.clone(),
            source,
        });
        self.written = status;
        result
    }
}

/// What the file says, per the protocol above.
fn contents(run: Option<&RunState>, notice: Option<&str>, dialog: Option<&Path>) -> String {
    let mut status = String::new();
    if let Some(run) = run {
        status.push_str(&format!("{run}\n"));
    }
    if let Some(notice) = notice {
        status.push_str(&format!("notice {}\n", one_line(notice, NOTICE_CHARS)));
    }
    if let Some(dialog) = dialog {
        status.push_str(&format!("dialog {}\n", dialog.display()));
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_says_the_run_the_notice_and_the_dialog_one_line_each() {
        assert_eq!(contents(None, None, None), "");
        let finished = RunState::Finished {
            label: "wide".into(),
            ok: 4,
            other: 1,
        };
        assert_eq!(
            contents(
                Some(&finished),
                Some("exported to\n/tmp/a.csv"),
                Some(Path::new("/tmp/x/spanprof.csv"))
            ),
            "finished wide ok=4 other=1\nnotice exported to /tmp/a.csv\ndialog /tmp/x/spanprof.csv\n"
        );
        assert_eq!(contents(Some(&RunState::Running), None, None), "running\n");
        assert_eq!(
            contents(Some(&RunState::Failed("no target".into())), None, None),
            "failed no target\n"
        );
    }

    #[test]
    fn the_file_is_written_when_what_it_says_changes_and_a_failure_is_said_once()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("status");
        let mut file = StatusFile::new(Some(path.clone()));
        file.set_run(RunState::Running);
        file.flush(None, None)?;
        assert_eq!(std::fs::read_to_string(&path)?, "running\n");
        std::fs::remove_file(&path)?;
        file.flush(None, None)?;
        assert!(!path.exists(), "nothing changed, nothing written");
        file.flush(Some("summary copied"), None)?;
        assert_eq!(
            std::fs::read_to_string(&path)?,
            "running\nnotice summary copied\n"
        );
        let mut blocked = StatusFile::new(Some(dir.path().to_owned()));
        blocked.set_run(RunState::Running);
        let error = blocked
            .flush(None, None)
            .expect_err("a directory is in the way");
        assert!(
            error
                .to_string()
                .starts_with("cannot write the status file "),
            "{error}"
        );
        assert!(blocked.flush(None, None).is_ok(), "said once");
        StatusFile::new(None).flush(Some("x"), None)?;
        Ok(())
    }
}
