//! The emulator target's settings, and the button that starts the installed Cloud Spanner
//! emulator and seeds it with the demo tables (on a thread of its own: the UI never waits).

use std::net::TcpStream;
use std::sync::mpsc;

use serde::{Deserialize, Serialize};

use crate::app::command::Command;
use crate::app::theme::form_row;
use crate::client::{Timeouts, error_chain};
use crate::emulator::{Emulator, SeedTarget, seed_blocking};

/// Where the emulator listens, and the database the demo tables go in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EmulatorSettings {
    /// The emulator's gRPC address, `host:port`.
    pub host_port: String,
    /// Project id.
    pub project: String,
    /// Instance id.
    pub instance: String,
    /// Database id.
    pub database: String,
    /// Rows "Start and seed" loads into Seed23.
    pub seed_rows: u64,
}

impl Default for EmulatorSettings {
    fn default() -> Self {
        EmulatorSettings {
            host_port: "127.0.0.1:9010".into(),
            project: "test-project".into(),
            instance: "test-instance".into(),
            database: "test-db".into(),
            seed_rows: 10_000,
        }
    }
}

impl EmulatorSettings {
    /// Draws the emulator's settings; `status` describes the emulator this app started.
    pub fn ui(&mut self, ui: &mut egui::Ui, status: &str) -> Option<Command> {
        let mut command = None;
        egui::Grid::new("emulator")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                for (label, value) in [
                    ("Host:port", &mut self.host_port),
                    ("Project", &mut self.project),
                    ("Instance", &mut self.instance),
                    ("Database", &mut self.database),
                ] {
                    form_row(
                        ui,
                        label,
                        None,
                        egui::TextEdit::singleline(value).desired_width(180.0),
                    );
                }
                form_row(
                    ui,
                    "Seed rows",
                    None,
                    egui::DragValue::new(&mut self.seed_rows).range(1..=10_000_000),
                );
            });
        if ui
            .button("Start emulator and seed")
            .on_hover_text(
                "Start the installed emulator (google-cloud-cli-spanner-emulator) on host:port, \
                 then create the demo tables and load their rows",
            )
            .clicked()
        {
            command = Some(Command::StartEmulator);
        }
        if !status.is_empty() {
            ui.label(egui::RichText::new(status).small());
        }
        command
    }
}

/// What starting and seeding the emulator gave: the emulator if this app started it, and a line
/// saying what happened; or why it failed.
type Started = Result<(Option<Emulator>, String), String>;

/// An emulator this app started (killed when dropped), and the seeding in flight.
#[derive(Default)]
pub struct EmulatorProcess {
    emulator: Option<Emulator>,
    pending: Option<mpsc::Receiver<Started>>,
    status: String,
}

impl EmulatorProcess {
    /// Starts the emulator (unless something already listens on `host:port`) and seeds it, on a
    /// named thread; `notify` is called when it is done.
    pub fn start(
        &mut self,
        settings: &EmulatorSettings,
        timeouts: Timeouts,
        notify: impl Fn() + Send + 'static,
    ) {
        if self.pending.is_some() {
            return;
        }
        let settings = settings.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("spanprof-emulator".into())
            .spawn(move || {
                let _ = tx.send(start_and_seed(&settings, timeouts));
                notify();
            });
        match spawned {
            Ok(_) => {
                self.pending = Some(rx);
                self.status = "starting the emulator and seeding it…".into();
            }
            Err(e) => self.status = format!("cannot start a thread: {e}"),
        }
    }

    /// Reads the outcome of a start in flight; returns an error to log, if it failed.
    pub fn drain(&mut self) -> Option<String> {
        let outcome = self.pending.as_ref()?.try_recv().ok()?;
        self.pending = None;
        match outcome {
            Ok((started, text)) => {
                if started.is_some() {
                    // Stops the one started before, if any.
                    self.emulator = started;
                }
                self.status = text;
                None
            }
            Err(message) => {
                self.status = message.clone();
                Some(message)
            }
        }
    }

    /// What happened last, for the panel.
    pub fn status(&self) -> &str {
        &self.status
    }
}

/// Starts the emulator if nothing listens on the address yet, then seeds it.
fn start_and_seed(settings: &EmulatorSettings, timeouts: Timeouts) -> Started {
    let configured = settings.host_port.trim();
    let started = if TcpStream::connect(configured).is_err() {
        Some(Emulator::start(configured).map_err(|e| error_chain(&e))?)
    } else {
        None
    };
    // Where it listens, as it said (the same unless port 0 was configured).
    let host_port = started
        .as_ref()
        .map_or(configured, Emulator::address)
        .to_owned();
    let target = SeedTarget {
        endpoint: host_port.clone(),
        project: settings.project.clone(),
        instance: settings.instance.clone(),
        database: settings.database.clone(),
        seed23_rows: settings.seed_rows,
        timeouts,
    };
    let summary = seed_blocking(&target)
        .map_err(|e| format!("seeding {host_port} failed: {}", error_chain(&e)))?;
    let how = if started.is_some() {
        "started"
    } else {
        "already running"
    };
    let status = format!(
        "emulator {how} on {host_port}; seeded {} rows in {:.2} s",
        summary.rows(),
        summary.elapsed.as_secs_f64()
    );
    Ok((started, status))
}
