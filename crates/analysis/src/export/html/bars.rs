//! The stacked bars of a run: one bar per timed iteration (or per group of consecutive ones past
//! [`MAX_BARS`]), its parts stacked in [`Part::ALL`] order, drawn as inline SVG. Hovering a bar
//! shows its figures (an SVG `<title>`, no script needed).

use std::fmt::Write as _;

use super::markup::{esc, hex, num};
use crate::part::Part;
use crate::report::RunReport;
use crate::text::ms;

/// Bars drawn at most per run; past this, consecutive iterations share a bar (their means).
pub const MAX_BARS: usize = 400;

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 240.0;
const LEFT: f64 = 64.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 8.0;

/// One bar: the iterations it stands for and the mean of each of their parts.
struct Bar {
    first: u32,
    last: u32,
    count: usize,
    parts: Vec<(Part, f64)>,
}

impl Bar {
    fn total(&self) -> f64 {
        self.parts.iter().map(|(_, v)| v).sum()
    }

    fn tooltip(&self) -> String {
        let total = self.total();
        let mut text = if self.count == 1 {
            format!("#{}: total {}", self.first, ms(total))
        } else {
            format!(
                "#{}–#{} ({} iterations), their means: total {}",
                self.first,
                self.last,
                self.count,
                ms(total)
            )
        };
        for (part, v) in self.parts.iter().rev().filter(|(_, v)| *v > 0.0) {
            let share = if total > 0.0 { v / total * 100.0 } else { 0.0 };
            let _ = write!(text, "\n{} {} ({share:.0}%)", part.label(), ms(*v));
        }
        text
    }
}

/// The bars of `report`'s timed iterations, grouped when there are more than [`MAX_BARS`].
fn bars(report: &RunReport) -> Vec<Bar> {
    let timed: Vec<_> = report
        .timed()
        .filter(|r| r.total_ms.is_finite())
        .map(|r| (r.iteration, r.accounting().parts))
        .collect();
    let per_bar = timed.len().div_ceil(MAX_BARS).max(1);
    timed
        .chunks(per_bar)
        .map(|group| {
            let n = group.len() as f64;
            Bar {
                first: group[0].0,
                last: group[group.len() - 1].0,
                count: group.len(),
                parts: Part::ALL
                    .into_iter()
                    .map(|p| (p, group.iter().map(|(_, a)| a.ms(p)).sum::<f64>() / n))
                    .filter(|(_, v)| v.is_finite() && *v > 0.0)
                    .collect(),
            }
        })
        .collect()
}

/// A round number at or above `x` for the top of an axis (1, 2 or 5 times a power of ten).
pub fn nice_ceiling(x: f64) -> f64 {
    if !x.is_finite() || x <= 0.0 {
        return 1.0;
    }
    let power = 10f64.powf(x.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&c| c >= x)
        .unwrap_or(10.0 * power)
}

/// The bars as an SVG figure with a y axis in milliseconds, and a sentence on how they were
/// grouped when they were; empty markup for a run without a timed iteration.
pub fn stacked_bars(report: &RunReport) -> String {
    let bars = bars(report);
    if bars.is_empty() {
        return String::new();
    }
    let top = nice_ceiling(bars.iter().map(Bar::total).fold(0.0, f64::max));
    let plot_w = WIDTH - LEFT - 8.0;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / bars.len() as f64;
    let gap = if slot > 4.0 { slot * 0.2 } else { 0.0 };
    let mut svg = format!(
        "<svg class=\"bars\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"each iteration's parts, stacked\">"
    );
    for i in 0..=4 {
        let v = top * f64::from(i) / 4.0;
        let y = TOP + plot_h - plot_h * f64::from(i) / 4.0;
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\"/>\
             <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            num(WIDTH - 8.0),
            num(LEFT - 6.0),
            num(y + 4.0),
            esc(&ms(v))
        );
    }
    for (i, bar) in bars.iter().enumerate() {
        let x = LEFT + slot * i as f64 + gap / 2.0;
        let _ = write!(svg, "<g><title>{}</title>", esc(&bar.tooltip()));
        let mut y = TOP + plot_h;
        for (part, v) in &bar.parts {
            let h = plot_h * v / top;
            y -= h;
            let _ = write!(
                svg,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                num(x),
                num(y),
                num((slot - gap).max(0.5)),
                num(h),
                hex(part.colour())
            );
        }
        svg.push_str("</g>");
    }
    let (first, last) = (bars[0].first, bars[bars.len() - 1].last);
    let _ = write!(
        svg,
        "<text class=\"axis\" x=\"{LEFT}\" y=\"{}\">#{first}</text>\
         <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">#{last}</text></svg>",
        num(HEIGHT - 6.0),
        num(WIDTH - 8.0),
        num(HEIGHT - 6.0)
    );
    let grouped = bars.iter().any(|b| b.count > 1);
    if grouped {
        let _ = write!(
            svg,
            "<p class=\"note\">{} iterations drawn as {} bars of up to {} consecutive iterations \
             each (their means); every iteration is in the table below.</p>",
            bars.iter().map(|b| b.count).sum::<usize>(),
            bars.len(),
            bars.iter().map(|b| b.count).max().unwrap_or(1)
        );
    }
    svg
}

/// The colour key of the parts drawn.
pub fn legend(parts: impl IntoIterator<Item = Part>) -> String {
    let mut html = String::from("<ul class=\"legend\">");
    for part in parts {
        let _ = write!(
            html,
            "<li title=\"{}\"><span class=\"swatch\" style=\"background:{}\"></span>{}</li>",
            esc(part.description()),
            hex(part.colour()),
            esc(part.label())
        );
    }
    html.push_str("</ul>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_end_on_round_numbers() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(f64::NAN), 1.0);
        assert_eq!(nice_ceiling(42.0), 50.0);
        assert_eq!(nice_ceiling(101.0), 200.0);
        assert_eq!(nice_ceiling(5.0), 5.0);
    }

    #[test]
    fn past_the_limit_iterations_share_bars_and_the_figure_says_so() {
        let totals: Vec<f64> = (0..1000).map(|i| 10.0 + f64::from(i % 7)).collect();
        let report = RunReport::with_totals("many", &totals);
        let svg = stacked_bars(&report);
        assert_eq!(svg.matches("<g>").count(), 334, "1,000 in bars of 3");
        assert!(
            svg.contains("1000 iterations drawn as 334 bars of up to 3"),
            "{svg}"
        );
        let few = stacked_bars(&RunReport::with_totals("few", &[10.0, 20.0]));
        assert_eq!(few.matches("<g>").count(), 2);
        assert!(!few.contains("drawn as"));
    }
}
