//! The connection panel: which instance to profile (the built-in local instance with its knobs,
//! the emulator, or Cloud Spanner), and "Test connection".

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::emulator::EmulatorSettings;
use super::timeouts::TimeoutSettings;
use crate::app::command::Command;
use crate::app::theme::form_row;
use crate::client::HeaderOptions;
use crate::client::auth::Credentials;
use crate::client::cloud::{CloudTarget, DEFAULT_ENDPOINT};
use crate::engine::{
    DatabasePath, Engine, EngineEvent, Job, Notifier, ProfileSpec, QueryMode, RunEvent, Target,
    Variant,
};
use crate::server::{DEFAULT_SEED23_ROWS, KnobSettings, ServerConfig, Shape};

/// Which kind of instance runs the queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TargetKind {
    /// The built-in local instance, started in-process for each run.
    #[default]
    Local,
    /// The Cloud Spanner emulator (or any plaintext endpoint).
    Emulator,
    /// Cloud Spanner.
    Cloud,
}

/// The built-in local instance's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LocalSettings {
    /// Rows in Seed23.
    pub seed23_rows: u64,
    /// How it streams.
    pub knobs: KnobSettings,
}

impl Default for LocalSettings {
    fn default() -> Self {
        LocalSettings {
            seed23_rows: DEFAULT_SEED23_ROWS,
            knobs: KnobSettings::default(),
        }
    }
}

/// Cloud Spanner's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CloudSettings {
    /// Project id.
    pub project: String,
    /// Instance id.
    pub instance: String,
    /// Database id.
    pub database: String,
    /// A service-account key file; application default credentials when `None`.
    pub credentials_file: Option<PathBuf>,
    /// The endpoint (`https://spanner.googleapis.com` unless told otherwise).
    pub endpoint: String,
}

impl Default for CloudSettings {
    fn default() -> Self {
        CloudSettings {
            project: String::new(),
            instance: String::new(),
            database: String::new(),
            credentials_file: None,
            endpoint: DEFAULT_ENDPOINT.to_owned(),
        }
    }
}

/// Everything the connection panel persists.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ConnectionSettings {
    /// The chosen kind of target.
    pub kind: TargetKind,
    /// The local instance.
    pub local: LocalSettings,
    /// The emulator.
    pub emulator: EmulatorSettings,
    /// Cloud Spanner.
    pub cloud: CloudSettings,
    /// The client's timeouts, whichever the target.
    pub timeouts: TimeoutSettings,
    /// The official clients' optional headers (AFE timing, end-to-end tracing).
    pub headers: HeaderOptions,
}

impl ConnectionSettings {
    /// The engine's target and the database to read, or what is missing.
    pub fn target(&self) -> Result<(Target, DatabasePath), String> {
        match self.kind {
            TargetKind::Local => Ok((
                Target::Local(ServerConfig {
                    port: 0,
                    seed23_rows: self.local.seed23_rows,
                    knobs: self.local.knobs,
                    connections: Default::default(),
                }),
                DatabasePath::default(),
            )),
            TargetKind::Emulator => {
                let e = &self.emulator;
                if e.host_port.trim().is_empty() {
                    return Err("the emulator's host:port is empty".into());
                }
                Ok((
                    Target::Endpoint(e.host_port.trim().to_owned()),
                    DatabasePath {
                        project: e.project.clone(),
                        instance: e.instance.clone(),
                        database: e.database.clone(),
                    },
                ))
            }
            TargetKind::Cloud => {
                let c = &self.cloud;
                let missing: Vec<&str> = [
                    ("project", &c.project),
                    ("instance", &c.instance),
                    ("database", &c.database),
                ]
                .into_iter()
                .filter(|(_, v)| v.trim().is_empty())
                .map(|(name, _)| name)
                .collect();
                if !missing.is_empty() {
                    return Err(format!("Cloud Spanner needs: {}", missing.join(", ")));
                }
                let target = CloudTarget {
                    project: c.project.trim().to_owned(),
                    instance: c.instance.trim().to_owned(),
                    database: c.database.trim().to_owned(),
                    endpoint: c.endpoint.trim().to_owned(),
                    credentials: match &c.credentials_file {
                        Some(path) => Credentials::ServiceAccountFile(path.clone()),
                        None => Credentials::ApplicationDefault,
                    },
                    ca_file: None,
                };
                let database = DatabasePath {
                    project: target.project.clone(),
                    instance: target.instance.clone(),
                    database: target.database.clone(),
                };
                Ok((Target::Cloud(target), database))
            }
        }
    }
}

/// How a connection test ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TestOutcome {
    /// Still running.
    Testing,
    /// Reachable and `SELECT 1` ran.
    Ok(String),
    /// What is wrong.
    Failed(String),
}

/// The connection panel's runtime state (a connection test in flight and its outcome, or why
/// the last run could not reach the target), with the settings that outcome is of: once they
/// change, it is no longer said.
#[derive(Default)]
pub struct ConnectionPanel {
    test: Option<Engine>,
    connected: Option<String>,
    outcome: Option<TestOutcome>,
    outcome_of: Option<ConnectionSettings>,
}

impl ConnectionPanel {
    /// Starts a connection test: a session and one `SELECT 1`, on the engine's own thread.
    pub fn start_test(&mut self, settings: &ConnectionSettings, notify: Notifier) {
        self.test = None;
        self.outcome_of = Some(settings.clone());
        let (target, database) = match settings.target() {
            Ok(t) => t,
            Err(message) => {
                self.outcome = Some(TestOutcome::Failed(message));
                return;
            }
        };
        let timeouts = match settings.timeouts.timeouts() {
            Ok(t) => t,
            Err(message) => {
                self.outcome = Some(TestOutcome::Failed(message));
                return;
            }
        };
        let spec = ProfileSpec {
            database,
            timeouts,
            headers: settings.headers,
            variants: vec![Variant {
                mode: QueryMode::Normal,
                ..Variant::new("connection test", "SELECT 1")
            }],
            iterations: 1,
            warmup: 0,
            ..ProfileSpec::default()
        };
        match Engine::start(Job::Profile(target, spec), notify) {
            Ok(engine) => {
                self.test = Some(engine);
                self.outcome = Some(TestOutcome::Testing);
            }
            Err(e) => self.outcome = Some(TestOutcome::Failed(format!("cannot start: {e}"))),
        }
    }

    /// Reads what the connection test reported (call once per frame).
    pub fn drain(&mut self) {
        let Some(engine) = &self.test else { return };
        let events: Vec<EngineEvent> = std::iter::from_fn(|| engine.try_next())
            .filter_map(RunEvent::into_profile)
            .collect();
        for event in events {
            match event {
                EngineEvent::Connected { target, session_ms } => {
                    let took = crate::text::ms(session_ms);
                    self.connected = Some(format!("{target}: session in {took}"));
                }
                EngineEvent::Failed(error) => {
                    self.outcome = Some(TestOutcome::Failed(error.to_string()));
                    self.test = None;
                }
                EngineEvent::Iteration { record, .. } if !record.outcome.is_ok() => {
                    self.outcome = Some(TestOutcome::Failed(format!(
                        "connected, but SELECT 1 failed: {}",
                        record.error().unwrap_or_default()
                    )));
                }
                EngineEvent::Iteration { record, .. } => {
                    self.outcome = Some(TestOutcome::Ok(format!(
                        "{}; SELECT 1 in {}",
                        self.connected.take().unwrap_or_else(|| "connected".into()),
                        crate::text::ms(record.total_ms)
                    )));
                }
                EngineEvent::Finished(_) => self.test = None,
                EngineEvent::Progress { .. } | EngineEvent::Details(_) => {}
            }
        }
    }

    /// The last test's outcome.
    pub fn outcome(&self) -> Option<&TestOutcome> {
        self.outcome.as_ref()
    }

    /// A run on `settings` could not reach its target: marked here, beside the fields at fault,
    /// until they change (its message is the central area's, said once).
    pub fn run_failed(&mut self, settings: &ConnectionSettings) {
        self.test = None;
        self.outcome = Some(TestOutcome::Failed(
            "the last run could not reach this target".into(),
        ));
        self.outcome_of = Some(settings.clone());
    }

    /// Forgets an outcome (and a test in flight) of settings other than `settings`.
    fn forget_if_changed(&mut self, settings: &ConnectionSettings) {
        if self.outcome_of.as_ref().is_some_and(|of| of != settings) {
            self.test = None;
            self.connected = None;
            self.outcome = None;
            self.outcome_of = None;
        }
    }

    /// Draws the panel; returns what the user asked for.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        settings: &mut ConnectionSettings,
        emulator_status: &str,
        enabled: bool,
    ) -> Option<Command> {
        let mut command = None;
        self.forget_if_changed(settings);
        ui.add_enabled_ui(enabled, |ui| {
            ui.horizontal_wrapped(|ui| {
                ui.selectable_value(&mut settings.kind, TargetKind::Local, "Local instance");
                ui.selectable_value(&mut settings.kind, TargetKind::Emulator, "Emulator");
                ui.selectable_value(&mut settings.kind, TargetKind::Cloud, "Cloud Spanner");
            });
            ui.add_space(4.0);
            match settings.kind {
                TargetKind::Local => local_ui(ui, &mut settings.local),
                TargetKind::Emulator => {
                    if let Some(c) = settings.emulator.ui(ui, emulator_status) {
                        command = Some(c);
                    }
                }
                TargetKind::Cloud => {
                    if let Some(c) = cloud_ui(ui, &mut settings.cloud) {
                        command = Some(c);
                    }
                }
            }
            ui.add_space(4.0);
            ui.horizontal_wrapped(|ui| {
                if ui
                    .button("Test connection")
                    .on_hover_text("Create a session and run SELECT 1")
                    .clicked()
                {
                    command = Some(Command::TestConnection);
                }
                if settings.kind == TargetKind::Local {
                    shape_menu(ui, &mut settings.local.knobs.shape);
                }
                // A menu, not a section: the side panel keeps its height (Run stays in view).
                ui.menu_button("Timeouts", |ui| settings.timeouts.ui(ui))
                    .response
                    .on_hover_text("How long the client waits: connect, a call, a first response, an iteration");
                ui.menu_button("Headers", |ui| headers_ui(ui, &mut settings.headers))
                    .response
                    .on_hover_text("What every call says besides the query: AFE timing, end-to-end tracing");
                match &self.outcome {
                    Some(TestOutcome::Testing) => {
                        ui.spinner();
                    }
                    Some(TestOutcome::Ok(_)) => {
                        ui.colored_label(crate::app::theme::OK, "connected");
                    }
                    Some(TestOutcome::Failed(_)) => {
                        ui.colored_label(crate::app::theme::ERROR, "failed");
                    }
                    None => {}
                }
            });
            match &self.outcome {
                Some(TestOutcome::Ok(text)) => {
                    ui.label(egui::RichText::new(text).small());
                }
                Some(TestOutcome::Failed(text)) => {
                    ui.colored_label(crate::app::theme::ERROR, text);
                }
                _ => {}
            }
        });
        command
    }
}

/// The optional headers, as the official clients let users turn them on and off.
fn headers_ui(ui: &mut egui::Ui, headers: &mut HeaderOptions) {
    ui.checkbox(&mut headers.afe_timing, "AFE server timing")
        .on_hover_text(
            "x-goog-spanner-enable-afe-server-timing: true on every call, so Cloud Spanner's API \
             front end reports its time (afe)",
        );
    ui.checkbox(&mut headers.end_to_end_tracing, "End-to-end tracing")
        .on_hover_text(
            "x-goog-spanner-end-to-end-tracing and a traceparent on every query, a new trace id per \
             iteration: Cloud Trace shows the server's own spans under it",
        );
}

fn local_ui(ui: &mut egui::Ui, local: &mut LocalSettings) {
    egui::Grid::new("local-seed")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            form_row(
                ui,
                "Seed23 rows",
                None,
                egui::DragValue::new(&mut local.seed23_rows)
                    .range(1..=100_000_000)
                    .speed(1000)
                    .custom_formatter(|n, _| crate::text::count(n as u64))
                    .custom_parser(|text| text.replace([',', '_', ' '], "").parse().ok()),
            );
        });
    // Folded: a first run needs none of them, and the SQL editor stays near the top; the
    // header says which are on.
    let knobs = &mut local.knobs;
    egui::CollapsingHeader::new(format!("Fault injection: {}", faults_on(knobs)))
        .id_salt("fault-injection")
        .default_open(false)
        .show(ui, |ui| fault_rows(ui, knobs));
}

/// The faults the local instance injects, in a few words: "none" when it streams as fast as it
/// can and never fails.
pub(crate) fn faults_on(knobs: &KnobSettings) -> String {
    let mut on = Vec::new();
    if knobs.fail_every > 0 {
        on.push(format!("fails every {} msgs", knobs.fail_every));
    }
    if knobs.first_byte_delay_ms > 0 || knobs.message_delay_ms > 0 {
        on.push("delays".to_owned());
    }
    if knobs.bandwidth_bytes_per_s > 0 {
        on.push(format!("{}/s", size_words(knobs.bandwidth_bytes_per_s)));
    }
    if knobs.stall_every > 0 {
        on.push("stalls".to_owned());
    }
    if knobs.abort_every > 0 {
        on.push("aborts".to_owned());
    }
    if on.is_empty() {
        "none".to_owned()
    } else {
        on.join(", ")
    }
}

/// A size as a person says it: whole KiB and MiB without decimals (`1 MiB`, `64 KiB`), others
/// as [`crate::text::bytes`] gives them.
pub(crate) fn size_words(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    match n {
        0 => "0 B".to_owned(),
        n if n % MIB == 0 => format!("{} MiB", n / MIB),
        n if n % KIB == 0 && n < MIB => format!("{} KiB", n / KIB),
        n => crate::text::bytes(n),
    }
}

/// A size typed as a person writes it: `1 MiB`, `512 KiB`, `1.5 MiB`, `2048` (bytes).
fn parse_size(text: &str) -> Option<f64> {
    let text = text.trim().replace([',', '_'], "");
    let lower = text.to_ascii_lowercase();
    let (number, unit) = match lower.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => (lower[..at].trim(), lower[at..].trim()),
        None => (lower.as_str(), ""),
    };
    let unit = match unit.trim_end_matches("/s") {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    number.parse::<f64>().ok().map(|n| (n * unit).round())
}

/// The local instance's faults: message size, failures, delays, bandwidth and stalls, each in
/// words where a figure means "off" (never, unlimited, no stall).
fn fault_rows(ui: &mut egui::Ui, knobs: &mut KnobSettings) {
    egui::Grid::new("local-knobs")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            form_row(
                ui,
                "Max message",
                Some("The largest PartialResultSet the server sends"),
                egui::DragValue::new(&mut knobs.max_message_bytes)
                    .range(1024..=64 << 20)
                    .speed(1024)
                    .custom_formatter(|n, _| size_words(n as u64))
                    .custom_parser(parse_size),
            );
            form_row(
                ui,
                "Fail every",
                Some("UNAVAILABLE after every K-th message (0: never); streams resume"),
                egui::DragValue::new(&mut knobs.fail_every)
                    .range(0..=1_000_000)
                    .custom_formatter(|n, _| match n as u64 {
                        0 => "never".to_owned(),
                        n => format!("{n} msgs"),
                    })
                    .custom_parser(|t| never_is_zero(t, &["never"])),
            );
            form_row(
                ui,
                "Delays",
                Some("Before the first message of a response, and before every message"),
                |ui: &mut egui::Ui| {
                    ui.horizontal(|ui| {
                        ui.add(
                            egui::DragValue::new(&mut knobs.first_byte_delay_ms)
                                .range(0..=60_000)
                                .prefix("first ")
                                .suffix(" ms"),
                        );
                        ui.add(
                            egui::DragValue::new(&mut knobs.message_delay_ms)
                                .range(0..=60_000)
                                .prefix("each ")
                                .suffix(" ms"),
                        );
                    })
                    .response
                },
            );
            form_row(
                ui,
                "Bandwidth",
                Some("Bytes per second the server sends at most (0: unlimited)"),
                egui::DragValue::new(&mut knobs.bandwidth_bytes_per_s)
                    .range(0..=u64::MAX)
                    .speed(10_000)
                    .custom_formatter(|n, _| match n as u64 {
                        0 => "unlimited".to_owned(),
                        n => format!("{}/s", size_words(n)),
                    })
                    .custom_parser(|t| {
                        never_is_zero(t, &["unlimited", "none"]).or_else(|| parse_size(t))
                    }),
            );
            form_row(
                ui,
                "Stall",
                Some("Every N-th query (0: no stall) pauses D ms before its K-th message"),
                |ui: &mut egui::Ui| stall_ui(ui, knobs),
            );
            form_row(
                ui,
                "Abort",
                Some(
                    "Every N-th new read-write transaction aborts at its commit with ABORTED and \
                     a RetryInfo of D ms (0: none); its retry is not a new one",
                ),
                |ui: &mut egui::Ui| abort_ui(ui, knobs),
            );
            if knobs.abort_every > 0 {
                // A row of its own: beside the period it widened the side panel.
                form_row(
                    ui,
                    "RetryInfo",
                    Some("The retry delay an abort asks for"),
                    egui::DragValue::new(&mut knobs.abort_retry_delay_ms)
                        .range(0..=60_000)
                        .suffix(" ms"),
                );
            }
        });
}

/// The Abort row: "no abort" until a period is set (the retry delay its RetryInfo asks is the row
/// after).
fn abort_ui(ui: &mut egui::Ui, knobs: &mut KnobSettings) -> egui::Response {
    ui.add(
        egui::DragValue::new(&mut knobs.abort_every)
            .range(0..=1_000_000)
            .custom_formatter(|n, _| match n as u64 {
                0 => "no abort".to_owned(),
                1 => "every transaction".to_owned(),
                n => format!("1 transaction in {n}"),
            })
            .custom_parser(|t| match t.trim().to_ascii_lowercase().as_str() {
                "every transaction" => Some(1.0),
                _ => never_is_zero(t, &["no abort", "never", "none"]),
            }),
    )
}

/// `text` as a count, the `words` that mean "off" read as 0; of several numbers (`1 query in
/// 5`) the last, the one the words count by; thousands may be grouped (`10,000`).
fn never_is_zero(text: &str, words: &[&str]) -> Option<f64> {
    let text = text.trim().to_ascii_lowercase().replace([',', '_'], "");
    if words.contains(&text.as_str()) {
        return Some(0.0);
    }
    let mut numbers = text.split(|c: char| !c.is_ascii_digit());
    numbers.rfind(|n| !n.is_empty())?.parse().ok()
}

/// The Stall row: "no stall" until a period is set, then its pause and its message.
fn stall_ui(ui: &mut egui::Ui, knobs: &mut KnobSettings) -> egui::Response {
    ui.horizontal(|ui| {
        ui.add(
            egui::DragValue::new(&mut knobs.stall_every)
                .range(0..=1_000_000)
                .custom_formatter(|n, _| match n as u64 {
                    0 => "no stall".to_owned(),
                    1 => "every query".to_owned(),
                    n => format!("1 query in {n}"),
                })
                .custom_parser(|t| match t.trim().to_ascii_lowercase().as_str() {
                    "every query" => Some(1.0),
                    _ => never_is_zero(t, &["no stall", "never", "none"]),
                }),
        );
        if knobs.stall_every > 0 {
            ui.add(
                egui::DragValue::new(&mut knobs.stall_ms)
                    .range(0..=60_000)
                    .prefix("for ")
                    .suffix(" ms"),
            );
            ui.add(
                egui::DragValue::new(&mut knobs.stall_at_message)
                    .range(1..=1_000_000)
                    .prefix("at msg "),
            );
        }
    })
    .response
}

/// The local instance's stream shape, a menu beside Test connection (no row of its own: the side
/// panel keeps its height).
fn shape_menu(ui: &mut egui::Ui, shape: &mut Shape) {
    ui.menu_button(format!("Shape: {}", shape.as_str()), |ui| {
        for s in Shape::ALL {
            if ui.radio_value(shape, s, s.as_str()).clicked() {
                ui.close();
            }
        }
    })
    .response
    .on_hover_text(
        "What the messages look like: as production sends them, as the emulator does, \
         or every legal edge case (serve --shape)",
    );
}

fn cloud_ui(ui: &mut egui::Ui, cloud: &mut CloudSettings) -> Option<Command> {
    let mut command = None;
    egui::Grid::new("cloud")
        .num_columns(2)
        .spacing([8.0, 4.0])
        .show(ui, |ui| {
            for (label, value) in [
                ("Project", &mut cloud.project),
                ("Instance", &mut cloud.instance),
                ("Database", &mut cloud.database),
                ("Endpoint", &mut cloud.endpoint),
            ] {
                form_row(
                    ui,
                    label,
                    None,
                    egui::TextEdit::singleline(value).desired_width(180.0),
                );
            }
            ui.label("Credentials");
            ui.vertical(|ui| {
                let text = match &cloud.credentials_file {
                    Some(path) => path.display().to_string(),
                    None => "application default".to_owned(),
                };
                ui.label(egui::RichText::new(text).small());
                ui.horizontal(|ui| {
                    if ui.button("Key file…").clicked() {
                        command = Some(Command::ChooseCredentials);
                    }
                    if cloud.credentials_file.is_some() && ui.button("Use default").clicked() {
                        cloud.credentials_file = None;
                    }
                });
            });
            ui.end_row();
        });
    command
}

/// The notifier the panels give the engine: a repaint of `ctx`.
pub fn repaint_notifier(ctx: &egui::Context) -> Notifier {
    let ctx = ctx.clone();
    Arc::new(move || ctx.request_repaint())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloud_target_says_what_is_missing() {
        let mut settings = ConnectionSettings {
            kind: TargetKind::Cloud,
            ..ConnectionSettings::default()
        };
        settings.cloud.project = "p".into();
        let error = settings.target().err().unwrap_or_default();
        assert_eq!(error, "Cloud Spanner needs: instance, database");
        settings.cloud.instance = "i".into();
        settings.cloud.database = "d".into();
        assert!(matches!(settings.target(), Ok((Target::Cloud(_), _))));
    }

    #[test]
    fn local_target_uses_the_knobs() {
        let mut settings = ConnectionSettings::default();
        settings.local.seed23_rows = 42;
        match settings.target() {
            Ok((Target::Local(config), _)) => assert_eq!(config.seed23_rows, 42),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sizes_and_offs_read_as_a_person_writes_them_and_back() {
        assert_eq!(size_words(1 << 20), "1 MiB");
        assert_eq!(size_words(64 << 10), "64 KiB");
        assert_eq!(parse_size("1 MiB"), Some(1048576.0));
        assert_eq!(parse_size("1.5 mib"), Some(1572864.0));
        assert_eq!(parse_size("512 KiB/s"), Some(524288.0));
        assert_eq!(parse_size("2,048"), Some(2048.0));
        assert_eq!(parse_size("lots"), None);
        assert_eq!(never_is_zero("never", &["never"]), Some(0.0));
        assert_eq!(never_is_zero("3 msgs", &["never"]), Some(3.0));
        assert_eq!(never_is_zero("1 query in 5", &[]), Some(5.0));
        assert_eq!(never_is_zero("10,000", &[]), Some(10000.0));
        assert_eq!(never_is_zero("soon", &["never"]), None);
        let mut knobs = KnobSettings::default();
        assert_eq!(faults_on(&knobs), "none");
        knobs.bandwidth_bytes_per_s = 1 << 20;
        knobs.stall_every = 3;
        assert_eq!(faults_on(&knobs), "1 MiB/s, stalls");
    }
}
