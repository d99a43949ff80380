//! The iterations' bars: what each iteration's bar stacks (the parts of one that ended ok, one bar
//! of its whole time for one that failed or was cancelled), the overlap outlined over the decode,
//! warm-ups cut when they stand far above the rest, the outlines of selected and flagged bars, the
//! words written on the bars, and the iteration axis's whole-number marks. The chart around them
//! is the view's.

use std::collections::BTreeSet;

use egui_plot::{Bar, BarChart};

use crate::app::theme;
use crate::part::Part;
use crate::report::{IterationRecord, Status};
use crate::text::ms;

/// A bar's width, in iterations.
pub const BAR_WIDTH: f64 = 0.7;

/// A cancelled iteration's colour: grey, as the legend says, never the error's red.
pub const CANCELLED: egui::Color32 = theme::MUTED;

/// The parts the bars of `records` stack, bottom to top: every part some iteration that ended ok
/// had, in [`Part::ALL`] order (untimed last for a query). A failed or cancelled iteration is one
/// bar of its whole time, drawn and named apart ([`ended_charts`]).
pub fn stacked_parts(records: &[IterationRecord]) -> Vec<Part> {
    let mut had = 0u32;
    for r in records.iter().filter(|r| r.status() == Status::Ok) {
        for (part, _) in r.accounting().parts.iter() {
            had |= 1 << part.index();
        }
    }
    Part::ALL
        .into_iter()
        .filter(|p| had & (1 << p.index()) != 0)
        .collect()
}

/// Where an iteration's overlap is drawn: from the top of its waits (the parts before the decode)
/// up by the overlap, as far as the bar goes; `None` without one.
pub fn overlap_span(r: &IterationRecord) -> Option<(f64, f64)> {
    let a = r.accounting();
    let overlap = a.overlap_ms.filter(|o| *o > 0.0)?;
    let waits: f64 = a
        .parts
        .iter()
        .take_while(|(p, _)| !p.is_client_cpu() && *p != Part::Descheduled && *p != Part::Untimed)
        .map(|(_, ms)| ms)
        .sum();
    let room = (a.parts.sum_ms() - waits).max(0.0);
    Some((waits, overlap.min(room)))
}

/// What marks the bars besides their figures.
#[derive(Clone, Copy)]
pub struct Marks<'a> {
    /// The selected iterations, outlined white.
    pub selection: &'a BTreeSet<u32>,
    /// The flagged iterations, outlined in the warning colour.
    pub flagged: &'a BTreeSet<u32>,
    /// Where warm-ups are cut ([`warmup_clip`]).
    pub clip: Option<f64>,
}

/// The words written on the bars, left to right: a warm-up's ("warm-up", with its figure when it is
/// cut at `clip`) and a cancelled iteration's ("cancelled"), each as (iteration, where its bar's top
/// is drawn, words).
pub fn bar_words(records: &[IterationRecord], clip: Option<f64>) -> Vec<(u32, f64, String)> {
    records
        .iter()
        .filter(|r| r.warmup || r.status() == Status::Cancelled)
        .map(|r| {
            let top = clip
                .filter(|_| r.warmup)
                .map_or(r.total_ms, |c| r.total_ms.min(c));
            let cut = clip.is_some_and(|c| r.warmup && r.total_ms > c);
            let words = match (r.status() == Status::Cancelled, cut) {
                (true, _) => "cancelled".to_owned(),
                (false, true) => format!("warm-up {} (cut)", ms(r.total_ms)),
                (false, false) => "warm-up".to_owned(),
            };
            (r.iteration, top, words)
        })
        .collect()
}

/// One bar chart per part, stacked: each iteration's part in its colour (a failed iteration
/// left to [`ended_charts`]), warm-ups faded, selected and flagged bars outlined.
pub fn stacked_charts(
    stacked: &[Part],
    records: &[IterationRecord],
    marks: &Marks<'_>,
) -> Vec<BarChart> {
    let Marks {
        selection,
        flagged,
        clip,
    } = *marks;
    let parts: Vec<crate::report::Parts> = records.iter().map(|r| r.accounting().parts).collect();
    let mut charts: Vec<BarChart> = Vec::with_capacity(stacked.len() + 1);
    // Each bar's height so far, to cut a warm-up's parts at the clip.
    let mut below = vec![0.0f64; records.len()];
    for &part in stacked {
        // The same bars in every chart, so that each stacks on its own below (by index).
        let bars: Vec<Bar> = records
            .iter()
            .zip(&parts)
            .zip(&mut below)
            .filter(|((r, _), _)| r.status() == Status::Ok)
            .map(|((r, p), below)| {
                let full = p.ms(part);
                let height = match clip.filter(|_| r.warmup) {
                    Some(c) => (*below + full).min(c) - below.min(c),
                    None => full,
                };
                *below += full;
                let mut fill = theme::part(part);
                if r.warmup {
                    fill = fill.gamma_multiply(0.4);
                }
                let stroke = bar_stroke(
                    selection.contains(&r.iteration),
                    flagged.contains(&r.iteration),
                );
                Bar::new(r.iteration as f64, height)
                    .width(BAR_WIDTH)
                    .fill(fill)
                    .stroke(stroke)
                    .name(format!("#{}", r.iteration))
            })
            .collect();
        let refs: Vec<&BarChart> = charts.iter().collect();
        // No text drawn beside the hovered bar (egui_plot draws it to the bar's right, past
        // the window's edge for the last bars): the tooltip below says it all.
        let chart = BarChart::new(part.label(), bars)
            .color(theme::part(part))
            .element_formatter(Box::new(|_, _| String::new()))
            .stack_on(&refs);
        charts.push(chart);
    }
    charts
}

/// The iterations that did not end ok, each one bar of its whole time: a failed one in the
/// error colour, a cancelled one grey and hollow (it was stopped, nothing went wrong),
/// warm-ups faded alike, selected and flagged bars outlined.
pub fn ended_charts(records: &[IterationRecord], marks: &Marks<'_>) -> Vec<BarChart> {
    let Marks {
        selection,
        flagged,
        clip,
    } = *marks;
    let mut charts = Vec::new();
    for (status, name, colour) in [
        (Status::Error, "failed", theme::ERROR),
        (Status::Cancelled, "cancelled", CANCELLED),
    ] {
        let bars: Vec<Bar> = records
            .iter()
            .filter(|r| r.status() == status)
            .map(|r| {
                let height = match clip.filter(|_| r.warmup) {
                    Some(c) => r.total_ms.min(c),
                    None => r.total_ms,
                };
                let mut fill = if status == Status::Cancelled {
                    colour.gamma_multiply(0.25)
                } else {
                    colour
                };
                if r.warmup {
                    fill = fill.gamma_multiply(0.4);
                }
                let selected = selection.contains(&r.iteration);
                let stroke = match status {
                    Status::Cancelled if !selected && !flagged.contains(&r.iteration) => {
                        egui::Stroke::new(1.5, colour)
                    }
                    _ => bar_stroke(selected, flagged.contains(&r.iteration)),
                };
                Bar::new(f64::from(r.iteration), height)
                    .width(BAR_WIDTH)
                    .fill(fill)
                    .stroke(stroke)
                    .name(format!("#{}", r.iteration))
            })
            .collect();
        if !bars.is_empty() {
            charts.push(
                BarChart::new(name, bars)
                    .color(colour)
                    .element_formatter(Box::new(|_, _| String::new())),
            );
        }
    }
    charts
}

/// The iteration streaming now, `iteration`, as a grey bar of its milliseconds so far.
pub fn streaming_chart(iteration: u32, so_far_ms: f64) -> BarChart {
    let bar = Bar::new(f64::from(iteration), so_far_ms)
        .width(BAR_WIDTH)
        .fill(theme::MUTED.gamma_multiply(0.35))
        .stroke(egui::Stroke::new(1.0, theme::MUTED));
    BarChart::new("streaming", vec![bar])
        .color(theme::MUTED)
        .element_formatter(Box::new(|_, _| String::new()))
}

/// The overlaps of `records`, outlined over their decode: drawn, never stacked or added.
pub fn overlap_chart(records: &[IterationRecord], clip: Option<f64>) -> Option<BarChart> {
    let overlaps: Vec<Bar> = records
        .iter()
        .filter(|r| r.status() == Status::Ok)
        .filter_map(|r| {
            let (base, height) = overlap_span(r)?;
            let height = match clip.filter(|_| r.warmup) {
                Some(c) if base >= c => return None,
                Some(c) => height.min(c - base),
                None => height,
            };
            Some(
                Bar::new(r.iteration as f64, height)
                    .base_offset(base)
                    .width(BAR_WIDTH * 0.55)
                    .fill(theme::OVERLAP.gamma_multiply(0.25))
                    .stroke(egui::Stroke::new(1.5, theme::OVERLAP)),
            )
        })
        .collect();
    (!overlaps.is_empty()).then(|| {
        BarChart::new("overlap", overlaps)
            .color(theme::OVERLAP)
            .element_formatter(Box::new(|_, _| String::new()))
    })
}

/// Where the chart cuts warm-ups: a little above the tallest timed iteration, when a warm-up is
/// more than 1.5 times that (a cold start would otherwise set the scale and leave the timed bars
/// a fifth of the height); `None` when no warm-up stands that far out, or none is timed.
pub fn warmup_clip(records: &[IterationRecord]) -> Option<f64> {
    let timed = records
        .iter()
        .filter(|r| !r.warmup)
        .map(|r| r.total_ms)
        .fold(0.0, f64::max);
    let warm = records
        .iter()
        .filter(|r| r.warmup)
        .map(|r| r.total_ms)
        .fold(0.0, f64::max);
    (timed > 0.0 && warm > timed * 1.5).then_some(timed * 1.15)
}

/// A bar's outline: white when selected, the warning colour when flagged, else a hairline in the
/// plot's own dark that parts each stacked segment from the next, a cue besides hue (a thin
/// outline in the bar's own colour drew a rim round every bar, which read as selected).
fn bar_stroke(selected: bool, flagged: bool) -> egui::Stroke {
    if selected {
        egui::Stroke::new(2.0, theme::SELECTED)
    } else if flagged {
        egui::Stroke::new(1.5, theme::WARN)
    } else {
        egui::Stroke::new(1.0, theme::SEPARATOR)
    }
}

/// The steps the iteration axis is marked by, finest first, each dividing the next.
const STEPS: [f64; 12] = [
    1.0, 2.0, 10.0, 20.0, 100.0, 200.0, 1e3, 2e3, 1e4, 2e4, 1e5, 2e5,
];

/// The iteration axis's marks: whole iterations from 0, at the finest step of [`STEPS`] the room
/// allows, never a fraction or a negative iteration. Each mark carries the coarsest step it lies
/// on, so that the plot writes the numbers of the coarser marks where the finer ones are too close
/// together to read (0, 2, 4... or 0, 10, 20...).
pub fn iteration_marks(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (from, to) = input.bounds;
    let finest = STEPS
        .into_iter()
        .find(|s| *s >= input.base_step_size)
        .unwrap_or(STEPS[STEPS.len() - 1]);
    let first = (from.max(0.0) / finest).ceil();
    let last = (to / finest).floor();
    if !last.is_finite() || last < first {
        return Vec::new();
    }
    (first as u64..=last as u64)
        .map(|k| {
            let value = k as f64 * finest;
            let step_size = STEPS
                .into_iter()
                .rev()
                .find(|s| value % s == 0.0)
                .unwrap_or(finest);
            egui_plot::GridMark { value, step_size }
        })
        .collect()
}

/// An iteration axis mark's words: its number when it is a whole iteration, else none.
pub fn iteration_tick(value: f64) -> String {
    if value >= 0.0 && (value - value.round()).abs() < 1e-6 {
        format!("{}", value.round() as u64)
    } else {
        String::new()
    }
}

/// The iteration whose bar's column the pointer is over, if any.
pub fn hovered_bar<'r>(
    plot: &egui_plot::PlotResponse<()>,
    records: &'r [IterationRecord],
) -> Option<&'r IterationRecord> {
    let pos = plot.response.hover_pos()?;
    let x = plot.transform.value_from_position(pos).x;
    records
        .iter()
        .find(|r| (x - f64::from(r.iteration)).abs() <= BAR_WIDTH / 2.0)
}
