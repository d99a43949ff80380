//! The timeline of one iteration, opened from its bar or its flag in the Iterations tab: the
//! server's reported time as a band behind the client's rows, then per lane a row of waits (a
//! tick per message arrival, the stalls the causes named, resumes, the summed buckets) and a row
//! of decode spans (the CPU part solid, the off-CPU part faded), the median iteration's rows
//! beneath for comparison, and beside them the causes of the difference in words
//! (`analysis::causes`). A time axis in milliseconds from the iteration's start; drag or scroll
//! to pan, Ctrl+scroll to zoom, double-click to fit; every figure on hover.
//!
//! What is drawn is found in the rows by binary search and merged below two pixels
//! (`paint.rs`), and the rows and the explanation are built once per opened iteration
//! (again when the run in flight adds an iteration), so a frame's cost follows the pixels, not
//! the messages.

use std::sync::Arc;

use egui_plot::{GridMark, Plot, PlotTransform};

use super::attempts_view::AttemptsTimeline;
use super::cause_words::{cause_words, coverage_words};
use super::paint::{self, Band, Drawn};
use super::rows::{self, Item, Kind, Row, RowKind};
use super::server_share::ServerShare;
use crate::analysis::RunConflicts;
use crate::analysis::causes::{self, IterationCauses};
use crate::app::theme;
use crate::part::Part;
use crate::report::{IterationRecord, RunId};
use crate::text::capitalised;

/// Rows of one iteration and the median one, with the explanation, built once.
#[derive(Debug)]
struct Built {
    /// The records' count and variant it was built from (a run in flight adds records, and its
    /// variants stream in turn under one id).
    records: usize,
    label: String,
    rows: Vec<Row>,
    /// Each row's place on the plot's y axis.
    ys: Vec<f64>,
    /// The opened iteration's and the median iteration's totals and indexes into the records.
    shown: Vec<(u32, f64, usize)>,
    median: Option<u32>,
    causes: Option<IterationCauses>,
    /// Why there are no causes.
    no_causes: Option<String>,
    server: Option<ServerShare>,
    /// The opened iteration's longest wait: (message, from, to) in microseconds.
    longest: Option<(u32, u64, u64)>,
}

/// A stall drawn last frame: the iteration, the message it came before, its wait in ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StallShown {
    /// The iteration.
    pub iteration: u32,
    /// The message that came late (from 1).
    pub message: u32,
    /// How long the client waited for it.
    pub wait_ms: f64,
    /// The middle of its bar on the screen.
    pub at: egui::Pos2,
}

/// The timeline view's state: which iteration of which run is open, what it drew last frame.
#[derive(Debug, Default)]
pub struct TimelineView {
    open: Option<(RunId, u32)>,
    built: Option<Built>,
    drawn: Vec<Drawn>,
    stalls: Vec<StallShown>,
    ticks: usize,
    plot_rect: Option<egui::Rect>,
    /// The causes' width, once their edge was dragged.
    causes_width: Option<f32>,
    /// The edge between the plot and the causes, last frame.
    split_rect: Option<egui::Rect>,
    /// Where each row was drawn last frame: its band's top and bottom.
    bands: Vec<Band>,
    /// Just opened: the view around scrolls it into view once it is drawn.
    reveal: bool,
    /// The open iteration's attempts, one lane each, when it ran a read-write transaction.
    attempts: Option<AttemptsTimeline>,
    /// The shown run's conflict view, made once per run.
    conflicts: Option<Arc<RunConflicts>>,
}

/// A row's height where there is room, in points.
const ROW: f32 = 30.0;
/// The least a row gets however little room there is, in points: its label and its marks
/// still read; past that the view around scrolls.
const MIN_ROW: f32 = 22.0;
/// The plot's axis and margins, in points.
const PLOT_MARGINS: f32 = 56.0;
/// The narrowest the causes get, and the plot, in points.
const MIN_CAUSES: f32 = 160.0;
/// See `MIN_CAUSES`.
const MIN_PLOT_WIDTH: f32 = 220.0;
/// The draggable edge between them, in points.
const SPLIT: f32 = 8.0;

/// The lane whose end is last: the one whose waits the causes read.
fn critical_lane(timeline: &crate::report::Timeline) -> Option<usize> {
    (0..timeline.lanes.len()).max_by_key(|&i| {
        let l = &timeline.lanes[i];
        l.origin_us.saturating_add(l.end_us)
    })
}

impl Built {
    fn new(label: &str, records: &[IterationRecord], iteration: u32) -> Built {
        let explained = causes::explain_records(label, records);
        let (median, causes, no_causes) = match &explained {
            Ok(e) => (
                Some(e.median_iteration),
                e.iterations
                    .iter()
                    .find(|i| i.iteration == iteration)
                    .cloned(),
                None,
            ),
            Err(e) => (None, None, Some(e.to_string())),
        };
        let index = records.iter().position(|r| r.iteration == iteration);
        let mut built = Built {
            records: records.len(),
            label: label.to_owned(),
            rows: Vec::new(),
            ys: Vec::new(),
            shown: Vec::new(),
            median,
            causes,
            no_causes,
            server: index.and_then(|i| ServerShare::of(&records[i])),
            longest: None,
        };
        let stalls: Vec<u32> = built
            .causes
            .iter()
            .flat_map(|c| &c.causes)
            .filter(|c| matches!(c.kind, Part::Server | Part::Network) && c.ms > 0.0)
            .filter_map(|c| c.at_message)
            .collect();
        let median_index = median
            .filter(|&m| m != iteration)
            .and_then(|m| records.iter().position(|r| r.iteration == m));
        for (k, (i, named)) in [(index, stalls), (median_index, Vec::new())]
            .into_iter()
            .filter_map(|(i, s)| Some((i?, s)))
            .enumerate()
        {
            let record = &records[i];
            let Some(timeline) = &record.timeline else {
                continue;
            };
            let prefix = if k == 0 {
                format!("#{}", record.iteration)
            } else {
                format!("#{} median", record.iteration)
            };
            let critical = critical_lane(timeline);
            let gap = if built.rows.is_empty() { 0.0 } else { 0.7 };
            let top = built.ys.last().map_or(0.0, |y| y - 1.0 - gap);
            let mut made = rows::iteration_rows(&prefix, record, timeline, &[]);
            // Only the lane the causes read carries its stalls.
            for row in &mut made {
                if Some(row.lane) == critical && row.kind == RowKind::Waits {
                    for item in &mut row.items {
                        if let rows::Source::Message(m) = item.source
                            && timeline.lanes[row.lane]
                                .messages
                                .get(m)
                                .is_some_and(|m| named.contains(&m.number))
                        {
                            item.kind = Kind::Stall;
                        }
                    }
                    row.refresh_blocks();
                }
            }
            if k == 0 {
                built.longest = longest_wait(timeline);
            }
            for (j, row) in made.into_iter().enumerate() {
                built.ys.push(top - j as f64);
                built.rows.push(row);
            }
            built.shown.push((record.iteration, record.total_ms, i));
        }
        built
    }

    fn band(&self, transform: &PlotTransform, row: usize) -> Band {
        let y = self.ys[row];
        let top = transform.position_from_point_y(y + 0.34);
        let bottom = transform.position_from_point_y(y - 0.34);
        (top.min(bottom), top.max(bottom))
    }

    /// The rows of `iteration`, top to bottom.
    fn rows_of(&self, iteration: u32) -> impl Iterator<Item = usize> + '_ {
        (0..self.rows.len()).filter(move |&r| self.rows[r].iteration == iteration)
    }
}

/// The longest wait of `timeline` before one message: (its number, from, to) in microseconds.
fn longest_wait(timeline: &crate::report::Timeline) -> Option<(u32, u64, u64)> {
    timeline
        .lanes
        .iter()
        .flat_map(|l| l.messages.iter().map(move |m| (l, m)))
        .max_by_key(|(_, m)| m.wait_us())
        .map(|(l, m)| {
            (
                m.number,
                l.origin_us.saturating_add(m.waited_from_us),
                l.origin_us
                    .saturating_add(m.arrived_us.max(m.waited_from_us)),
            )
        })
}

impl TimelineView {
    /// Opens the timeline of `iteration` of run `run`.
    pub fn open(&mut self, run: RunId, iteration: u32) {
        if self.open != Some((run, iteration)) {
            self.open = Some((run, iteration));
            self.built = None;
            self.attempts = None;
            self.drawn.clear();
            self.stalls.clear();
            self.reveal = true;
        }
    }

    /// The shown run's conflict view (a transaction's lanes name its waits and wounds by it).
    pub fn set_conflicts(&mut self, conflicts: Option<Arc<RunConflicts>>) {
        self.conflicts = conflicts;
    }

    /// Closes it.
    pub fn close(&mut self) {
        self.open = None;
        self.built = None;
        self.attempts = None;
        self.drawn.clear();
        self.stalls.clear();
        self.plot_rect = None;
    }

    /// The iteration whose timeline is open.
    pub fn opened(&self) -> Option<u32> {
        self.open.map(|(_, i)| i)
    }

    /// The run whose iteration is open.
    pub fn run(&self) -> Option<RunId> {
        self.open.map(|(r, _)| r)
    }

    /// The stalls drawn last frame.
    pub fn stalls_shown(&self) -> &[StallShown] {
        &self.stalls
    }

    /// Rectangles and ticks drawn last frame.
    pub fn shapes_drawn(&self) -> (usize, usize) {
        (self.drawn.len(), self.ticks)
    }

    /// The rows' names, top to bottom.
    pub fn row_labels(&self) -> Vec<String> {
        self.built
            .iter()
            .flat_map(|b| b.rows.iter().map(|r| r.label.clone()))
            .collect()
    }

    /// Where the plot was drawn last frame.
    pub fn plot_rect(&self) -> Option<egui::Rect> {
        self.plot_rect
    }

    /// Where row `row` (from the top) was drawn last frame: its band across the plot.
    pub fn row_rect(&self, row: usize) -> Option<egui::Rect> {
        let plot = self.plot_rect?;
        let &(top, bottom) = self.bands.get(row)?;
        Some(egui::Rect::from_x_y_ranges(plot.x_range(), top..=bottom))
    }

    /// The draggable edge between the plot and the causes, last frame.
    pub fn split_rect(&self) -> Option<egui::Rect> {
        self.split_rect
    }

    /// Draws the open timeline of run `run` (label `label`) from its `records`: in the `left`
    /// points of the view under what is above it when its rows fit there at their least height
    /// (nothing moves), else in at most the view's `whole` height (it is scrolled to); returns
    /// false when nothing is open for that run.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        (run, label): (RunId, &str),
        records: &[IterationRecord],
        (left, whole): (f32, f32),
    ) -> bool {
        let Some((open_run, iteration)) = self.open else {
            return false;
        };
        if open_run != run {
            self.close();
            return false;
        }
        let transaction = records
            .iter()
            .find(|r| r.iteration == iteration && r.transaction.is_some());
        if let Some(record) = transaction {
            return self.attempts_ui(ui, run, record, (left, whole));
        }
        if self
            .built
            .as_ref()
            .is_none_or(|b| b.records != records.len() || b.label != label)
        {
            self.built = Some(Built::new(label, records, iteration));
        }
        let Some(built) = self.built.take() else {
            return false;
        };
        let top = ui.cursor().min;
        let closed = self.header(ui, &built, iteration, records);
        if !closed {
            let header = ui.cursor().top() - top.y;
            self.body(
                ui,
                &built,
                (iteration, (left - header, whole - header)),
                records,
            );
            self.built = Some(built);
            if std::mem::take(&mut self.reveal) {
                // The least scroll that brings its heading and every row into view: in a short
                // window the chart above goes up out of the way, in a tall one nothing moves.
                let drawn =
                    egui::Rect::from_min_max(top, egui::pos2(top.x + 1.0, ui.cursor().top()));
                ui.scroll_to_rect(drawn, None);
            }
        }
        !closed
    }

    /// The open iteration's attempts, a lane each (a read-write transaction's timeline); false
    /// when Close was clicked.
    fn attempts_ui(
        &mut self,
        ui: &mut egui::Ui,
        run: RunId,
        record: &IterationRecord,
        room: (f32, f32),
    ) -> bool {
        let top = ui.cursor().min;
        let mut view = match self.attempts.take() {
            Some(v) if v.is_of(run, record.iteration, self.conflicts.as_ref()) => v,
            _ => match AttemptsTimeline::new(run, record, self.conflicts.clone()) {
                Some(v) => v,
                None => return false,
            },
        };
        if view.ui(ui, room) {
            self.close();
            return false;
        }
        self.plot_rect = view.plot_rect();
        self.attempts = Some(view);
        if std::mem::take(&mut self.reveal) {
            let drawn = egui::Rect::from_min_max(top, egui::pos2(top.x + 1.0, ui.cursor().top()));
            ui.scroll_to_rect(drawn, None);
        }
        true
    }

    /// The open transaction's attempts' timeline, when one is open (its lanes, what it painted).
    pub fn attempts(&self) -> Option<&AttemptsTimeline> {
        self.attempts.as_ref()
    }

    /// The heading line and the legend; true when Close was clicked.
    fn header(
        &mut self,
        ui: &mut egui::Ui,
        built: &Built,
        iteration: u32,
        records: &[IterationRecord],
    ) -> bool {
        let mut closed = false;
        // Wrapped, so that a narrow window keeps the plot and the causes inside it.
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new(format!("Timeline of #{iteration}")).strong());
            let total = records.iter().find(|r| r.iteration == iteration);
            if let Some(r) = total {
                ui.label(format!("· {}", crate::text::ms(r.total_ms)));
            }
            match built.median {
                Some(m) if m != iteration => {
                    ui.label(format!("· the median iteration #{m} beneath"));
                }
                Some(_) => {
                    ui.label("· the median iteration");
                }
                None => {}
            }
            if ui.small_button("Close timeline").clicked() {
                closed = true;
            }
            // At the text's own size, on the line's end or the next.
            ui.label(
                egui::RichText::new("drag to pan · Ctrl+scroll to zoom · double-click to fit")
                    .color(theme::MUTED),
            );
        });
        if closed {
            self.close();
            return true;
        }
        let mut keys = vec![
            ("wait", paint::color(Kind::Wait)),
            ("stall", paint::color(Kind::Stall)),
            ("wire decode", paint::color(Kind::Wire)),
            ("row decode", paint::color(Kind::Row)),
            (
                "off the CPU (faded)",
                paint::color(Kind::Row).gamma_multiply(paint::OFF_CPU_FADE),
            ),
            ("resume", paint::color(Kind::Resume)),
            ("summed messages", paint::color(Kind::Bucket)),
            ("server (reported)", paint::color(Kind::Server)),
        ];
        if built.rows.iter().any(|r| r.kind == RowKind::Setup) {
            keys.push(("cold start", paint::color(Kind::Setup)));
        }
        theme::legend(ui, keys);
        false
    }

    /// The plot and, beside it past a draggable edge, the causes in a box of their own as high as
    /// the plot that scrolls under the pointer: both in view at once. The plot is its natural
    /// height (rows `ROW` apart) where the room allows (`left` under what is above, when its
    /// rows fit there, else the view's `whole` height), never shorter than its rows `MIN_ROW`
    /// apart.
    fn body(
        &mut self,
        ui: &mut egui::Ui,
        built: &Built,
        (iteration, (left, whole)): (u32, (f32, f32)),
        records: &[IterationRecord],
    ) {
        if built.rows.is_empty() {
            ui.label(format!(
                "#{iteration} kept no timeline (a report written before timelines were kept, or an iteration that failed)."
            ));
            return;
        }
        let rows = built.rows.len() as f32;
        let natural = rows * ROW + PLOT_MARGINS;
        let least = rows * MIN_ROW + PLOT_MARGINS;
        let room = if least <= left { left } else { whole };
        let height = natural.min(room).max(least);
        let width = ui.available_width();
        let side = self
            .causes_width
            .unwrap_or_else(|| 290.0f32.min(width * 0.4))
            .clamp(MIN_CAUSES, (width - MIN_PLOT_WIDTH - SPLIT).max(MIN_CAUSES));
        ui.horizontal_top(|ui| {
            ui.spacing_mut().item_spacing.x = 0.0;
            let plot_width = (width - side - SPLIT).max(MIN_PLOT_WIDTH);
            let down = egui::Layout::top_down(egui::Align::LEFT);
            ui.allocate_ui_with_layout(egui::vec2(plot_width, height), down, |ui| {
                self.plot(ui, built, records, height);
            });
            self.splitter(ui, height, side);
            ui.allocate_ui_with_layout(egui::vec2(side, height), down, |ui| {
                ui.set_width(side);
                egui::ScrollArea::vertical()
                    .id_salt("timeline-causes")
                    .max_height(height)
                    .auto_shrink([false, false])
                    .show(ui, |ui| {
                        ui.set_width(side - 14.0);
                        causes_text(ui, built, iteration);
                    });
            });
        });
    }

    /// The edge between the plot and the causes: dragged, the causes widen or narrow.
    fn splitter(&mut self, ui: &mut egui::Ui, height: f32, side: f32) {
        let (rect, response) =
            ui.allocate_exact_size(egui::vec2(SPLIT, height), egui::Sense::drag());
        let response = response.on_hover_cursor(egui::CursorIcon::ResizeHorizontal);
        let stroke = if response.hovered() || response.dragged() {
            ui.visuals().widgets.active.fg_stroke
        } else {
            ui.visuals().widgets.noninteractive.bg_stroke
        };
        ui.painter().vline(rect.center().x, rect.y_range(), stroke);
        if response.dragged() {
            self.causes_width = Some(side - response.drag_delta().x);
        }
        self.split_rect = Some(rect);
    }

    fn plot(&mut self, ui: &mut egui::Ui, built: &Built, records: &[IterationRecord], height: f32) {
        let end_ms = built
            .shown
            .iter()
            .map(|&(_, total, _)| total)
            .chain(
                built
                    .rows
                    .iter()
                    .flat_map(|r| r.items.last())
                    .map(|i| i.end_us as f64 / 1e3),
            )
            .filter(|t| t.is_finite())
            .fold(0.0f64, f64::max);
        let labels: Vec<(f64, String)> = built
            .ys
            .iter()
            .zip(&built.rows)
            .map(|(&y, r)| (y, r.label.clone()))
            .collect();
        let marks: Vec<f64> = built.ys.clone();
        let bottom = built.ys.last().copied().unwrap_or(0.0);
        // The open iteration (of which run) names the plot.
        let response = Plot::new(("timeline-plot", self.open))
            .height(height)
            .allow_zoom([true, false])
            .allow_drag([true, false])
            .allow_scroll([true, false])
            .allow_boxed_zoom(false)
            .show_x(false)
            .show_y(false)
            .include_x(0.0)
            .include_x(end_ms * 1.02)
            .include_y(0.6)
            .include_y(bottom - 0.6)
            .show_grid([true, false])
            // Tick labels closer than egui_plot's default (60 points): a 100 ms step is often
            // narrower than that here.
            .custom_x_axes(vec![
                egui_plot::AxisHints::new_x()
                    .label("ms from the iteration's start")
                    .label_spacing(32.0..=48.0),
            ])
            .y_axis_min_width(96.0)
            .y_grid_spacer(move |_| {
                marks
                    .iter()
                    .map(|&value| GridMark {
                        value,
                        step_size: 1.0,
                    })
                    .collect()
            })
            .y_axis_formatter(move |mark, _| {
                labels
                    .iter()
                    .find(|(y, _)| (y - mark.value).abs() < 1e-6)
                    .map(|(_, l)| l.clone())
                    .unwrap_or_default()
            })
            .show(ui, |_| ());
        self.plot_rect = Some(response.response.rect);
        self.paint(ui, built, records, &response.transform);
        self.hover(built, records, &response);
    }

    fn paint(
        &mut self,
        ui: &egui::Ui,
        built: &Built,
        records: &[IterationRecord],
        transform: &PlotTransform,
    ) {
        let frame = *transform.frame();
        let painter = ui.painter().with_clip_rect(frame.intersect(ui.clip_rect()));
        let bounds = transform.bounds();
        let from_us = (bounds.min()[0] * 1e3).max(0.0) as u64;
        let to_us = (bounds.max()[0] * 1e3).max(0.0) as u64;
        let px = |t: u64| transform.position_from_point_x(t as f64 / 1e3);
        let us_per_point = to_us.saturating_sub(from_us) as f64 / f64::from(frame.width().max(1.0));
        let bands: Vec<Band> = (0..built.rows.len())
            .map(|r| built.band(transform, r))
            .collect();
        // The server's time behind its iteration's rows.
        for &(it, _, _) in &built.shown {
            let rows_of: Vec<usize> = built.rows_of(it).collect();
            let (Some(&first), Some(&last)) = (rows_of.first(), rows_of.last()) else {
                continue;
            };
            if let Some(server) = built.rows[first]
                .items
                .first()
                .filter(|i| i.kind == Kind::Server)
            {
                paint::paint_server_band(
                    &painter,
                    px(server.start_us),
                    px(server.end_us),
                    bands[first].0,
                    bands[last].1,
                );
            }
        }
        self.bands.clone_from(&bands);
        self.drawn.clear();
        for (r, row) in built.rows.iter().enumerate() {
            paint::layout_row(row, r, from_us, to_us, px, &mut self.drawn);
        }
        paint::paint_drawn(&painter, &self.drawn, &bands);
        self.ticks = 0;
        for (r, row) in built.rows.iter().enumerate() {
            if row.kind == RowKind::Waits {
                self.ticks +=
                    paint::paint_ticks(&painter, row, bands[r], (from_us, to_us), us_per_point, px);
            }
        }
        let stall_text = |row: &Row, item: &Item| {
            let number = message_number(records, built, row, item);
            format!(
                "stall {} before message {number}",
                crate::text::ms(item.len_us() as f64 / 1e3)
            )
        };
        paint::paint_labels(&painter, &built.rows, &self.drawn, &bands, stall_text);
        self.stalls = self
            .drawn
            .iter()
            .filter(|d| d.kind == Kind::Stall)
            .filter_map(|d| {
                let row = built.rows.get(d.row)?;
                let item = row.items[d.first..=d.last]
                    .iter()
                    .find(|i| i.kind == Kind::Stall)?;
                let (top, bottom) = bands[d.row];
                Some(StallShown {
                    iteration: row.iteration,
                    message: message_number(records, built, row, item),
                    wait_ms: item.len_us() as f64 / 1e3,
                    at: egui::pos2((d.x0 + d.x1) / 2.0, (top + bottom) / 2.0),
                })
            })
            .collect();
        for &(it, total, _) in &built.shown {
            let rows_of: Vec<usize> = built.rows_of(it).collect();
            if let (Some(&first), Some(&last), Some(us)) =
                (rows_of.first(), rows_of.last(), rows::ms_to_us(total))
                && us >= from_us
                && us <= to_us
            {
                paint::paint_end(
                    &painter,
                    px(us),
                    bands[first].0 - 12.0,
                    bands[last].1,
                    total,
                );
            }
        }
    }

    fn hover(
        &self,
        built: &Built,
        records: &[IterationRecord],
        response: &egui_plot::PlotResponse<()>,
    ) {
        let Some(pos) = response.response.hover_pos() else {
            return;
        };
        let y = response.transform.value_from_position(pos).y;
        let Some(row) = (0..built.ys.len()).find(|&r| (built.ys[r] - y).abs() <= 0.4) else {
            return;
        };
        let Some(d) = paint::hit(&self.drawn, row, pos.x) else {
            return;
        };
        let r = &built.rows[row];
        let Some(&(_, _, index)) = built.shown.iter().find(|s| s.0 == r.iteration) else {
            return;
        };
        let record = &records[index];
        let Some(timeline) = &record.timeline else {
            return;
        };
        let mut text = paint::drawn_text(r, timeline, d, record.query.server_elapsed_ms);
        if r.kind == RowKind::Server
            && let Some(o) = built
                .server
                .filter(|_| r.iteration == self.opened().unwrap_or(0))
        {
            text.push('\n');
            text.push_str(&o.to_string());
        }
        response.response.clone().on_hover_ui_at_pointer(|ui| {
            ui.label(text);
        });
    }
}

/// A message item's number (from 1) in its lane.
fn message_number(records: &[IterationRecord], built: &Built, row: &Row, item: &Item) -> u32 {
    let rows::Source::Message(m) = item.source else {
        return 0;
    };
    built
        .shown
        .iter()
        .find(|s| s.0 == row.iteration)
        .and_then(|&(_, _, i)| records.get(i)?.timeline.as_ref())
        .and_then(|t| t.lanes.get(row.lane)?.messages.get(m))
        .map_or(0, |m| m.number)
}

/// The causes beside the plot: the difference from the median iteration, cause by cause.
fn causes_text(ui: &mut egui::Ui, built: &Built, iteration: u32) {
    if let Some((number, from, to)) = built.longest {
        let ms = |us: u64| crate::text::ms(us as f64 / 1e3);
        ui.label(format!(
            "The longest wait: {} before message {number} (from {} to {}).",
            ms(to - from),
            ms(from),
            ms(to)
        ));
    }
    if let Some(o) = &built.server {
        ui.label(
            egui::RichText::new(format!("{} (the blue band).", capitalised(&o.to_string())))
                .color(theme::MUTED),
        );
    }
    ui.add_space(4.0);
    let Some(explained) = &built.causes else {
        let why = built.no_causes.clone().unwrap_or_else(|| {
            format!("#{iteration} is not a timed iteration: nothing to set against the median")
        });
        ui.label(egui::RichText::new(why).color(theme::MUTED));
        return;
    };
    let median = built.median.unwrap_or_default();
    if median == iteration {
        ui.label(format!(
            "#{iteration} is the median iteration: the others are set against it."
        ));
        return;
    }
    let verb = if explained.extra_ms >= 0.0 {
        "more"
    } else {
        "less"
    };
    ui.label(
        egui::RichText::new(format!(
            "Why #{iteration} took {} {verb} than the median iteration #{median}:",
            crate::text::ms(explained.extra_ms.abs())
        ))
        .strong(),
    );
    for c in &explained.causes {
        let colour = if c.ms > 0.0 {
            ui.visuals().text_color()
        } else {
            theme::MUTED
        };
        ui.label(
            egui::RichText::new(format!(
                "{}  {}",
                crate::text::signed_ms(c.ms),
                cause_words(c.kind, c.location, c.ms)
            ))
            .color(colour),
        );
        ui.label(
            egui::RichText::new(crate::report::printable(&c.detail))
                .size(12.0)
                .color(theme::MUTED),
        );
    }
    if explained.extra_ms > 0.0 {
        let named: f64 = explained
            .causes
            .iter()
            .filter(|c| c.kind != Part::Untimed && c.ms > 0.0)
            .map(|c| c.ms)
            .sum();
        ui.label(coverage_words(named, explained.extra_ms));
    }
}
