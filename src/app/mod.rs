//! The desktop app: run a query N times, watch where the time goes, compare runs, export them.
//!
//! It draws and sends commands: runs happen on the engine's own runtime; file dialogs, export
//! writes, report reads and the emulator on threads of their own; everything they report is
//! drained once per frame in [`eframe::App::logic`]. Dropping a run in flight never waits for it. What the user chose (connection, query, recent queries, the
//! open tab, the layout) persists through eframe's storage; runs and results do not.

mod compare;
mod connection;
mod details;
mod dialogs;
mod emulator;
mod export;
mod file_dialog;
mod frames;
mod iterations;
mod options;
mod phases;
mod plan;
mod query;
mod run;
mod theme;
mod verdicts;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use compare::CompareView;
pub use connection::{ConnectionPanel, ConnectionSettings, LocalSettings, TargetKind, TestOutcome};
pub use details::{DetailsView, Log, LogEntry};
pub use dialogs::{DialogBackend, NO_DIALOG_WITHIN};
pub use emulator::EmulatorSettings;
pub use export::{ExportFormat, export_bytes, export_to, summary_text};
pub use frames::{FrameSample, FrameStats};
pub use iterations::{IterationsView, SEGMENTS};
pub use options::{OptionSettings, Replicas};
pub use phases::{Curve, SweepAxis};
pub use plan::{PlanColumn, PlanView};
pub use query::{DEFAULT_SQL, QuerySettings, VariantSettings};

use crate::engine::IterationDetails;
use crate::report::{RunReport, Status};
use dialogs::{DialogAnswer, DialogPurpose, DialogRequest, Dialogs};
use export::{FileDone, FileJobs};
pub use run::Progress;
use run::{ActiveRun, Ended};

/// How often the window redraws while a run streams, with no input.
const RUNNING_REPAINT: std::time::Duration = std::time::Duration::from_millis(33);

/// The window's title.
pub const TITLE: &str = "spanprof — Cloud Spanner query profiler";

/// The views of the central area.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Tab {
    /// Bars per iteration and the summary.
    #[default]
    Iterations,
    /// Runs side by side.
    Compare,
    /// Rows, stats, plan and the error log.
    Details,
    /// The query plan's operators: icicle chart and tree table.
    Plan,
}

impl Tab {
    /// The tab named `name` (`iterations`, `compare`, `plan` or `details`, any case).
    pub fn parse(name: &str) -> Result<Tab, String> {
        match name.to_ascii_lowercase().as_str() {
            "iterations" => Ok(Tab::Iterations),
            "compare" => Ok(Tab::Compare),
            "plan" => Ok(Tab::Plan),
            "details" => Ok(Tab::Details),
            _ => Err(format!(
                "no tab \"{name}\": iterations, compare, plan or details"
            )),
        }
    }
}

/// What persists between launches.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The connection panel.
    pub connection: ConnectionSettings,
    /// The query panel, recent queries included.
    pub query: QuerySettings,
    /// The open tab.
    pub tab: Tab,
    /// The folder of the last file chosen in a dialog (the next dialog opens there).
    pub last_folder: Option<PathBuf>,
}

/// How the app starts.
#[derive(Debug, Clone, Default)]
pub struct AppOptions {
    /// Load and save settings through eframe's storage (off for tests).
    pub persist: bool,
    /// Rows in the local instance's Seed23, overriding the saved settings.
    pub local_rows: Option<u64>,
    /// SQL to start with, overriding the saved settings.
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
    pub mode: Option<crate::engine::QueryMode>,
    /// The tab to show first, overriding the saved settings.
    pub tab: Option<Tab>,
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
}

/// Where a run in the list came from.
#[derive(Debug, Clone, PartialEq)]
pub enum RunSource {
    /// Run since the app started.
    Live,
    /// Read from an exported JSON report.
    Opened(PathBuf),
}

/// A run the app knows about.
#[derive(Debug, Clone)]
pub struct RunEntry {
    /// Unique within this app's life.
    pub id: u64,
    /// The report.
    pub report: RunReport,
    /// What its last iteration returned (live runs only).
    pub details: Option<Box<IterationDetails>>,
    /// Where it came from.
    pub source: RunSource,
    /// Whether exports include it.
    pub export: bool,
}

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
    /// Open a JSON report.
    OpenReport,
    /// Export the runs marked for export.
    Export(ExportFormat),
    /// Copy the Markdown summary of the runs marked for export.
    CopySummary,
}

/// The app.
pub struct SpanprofApp {
    settings: Settings,
    persist: bool,
    connection: ConnectionPanel,
    emulator: emulator::EmulatorProcess,
    query: query::QueryPanel,
    active: Option<ActiveRun>,
    active_id: u64,
    runs: Vec<RunEntry>,
    shown: Option<u64>,
    next_id: u64,
    iterations: IterationsView,
    compare: CompareView,
    details: DetailsView,
    plan: PlanView,
    dialogs: Dialogs,
    files: FileJobs,
    log: Log,
    notice: Option<String>,
    frame_stats: Option<FrameStats>,
    frame_started: Option<Instant>,
    status_file: Option<PathBuf>,
    /// The last run's state, for the status file.
    run_status: String,
    /// What the status file holds now.
    status_written: String,
    ctx: egui::Context,
}

impl SpanprofApp {
    /// The app, with its settings from `cc`'s storage when `options.persist`.
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        theme::apply(&cc.egui_ctx);
        let mut settings: Settings = if options.persist {
            cc.storage
                .and_then(|s| eframe::get_value(s, eframe::APP_KEY))
                .unwrap_or_default()
        } else {
            Settings::default()
        };
        if let Some(rows) = options.local_rows {
            settings.connection.local.seed23_rows = rows;
        }
        if let Some(sql) = options.sql {
            settings.query.sql = sql;
        }
        if let Some(mode) = options.mode {
            settings.query.mode = mode;
        }
        if let Some(tab) = options.tab {
            settings.tab = tab;
        }
        if let Some(iterations) = options.iterations {
            settings.query.iterations = iterations.max(1);
            settings.query.warmup = 0;
        }
        SpanprofApp {
            settings,
            persist: options.persist,
            connection: ConnectionPanel::default(),
            emulator: emulator::EmulatorProcess::default(),
            query: query::QueryPanel,
            active: None,
            active_id: 0,
            runs: Vec::new(),
            shown: None,
            next_id: 1,
            iterations: IterationsView::default(),
            compare: CompareView::default(),
            details: DetailsView::default(),
            plan: PlanView::default(),
            dialogs: Dialogs::new(options.file_dialogs),
            files: FileJobs::default(),
            log: Log::default(),
            notice: None,
            frame_stats: options.frame_stats.map(FrameStats::new),
            frame_started: None,
            status_file: options.status_file,
            run_status: String::new(),
            status_written: String::new(),
            ctx: cc.egui_ctx.clone(),
        }
    }

    /// The settings (what persists).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The settings, to change them.
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// Every run since the app started, and those opened from reports, oldest first.
    pub fn runs(&self) -> &[RunEntry] {
        &self.runs
    }

    /// Whether a run is in flight.
    pub fn is_running(&self) -> bool {
        self.active.is_some()
    }

    /// How the last connection test ended, or that it is running.
    pub fn connection_outcome(&self) -> Option<&TestOutcome> {
        self.connection.outcome()
    }

    /// Where the run in flight is, if one is.
    pub fn progress(&self) -> Option<Progress> {
        self.active.as_ref().map(ActiveRun::progress)
    }

    /// The error log.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// The iterations view (its selection, the bars it drew).
    pub fn iterations_view(&mut self) -> &mut IterationsView {
        &mut self.iterations
    }

    /// The plan view (the rows its table showed, its selection).
    pub fn plan_view(&mut self) -> &mut PlanView {
        &mut self.plan
    }

    /// The compare view.
    pub fn compare_view(&mut self) -> &mut CompareView {
        &mut self.compare
    }

    /// The verdicts the compare view shows: each picked run against the first picked.
    pub fn verdicts(&self) -> Vec<String> {
        self.compare.verdicts_shown(&self.runs)
    }

    /// Shows `tab`.
    pub fn set_tab(&mut self, tab: Tab) {
        self.settings.tab = tab;
    }

    /// The reports of the runs marked for export, oldest first.
    pub fn export_reports(&self) -> Vec<RunReport> {
        self.runs
            .iter()
            .filter(|r| r.export)
            .map(|r| r.report.clone())
            .collect()
    }

    /// Exports the runs marked for export to `path`, on the calling thread (tests and scripts; the
    /// Export menu writes on a thread of its own: [`SpanprofApp::save_export`]).
    pub fn export_selected(
        &self,
        format: ExportFormat,
        path: &Path,
    ) -> Result<(), crate::export::ExportError> {
        export_to(path, format, &self.export_reports())
    }

    /// Adds the runs of a JSON report read from `path`, on the calling thread (tests and scripts;
    /// the File menu reads on a thread of its own).
    pub fn open_report(&mut self, path: &Path) -> Result<usize, String> {
        let reports = export::read_report(path)?;
        Ok(self.add_opened(path, reports))
    }

    fn add_opened(&mut self, path: &Path, reports: Vec<RunReport>) -> usize {
        let count = reports.len();
        for report in reports {
            self.add_run(report, None, RunSource::Opened(path.to_owned()));
        }
        count
    }

    /// What the Export menu does once its dialog has a path: writes the runs marked for export on
    /// a thread of its own; the window says where (or why not) a frame after it is done.
    pub fn save_export(&mut self, format: ExportFormat, path: PathBuf) {
        let ctx = self.ctx.clone();
        let reports = self.export_reports();
        if let Err(e) = self
            .files
            .save(format, reports, path, move || ctx.request_repaint())
        {
            self.error(e);
        }
    }

    /// What File > Open report does once its dialog has a path: reads the report on a thread of
    /// its own; its runs appear a frame after it is read.
    pub fn load_report(&mut self, path: PathBuf) {
        let ctx = self.ctx.clone();
        if let Err(e) = self.files.open(path, move || ctx.request_repaint()) {
            self.error(e);
        }
    }

    /// Whether a file dialog is open (the desktop's, or spanprof's own in the window).
    pub fn file_dialog_open(&self) -> bool {
        self.dialogs.is_open()
    }

    /// Whether an export is being written or a report read.
    pub fn files_busy(&self) -> bool {
        self.files.busy()
    }

    /// The last notice the status bar shows (an error, or what was done).
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    fn add_run(
        &mut self,
        report: RunReport,
        details: Option<Box<IterationDetails>>,
        source: RunSource,
    ) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.runs.push(RunEntry {
            id,
            report,
            details,
            source,
            export: true,
        });
        self.shown = Some(id);
        id
    }

    /// The label of the next run: the panel's label, or `run N`; made unique among the runs.
    fn next_label(&self) -> String {
        let wanted = self.settings.query.label.trim();
        let base = if wanted.is_empty() {
            format!("run {}", self.runs.len() + 1)
        } else {
            wanted.to_owned()
        };
        let taken = |label: &str| self.runs.iter().any(|r| r.report.config.label == label);
        if !taken(&base) {
            return base;
        }
        (2..)
            .map(|n| format!("{base} ({n})"))
            .find(|l| !taken(l))
            .unwrap_or(base)
    }

    fn start_run(&mut self) {
        if self.active.is_some() {
            return;
        }
        let notify = connection::repaint_notifier(&self.ctx);
        let started = if self.settings.query.client {
            self.start_subject(notify)
        } else {
            self.settings
                .connection
                .target()
                .and_then(|(target, database)| {
                    let spec = self.settings.query.spec(self.next_label(), database)?;
                    Ok((target, spec))
                })
                .and_then(|(target, spec)| {
                    ActiveRun::start(target, spec, notify)
                        .map_err(|e| format!("cannot start the engine: {e}"))
                })
        };
        match started {
            Ok(run) => {
                let sql = self.settings.query.sql.trim().to_owned();
                self.settings.query.remember(&sql);
                self.active_id = self.next_id;
                self.next_id += 1;
                self.active = Some(run);
                self.notice = None;
                self.write_status("running");
            }
            Err(message) => self.error(message),
        }
    }

    /// A client program's run: on the local instance the connection panel describes (its rows and
    /// knobs), the only kind a program can be profiled against.
    fn start_subject(&self, notify: crate::engine::Notifier) -> Result<ActiveRun, String> {
        let server = match self.settings.connection.target()? {
            (crate::engine::Target::Local(server), _) => server,
            _ => {
                return Err(
                    "a client program runs against the local instance: choose Local \
                            in the connection panel"
                        .into(),
                );
            }
        };
        let label = if self.settings.query.label.trim().is_empty() {
            String::new()
        } else {
            self.next_label()
        };
        let mut spec = self.settings.query.client_spec(label, server)?;
        if spec.label.is_empty() {
            spec.label = spec.command.short_name();
        }
        ActiveRun::start_subject(spec, notify).map_err(|e| format!("cannot start the engine: {e}"))
    }

    fn error(&mut self, message: String) {
        self.notice = Some(message.clone());
        self.log.push(message);
    }

    fn write_status(&mut self, status: &str) {
        self.run_status = status.to_owned();
        self.flush_status();
    }

    /// Writes the status file when what it says changed: the last run's state, the notice the
    /// status bar shows, and the in-window dialog when one is open (what scripts wait for).
    fn flush_status(&mut self) {
        let Some(path) = &self.status_file else {
            return;
        };
        let mut status = String::new();
        if !self.run_status.is_empty() {
            status.push_str(&self.run_status);
            status.push('\n');
        }
        if let Some(notice) = &self.notice {
            status.push_str(&format!("notice {}\n", one_line(notice, 500)));
        }
        if let Some(dialog) = self.dialogs.built_in() {
            status.push_str(&format!(
                "dialog {}\n",
                dialog.folder().join(dialog.name()).display()
            ));
        }
        if status != self.status_written {
            if let Err(e) = crate::export::write_atomically(path, status.as_bytes()) {
                self.log.push(format!(
                    "cannot write the status file {}: {e}",
                    path.display()
                ));
            }
            self.status_written = status;
        }
    }

    /// Reads what every worker reported since the last frame.
    fn drain(&mut self) {
        self.connection.drain();
        self.compare.drain();
        if let Some(message) = self.emulator.drain() {
            self.error(message);
        }
        if let Some(answer) = self.dialogs.drain(connection::repaint_notifier(&self.ctx)) {
            self.dialog_answered(answer);
        }
        for done in self.files.drain() {
            self.file_done(done);
        }
        let mut errors = Vec::new();
        let ended = self
            .active
            .as_mut()
            .and_then(|run| run.drain(|e| errors.push(e)));
        if let Some(last) = errors.last() {
            self.notice = Some(last.clone());
        }
        for e in errors {
            self.log.push(e);
        }
        match ended {
            None => {}
            Some(Ended::Failed(message)) => {
                self.finish_frames();
                self.active = None;
                self.write_status(&format!("failed {message}"));
                self.error(message);
                self.details.show_log();
            }
            Some(Ended::Finished(reports, mut details)) => {
                self.finish_frames();
                self.active = None;
                let iterations = || reports.iter().flat_map(|r| &r.iterations);
                let ok = iterations().filter(|i| i.status == Status::Ok).count();
                let failed = iterations().count() - ok;
                let first = reports
                    .first()
                    .map(|r| r.config.label.clone())
                    .unwrap_or_default();
                self.write_status(&format!("finished {first} ok={ok} other={failed}"));
                if iterations().next().is_none() {
                    self.notice = Some(format!("{first} was cancelled before it connected"));
                } else {
                    let several = reports.len() > 1;
                    let mut ids = Vec::new();
                    for report in reports {
                        let own = details
                            .iter()
                            .position(|d| d.run == report.config.label)
                            .map(|at| Box::new(details.swap_remove(at)));
                        ids.push(self.add_run(report, own, RunSource::Live));
                    }
                    if several {
                        // A comparison was asked for: show it.
                        self.compare.pick_only(&ids);
                        self.shown = ids.first().copied();
                        self.settings.tab = Tab::Compare;
                    }
                }
            }
        }
    }

    fn finish_frames(&mut self) {
        let label = self
            .active
            .as_ref()
            .map(|r| r.label().to_owned())
            .unwrap_or_default();
        if let Some(stats) = &mut self.frame_stats
            && let Err(e) = stats.flush(&label)
        {
            self.log
                .push(format!("cannot write the frame statistics: {e}"));
        }
    }

    fn dialog_answered(&mut self, answer: DialogAnswer) {
        match answer {
            DialogAnswer::Chosen(purpose, path) => {
                if let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) {
                    self.settings.last_folder = Some(folder.to_owned());
                }
                self.dialog_chose(purpose, path);
            }
            DialogAnswer::Cancelled(purpose) => {
                self.notice = Some(match purpose {
                    DialogPurpose::Save(_) => "export cancelled: nothing was written".into(),
                    DialogPurpose::OpenReport => "no report opened".into(),
                    DialogPurpose::Credentials => "the credentials are unchanged".into(),
                });
            }
            DialogAnswer::NoSystemDialog(purpose) => self.error(format!(
                "the desktop showed no file dialog for \"{}\" (no XDG desktop portal?): \
                 spanprof's own dialog is open instead",
                purpose.title()
            )),
        }
    }

    fn dialog_chose(&mut self, purpose: DialogPurpose, path: PathBuf) {
        match purpose {
            DialogPurpose::Save(format) => self.save_export(format, path),
            DialogPurpose::OpenReport => self.load_report(path),
            DialogPurpose::Credentials => {
                self.notice = Some(format!("credentials: {}", path.display()));
                self.settings.connection.cloud.credentials_file = Some(path);
            }
        }
    }

    fn file_done(&mut self, done: FileDone) {
        match done {
            FileDone::Saved { path, result } => match result {
                Ok(()) => self.notice = Some(format!("exported to {}", path.display())),
                Err(e) => self.error(e.to_string()),
            },
            FileDone::Opened { path, result } => match result {
                Ok(reports) => {
                    let n = self.add_opened(&path, reports);
                    self.notice = Some(format!("opened {n} runs from {}", path.display()));
                    self.settings.tab = Tab::Compare;
                }
                Err(e) => self.error(e),
            },
        }
    }

    fn handle(&mut self, command: Command) {
        match command {
            Command::Run => self.start_run(),
            Command::Cancel => {
                if let Some(run) = &mut self.active {
                    run.cancel();
                }
            }
            Command::TestConnection => {
                let notify = connection::repaint_notifier(&self.ctx);
                self.connection
                    .start_test(&self.settings.connection, notify);
            }
            Command::StartEmulator => {
                let ctx = self.ctx.clone();
                self.emulator
                    .start(&self.settings.connection.emulator, move || {
                        ctx.request_repaint()
                    });
            }
            Command::ChooseCredentials => self.open_dialog(DialogPurpose::Credentials),
            Command::OpenReport => self.open_dialog(DialogPurpose::OpenReport),
            Command::Export(format) => {
                if self.export_reports().is_empty() {
                    self.error("nothing to export: no run is marked for export".into());
                } else {
                    self.open_dialog(DialogPurpose::Save(format));
                }
            }
            Command::CopySummary => match summary_text(&self.export_reports()) {
                Ok(text) => {
                    self.ctx.copy_text(text);
                    self.notice = Some("summary copied".into());
                }
                Err(e) => self.error(e.to_string()),
            },
        }
    }

    fn open_dialog(&mut self, purpose: DialogPurpose) {
        let file_name = match purpose {
            DialogPurpose::Save(format) => Some(format.file_name(&self.export_reports())),
            DialogPurpose::OpenReport | DialogPurpose::Credentials => None,
        };
        let request = DialogRequest {
            purpose,
            folder: self
                .settings
                .last_folder
                .clone()
                .unwrap_or_else(file_dialog::home_dir),
            file_name,
        };
        let notify = connection::repaint_notifier(&self.ctx);
        if let Err(e) = self.dialogs.open(request, notify) {
            self.error(e);
        }
    }

    /// Draws the in-window file dialog when it is open, and acts on how it ended.
    fn file_dialog(&mut self, ctx: &egui::Context) {
        let (answer, problems) = self.dialogs.show(ctx);
        for problem in problems {
            self.error(problem);
        }
        if let Some(answer) = answer {
            self.dialog_answered(answer);
        }
    }

    fn menu_bar(&mut self, ui: &mut egui::Ui) -> Option<Command> {
        let mut command = None;
        egui::MenuBar::new().ui(ui, |ui| {
            ui.label(egui::RichText::new("spanprof").strong().size(16.0));
            ui.separator();
            ui.menu_button("File", |ui| {
                if ui.button("Open report…").clicked() {
                    command = Some(Command::OpenReport);
                }
                ui.separator();
                for format in ExportFormat::ALL {
                    if ui.button(format!("Export {}", format.label())).clicked() {
                        command = Some(Command::Export(format));
                    }
                }
                if ui.button("Copy summary").clicked() {
                    command = Some(Command::CopySummary);
                }
            });
            ui.separator();
            for (tab, name) in [
                (Tab::Iterations, "Iterations"),
                (Tab::Compare, "Compare"),
                (Tab::Plan, "Plan"),
                (Tab::Details, "Details"),
            ] {
                ui.selectable_value(&mut self.settings.tab, tab, name);
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.button("Copy summary").clicked() {
                    command = Some(Command::CopySummary);
                }
                ui.menu_button("Export", |ui| {
                    for format in ExportFormat::ALL {
                        if ui.button(format.label()).clicked() {
                            command = Some(Command::Export(format));
                        }
                    }
                });
            });
        });
        command
    }

    fn status_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            if self.dialogs.waiting_for_system() {
                ui.spinner();
                ui.label("waiting for the desktop's file dialog");
                if ui
                    .small_button("Use spanprof's dialog")
                    .on_hover_text("The desktop's dialog did not appear? Choose the file here")
                    .clicked()
                {
                    self.dialogs
                        .use_built_in(connection::repaint_notifier(&self.ctx));
                }
                ui.separator();
            }
            match &self.active {
                Some(run) => {
                    ui.colored_label(theme::WARN, "running");
                    let target = run.target().unwrap_or("connecting");
                    ui.label(format!("{} · {target}", run.label()));
                }
                None => {
                    ui.colored_label(theme::OK, "ready");
                }
            }
            ui.separator();
            ui.label(target_summary(&self.settings.connection));
            if let Some(notice) = &self.notice {
                ui.separator();
                let is_error = self.log.last().is_some_and(|e| &e.message == notice);
                let color = if is_error { theme::ERROR } else { theme::MUTED };
                ui.colored_label(color, notice);
            }
        });
    }

    fn side_panel(&mut self, ui: &mut egui::Ui) -> Option<Command> {
        let mut command = None;
        let running = self.active.is_some();
        egui::ScrollArea::vertical().show(ui, |ui| {
            egui::CollapsingHeader::new(egui::RichText::new("Connection").strong())
                .default_open(true)
                .show(ui, |ui| {
                    let kind = self.settings.connection.kind;
                    command = self.connection.ui(
                        ui,
                        &mut self.settings.connection,
                        self.emulator.status(),
                        !running,
                    );
                    if self.settings.connection.kind != kind {
                        self.target_kind_changed();
                    }
                });
            ui.separator();
            egui::CollapsingHeader::new(egui::RichText::new("Query").strong())
                .default_open(true)
                .show(ui, |ui| {
                    if let Some(c) =
                        self.query
                            .ui(ui, &mut self.settings.query, self.active.as_ref())
                    {
                        command = Some(c);
                    }
                });
        });
        command
    }

    /// A target of another kind was picked: the query mode becomes the one that returns the
    /// query statistics there, when the user had left it at the default (the emulator returns
    /// none in "With stats").
    fn target_kind_changed(&mut self) {
        let Ok((target, _)) = self.settings.connection.target() else {
            return;
        };
        let wanted = target.default_mode();
        let mode = &mut self.settings.query.mode;
        if *mode == crate::engine::QueryMode::WithStats && wanted != *mode {
            *mode = wanted;
            self.notice = Some(format!(
                "query mode set to {}: the emulator returns query statistics only in profile mode",
                query::mode_label(wanted)
            ));
        }
    }

    fn central(&mut self, ui: &mut egui::Ui) {
        match self.settings.tab {
            Tab::Iterations => self.iterations_tab(ui),
            Tab::Compare => self.compare.ui(ui, &mut self.runs),
            Tab::Details => {
                let shown = self.runs.iter().find(|r| Some(r.id) == self.shown);
                let details = shown.and_then(|r| r.details.as_deref());
                let mode = shown.map_or("", |r| r.report.config.query_mode.as_str());
                self.details.ui(ui, details, mode, &self.log);
            }
            Tab::Plan => {
                let shown = self.shown;
                let run = self
                    .runs
                    .iter()
                    .find(|r| Some(r.id) == shown)
                    .map(|r| (r.id, &r.report));
                let selection = match run {
                    Some((id, _)) if self.iterations.run() == Some(id) => {
                        self.iterations.selection().clone()
                    }
                    _ => Default::default(),
                };
                self.plan.ui(ui, run, &selection);
            }
        }
    }

    fn shown_run(&self) -> Option<&RunEntry> {
        self.runs.iter().find(|r| Some(r.id) == self.shown)
    }

    fn iterations_tab(&mut self, ui: &mut egui::Ui) {
        if let Some(run) = &self.active {
            // With several variants, the bars of the one streaming now.
            let label = run
                .progress()
                .variant
                .and_then(|v| run.labels().get(v))
                .map_or_else(|| run.label().to_owned(), Clone::clone);
            ui.heading(format!("{label} (running)"));
            let records: Vec<_> = run
                .records()
                .iter()
                .filter(|r| r.run == label)
                .cloned()
                .collect();
            self.iterations.set_plan_changes([]);
            self.iterations
                .ui(ui, self.active_id, &records, run.mode().as_str());
            return;
        }
        if self.runs.is_empty() {
            ui.add_space(40.0);
            ui.vertical_centered(|ui| {
                ui.heading("No run yet");
                ui.label("Press Run (or Ctrl+Enter) to profile the query on the left.");
            });
            return;
        }
        let mut shown = self.shown;
        ui.horizontal(|ui| {
            let title = self.shown_run().map(run_title).unwrap_or_default();
            egui::ComboBox::from_id_salt("shown-run")
                .selected_text(egui::RichText::new(title).heading())
                .show_ui(ui, |ui| {
                    for r in self.runs.iter().rev() {
                        ui.selectable_value(&mut shown, Some(r.id), run_title(r));
                    }
                });
        });
        self.shown = shown;
        if let Some(run) = self.runs.iter().find(|r| Some(r.id) == self.shown) {
            ui.label(
                egui::RichText::new(format!(
                    "{} · {} · mode {}",
                    run.report.config.target,
                    one_line(&run.report.config.sql, 80),
                    run.report.config.query_mode
                ))
                .small()
                .color(theme::MUTED),
            );
            let id = run.id;
            let records = run.report.iterations.clone();
            self.iterations.set_plan_changes(
                run.report
                    .plans
                    .changes()
                    .iter()
                    .map(|c| (c.iteration, c.text())),
            );
            let mode = run.report.config.query_mode.clone();
            self.iterations.ui(ui, id, &records, &mode);
        }
    }
}

fn run_title(r: &RunEntry) -> String {
    match &r.source {
        RunSource::Live => r.report.config.label.clone(),
        RunSource::Opened(path) => format!(
            "{} (from {})",
            r.report.config.label,
            path.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    }
}

fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

fn target_summary(c: &ConnectionSettings) -> String {
    match c.kind {
        TargetKind::Local => format!(
            "local instance · Seed23 {} rows",
            query::thousands(c.local.seed23_rows)
        ),
        TargetKind::Emulator => format!("emulator {}", c.emulator.host_port),
        TargetKind::Cloud => format!(
            "Cloud Spanner {}/{}/{}",
            c.cloud.project, c.cloud.instance, c.cloud.database
        ),
    }
}

impl eframe::App for SpanprofApp {
    fn logic(&mut self, _ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.frame_started = Some(Instant::now());
        self.drain();
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let mut commands = Vec::new();
        // While the in-window file dialog is open, Enter is the dialog's.
        if self.dialogs.built_in().is_none()
            && ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::Enter))
        {
            commands.push(Command::Run);
        }
        egui::Panel::top("menu").show(ui, |ui| {
            commands.extend(self.menu_bar(ui));
        });
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui));
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(360.0)
            .min_size(280.0)
            .show(ui, |ui| {
                commands.extend(self.side_panel(ui));
            });
        egui::CentralPanel::default().show(ui, |ui| self.central(ui));
        for command in commands {
            self.handle(command);
        }
        self.file_dialog(&ui.ctx().clone());
        self.flush_status();
        if self.active.is_some() {
            // Keep drawing while a run streams (the progress moves), at a rate that leaves the
            // CPU to the run being measured; input still repaints at once.
            ui.ctx().request_repaint_after(RUNNING_REPAINT);
            if let (Some(stats), Some(started)) = (&mut self.frame_stats, self.frame_started) {
                stats.record(started, frame.info().cpu_usage);
            }
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.persist {
            eframe::set_value(storage, eframe::APP_KEY, &self.settings);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        self.persist
    }
}

/// Opens the window and runs the app until it is closed.
pub fn launch(options: AppOptions) -> anyhow::Result<()> {
    let native = eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        viewport: egui::ViewportBuilder::default()
            .with_title(TITLE)
            .with_app_id("spanprof")
            .with_inner_size([1280.0, 800.0])
            .with_min_inner_size([900.0, 600.0]),
        ..eframe::NativeOptions::default()
    };
    eframe::run_native(
        "spanprof",
        native,
        Box::new(move |cc| Ok(Box::new(SpanprofApp::new(cc, options)))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_round_trip_and_missing_fields_take_defaults() -> Result<(), serde_json::Error> {
        let mut settings = Settings::default();
        settings.query.remember("SELECT 1");
        settings.connection.kind = TargetKind::Emulator;
        settings.tab = Tab::Compare;
        let text = serde_json::to_string(&settings)?;
        assert_eq!(serde_json::from_str::<Settings>(&text)?, settings);
        let old: Settings = serde_json::from_str(r#"{"query": {"sql": "SELECT 2"}}"#)?;
        assert_eq!(old.query.sql, "SELECT 2");
        assert_eq!(old.query.iterations, QuerySettings::default().iterations);
        assert_eq!(old.connection, ConnectionSettings::default());
        Ok(())
    }

    #[test]
    fn one_line_flattens_and_cuts() {
        assert_eq!(one_line("SELECT *\n  FROM t", 80), "SELECT * FROM t");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
