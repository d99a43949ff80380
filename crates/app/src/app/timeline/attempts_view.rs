//! A read-write transaction's timeline, drawn: one lane per attempt on the iteration's time axis
//! (`attempts.rs` lays them out), each action a stretch in its part's colour (begin, batch DML,
//! think, commit; a query's or DML's statement in one neutral colour, its figures on hover), an
//! aborted attempt on a ground of the aborted part's colour with a red mark at its end and the
//! step it aborted at, and the back-off after it a faded stretch that says how long it was and
//! what the server's RetryInfo asked. An action's waits for locks are a band inside it, in their
//! own colour; a wounded attempt's end says who wounded it; the lines say the figures come from
//! the local instance's lock table, a model of Spanner's locking. Drag or scroll to pan,
//! Ctrl+scroll to zoom, double-click to fit; every stretch's figures on hover. Built once per
//! opened iteration (and again when the run's conflict view changes, a run in flight).

use std::sync::Arc;

use egui::{Align2, Color32, FontId, Pos2, Rect, Stroke, StrokeKind};
use egui_plot::{GridMark, Plot, PlotTransform};

use super::attempts::{AttemptLanes, Segment};
use super::paint;
use crate::analysis::RunConflicts;
use crate::analysis::conflicts::SOURCE;
use crate::app::theme;
use crate::part::Part;
use crate::report::{ActionKind, AttemptOutcome, IterationRecord, RunId};

/// A lane's height where there is room, in points: its stretch and the words above it.
const ROW: f32 = 46.0;
/// The least a lane gets; past that the view around scrolls.
const MIN_ROW: f32 = 32.0;
/// The plot's axis and margins, in points.
const PLOT_MARGINS: f32 = 56.0;
/// Half a lane's stretch's height, in lanes.
const HALF: f64 = 0.27;
/// A statement's colour (a query's or DML's): neutral, its parts are in its hover.
pub const STATEMENT: Color32 = Color32::from_rgb(0x8c, 0x96, 0xa8);
/// The words' size on the lanes, in points.
const TEXT: f32 = 12.0;
/// A wait for a lock, inside its action.
pub const LOCK_WAIT: Color32 = Color32::from_rgb(0xe6, 0x7e, 0x22);

/// A stretch's colour.
pub fn colour(segment: Segment) -> Color32 {
    match segment {
        Segment::Action(kind) | Segment::Ended(kind) => step_colour(kind),
        Segment::Backoff => theme::part(Part::Backoff).gamma_multiply(0.6),
    }
}

fn step_colour(kind: ActionKind) -> Color32 {
    match kind {
        ActionKind::Begin => theme::part(Part::Begin),
        ActionKind::Query | ActionKind::Dml | ActionKind::Read | ActionKind::Mutate => STATEMENT,
        ActionKind::BatchDml => theme::part(Part::BatchDml),
        ActionKind::Think => theme::part(Part::Think),
        ActionKind::Commit => theme::part(Part::Commit),
        ActionKind::Rollback => theme::MUTED,
    }
}

/// Black or white, whichever reads on `fill`.
fn ink(fill: Color32) -> Color32 {
    let [r, g, b, _] = fill.to_array();
    let light = 0.299 * f32::from(r) + 0.587 * f32::from(g) + 0.114 * f32::from(b);
    if light > 140.0 {
        Color32::BLACK
    } else {
        Color32::WHITE
    }
}

/// A stretch drawn last frame: its lane, its index in the lane, and its left and right edges.
#[derive(Debug, Clone, Copy)]
struct Drawn {
    lane: usize,
    stretch: usize,
    x0: f32,
    x1: f32,
    /// Its middle, top to bottom.
    y: f32,
}

/// The timeline of one transaction's attempts: its lanes, built once, and what was drawn last
/// frame.
#[derive(Debug)]
pub struct AttemptsTimeline {
    of: (RunId, u32),
    /// The run's conflict view the lanes name waits and wounds by.
    conflicts: Option<Arc<RunConflicts>>,
    lanes: AttemptLanes,
    total_ms: f64,
    drawn: Vec<Drawn>,
    /// The words painted on and above the lanes last frame.
    painted: Vec<String>,
    plot_rect: Option<Rect>,
}

impl AttemptsTimeline {
    /// The timeline of `record` of run `run`, when it is a transaction's, its waits and wounds
    /// named as the run's conflict view `conflicts` names them.
    pub fn new(
        run: RunId,
        record: &IterationRecord,
        conflicts: Option<Arc<RunConflicts>>,
    ) -> Option<AttemptsTimeline> {
        let t = record.transaction.as_ref()?;
        Some(AttemptsTimeline {
            of: (run, record.iteration),
            lanes: AttemptLanes::of(t, record.total_ms, conflicts.as_deref()),
            conflicts,
            total_ms: record.total_ms,
            drawn: Vec::new(),
            painted: Vec::new(),
            plot_rect: None,
        })
    }

    /// Whether it is the timeline of iteration `iteration` of run `run`, named by the conflict
    /// view `conflicts`.
    pub fn is_of(&self, run: RunId, iteration: u32, conflicts: Option<&Arc<RunConflicts>>) -> bool {
        let same = match (&self.conflicts, conflicts) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.of == (run, iteration) && same
    }

    /// The lanes' names, top to bottom.
    pub fn lane_labels(&self) -> Vec<String> {
        self.lanes.lanes.iter().map(|l| l.label.clone()).collect()
    }

    /// The words painted on and above the lanes last frame.
    pub fn painted(&self) -> &[String] {
        &self.painted
    }

    /// The middle of stretch `stretch` of lane `lane` as drawn last frame, and its words for
    /// the hover.
    pub fn stretch_at(&self, lane: usize, stretch: usize) -> Option<(Pos2, &str)> {
        let d = self
            .drawn
            .iter()
            .find(|d| (d.lane, d.stretch) == (lane, stretch))?;
        let s = self.lanes.lanes.get(lane)?.stretches.get(stretch)?;
        Some((Pos2::new((d.x0 + d.x1) / 2.0, d.y), s.hover.as_str()))
    }

    /// Where the plot was drawn last frame.
    pub fn plot_rect(&self) -> Option<Rect> {
        self.plot_rect
    }

    /// Draws the heading, the legend and the lanes, in the `left` points under what is above
    /// when they fit there at their least height, else in at most the view's `whole` height;
    /// true when Close was clicked.
    pub fn ui(&mut self, ui: &mut egui::Ui, (left, whole): (f32, f32)) -> bool {
        let top = ui.cursor().top();
        if self.header(ui) {
            return true;
        }
        let used = ui.cursor().top() - top;
        let (left, whole) = (left - used, whole - used);
        let n = self.lanes.lanes.len().max(1) as f32;
        let natural = n * ROW + PLOT_MARGINS;
        let least = n * MIN_ROW + PLOT_MARGINS;
        let room = if least <= left { left } else { whole };
        self.plot(ui, natural.min(room).max(least));
        false
    }

    /// The heading line and the legend; true when Close was clicked.
    fn header(&mut self, ui: &mut egui::Ui) -> bool {
        let (_, iteration) = self.of;
        let attempts = self.lanes.lanes.len() + self.lanes.left_out;
        let mut closed = false;
        ui.horizontal_wrapped(|ui| {
            ui.label(egui::RichText::new(format!("Timeline of #{iteration}")).strong());
            ui.label(format!(
                "· {} · {attempts} attempt{}, one lane each",
                crate::text::ms(self.total_ms),
                if attempts == 1 { "" } else { "s" }
            ));
            closed = ui.small_button("Close timeline").clicked();
            ui.label(
                egui::RichText::new("drag to pan · Ctrl+scroll to zoom · double-click to fit")
                    .color(theme::MUTED),
            );
        });
        if self.lanes.named_conflicts {
            ui.label(
                egui::RichText::new(format!(
                    "Lock waits and wounds as the target named them: {SOURCE}."
                ))
                .color(theme::MUTED),
            );
        }
        if self.lanes.left_out > 0 {
            ui.label(
                egui::RichText::new(format!(
                    "The first {} attempts are not drawn: the last {} are.",
                    self.lanes.left_out,
                    self.lanes.lanes.len()
                ))
                .color(theme::MUTED),
            );
        }
        let mut keys: Vec<(&str, Color32)> = Vec::new();
        let seen = |segment: Segment| {
            self.lanes
                .lanes
                .iter()
                .flat_map(|l| &l.stretches)
                .any(|s| s.segment == segment)
        };
        for (kind, name) in [
            (ActionKind::Begin, "begin"),
            (ActionKind::Query, "statement (its parts on hover)"),
            (ActionKind::Dml, "statement (its parts on hover)"),
            (ActionKind::BatchDml, "batch DML"),
            (ActionKind::Think, "think"),
            (ActionKind::Commit, "commit"),
        ] {
            let shown = seen(Segment::Action(kind)) || seen(Segment::Ended(kind));
            if shown && !keys.iter().any(|(n, _)| *n == name) {
                keys.push((name, step_colour(kind)));
            }
        }
        if seen(Segment::Backoff) {
            keys.push(("back-off", colour(Segment::Backoff)));
        }
        let waited = self
            .lanes
            .lanes
            .iter()
            .flat_map(|l| &l.stretches)
            .any(|s| !s.waits.is_empty());
        if waited {
            keys.push((
                "waiting for a lock (on hover: the key, whom it waited behind)",
                LOCK_WAIT,
            ));
        }
        if self.lanes.lanes.iter().any(|l| l.ended.is_some()) {
            keys.push(("aborted attempt", theme::part(Part::Aborted)));
            keys.push(("where it ended", theme::ERROR));
        }
        theme::legend(ui, keys);
        closed
    }

    fn plot(&mut self, ui: &mut egui::Ui, height: f32) {
        let labels: Vec<String> = self.lane_labels();
        let n = labels.len();
        let marks: Vec<f64> = (0..n).map(|k| -(k as f64)).collect();
        let end_ms = self.lanes.end_ms.max(self.total_ms);
        let response = Plot::new(("attempts-plot", self.of))
            .height(height)
            .allow_zoom([true, false])
            .allow_drag([true, false])
            .allow_scroll([true, false])
            .allow_boxed_zoom(false)
            .show_x(false)
            .show_y(false)
            .include_x(0.0)
            .include_x(end_ms * 1.03)
            .include_y(0.75)
            .include_y(-(n.max(1) as f64 - 1.0) - 0.5)
            .show_grid([true, false])
            .custom_x_axes(vec![
                egui_plot::AxisHints::new_x()
                    .label("ms from the iteration's start")
                    .label_spacing(32.0..=48.0),
            ])
            .y_axis_min_width(80.0)
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
                let k = (-mark.value).round();
                let near = (mark.value + k).abs() < 1e-6 && k >= 0.0;
                near.then(|| labels.get(k as usize).cloned())
                    .flatten()
                    .unwrap_or_default()
            })
            .show(ui, |_| ());
        self.plot_rect = Some(response.response.rect);
        self.paint(ui, &response.transform);
        self.hover(&response);
    }

    /// The band of lane `k`: its top and bottom, in points.
    fn band(transform: &PlotTransform, k: usize) -> (f32, f32) {
        let y = -(k as f64);
        let top = transform.position_from_point_y(y + HALF);
        let bottom = transform.position_from_point_y(y - HALF);
        (top.min(bottom), top.max(bottom))
    }

    fn paint(&mut self, ui: &egui::Ui, transform: &PlotTransform) {
        let frame = *transform.frame();
        let painter = ui.painter().with_clip_rect(frame.intersect(ui.clip_rect()));
        self.drawn.clear();
        self.painted.clear();
        for k in 0..self.lanes.lanes.len() {
            self.paint_lane(&painter, transform, k);
        }
        let n = self.lanes.lanes.len();
        if n > 0 && self.total_ms.is_finite() {
            let (top, _) = Self::band(transform, 0);
            let (_, bottom) = Self::band(transform, n - 1);
            let x = transform.position_from_point_x(self.total_ms);
            paint::paint_end(&painter, x, top - 18.0, bottom, self.total_ms);
        }
    }

    /// Paints lane `k`: an attempt that did not commit on the aborted part's ground, its
    /// stretches with their words where they fit, and where it ended (a red mark and the step,
    /// above the lane, never cut at the plot's left edge nor over the back-off's words).
    fn paint_lane(&mut self, painter: &egui::Painter, transform: &PlotTransform, k: usize) {
        let px = |ms: f64| transform.position_from_point_x(ms);
        let font = FontId::proportional(TEXT);
        let lane = &self.lanes.lanes[k];
        let (top, bottom) = Self::band(transform, k);
        if lane.outcome != AttemptOutcome::Committed {
            let ground = Rect::from_x_y_ranges(
                px(lane.start_ms)..=px(lane.end_ms).max(px(lane.start_ms) + 1.0),
                top - 3.0..=bottom + 3.0,
            );
            painter.rect_filled(ground, 2.0, theme::part(Part::Aborted));
        }
        // Where it ended: the words to the mark's left, or to its right near the plot's edge
        // (there without who wounded it: the hover says).
        let mut taken: Option<Rect> = None;
        if let Some(ended) = &lane.ended {
            let x = px(lane.end_ms);
            let fits = |text: &str| {
                let width = painter.layout_no_wrap(text.to_owned(), font.clone(), theme::ERROR);
                x - 4.0 - width.size().x >= painter.clip_rect().left() + 2.0
            };
            let ended = match &lane.ended_short {
                Some(short) if !fits(ended) => short,
                _ => ended,
            };
            painter.line_segment(
                [Pos2::new(x, top - 5.0), Pos2::new(x, bottom + 5.0)],
                Stroke::new(2.5, theme::ERROR),
            );
            let galley = painter.layout_no_wrap(ended.clone(), font.clone(), theme::ERROR);
            let size = galley.size();
            let left = x - 4.0 - size.x;
            let left = if left >= painter.clip_rect().left() + 2.0 {
                left
            } else {
                x + 4.0
            };
            let at = Pos2::new(left, top - 4.0 - size.y);
            taken = Some(Rect::from_min_size(at, size));
            painter.galley(at, galley, theme::ERROR);
            self.painted.push(ended.clone());
        }
        for (j, s) in lane.stretches.iter().enumerate() {
            let x0 = px(s.from_ms);
            let x1 = px(s.to_ms).max(x0 + 1.0);
            let rect = Rect::from_x_y_ranges(x0..=x1, top..=bottom);
            let fill = colour(s.segment);
            let stroke = match s.segment {
                Segment::Ended(_) => Stroke::new(1.5, theme::ERROR),
                Segment::Backoff => Stroke::new(1.0, theme::part(Part::Backoff)),
                // Light, so that a dark part (the commit's) stands out of the ground.
                Segment::Action(_) => Stroke::new(1.0, Color32::from_white_alpha(110)),
            };
            painter.rect(rect, 1.0, fill, stroke, StrokeKind::Inside);
            // Its waits for locks: a band across its middle, from and to where they were.
            let quarter = (bottom - top) / 4.0;
            for &(from, to) in &s.waits {
                let band = Rect::from_x_y_ranges(
                    px(from).max(x0)..=px(to).min(x1).max(px(from).max(x0) + 1.0),
                    top + quarter..=bottom - quarter,
                );
                painter.rect_filled(band, 0.0, LOCK_WAIT);
            }
            self.drawn.push(Drawn {
                lane: k,
                stretch: j,
                x0,
                x1,
                y: (top + bottom) / 2.0,
            });
            let galley = painter.layout_no_wrap(s.label.clone(), font.clone(), ink(fill));
            let size = galley.size();
            if size.x + 8.0 <= x1 - x0 {
                let at = Pos2::new((x0 + x1 - size.x) / 2.0, (top + bottom - size.y) / 2.0);
                painter.galley(at, galley, ink(fill));
                self.painted.push(s.label.clone());
            } else if s.segment == Segment::Backoff {
                // Too narrow to hold its words: above it, after the words of the abort.
                let x = taken.map_or(x0 + 3.0, |r| r.right().max(x0 - 8.0) + 8.0);
                painter.text(
                    Pos2::new(x, top - 4.0),
                    Align2::LEFT_BOTTOM,
                    &s.label,
                    font.clone(),
                    theme::part(Part::Backoff),
                );
                self.painted.push(s.label.clone());
            }
        }
    }

    fn hover(&self, response: &egui_plot::PlotResponse<()>) {
        let Some(pos) = response.response.hover_pos() else {
            return;
        };
        let y = response.transform.value_from_position(pos).y;
        let k = (-y).round();
        if k < 0.0 || (y + k).abs() > 0.45 {
            return;
        }
        let near = |d: &&Drawn| pos.x >= d.x0 - 3.0 && pos.x <= d.x1 + 3.0;
        let Some(d) = self
            .drawn
            .iter()
            .filter(|d| d.lane == k as usize)
            .find(near)
        else {
            return;
        };
        let Some(s) = self
            .lanes
            .lanes
            .get(d.lane)
            .and_then(|l| l.stretches.get(d.stretch))
        else {
            return;
        };
        let text = s.hover.clone();
        response.response.clone().on_hover_ui_at_pointer(|ui| {
            ui.label(text);
        });
    }
}
