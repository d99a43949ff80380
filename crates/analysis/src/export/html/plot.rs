//! What the load page's plots share: their size and margins, a line through points, the grid
//! with its marks and the x axis's label, and the steps' levels' axis in round marks.

use std::fmt::Write as _;

use super::markup::{esc, num};

/// A plot's width in the SVG's own units.
pub const WIDTH: f64 = 1000.0;
/// A plot's height.
pub const HEIGHT: f64 = 300.0;
/// The left margin: the y axis's marks.
pub const LEFT: f64 = 64.0;
/// The bottom margin: the x axis's marks and its label.
pub const BOTTOM: f64 = 34.0;
/// The top margin.
pub const TOP: f64 = 10.0;

/// Draws each of `lines` (name, colour, dashed) through its `points` into `svg`, and returns the
/// legend's items for them, a swatch and a name each (the caller closes the list).
pub fn lines_with_legend(
    svg: &mut String,
    lines: &[(&str, &str, bool)],
    points: &[Vec<(f64, f64)>],
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> String {
    let mut legend = String::from("<ul class=\"legend\">");
    for ((name, colour, dashed), points) in lines.iter().zip(points) {
        svg.push_str(&polyline(points, colour, *dashed, x, y));
        let swatch = if *dashed {
            format!("border-top:2px dashed {colour};height:0")
        } else {
            format!("background:{colour}")
        };
        let _ = write!(
            legend,
            "<li><span class=\"swatch\" style=\"{swatch}\"></span>{}</li>",
            esc(name)
        );
    }
    legend
}

/// A line through points (x, y) scaled to the plot.
pub fn polyline(
    points: &[(f64, f64)],
    colour: &str,
    dashed: bool,
    x: &dyn Fn(f64) -> f64,
    y: &dyn Fn(f64) -> f64,
) -> String {
    if points.is_empty() {
        return String::new();
    }
    let coords: Vec<String> = points
        .iter()
        .map(|&(a, b)| format!("{},{}", num(x(a)), num(y(b))))
        .collect();
    let mut svg = format!(
        "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{} points=\"{}\"/>",
        if dashed {
            " stroke-dasharray=\"5 4\""
        } else {
            ""
        },
        coords.join(" ")
    );
    for &(a, b) in points {
        let _ = write!(
            svg,
            "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{colour}\"/>",
            num(x(a)),
            num(y(b))
        );
    }
    svg
}

/// A mark on an axis: where it sits (0 at the axis's start, 1 at its end) and its words.
pub type Mark = (f64, String);

/// The grid and the marks of a plot: `x` along the bottom, `y` up the left, `x_label` under it.
pub fn axes(svg: &mut String, x: &[Mark], y: &[Mark], x_label: &str) {
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    for (at, words) in y {
        let y = TOP + ph - ph * at;
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{}\" y2=\"{}\"/>\
             <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            num(LEFT + pw),
            num(y),
            num(y),
            num(LEFT - 6.0),
            num(y + 4.0),
            esc(words),
        );
    }
    for (at, words) in x {
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            num(LEFT + pw * at),
            num(TOP + ph + 16.0),
            esc(words)
        );
    }
    let _ = write!(
        svg,
        "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        num(LEFT + pw / 2.0),
        num(HEIGHT - 4.0),
        esc(x_label)
    );
}

/// The steps' levels' axis: from 0 in round steps (1, 2, 2.5 or 5 times a power of ten; whole
/// ones for clients), at most eight, to the first mark at or past the highest level, so that the
/// axis ends near the highest step (300/s for steps to 300/s, not 500/s).
pub fn level_marks(highest: f64, whole: bool) -> Vec<f64> {
    if !(highest.is_finite() && highest > 0.0) {
        return vec![0.0, 1.0];
    }
    let power = 10f64.powf((highest / 8.0).log10().floor());
    let mut step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&step| (highest / step).ceil() <= 8.0)
        .unwrap_or(10.0 * power);
    if whole {
        step = step.ceil().max(1.0);
    }
    let intervals = (highest / step - 1e-9).ceil().max(1.0) as usize;
    (0..=intervals).map(|i| i as f64 * step).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_axis_ends_near_the_highest_step() {
        let last = |h: f64, whole: bool| level_marks(h, whole).last().copied();
        assert_eq!(last(300.0, false), Some(300.0));
        assert_eq!(last(320.0, false), Some(350.0));
        assert_eq!(last(6400.0, false), Some(7000.0));
        assert_eq!(last(4.0, true), Some(4.0));
        assert_eq!(level_marks(3.0, true), [0.0, 1.0, 2.0, 3.0]);
        assert!(level_marks(6400.0, false).len() <= 9);
        assert_eq!(level_marks(f64::NAN, false), [0.0, 1.0]);
    }
}
