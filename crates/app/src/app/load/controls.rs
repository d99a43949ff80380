//! The Load tab's controls, in words a newcomer reads: how load is applied (requests a second
//! arriving on a schedule, or clients at once) with a sentence on what that means, the steps, the
//! "Find the knee" preset, how long a step lasts, the cap on unanswered requests, and the built-in
//! instance made a server of known capacity; the parameters each request draws and, for a
//! read-write load, reading the target's statistics after it (`draw_controls.rs`). Each label says what the control does; its hover
//! says what follows from it.

use super::draw_controls::{self, DrawCheck};
use super::settings::{LoadModel, LoadSettings, QueueSettings};
use crate::app::theme::{self, form_row};

/// The open model's radio button.
const OPEN: &str = "Requests a second (arrivals)";
/// The closed model's radio button.
const CLOSED: &str = "Clients at once";
/// The open model's steps field.
const RATES: &str = "Steps (requests a second)";
/// The closed model's steps field.
const CONCURRENCIES: &str = "Steps (clients at once)";
/// The preset's button.
const FIND_THE_KNEE: &str = "Find the knee";

/// What the open model means, in a sentence, the tools that work this way after it.
const OPEN_MEANS: &str = "Requests start on a schedule, so many a second, whether or not the \
    earlier ones have answered, as users arrive at a service: when the server slows, requests pile \
    up and wait, and each one's latency counts from when it was due. (Load tools call this the \
    open model; wrk2 and k6's arrival-rate executors work this way.)";
/// What the closed model means.
const CLOSED_MEANS: &str = "A fixed number of clients each send a request, wait for its answer, \
    then send the next, as a pool of workers does: when the server slows, the clients slow with \
    it, so no queue builds and the rate they reach is the figure to read. (The closed model; \
    most benchmark loops work this way.)";

/// Where the Load tab's controls are: whether a run may start, the target, the query panel's
/// read-write switch, and the draws as last read.
pub struct ControlsContext<'a> {
    /// No run is in flight (the controls are fixed while one is).
    pub idle: bool,
    /// The target is the built-in instance (the preset's ramp and the interval suit it).
    pub local: bool,
    /// The query panel's read-write switch is on.
    pub read_write: bool,
    /// The draw parameters as last read.
    pub draws: &'a DrawCheck,
}

/// The model, its steps, the preset, the step's length, the cap in flight, stopping at the
/// knee, the parameters drawn and, for a read-write load, the target's statistics.
pub fn controls_ui(ui: &mut egui::Ui, settings: &mut LoadSettings, at: &ControlsContext<'_>) {
    let local = at.local;
    ui.add_enabled_ui(at.idle, |ui| {
        egui::Grid::new("load-controls")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                model_row(ui, settings, local);
                steps_rows(ui, settings);
                draw_controls::draws_rows(ui, settings, at.draws);
                if at.read_write {
                    draw_controls::target_stats_rows(ui, &mut settings.target_stats, local);
                }
            });
        let means = match settings.model {
            LoadModel::Open => OPEN_MEANS,
            LoadModel::Closed => CLOSED_MEANS,
        };
        // Body size: the sentence is what teaches the choice above it.
        ui.label(egui::RichText::new(means).color(theme::MUTED));
    });
    ui.label(
        egui::RichText::new(
            "Run load (below the query panel, or Ctrl+Enter) runs the query panel's first \
             query on the connection's target (with Read-write transaction on, each request is \
             one transaction of its script, retries included); Cancel stops it and keeps the \
             steps measured",
        )
        .small()
        .color(theme::MUTED),
    );
}

/// How load is applied, and the preset beside it.
fn model_row(ui: &mut egui::Ui, settings: &mut LoadSettings, local: bool) {
    ui.label("Load as");
    ui.horizontal(|ui| {
        ui.radio_value(&mut settings.model, LoadModel::Open, OPEN)
            .on_hover_text(OPEN_MEANS);
        ui.radio_value(&mut settings.model, LoadModel::Closed, CLOSED)
            .on_hover_text(CLOSED_MEANS);
    });
    ui.end_row();
    // A row of its own: beside the radios it wrapped under them at 900 wide, over the next row
    // (a grid's row keeps the height of one line).
    ui.label("");
    ui.horizontal(|ui| {
        let ramp = LoadSettings::knee_ramp(local);
        let hover = format!(
            "Sets a rising ramp ({} requests a second, {} s a step) that stops once latency \
             departs from the first step's: two steps in a row past the knee's rule (p50 over \
             2x or p99 over 4x the first step's, or 10% short of the rate asked). Then press \
             Run load.{}",
            ramp.replace(',', ", "),
            LoadSettings::KNEE_STEP_SECONDS,
            if local {
                ""
            } else {
                " The ramp is gentler than the built-in instance's: this target is not on \
                 this machine"
            }
        );
        if ui.button(FIND_THE_KNEE).on_hover_text(hover).clicked() {
            settings.find_the_knee(local);
        }
        ui.label(
            egui::RichText::new("a rising ramp that stops once latency departs")
                .color(theme::MUTED),
        );
    });
    ui.end_row();
}

/// The steps, their length, the open model's cap in flight, stopping at the knee.
fn steps_rows(ui: &mut egui::Ui, settings: &mut LoadSettings) {
    match settings.model {
        LoadModel::Open => form_row(
            ui,
            RATES,
            Some(
                "Requests a second, a step each, lowest first: 50,100,200, or a ramp \
                 50..400:50. The first step is the unloaded behaviour the others are held to",
            ),
            egui::TextEdit::singleline(&mut settings.rates).desired_width(260.0),
        ),
        LoadModel::Closed => form_row(
            ui,
            CONCURRENCIES,
            Some("Clients, a step each, fewest first: 1,2,4,8, or a ramp 1..8"),
            egui::TextEdit::singleline(&mut settings.concurrencies).desired_width(260.0),
        ),
    };
    form_row(
        ui,
        "Each step lasts",
        Some(
            "How long each step sends requests. Longer steps measure the rare slow ones (the \
             p99) on more requests; shorter ones finish the ramp sooner",
        ),
        egui::DragValue::new(&mut settings.step_seconds)
            .range(0.1..=86_400.0)
            .speed(0.1)
            .suffix(" s"),
    );
    if settings.model == LoadModel::Open {
        form_row(
            ui,
            "Unanswered requests, at most",
            Some(
                "When this many requests are waiting for answers, the next one waits to start: \
                 it is counted late (its latency still counts from when it was due), and one \
                 still waiting when its step ends is dropped. It keeps a stalled server from \
                 piling up requests without end; raise it if steps show dropped ones",
            ),
            egui::DragValue::new(&mut settings.max_in_flight).range(1..=crate::load::MAX_IN_FLIGHT),
        );
    }
    ui.label("");
    ui.checkbox(&mut settings.stop_at_knee, "Stop the ramp at the knee")
        .on_hover_text(
            "Once two steps in a row depart from the first step's behaviour by the knee's rule, \
             the higher steps are not run: the knee is found, and pushing past it only \
             overloads the target",
        );
    ui.end_row();
}

/// The built-in instance as a server of known capacity: queries at once, how long each holds
/// its place, periodic pauses.
pub fn queue_ui(ui: &mut egui::Ui, queue: &mut QueueSettings, local: bool, idle: bool) {
    egui::CollapsingHeader::new("Built-in instance: a server of known capacity")
        .default_open(queue.is_set())
        .show(ui, |ui| {
            if !local {
                ui.label(
                    egui::RichText::new(
                        "These shape the built-in instance only: choose Local in the \
                         connection panel to use them",
                    )
                    .small()
                    .color(theme::MUTED),
                );
            }
            ui.add_enabled_ui(local && idle, |ui| {
                egui::Grid::new("load-queue")
                    .num_columns(2)
                    .spacing([8.0, 4.0])
                    .show(ui, |ui| queue_rows(ui, queue));
            });
        });
}

fn queue_rows(ui: &mut egui::Ui, queue: &mut QueueSettings) {
    form_row(
        ui,
        "Queries served at once",
        Some(
            "The built-in instance works on at most this many queries at a time; the others \
             wait in line, first come first served (0: no limit, no line). N at once, each \
             holding its place D ms, serve at most N times 1000 / D a second: past that the line \
             grows and latency leaves the unloaded (the knee)",
        ),
        egui::DragValue::new(&mut queue.query_threads)
            .range(0..=crate::server::queue::MAX_QUERY_THREADS),
    );
    form_row(
        ui,
        "Each query holds its place for",
        Some(
            "How long a query keeps one of the places above: 2 places of 10 ms serve at most \
             200 a second",
        ),
        egui::DragValue::new(&mut queue.service_ms)
            .range(0..=86_400_000)
            .suffix(" ms"),
    );
    form_row(
        ui,
        "Pause all answers every",
        Some(
            "Every this many ms (the first after the start) the built-in instance stops \
             answering for the time below (0: never), as a garbage collection or a failover \
             does: requests that arrive meanwhile wait, and the p99 shows it while the p50 \
             hardly moves",
        ),
        egui::DragValue::new(&mut queue.freeze_every_ms)
            .range(0..=86_400_000)
            .suffix(" ms"),
    );
    form_row(
        ui,
        "Each pause lasts",
        Some("How long each pause lasts (at most the period above)"),
        egui::DragValue::new(&mut queue.freeze_ms)
            .range(0..=86_400_000)
            .suffix(" ms"),
    );
}
