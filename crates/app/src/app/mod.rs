//! The desktop app: run a query N times, watch where the time goes, compare runs, export them.
//!
//! It draws and sends commands: runs happen on the engine's own runtime; file dialogs, export
//! writes, report reads and the emulator on threads of their own; everything they report is
//! drained once per frame in [`eframe::App::logic`]. Dropping a run in flight never waits for it.
//! What the user chose (connection, query, recent queries, the open tab, the layout) persists
//! through eframe's storage; runs and results do not.
//!
//! This file holds the app's state ([`SpanprofApp`]) and its frame. Beside it are the files that
//! add its methods: `run_control.rs` (a run's start and end, of any kind, the run in flight held
//! by the `runs::RunController`), `dialog_routing.rs` (where a dialog's answer goes),
//! `history_routing.rs` (what the History tab asks) and `layout.rs` (the panels); and the leaves the panels share (`settings.rs`, `startup.rs`,
//! `command.rs`, `status_file.rs`, `theme.rs`, `labels.rs`, `frames.rs`). The rest is in folders
//! by what it is: `runs/`, `connection/`, `query/`, `iterations/`, `timeline/`, `compare/`,
//! `load/`, `history/` and `files/`.

mod command;
mod compare;
mod connection;
mod details;
mod dialog_routing;
mod files;
mod frames;
mod history;
mod history_routing;
mod iterations;
mod labels;
mod layout;
mod load;
mod plan_view;
mod query;
mod run_control;
mod runs;
mod settings;
mod startup;
mod status_file;
mod theme;
mod timeline;

use std::path::Path;
use std::time::{Duration, Instant};

pub use crate::export::{Format, RunKind};
pub use command::Command;
pub use compare::{CompareView, Curve, SweepAxis};
pub use connection::{
    ConnectionPanel, ConnectionSettings, EmulatorSettings, LocalSettings, TargetKind, TestOutcome,
};
pub use details::{DetailsView, Log, LogEntry};
pub use files::{DialogBackend, NO_DIALOG_WITHIN};
pub use files::{ReportError, export_bytes, export_to, summary_text};
pub use frames::{FrameSample, FrameStats};
pub use history::HistoryView;
pub use iterations::IterationsView;
pub use load::{
    ATTEMPTS_LINE, CurveLine, DRAW_PARAMETERS, Drawing, GOODPUT_LINE, LoadConflicts, LoadFigures,
    LoadGoodput, LoadModel, LoadParts, LoadPercentiles, LoadProgress, LoadSettings,
    LoadTargetStats, LoadView, Phase, QueueSettings, READ_TARGET_STATS, STATS_HEADINGS,
    TargetStatsSettings, WaitWords,
};
pub use plan_view::{PlanColumn, PlanView};
pub use query::{
    DEFAULT_SQL, IsolationChoice, LockChoice, OptionSettings, QuerySettings, Replicas,
    TransactionSettings, VariantSettings,
};
pub use runs::{Progress, RECORDS_HELD, RunEntry, RunSource};
pub use settings::{Settings, Tab};
pub use startup::AppOptions;
pub use timeline::{AttemptsTimeline, StallShown, TimelineView};

use crate::report::{RunId, RunReport};
use files::{DialogPurpose, Dialogs, FileJobs};
use runs::{ActiveRun, RunController};
use status_file::{RunState, StatusFile};

/// How often the window redraws while a load run streams, with no input (a query's run:
/// [`run_control::RUN_REPAINT`]).
const RUNNING_REPAINT: std::time::Duration = std::time::Duration::from_millis(33);

/// The window's title.
pub const TITLE: &str = "spanprof — Cloud Spanner query profiler";

/// The app.
pub struct SpanprofApp {
    settings: Settings,
    persist: bool,
    connection: ConnectionPanel,
    emulator: connection::EmulatorProcess,
    query: query::QueryPanel,
    /// The run in flight, the run list and the history worker.
    runs: RunController,
    iterations: IterationsView,
    compare: CompareView,
    details: DetailsView,
    operators: PlanView,
    dialogs: Dialogs,
    files: FileJobs,
    log: Log,
    notice: Option<String>,
    /// Why the last run could not start, said in the central area until another run starts or a
    /// run is picked.
    failed_run: Option<String>,
    frame_stats: Option<FrameStats>,
    frame_started: Option<Instant>,
    status: StatusFile,
    /// The History tab, reading the store on a thread of its own.
    history_view: HistoryView,
    /// The Load tab: what the load run in flight (the controller's) and the last one measured.
    load: LoadView,
    ctx: egui::Context,
}

impl SpanprofApp {
    /// The app, with its settings from `cc`'s storage when `options.persist`.
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        theme::apply(&cc.egui_ctx);
        let saved = cc
            .storage
            .filter(|_| options.persist)
            .and_then(|s| eframe::get_value(s, eframe::APP_KEY));
        let start_emulator = options.start_emulator.is_some();
        let settings = options.settings(saved);
        let history_view = HistoryView::new(match &options.history {
            crate::history::Location::Off => None,
            location => history::HistoryReader::start(
                location.clone(),
                connection::repaint_notifier(&cc.egui_ctx),
            )
            .ok(),
        });
        let runs = RunController::with_history(
            options.history,
            connection::repaint_notifier(&cc.egui_ctx),
        );
        let mut app = SpanprofApp {
            settings,
            persist: options.persist,
            connection: ConnectionPanel::default(),
            emulator: connection::EmulatorProcess::default(),
            query: query::QueryPanel::default(),
            runs,
            iterations: IterationsView::default(),
            compare: CompareView::default(),
            details: DetailsView::default(),
            operators: PlanView::default(),
            dialogs: Dialogs::new(options.file_dialogs),
            files: FileJobs::default(),
            log: Log::default(),
            notice: None,
            failed_run: None,
            frame_stats: options.frame_stats.map(FrameStats::new),
            frame_started: None,
            status: StatusFile::new(options.status_file),
            history_view,
            load: LoadView::default(),
            ctx: cc.egui_ctx.clone(),
        };
        if start_emulator {
            app.handle(Command::StartEmulator);
        }
        app.open_at_start(&options.open, options.tab.is_some());
        app
    }

    /// Opens the reports given at start; two runs or more are picked in Compare, shown unless a
    /// tab was asked for. A report that cannot be read is said in the status bar and the log.
    fn open_at_start(&mut self, paths: &[std::path::PathBuf], tab_asked: bool) {
        for path in paths {
            if let Err(e) = self.open_report(path) {
                self.error(format!("cannot open {}: {e}", path.display()));
            }
        }
        let ids: Vec<RunId> = self.runs.entries().iter().map(|r| r.id).collect();
        if ids.len() >= 2 {
            self.compare.pick_only(&ids);
            if !tab_asked {
                self.settings.tab = Tab::Compare;
            }
        } else if !ids.is_empty() && !tab_asked {
            self.settings.tab = Tab::Iterations;
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
        self.runs.entries()
    }

    /// Where the built-in local instance the window keeps across its runs serves, once a run
    /// started it.
    pub fn kept_instance(&self) -> Option<std::net::SocketAddr> {
        self.runs.kept_instance()
    }

    /// Whether a run is in flight.
    pub fn is_running(&self) -> bool {
        self.runs.is_running()
    }

    /// The id of the run in flight, the one it keeps in the run list when it ends.
    pub fn running_id(&self) -> Option<RunId> {
        self.runs.running_id()
    }

    /// How the last connection test ended, or that it is running.
    pub fn connection_outcome(&self) -> Option<&TestOutcome> {
        self.connection.outcome()
    }

    /// Where the run in flight is, if one is.
    pub fn progress(&self) -> Option<Progress> {
        self.runs.active().map(ActiveRun::progress)
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
        &mut self.operators
    }

    /// The History view.
    pub fn history_view(&mut self) -> &mut HistoryView {
        &mut self.history_view
    }

    /// The Load tab (its steps, its report, what it says went wrong).
    pub fn load_view(&self) -> &LoadView {
        &self.load
    }

    /// The compare view.
    pub fn compare_view(&mut self) -> &mut CompareView {
        &mut self.compare
    }

    /// The verdicts the compare view shows: each picked run against the first picked.
    pub fn verdicts(&self) -> Vec<String> {
        self.compare.verdicts_shown(self.runs.entries())
    }

    /// Shows `tab`.
    pub fn set_tab(&mut self, tab: Tab) {
        self.settings.tab = tab;
    }

    /// The reports File > Export writes, oldest first: the runs in view (on the Compare tab those
    /// picked, elsewhere the one shown) and those ticked for export.
    pub fn export_reports(&self) -> Vec<RunReport> {
        let on_compare = self.settings.tab == Tab::Compare;
        let in_view = self
            .compare
            .in_view(on_compare, self.runs.list().shown_id());
        self.runs.export_reports(&in_view)
    }

    /// Exports the runs marked for export to `path`, on the calling thread (tests and scripts; the
    /// Export menu writes on a thread of its own: [`SpanprofApp::save_export`]).
    pub fn export_selected(
        &self,
        format: Format,
        path: &Path,
    ) -> Result<(), crate::export::ExportError> {
        export_to(path, format, &self.export_reports())
    }

    /// Adds the runs of a JSON report read from `path`, on the calling thread (tests and scripts;
    /// the File menu reads on a thread of its own: [`SpanprofApp::open_report_file`]).
    pub fn open_report(&mut self, path: &Path) -> Result<usize, ReportError> {
        let reports = files::read_report(path)?;
        Ok(self.runs.add_opened(path, reports))
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

    /// Shows `message` in the status bar and keeps it in the log.
    fn error(&mut self, message: String) {
        self.notice = Some(message.clone());
        self.log.push(message);
    }

    fn write_status(&mut self, state: RunState) {
        self.status.set_run(state);
        self.flush_status();
    }

    /// Writes the status file when what it says changed (see `status_file.rs`).
    fn flush_status(&mut self) {
        let dialog = self
            .dialogs
            .built_in()
            .map(|dialog| dialog.folder().join(dialog.name()));
        if let Err(e) = self.status.flush(self.notice.as_deref(), dialog.as_deref()) {
            self.log.push(e.to_string());
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
        self.drain_run();
        self.drain_history_view();
        self.after_drain();
    }

    /// Does what a panel asked for.
    fn handle(&mut self, command: Command) {
        match command {
            Command::Run => self.start_run(),
            Command::Cancel => {
                self.runs.cancel();
                self.load.stopping();
            }
            Command::RunLoad => self.start_load(),
            Command::StopLoad => {
                if self.runs.cancel_load() {
                    self.load.stopping();
                }
            }
            Command::TestConnection => {
                let notify = connection::repaint_notifier(&self.ctx);
                self.connection
                    .start_test(&self.settings.connection, notify);
            }
            Command::StartEmulator => match self.settings.connection.timeouts.timeouts() {
                Ok(timeouts) => {
                    let ctx = self.ctx.clone();
                    self.emulator
                        .start(&self.settings.connection.emulator, timeouts, move || {
                            ctx.request_repaint()
                        });
                }
                Err(message) => self.error(message),
            },
            Command::ChooseCredentials => self.open_dialog(DialogPurpose::Credentials),
            Command::OpenReport => self.open_dialog(DialogPurpose::OpenReport),
            Command::Export(format, kind) => self.ask_export(format, kind),
            Command::CopySummary => match summary_text(&self.export_reports()) {
                Ok(text) => {
                    self.ctx.copy_text(text);
                    self.notice = Some("summary copied".into());
                }
                Err(e) => self.error(e.to_string()),
            },
        }
    }
}

impl SpanprofApp {
    /// The keyboard: Ctrl+Enter or Ctrl+R runs (the load run in the Load tab), Ctrl+. cancels
    /// (or stops the load run), Escape closes the timeline, the left and right arrows move
    /// between iterations (while no text field has the keys). While the in-window file dialog is
    /// open, the keys are the dialog's.
    fn keys(&mut self, ctx: &egui::Context) -> Vec<Command> {
        let mut commands = Vec::new();
        if self.dialogs.built_in().is_some() {
            return commands;
        }
        let pressed = |modifiers, key| ctx.input_mut(|i| i.consume_key(modifiers, key));
        if pressed(egui::Modifiers::COMMAND, egui::Key::Enter)
            || pressed(egui::Modifiers::COMMAND, egui::Key::R)
        {
            commands.push(match self.settings.tab {
                Tab::Load => Command::RunLoad,
                _ => Command::Run,
            });
        }
        if pressed(egui::Modifiers::COMMAND, egui::Key::Period) {
            commands.push(Command::Cancel);
        }
        let on_iterations = self.settings.tab == Tab::Iterations;
        if on_iterations
            && self.iterations.timeline().opened().is_some()
            && pressed(egui::Modifiers::NONE, egui::Key::Escape)
        {
            self.iterations.timeline().close();
        }
        if on_iterations && !self.runs.is_running() && !ctx.text_edit_focused() {
            let delta = if pressed(egui::Modifiers::NONE, egui::Key::ArrowLeft) {
                -1
            } else if pressed(egui::Modifiers::NONE, egui::Key::ArrowRight) {
                1
            } else {
                0
            };
            if let (true, Some(run)) = (delta != 0, self.runs.list().shown()) {
                self.iterations.step(run.id, &run.report.iterations, delta);
            }
        }
        commands
    }
}

impl eframe::App for SpanprofApp {
    fn logic(&mut self, _ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.frame_started = Some(Instant::now());
        self.drain();
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let mut commands = self.keys(ui.ctx());
        egui::Panel::top("menu").show(ui, |ui| {
            commands.extend(self.menu_bar(ui));
        });
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar(ui));
        let (default, least, most) = layout::side_widths(ui.available_width());
        egui::Panel::left("controls")
            .resizable(true)
            .default_size(default)
            .size_range(least..=most)
            .show(ui, |ui| {
                commands.extend(self.side_panel(ui));
            });
        egui::CentralPanel::default().show(ui, |ui| commands.extend(self.central(ui)));
        for command in commands {
            self.handle(command);
        }
        self.file_dialog(&ui.ctx().clone());
        self.flush_status();
        if self.runs.is_loading() {
            // The step's progress moves.
            ui.ctx().request_repaint_after(RUNNING_REPAINT);
        }
        if let Some(run) = self.runs.active() {
            // Keep drawing while a run streams (the progress moves), at a rate that leaves the
            // CPU to the run being measured; input still repaints at once. Once its last
            // iteration is in, its end is looked for sooner.
            let delay = if run.all_ended() {
                RUNNING_REPAINT
            } else {
                run_control::RUN_REPAINT
            };
            ui.ctx().request_repaint_after(delay);
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

    /// A load run in flight when the window closes is stopped and what it measured is kept in
    /// the history, as Ctrl-C keeps `spanprof load`'s (its report waited for a few seconds at
    /// most; the history worker, dropped with the app, finishes the save).
    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        if let (Some(report), Some(history)) = (
            self.runs.stop_load_and_wait(Duration::from_secs(5)),
            self.runs.history(),
        ) {
            history.save_load(report);
        }
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
