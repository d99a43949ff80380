//! The Load tab's latency by percentile, the way HdrHistogram plots it: the x axis is
//! `1 / (1 - p)` on a log scale (50%, 90%, 99%, 99.9%... evenly apart, each a tenfold rarer
//! tail), the latency on a log scale too (the light steps' milliseconds stand apart under the
//! heavy steps' seconds, as on the curve), one line per step coloured from the lightest load to
//! the heaviest, from the intended start (corrected for coordinated omission); the same from the
//! actual start dashed for the last step, or for every step on a toggle. Each line is read off the step's own encoded
//! histogram (`load::histogram::Latencies`) once, when the step ends, never per frame.

use egui::Color32;
use egui_plot::{GridInput, GridMark, HoverPosition, Line, LineStyle, Plot, PlotPoint, PlotPoints};

use super::log_axis;
use crate::app::theme;
use crate::load::{HistogramError, Latencies, StepResult};
use crate::text::ms;

/// The rarest tail drawn: 99.9999% (x = log10 of 10^6).
const MOST_NINES: f64 = 6.0;
/// Points per tenfold of `1 / (1 - p)`.
const PER_DECADE: u32 = 20;

/// `x` (log10 of `1 / (1 - p)`) as a percentile for people: `50%`, `99.9%`, `99.99%`.
pub fn percentile_words(x: f64) -> String {
    let p = 100.0 * (1.0 - 10f64.powf(-x));
    // As many decimals as the nines need: 99.9% has one, 99.99% two.
    let decimals = (x.ceil() - 2.0).clamp(0.0, 8.0) as usize;
    format!("{p:.decimals$}%")
}

/// A series of latency (ms) by percentile from an encoded histogram: a point every
/// 1/[`PER_DECADE`] of a tenfold from p = 0 (the fastest) up to where the count still resolves
/// the tail (`1 / (1 - p)` at most the count, and at most [`MOST_NINES`] nines), ending at the
/// largest latency; empty when nothing was recorded.
pub fn percentile_series(encoded: &str) -> Result<Vec<PlotPoint>, HistogramError> {
    let h = Latencies::decode(encoded)?;
    let n = h.count();
    if n == 0 {
        return Ok(Vec::new());
    }
    let top = (n as f64).log10().min(MOST_NINES);
    let last = (top * f64::from(PER_DECADE)).floor() as u32;
    let mut points: Vec<PlotPoint> = (0..=last)
        .filter_map(|k| {
            let x = f64::from(k) / f64::from(PER_DECADE);
            let y = h.quantile_ms(1.0 - 10f64.powf(-x))?;
            Some(PlotPoint::new(x, y))
        })
        .collect();
    // The largest where the count reaches it: HdrHistogram's plots end at the maximum.
    if (n as f64).log10() <= MOST_NINES
        && let Some(max) = h.max_ms()
    {
        points.push(PlotPoint::new(top, max));
    }
    Ok(points)
}

/// One step's lines.
struct StepLines {
    /// The step's level in words (the line's name).
    name: String,
    colour: Color32,
    corrected: Vec<PlotPoint>,
    uncorrected: Vec<PlotPoint>,
}

/// Where the steps' levels lie, so that a step's colour says how heavy its load was among the
/// run's (the plan's levels, known before any step ends: colours never shift as steps arrive).
/// The levels are spread by their logarithm: a doubling ramp (50, 100, ... 6400) that stops at
/// its knee after a few steps still shows those steps in colours apart.
#[derive(Debug, Clone, Copy, Default)]
pub struct LevelScale {
    lo: f64,
    hi: f64,
}

impl LevelScale {
    /// The scale of `levels` (values: rates or clients).
    pub fn of(levels: impl IntoIterator<Item = f64>) -> Self {
        let (lo, hi) = levels
            .into_iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        LevelScale { lo, hi }
    }

    /// The colour of a step at `level`: the lightest load's at the lowest, the heaviest's at the
    /// highest.
    pub fn colour(&self, level: f64) -> Color32 {
        let (lo, hi, at) = if self.lo > 0.0 && level > 0.0 {
            (self.lo.ln(), self.hi.ln(), level.ln())
        } else {
            (self.lo, self.hi, level)
        };
        let span = hi - lo;
        let t = if span > 0.0 {
            ((at - lo) / span).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let [r, g, b] = crate::part::level_colour(t);
        Color32::from_rgb(r, g, b)
    }
}

/// The percentile plot's lines, a pair per step, made once when the step ends.
#[derive(Default)]
pub struct LoadPercentiles {
    scale: LevelScale,
    steps: Vec<StepLines>,
    /// Steps whose histogram did not decode (a report written elsewhere): said under the plot.
    unreadable: Vec<String>,
    /// Every step's line from the actual start, not only the last one's.
    pub every_actual: bool,
    /// Lines drawn in the last frame (corrected, uncorrected).
    drawn: (usize, usize),
    /// The lowest and highest latency on any line, in ms.
    latency_range: Option<(f64, f64)>,
}

impl LoadPercentiles {
    /// No step yet; colours along `scale`.
    pub fn new(scale: LevelScale) -> Self {
        LoadPercentiles {
            scale,
            ..LoadPercentiles::default()
        }
    }

    /// Adds a step that ended: its two histograms read once.
    pub fn push(&mut self, step: &StepResult) {
        let name = step.level().describe();
        let read = percentile_series(&step.histogram).and_then(|corrected| {
            percentile_series(&step.histogram_uncorrected)
                .map(|uncorrected| (corrected, uncorrected))
        });
        match read {
            Ok((corrected, uncorrected)) => {
                for point in corrected.iter().chain(&uncorrected) {
                    log_axis::widen(&mut self.latency_range, point.y);
                }
                self.steps.push(StepLines {
                    colour: self.scale.colour(step.level().value()),
                    name,
                    corrected: on_log_axis(corrected),
                    uncorrected: on_log_axis(uncorrected),
                })
            }
            Err(e) => self.unreadable.push(format!("{name}: {e}")),
        }
    }

    /// Each step's line from the intended start, as drawn: its name and points (x as drawn, y
    /// the latency in milliseconds).
    pub fn lines(&self) -> impl Iterator<Item = (&str, Vec<PlotPoint>)> {
        self.steps.iter().map(|s| {
            let points = s.corrected.iter();
            let in_ms = points.map(|p| PlotPoint::new(p.x, log_axis::ms(p.y)));
            (s.name.as_str(), in_ms.collect())
        })
    }

    /// The lines drawn in the last frame: from the intended start, and from the actual start.
    pub fn drawn(&self) -> (usize, usize) {
        self.drawn
    }

    /// The plot, `height` tall, its legend above it and the toggle.
    pub fn plot(&mut self, ui: &mut egui::Ui, height: f32) {
        ui.horizontal_wrapped(|ui| {
            ui.strong("Latency by percentile").on_hover_text(
                "Each step's latencies from its histogram, from the intended start (corrected \
                 for coordinated omission); the x axis spreads the tail: 90%, 99%, 99.9% are \
                 evenly apart",
            );
            ui.checkbox(&mut self.every_actual, "every step from the actual start")
                .on_hover_text(
                    "Dashed: from the actual start (not corrected), what a generator that waits \
                     for a free client reports; otherwise the last step's only",
                );
        });
        theme::legend(
            ui,
            self.steps
                .iter()
                .map(|s| (s.name.as_str(), s.colour))
                .chain([("dashed: from the actual start", theme::MUTED)]),
        );
        let top = self
            .steps
            .iter()
            .flat_map(|s| s.corrected.last().into_iter().chain(s.uncorrected.last()))
            .map(|p| p.x)
            .fold(1.0, f64::max);
        let (bottom, ceiling) = self
            .latency_range
            .map_or((0.0, 1.0), |(lo, hi)| log_axis::span(lo, hi));
        let last = self.steps.len().saturating_sub(1);
        let mut drawn = (0, 0);
        Plot::new("load-percentiles")
            .height(height)
            .include_x(0.0)
            .include_x(top)
            .include_y(bottom)
            .include_y(ceiling)
            .allow_scroll(false)
            .x_axis_label("percentile (log scale of 1 / (1 - p))")
            .y_axis_label("latency (log scale)")
            .y_grid_spacer(log_axis::marks)
            .y_axis_formatter(|mark, _| log_axis::words(mark.value))
            .x_grid_spacer(percentile_marks)
            .x_axis_formatter(|mark, _| percentile_words(mark.value))
            .label_formatter(|pos| match pos {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => Some(format!(
                    "{plot_name}\n{} at {}",
                    ms(log_axis::ms(position.y)),
                    percentile_words(position.x)
                )),
                HoverPosition::Elsewhere { .. } => None,
            })
            .show(ui, |plot| {
                for (i, step) in self.steps.iter().enumerate() {
                    if self.every_actual || i == last {
                        plot.line(
                            Line::new(
                                format!("{} from the actual start", step.name),
                                PlotPoints::Borrowed(&step.uncorrected),
                            )
                            .color(step.colour)
                            .style(LineStyle::dashed_dense())
                            .width(1.5),
                        );
                        drawn.1 += 1;
                    }
                    plot.line(
                        Line::new(step.name.as_str(), PlotPoints::Borrowed(&step.corrected))
                            .color(step.colour)
                            .width(2.0),
                    );
                    drawn.0 += 1;
                }
            });
        self.drawn = drawn;
        for why in &self.unreadable {
            ui.colored_label(theme::WARN, format!("no percentiles for {why}"));
        }
    }
}

/// A series read off a histogram (latency in ms) as drawn: its y the latency's log.
fn on_log_axis(points: Vec<PlotPoint>) -> Vec<PlotPoint> {
    let drawn = points.into_iter();
    drawn
        .map(|p| PlotPoint::new(p.x, log_axis::y(p.y)))
        .collect()
}

/// The x axis's marks: 0%, 50%, then every tenfold rarer tail (90%, 99%, 99.9%...) in view.
fn percentile_marks(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let whole = (0..=12).map(f64::from).map(|value| GridMark {
        value,
        step_size: 1.0,
    });
    let half = GridMark {
        value: 2f64.log10(),
        step_size: 0.3,
    };
    whole
        .chain([half])
        .filter(|m| m.value >= lo && m.value <= hi)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn encoded(latencies_ms: impl IntoIterator<Item = u64>) -> String {
        let mut h = Latencies::new();
        for ms in latencies_ms {
            h.record(Duration::from_millis(ms));
        }
        h.encode()
    }

    #[test]
    fn marks_read_as_the_percentiles_hdr_plots_name() {
        let words: Vec<String> = [0.0, 2f64.log10(), 1.0, 2.0, 3.0, 4.0]
            .into_iter()
            .map(percentile_words)
            .collect();
        assert_eq!(words, ["0%", "50%", "90%", "99%", "99.9%", "99.99%"]);
    }

    #[test]
    fn a_series_runs_from_the_fastest_to_the_largest_through_the_histogram_s_own_percentiles() {
        // 1..=1000 ms: p50 near 500 ms, p99 near 990, the largest 1000.
        let text = encoded(1..=1000);
        let h = Latencies::decode(&text).expect("its own encoding");
        let series = percentile_series(&text).expect("decodes");
        let first = series.first().expect("points");
        assert_eq!((first.x, first.y), (0.0, h.quantile_ms(0.0).expect("some")));
        let last = series.last().expect("points");
        assert!((last.x - 3.0).abs() < 1e-9, "ends at 1 / (1 - p) = count");
        assert_eq!(Some(last.y), h.max_ms());
        // The point at 99% is the figure a step's p99 holds: the same histogram, the same call.
        let at_99 = series
            .iter()
            .find(|p| (p.x - 2.0).abs() < 1e-9)
            .expect("a point at 99%");
        assert_eq!(Some(at_99.y), h.quantile_ms(0.99));
        assert!(
            series
                .windows(2)
                .all(|w| w[0].x <= w[1].x && w[0].y <= w[1].y)
        );
    }

    #[test]
    fn an_empty_step_has_no_line_and_what_is_no_histogram_is_refused() {
        assert_eq!(
            percentile_series(&encoded(std::iter::empty())),
            Ok(Vec::new())
        );
        assert!(percentile_series("not base64!").is_err());
        // One request: a single point, at 0%.
        let one = percentile_series(&encoded([7])).expect("decodes");
        assert_eq!(one.len(), 2, "the fastest and the largest: {one:?}");
        assert!(one.iter().all(|p| p.x == 0.0));
    }

    #[test]
    fn colours_run_from_the_lowest_level_to_the_highest_whatever_their_order() {
        let scale = LevelScale::of([200.0, 50.0, 100.0]);
        let [r, g, b] = crate::part::LEVEL_RAMP[0];
        assert_eq!(scale.colour(50.0), Color32::from_rgb(r, g, b));
        let [r, g, b] = crate::part::LEVEL_RAMP[2];
        assert_eq!(scale.colour(200.0), Color32::from_rgb(r, g, b));
        // A doubling ramp to 6400 that stopped at 400: its four steps in four colours.
        let ramp = LevelScale::of([50.0, 100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0, 6400.0]);
        let first: Vec<Color32> = [50.0, 100.0, 200.0, 400.0].map(|l| ramp.colour(l)).to_vec();
        assert!(first.windows(2).all(|w| w[0] != w[1]), "{first:?}");
        // One level: the lightest load's colour.
        let [r, g, b] = crate::part::LEVEL_RAMP[0];
        assert_eq!(
            LevelScale::of([5.0]).colour(5.0),
            Color32::from_rgb(r, g, b)
        );
    }
}
