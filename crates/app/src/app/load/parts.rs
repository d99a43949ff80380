//! The Load tab's parts per step: one stacked bar per step, side by side, each segment a part's
//! mean per request that ended ok, as the step's figures hold them (`StepResult::parts`, the
//! same figures the command line's CSV and the HTML page show), in the parts' own colours and
//! order (`crate::part`, as the Iterations tab stacks them). Drawn as shares of each step's mean
//! by default, every bar the same height: in milliseconds a step at 15 ms lay flat under one at
//! 3 s, and how its time divided could not be seen (the curve beside it says how long). Whether
//! latency under load is the server's, the network's or the client's decode is seen at a glance;
//! hovering a segment names its part and figure in ms, the step's other parts beneath.

use egui_plot::{
    AxisHints, Bar, BarChart, GridInput, GridMark, Plot, PlotPoint, PlotResponse, PlotTransform,
};

use crate::app::theme;
use crate::load::{Model, StepResult};
use crate::part::Part;
use crate::text::ms;

/// A bar's width, as a share of its step's slot. The steps stand side by side, one slot each, in
/// the order they ran, their levels under them: on an axis of the levels a doubling ramp
/// (50 ... 6400) squeezed its low steps into bars two pixels wide at the left edge.
const BAR_SHARE: f64 = 0.6;

/// One step's bar: its level, and its parts' means bottom to top.
struct StepBar {
    /// The level as the axis writes it under the bar (`6400`).
    short: String,
    name: String,
    parts: Vec<(Part, f64)>,
    /// Of the server's part, its wait in its queue, when the server reported one.
    queue: Option<f64>,
}

impl StepBar {
    /// The bar's words on hover: the segment under the pointer first, when there is one, then
    /// every part of the step (`label figure`, a line each).
    fn tooltip(&self, hovered: Option<Part>) -> String {
        let mut text = String::new();
        if let Some(part) = hovered
            && let Some((_, value)) = self.parts.iter().find(|(p, _)| *p == part)
        {
            text.push_str(&format!(
                "{} · {}: {}\n",
                self.name,
                part.label(),
                ms(*value)
            ));
        }
        text.push_str(&format!(
            "at {}, the mean per request that ended ok:",
            self.name
        ));
        for (part, value) in &self.parts {
            text.push_str(&format!("\n{} {}", part.label(), ms(*value)));
            if *part == Part::Server
                && let Some(queue) = self.queue
            {
                text.push_str(&format!(
                    "\n  of which in the server's queue: {}",
                    ms(queue)
                ));
            }
        }
        text.push_str(&format!(
            "\nthe parts add up to the mean from the actual start: {}",
            ms(self.parts.iter().map(|(_, v)| v).sum())
        ));
        text
    }
}

/// The stacked bars of the steps that ended, made once per step; where they were drawn.
#[derive(Default)]
pub struct LoadParts {
    model: Option<Model>,
    bars: Vec<StepBar>,
    /// The step and the part the pointer was over last frame.
    hovered: Option<(usize, Option<Part>)>,
    transform: Option<PlotTransform>,
    /// Bars drawn in the last frame.
    drawn: usize,
    /// Segments in milliseconds (each a part's mean), not as shares of the step's mean.
    pub in_ms: bool,
}

impl LoadParts {
    /// No step yet, for a run of `model`.
    pub fn new(model: Model) -> Self {
        LoadParts {
            model: Some(model),
            ..LoadParts::default()
        }
    }

    /// Adds a step that ended: its parts as its figures hold them, in [`Part::ALL`] order.
    pub fn push(&mut self, step: &StepResult) {
        let parts = Part::ALL
            .into_iter()
            .filter_map(|p| Some((p, *step.parts.get(p.key())?)))
            .filter(|(_, v)| v.is_finite())
            .collect();
        self.bars.push(StepBar {
            short: crate::text::trimmed(step.level().value(), 1),
            name: step.level().describe(),
            parts,
            queue: step.server_queue_ms.filter(|v| v.is_finite()),
        });
    }

    /// The parts some step had, bottom to top.
    fn stacked(&self) -> Vec<Part> {
        Part::ALL
            .into_iter()
            .filter(|p| {
                self.bars
                    .iter()
                    .any(|b| b.parts.iter().any(|(q, _)| q == p))
            })
            .collect()
    }

    /// Bars drawn in the last frame.
    pub fn drawn(&self) -> usize {
        self.drawn
    }

    /// The step and part the pointer was over in the last frame.
    pub fn hovered(&self) -> Option<(usize, Option<Part>)> {
        self.hovered
    }

    /// A bar's segments as drawn, bottom to top: each part's mean in ms, or its percentage of
    /// the step's mean (the segments then add up to 100).
    pub fn segments(&self, index: usize) -> Vec<(Part, f64)> {
        let Some(bar) = self.bars.get(index) else {
            return Vec::new();
        };
        let total: f64 = bar.parts.iter().map(|(_, v)| v).sum();
        let scale = match (self.in_ms, total > 0.0) {
            (false, true) => 100.0 / total,
            _ => 1.0,
        };
        bar.parts.iter().map(|&(p, v)| (p, v * scale)).collect()
    }

    /// Where the middle of step `index`'s `part` segment was drawn in the last frame.
    pub fn segment_position(&self, index: usize, part: Part) -> Option<egui::Pos2> {
        let mut below = 0.0;
        for (p, value) in &self.segments(index) {
            if *p == part {
                let point = PlotPoint::new(index as f64, below + value / 2.0);
                return Some(self.transform.as_ref()?.position_from_point(&point));
            }
            below += value;
        }
        None
    }

    /// The chart, `height` tall, the parts' legend above it.
    pub fn plot(&mut self, ui: &mut egui::Ui, height: f32) {
        ui.horizontal_wrapped(|ui| {
            ui.strong("Where each step's time went").on_hover_text(
                "Each step's parts, their means per request that ended ok, stacked as in \
                 Iterations; they add up to the mean latency from the actual start, drawn as \
                 shares of it unless in ms",
            );
            ui.checkbox(&mut self.in_ms, "in ms").on_hover_text(
                "Each part's mean in milliseconds, the bars as tall as the steps' means; \
                 otherwise each step's parts as shares of its mean, every bar the same height",
            );
        });
        let stacked = self.stacked();
        theme::legend(ui, stacked.iter().map(|p| (p.label(), theme::part(*p))));
        let hovered_step = self.hovered.map(|(i, _)| i);
        // Each bar's segments once a frame, not once per part and bar.
        let segments: Vec<Vec<(Part, f64)>> =
            (0..self.bars.len()).map(|i| self.segments(i)).collect();
        let mut charts: Vec<BarChart> = Vec::with_capacity(stacked.len());
        for &part in &stacked {
            let bars = self
                .bars
                .iter()
                .zip(&segments)
                .enumerate()
                .map(|(i, (b, drawn))| {
                    let value = drawn
                        .iter()
                        .find(|(p, _)| *p == part)
                        .map_or(0.0, |(_, v)| *v);
                    let stroke = if hovered_step == Some(i) {
                        egui::Stroke::new(1.5, theme::SELECTED)
                    } else {
                        egui::Stroke::new(1.0, theme::SEPARATOR)
                    };
                    Bar::new(i as f64, value)
                        .width(BAR_SHARE)
                        .fill(theme::part(part))
                        .stroke(stroke)
                        .name(&b.name)
                })
                .collect();
            let refs: Vec<&BarChart> = charts.iter().collect();
            // No text beside the hovered bar (egui_plot's goes past the plot's edge): the
            // tooltip says it.
            let chart = BarChart::new(part.label(), bars)
                .color(theme::part(part))
                .element_formatter(Box::new(|_, _| String::new()))
                .stack_on(&refs);
            charts.push(chart);
        }
        let x_label = match self.model {
            Some(Model::Closed) => "clients (concurrency)",
            _ => "requests a second asked",
        };
        let in_ms = self.in_ms;
        let (y_label, top) = if in_ms {
            ("mean per request", 0.0)
        } else {
            ("share of the step's mean", 100.0)
        };
        let bars = &self.bars;
        let last = bars.len().max(1) as f64 - 0.5;
        let levels = AxisHints::new_x()
            .label(x_label)
            .formatter(move |mark, _| level_under(bars, mark.value))
            // A slot's width apart, as narrow as a level's digits: every step's level is written.
            .label_spacing(28.0..=36.0);
        let response = Plot::new("load-parts")
            .height(height)
            .include_y(0.0)
            .include_y(top)
            .include_x(-0.5)
            .include_x(last)
            .allow_scroll(false)
            .custom_x_axes(vec![levels])
            .x_grid_spacer(slots)
            .y_axis_label(y_label)
            .y_axis_formatter(move |mark, _| match in_ms {
                true => ms(mark.value),
                false => format!("{:.0}%", mark.value),
            })
            .show(ui, |plot| {
                for chart in charts {
                    plot.bar_chart(chart);
                }
            });
        self.drawn = self.bars.len();
        self.hovered = self.hit(&response);
        self.transform = Some(response.transform);
        if let Some((index, part)) = self.hovered
            && let Some(bar) = self.bars.get(index)
        {
            let text = bar.tooltip(part);
            response.response.on_hover_ui_at_pointer(|ui| {
                ui.label(text);
            });
        }
    }

    /// The step whose bar the pointer is over, and the part under it (none above the bar).
    fn hit(&self, plot: &PlotResponse<()>) -> Option<(usize, Option<Part>)> {
        let pos = plot.response.hover_pos()?;
        let at = plot.transform.value_from_position(pos);
        let slot = at.x.round();
        if slot < 0.0 || slot >= self.bars.len() as f64 || (at.x - slot).abs() > BAR_SHARE / 2.0 {
            return None;
        }
        let index = slot as usize;
        let mut below = 0.0;
        let part = self.segments(index).into_iter().find_map(|(p, value)| {
            let hit = at.y >= below && at.y < below + value;
            below += value;
            hit.then_some(p)
        });
        Some((index, part))
    }
}

/// The mark under slot `value`: its step's level, nothing between slots.
fn level_under(bars: &[StepBar], value: f64) -> String {
    let slot = value.round();
    match (value - slot).abs() < 1e-6 && slot >= 0.0 {
        true => bars
            .get(slot as usize)
            .map(|b| b.short.clone())
            .unwrap_or_default(),
        false => String::new(),
    }
}

/// A mark at each step's slot.
fn slots(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let first = lo.ceil().max(0.0) as i64;
    let last = hi.floor() as i64;
    (first..=last)
        .map(|i| GridMark {
            value: i as f64,
            step_size: 1.0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::load::step::{StepCpu, StepTally};
    use crate::load::{Ended, StepLevel};

    fn step(rate: f64, server_ms: f64, network_ms: f64) -> StepResult {
        let mut tally = StepTally::new(StepLevel::Rate(rate));
        tally.ok(&Ended::default(), &Default::default());
        let mut step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        // A key no part has (a newer report's) is left out, not drawn.
        step.parts = [
            ("server", server_ms),
            ("network", network_ms),
            ("warp", 1.0),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        step
    }

    #[test]
    fn each_step_is_a_bar_of_its_own_figures_in_the_parts_order() {
        let mut chart = LoadParts::new(Model::Open);
        let (a, b) = (step(50.0, 3.0, 1.5), step(200.0, 9.0, 0.25));
        chart.push(&a);
        chart.push(&b);
        assert_eq!(chart.bars.len(), 2);
        assert_eq!(chart.stacked(), [Part::Server, Part::Network]);
        for (bar, step) in chart.bars.iter().zip([&a, &b]) {
            for (part, value) in &bar.parts {
                assert_eq!(*value, step.parts[part.key()], "{part:?}");
            }
        }
        // Each step in a slot of its own, its level written under it, nothing between.
        let shorts: Vec<&str> = chart.bars.iter().map(|b| b.short.as_str()).collect();
        assert_eq!(shorts, ["50", "200"]);
        assert_eq!(level_under(&chart.bars, 1.0), "200");
        assert_eq!(level_under(&chart.bars, 0.5), "");
        assert_eq!(level_under(&chart.bars, 2.0), "");
        let words = chart.bars[0].tooltip(Some(Part::Network));
        let first = words.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            format!("50 req/s · network: {}", ms(a.parts["network"]))
        );
        assert!(words.contains(&format!("\nserver {}\n", ms(a.parts["server"]))));
        // The server's queue, where it reported one, under its part, not a part of its own.
        let mut queued = step(300.0, 900.0, 0.5);
        queued.server_queue_ms = Some(850.0);
        chart.push(&queued);
        let words = chart.bars[2].tooltip(None);
        assert!(
            words.contains(&format!(
                "\nserver {}\n  of which in the server's queue: {}",
                ms(900.0),
                ms(850.0)
            )),
            "{words}"
        );
        assert_eq!(chart.stacked(), [Part::Server, Part::Network]);
    }

    #[test]
    fn bars_are_shares_of_each_step_s_mean_unless_in_ms() {
        let mut chart = LoadParts::new(Model::Open);
        chart.push(&step(50.0, 3.0, 1.0));
        chart.push(&step(400.0, 2_700.0, 300.0));
        for index in 0..2 {
            let total: f64 = chart.segments(index).iter().map(|(_, v)| v).sum();
            assert!((total - 100.0).abs() < 1e-9, "step {index}: {total}");
        }
        let close = |got: Vec<(Part, f64)>, want: [(Part, f64); 2]| {
            got.len() == 2
                && got
                    .iter()
                    .zip(want)
                    .all(|(g, w)| g.0 == w.0 && (g.1 - w.1).abs() < 1e-9)
        };
        assert!(close(
            chart.segments(0),
            [(Part::Server, 75.0), (Part::Network, 25.0)]
        ));
        assert!(close(
            chart.segments(1),
            [(Part::Server, 90.0), (Part::Network, 10.0)]
        ));
        chart.in_ms = true;
        assert_eq!(
            chart.segments(0),
            [(Part::Server, 3.0), (Part::Network, 1.0)]
        );
        assert_eq!(
            chart.segments(1),
            [(Part::Server, 2_700.0), (Part::Network, 300.0)]
        );
        assert!(chart.segments(2).is_empty());
    }
}
