//! `Command`: what a panel asks the app to do. The panels return one from their `ui`; the frame
//! hands each to `SpanprofApp::handle` after drawing (a leaf, so every panel can name it).

use crate::export::{Format, RunKind};

/// What the panels ask the app to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Start a run of the query panel's query on the connection panel's target.
    Run,
    /// Cancel the run in flight.
    Cancel,
    /// Test the connection.
    TestConnection,
    /// Start the installed emulator and seed it.
    StartEmulator,
    /// Choose a service-account key file.
    ChooseCredentials,
    /// Open a report (JSON, or an HTML report with one inside).
    OpenReport,
    /// Export the runs marked for export (a profile's), or the last load run, in a format of
    /// their kind.
    Export(Format, RunKind),
    /// Copy the Markdown summary of the runs marked for export.
    CopySummary,
    /// Start a load test of the query panel's query with the Load tab's settings.
    RunLoad,
    /// Stop the load test in flight, keeping the steps it measured.
    StopLoad,
}
