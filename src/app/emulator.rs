//! The emulator target's settings, and the button that starts the installed Cloud Spanner
//! emulator and seeds it with the demo tables (on a thread of its own: the UI never waits).

use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::Command;
use super::theme::form_row;
use crate::cli::{SeedArgs, run_seed};

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

/// What starting and seeding the emulator gave: the process if this app started it, and a line
/// saying what happened; or why it failed.
type Started = Result<(Option<Child>, String), String>;

/// An emulator this app started (killed when dropped), and the seeding in flight.
#[derive(Default)]
pub struct EmulatorProcess {
    child: Option<Child>,
    pending: Option<mpsc::Receiver<Started>>,
    status: String,
}

impl EmulatorProcess {
    /// Starts the emulator (unless something already listens on `host:port`) and seeds it, on a
    /// named thread; `notify` is called when it is done.
    pub fn start(&mut self, settings: &EmulatorSettings, notify: impl Fn() + Send + 'static) {
        if self.pending.is_some() {
            return;
        }
        let settings = settings.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("spanprof-emulator".into())
            .spawn(move || {
                let _ = tx.send(start_and_seed(&settings));
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
            Ok((child, text)) => {
                if child.is_some() {
                    self.stop();
                    self.child = child;
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

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for EmulatorProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts the emulator if nothing listens on the address yet, then seeds it.
fn start_and_seed(settings: &EmulatorSettings) -> Started {
    let host_port = settings.host_port.trim().to_owned();
    let mut child = None;
    if TcpStream::connect(&host_port).is_err() {
        let binary = emulator_binary()?;
        let mut started = Process::new(&binary)
            .args(["--host_port", &host_port])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&host_port).is_err() {
            if let Ok(Some(status)) = started.try_wait() {
                return Err(format!("the emulator exited at once ({status})"));
            }
            if Instant::now() > deadline {
                let _ = started.kill();
                return Err(format!(
                    "the emulator did not listen on {host_port} within 20 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        child = Some(started);
    }
    let args = SeedArgs {
        endpoint: Some(host_port.clone()),
        project: settings.project.clone(),
        instance: settings.instance.clone(),
        database: settings.database.clone(),
        rows: settings.seed_rows,
    };
    let mut out = Vec::new();
    run_seed(&args, &mut out).map_err(|e| format!("seeding {host_port} failed: {e:#}"))?;
    let text = String::from_utf8_lossy(&out);
    let last = text.lines().last().unwrap_or("seeded");
    let started = if child.is_some() {
        "started"
    } else {
        "already running"
    };
    Ok((child, format!("emulator {started} on {host_port}; {last}")))
}

/// `emulator_main`: `$SPANPROF_EMULATOR_MAIN`, else where its Debian package installed it.
fn emulator_binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("SPANPROF_EMULATOR_MAIN") {
        return Ok(PathBuf::from(path));
    }
    let listed = Process::new("dpkg")
        .args(["-L", "google-cloud-cli-spanner-emulator"])
        .output()
        .map_err(|e| format!("cannot ask dpkg where the emulator is: {e}"))?;
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .find(|line| line.ends_with("/emulator_main"))
        .map(PathBuf::from)
        .ok_or_else(|| {
            "the Cloud Spanner emulator is not installed (no emulator_main in \
             google-cloud-cli-spanner-emulator); install it or set SPANPROF_EMULATOR_MAIN"
                .to_owned()
        })
}
