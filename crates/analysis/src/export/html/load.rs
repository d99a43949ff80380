//! A load run's section: what ran, the knee in words with its rule, the latency against the
//! throughput achieved (from the intended start, and the 99th percentile from the actual start
//! beside it), each step's percentiles, and a table of the steps with their parts.

use std::fmt::Write as _;

use super::bars::nice_ceiling;
use super::markup::{Cell, Table, clipped, esc, hex, num};
use crate::load::{LoadReport, Model, StepResult};
use crate::part::Part;
use crate::text::ms;

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 64.0;
const BOTTOM: f64 = 34.0;
const TOP: f64 = 10.0;

/// The whole section.
pub fn section(report: &LoadReport) -> String {
    let model = match report.model {
        Model::Open => "open (a fixed arrival rate per step)",
        Model::Closed => "closed (a fixed number of clients per step)",
    };
    let mut html = String::from("<section id=\"load\"><h2>Load</h2><dl class=\"facts\">");
    for (name, value) in [
        ("target", report.target.clone()),
        ("started", report.started_at.clone()),
        ("model", model.to_owned()),
        ("step length", format!("{} s", report.step_duration_s)),
        ("most in flight", report.max_in_flight.to_string()),
        ("reader", report.decoder.clone()),
        ("client cores", report.cores.to_string()),
    ] {
        let _ = write!(html, "<dt>{}</dt><dd>{}</dd>", esc(name), clipped(&value));
    }
    html.push_str("</dl>");
    let _ = write!(html, "<pre class=\"sql\">{}</pre>", clipped(&report.sql));
    if report.cancelled {
        html.push_str("<p class=\"alert\">Cancelled: the steps measured before are kept.</p>");
    }
    for notice in &report.notices {
        let _ = write!(html, "<p class=\"alert\">{}</p>", clipped(notice));
    }
    let _ = write!(
        html,
        "<p class=\"headline\">{}</p><p class=\"note\">The knee's rule: {}</p>",
        clipped(&report.knee_words),
        clipped(&report.knee_rule)
    );
    if let Some(cpu) = report.client_cpu_ms_per_query {
        let capacity = report.decode_capacity_per_core.map_or(String::new(), |c| {
            format!("; one core decodes about {c:.0} answers a second")
        });
        let _ = write!(
            html,
            "<p>The client spent {} of CPU per request{}.</p>",
            esc(&ms(cpu)),
            esc(&capacity)
        );
    }
    html.push_str("<h3>Latency against throughput</h3>");
    html.push_str(&curve(report));
    html.push_str("<h3>Each step's percentiles, from the intended start</h3>");
    html.push_str(&percentiles(&report.steps));
    html.push_str("<h3>Steps</h3>");
    html.push_str(&steps_table(&report.steps));
    html.push_str("</section>");
    html
}

/// A line through points (x, y) scaled to the plot.
fn polyline(
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

fn axes(svg: &mut String, x_top: f64, y_top: f64, x_label: &str, x_text: &dyn Fn(f64) -> String) {
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    for i in 0..=4 {
        let f = f64::from(i) / 4.0;
        let y = TOP + ph - ph * f;
        let x = LEFT + pw * f;
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\"/>\
             <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            num(LEFT + pw),
            num(LEFT - 6.0),
            num(y + 4.0),
            esc(&ms(y_top * f)),
            num(x),
            num(TOP + ph + 16.0),
            esc(&x_text(x_top * f))
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

/// p50 and p99 from the intended start and p99 from the actual start, against each step's level
/// (the rate asked, or the clients); the knee's step marked.
fn curve(report: &LoadReport) -> String {
    let steps = &report.steps;
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0);
    let series = |f: &dyn Fn(&StepResult) -> Option<f64>| -> Vec<(f64, f64)> {
        steps
            .iter()
            .filter_map(|s| Some((s.level().value(), finite(f(s))?)))
            .collect()
    };
    let p50 = series(&|s| s.p50_ms);
    let p99 = series(&|s| s.p99_ms);
    let p99_actual = series(&|s| s.p99_uncorrected_ms);
    let x_top = nice_ceiling(
        steps
            .iter()
            .map(|s| s.level().value())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
    );
    let y_top = nice_ceiling(
        p50.iter()
            .chain(&p99)
            .chain(&p99_actual)
            .map(|p| p.1)
            .fold(0.0, f64::max),
    );
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    let x = move |v: f64| LEFT + pw * v / x_top;
    let y = move |v: f64| TOP + ph - ph * v / y_top;
    let mut svg = format!(
        "<svg class=\"curve\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"latency against throughput\">"
    );
    let (x_label, unit) = match report.model {
        Model::Open => (
            "requests a second asked (what each step achieved is in the table)",
            "/s",
        ),
        Model::Closed => ("clients, each with one request in flight", ""),
    };
    axes(&mut svg, x_top, y_top, x_label, &|v| {
        format!("{v:.0}{unit}")
    });
    if let Some(knee) = report.knee
        && let Some(step) = steps
            .iter()
            .find(|s| (s.level().value() - knee).abs() < 1e-9)
    {
        let kx = x(step.level().value());
        let right = kx > WIDTH - 200.0;
        let _ = write!(
            svg,
            "<line class=\"knee\" x1=\"{}\" x2=\"{}\" y1=\"{TOP}\" y2=\"{}\"/>\
             <text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">knee: {}</text>",
            num(kx),
            num(kx),
            num(TOP + ph),
            num(if right { kx - 4.0 } else { kx + 4.0 }),
            num(TOP + 12.0),
            if right { "end" } else { "start" },
            esc(&step.level().describe())
        );
    }
    svg.push_str(&polyline(&p50, "#1f5fa8", false, &x, &y));
    svg.push_str(&polyline(&p99, "#c0392b", false, &x, &y));
    svg.push_str(&polyline(&p99_actual, "#c0392b", true, &x, &y));
    svg.push_str("</svg>");
    svg.push_str(
        "<ul class=\"legend\"><li><span class=\"swatch\" style=\"background:#1f5fa8\"></span>p50 \
         from the intended start</li><li><span class=\"swatch\" style=\"background:#c0392b\">\
         </span>p99 from the intended start</li><li>- - p99 from the actual start (what a \
         generator that waits hides)</li></ul>",
    );
    svg
}

/// Each step's latency at 50, 90, 99, 99.9% and its maximum, on a scale that spreads the tail.
fn percentiles(steps: &[StepResult]) -> String {
    // 50, 90, 99, 99.9% and the maximum evenly apart: each a tenfold rarer tail than the last.
    let at = [0.0, 1.0, 2.0, 3.0, 4.0];
    let y_top = nice_ceiling(
        steps
            .iter()
            .filter_map(|s| s.max_ms.filter(|v| v.is_finite()))
            .fold(0.0, f64::max),
    );
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    let x = move |v: f64| LEFT + pw * v / 4.0;
    let y = move |v: f64| TOP + ph - ph * v / y_top;
    let mut svg = format!(
        "<svg class=\"percentiles\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"each step's percentiles\">"
    );
    axes(
        &mut svg,
        4.0,
        y_top,
        "percentile",
        &|v| match v.round() as i64 {
            0 => "50%".into(),
            1 => "90%".into(),
            2 => "99%".into(),
            3 => "99.9%".into(),
            _ => "max".into(),
        },
    );
    let mut legend = String::from("<ul class=\"legend\">");
    for (i, s) in steps.iter().enumerate() {
        let colour = hex(step_colour(i, steps.len()));
        let values = [s.p50_ms, s.p90_ms, s.p99_ms, s.p999_ms, s.max_ms];
        let points: Vec<(f64, f64)> = at
            .iter()
            .zip(values)
            .filter_map(|(&a, v)| Some((a, v.filter(|v| v.is_finite())?)))
            .collect();
        svg.push_str(&polyline(&points, &colour, false, &x, &y));
        let _ = write!(
            legend,
            "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{}</li>",
            esc(&s.level().describe())
        );
    }
    svg.push_str("</svg>");
    legend.push_str("</ul>");
    svg + &legend
}

/// The `i`th of `n` steps' colour: from blue (the lightest load) through orange to red.
fn step_colour(i: usize, n: usize) -> [u8; 3] {
    let t = if n > 1 {
        i as f64 / (n - 1) as f64
    } else {
        0.0
    };
    crate::part::level_colour(t)
}

/// A row per step: its level, what it achieved, its percentiles both ways, its failures and
/// its parts' means per request.
fn steps_table(steps: &[StepResult]) -> String {
    let parts: Vec<Part> = Part::ALL
        .into_iter()
        .filter(|p| steps.iter().any(|s| s.part_ms(*p) > 0.0))
        .collect();
    let mut headings: Vec<&str> = vec![
        "step",
        "achieved",
        "p50",
        "p90",
        "p99",
        "p99.9",
        "max",
        "p50 actual",
        "p99 actual",
        "errors",
        "late",
        "dropped",
    ];
    headings.extend(parts.iter().map(|p| p.label()));
    let queued = steps.iter().any(|s| s.server_queue_ms.is_some());
    if queued {
        headings.push("of server: queue");
    }
    let mut table = Table::new("sortable steps", &headings);
    for s in steps {
        let mut cells = vec![
            Cell::figure(&s.level().describe(), s.level().value()),
            Cell::figure(&format!("{:.1}/s", s.achieved_rate), s.achieved_rate),
            Cell::opt_ms(s.p50_ms),
            Cell::opt_ms(s.p90_ms),
            Cell::opt_ms(s.p99_ms),
            Cell::opt_ms(s.p999_ms),
            Cell::opt_ms(s.max_ms),
            Cell::opt_ms(s.p50_uncorrected_ms),
            Cell::opt_ms(s.p99_uncorrected_ms),
            Cell::figure(&s.errors.to_string(), s.errors as f64),
            Cell::figure(&s.late.to_string(), s.late as f64),
            Cell::figure(&s.dropped.to_string(), s.dropped as f64),
        ];
        cells.extend(parts.iter().map(|p| Cell::ms(s.part_ms(*p))));
        if queued {
            cells.push(Cell::opt_ms(s.server_queue_ms));
        }
        table.row("", cells);
    }
    let mut html = format!("<div class=\"wide\">{}</div>", table.finish());
    if !parts.is_empty() {
        html.push_str(
            "<p class=\"note\">A step's parts are means per request that ended ok; they add up \
             to its mean latency from the actual start.</p>",
        );
    }
    if queued {
        html.push_str(
            "<p class=\"note\">Of server: queue is the server's own figure for the wait in its \
             queue for a query thread: inside the server part, not added to the parts.</p>",
        );
    }
    html
}
