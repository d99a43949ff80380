//! A load run's section: what ran, the knee in words with its rule, the latency against the
//! throughput achieved (from the intended start, and the 99th percentile from the actual start
//! beside it), a read-write run's goodput against its attempts (`goodput.rs`), each step's
//! percentiles, and a table of the steps with their parts (the parts the steps have, a
//! transaction's among them).

use std::fmt::Write as _;

use super::markup::{Cell, Table, clipped, esc, hex, num};
use super::plot::{
    BOTTOM, HEIGHT, LEFT, Mark, TOP, WIDTH, axes, level_marks, lines_with_legend, polyline,
};
use crate::load::{LoadReport, Model, StepResult};
use crate::part::Part;
use crate::text::{ms, trimmed};

/// The whole section (the element id `load`).
pub fn section(report: &LoadReport) -> String {
    section_as(report, "load")
}

/// The whole section under the element id `id` (a page of several runs gives each its own).
pub fn section_as(report: &LoadReport, id: &str) -> String {
    let model = match report.model {
        Model::Open => "open (a fixed arrival rate per step)",
        Model::Closed => "closed (a fixed number of clients per step)",
    };
    let mut html = format!(
        "<section id=\"{}\"><h2>Load</h2><dl class=\"facts\">",
        esc(id)
    );
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
    html.push_str(&super::goodput::section(report));
    html.push_str(&super::server_stats::section(report));
    html.push_str("<h3>Each step's percentiles, from the intended start</h3>");
    html.push_str(&percentiles(&report.steps));
    html.push_str("<h3>Steps</h3>");
    html.push_str(&steps_table(&report.steps));
    html.push_str("</section>");
    html
}

/// A latency axis on a log scale, whole decades of milliseconds from below the lowest latency to
/// above the highest: a step at 2 ms and one at 2 s both read, where on a linear axis the low
/// steps lie flat on the floor under the heavy ones.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LogAxis {
    /// The lowest decade's log10 (of milliseconds).
    bottom: f64,
    /// The highest decade's log10: at least one above `bottom`.
    top: f64,
}

impl LogAxis {
    /// The decades around the positive, finite latencies among `values`, in ms.
    fn around(values: impl Iterator<Item = f64>) -> LogAxis {
        let (lo, hi) = values
            .filter(|v| v.is_finite() && *v > 0.0)
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if !lo.is_finite() {
            return LogAxis {
                bottom: 0.0,
                top: 1.0,
            };
        }
        // A microsecond to a day: past those nothing is drawn apart.
        let bottom = lo.log10().floor().clamp(-3.0, 7.0);
        let top = hi.log10().ceil().clamp(bottom + 1.0, 8.0);
        LogAxis { bottom, top }
    }

    /// Where `ms` sits, 0 at the bottom and 1 at the top (a zero on the floor).
    fn at(&self, ms: f64) -> f64 {
        let log = if ms > 0.0 { ms.log10() } else { self.bottom };
        ((log - self.bottom) / (self.top - self.bottom)).clamp(0.0, 1.0)
    }

    /// The marks: 1, 2 and 5 times each power of ten (only the powers over more than three
    /// decades), in words as latencies are written (`0.5 ms`, `20 ms`, `2 s`).
    fn marks(&self) -> Vec<Mark> {
        let factors: &[f64] = if self.top - self.bottom > 3.0 {
            &[1.0]
        } else {
            &[1.0, 2.0, 5.0]
        };
        let mut marks = Vec::new();
        for decade in (self.bottom as i32)..=(self.top as i32) {
            for factor in factors {
                let ms = factor * 10f64.powi(decade);
                if ms.log10() <= self.top + 1e-9 {
                    marks.push((self.at(ms), latency_words(ms)));
                }
            }
        }
        marks
    }
}

/// A mark's latency in words: `5 µs`, `0.5 ms`, `20 ms`, `2 s`.
fn latency_words(ms: f64) -> String {
    if ms >= 1_000.0 {
        format!("{} s", trimmed(ms / 1e3, 3))
    } else if ms >= 0.1 {
        format!("{} ms", trimmed(ms, 3))
    } else {
        format!("{} µs", trimmed(ms * 1e3, 3))
    }
}

/// The curve's lines: name, colour, dashed. The two p99s apart in hue and lightness, and the one
/// from the actual start dashed, so that where they agree both are still seen.
const LINES: [(&str, &str, bool); 3] = [
    ("p50 from the intended start", "#1f5fa8", false),
    ("p99 from the intended start", "#c0392b", false),
    (
        "p99 from the actual start (what a generator that waits hides)",
        "#9b59b6",
        true,
    ),
];

/// p50 and p99 from the intended start and p99 from the actual start (log scale), against each
/// step's level (the rate asked, or the clients; the axis ends near the highest); the knee's step
/// marked.
fn curve(report: &LoadReport) -> String {
    let steps = &report.steps;
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite() && *v >= 0.0);
    let series = |f: fn(&StepResult) -> Option<f64>| -> Vec<(f64, f64)> {
        steps
            .iter()
            .filter_map(|s| Some((s.level().value(), finite(f(s))?)))
            .collect()
    };
    let lines: [Vec<(f64, f64)>; 3] = [
        series(|s| s.p50_ms),
        series(|s| s.p99_ms),
        series(|s| s.p99_uncorrected_ms),
    ];
    let highest = steps
        .iter()
        .map(|s| s.level().value())
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let levels = level_marks(highest, report.model == Model::Closed);
    let x_top = levels.last().copied().unwrap_or(1.0);
    let latency = LogAxis::around(lines.iter().flatten().map(|p| p.1));
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    let x = move |v: f64| LEFT + pw * v / x_top;
    let y = move |v: f64| TOP + ph - ph * latency.at(v);
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
    let x_marks: Vec<Mark> = levels
        .iter()
        .map(|&v| (v / x_top, format!("{}{unit}", trimmed(v, 2))))
        .collect();
    axes(&mut svg, &x_marks, &latency.marks(), x_label);
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
    let mut legend = lines_with_legend(&mut svg, &LINES, &lines, &x, &y);
    svg.push_str("</svg>");
    legend.push_str("<li>latency on a log scale</li></ul>");
    svg + &legend
}

/// Each step's latency at 50, 90, 99, 99.9% and its maximum, on a scale that spreads the tail
/// (and a log latency axis, the light steps apart from the floor).
fn percentiles(steps: &[StepResult]) -> String {
    // 50, 90, 99, 99.9% and the maximum evenly apart: each a tenfold rarer tail than the last.
    let at = [0.0, 1.0, 2.0, 3.0, 4.0];
    let figures = |s: &StepResult| [s.p50_ms, s.p90_ms, s.p99_ms, s.p999_ms, s.max_ms];
    let latency = LogAxis::around(steps.iter().flat_map(figures).flatten());
    let (pw, ph) = (WIDTH - LEFT - 16.0, HEIGHT - TOP - BOTTOM);
    let x = move |v: f64| LEFT + pw * v / 4.0;
    let y = move |v: f64| TOP + ph - ph * latency.at(v);
    let mut svg = format!(
        "<svg class=\"percentiles\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"each step's percentiles\">"
    );
    let x_marks: Vec<Mark> = ["50%", "90%", "99%", "99.9%", "max"]
        .iter()
        .zip(at)
        .map(|(words, a)| (a / 4.0, (*words).to_owned()))
        .collect();
    axes(&mut svg, &x_marks, &latency.marks(), "percentile");
    let mut legend = String::from("<ul class=\"legend\">");
    for (i, s) in steps.iter().enumerate() {
        let colour = hex(step_colour(i, steps.len()));
        let points: Vec<(f64, f64)> = at
            .iter()
            .zip(figures(s))
            .filter_map(|(&a, v)| Some((a, v.filter(|v| v.is_finite() && *v >= 0.0)?)))
            .collect();
        svg.push_str(&polyline(&points, &colour, false, &x, &y));
        let _ = write!(
            legend,
            "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{}</li>",
            esc(&s.level().describe())
        );
    }
    svg.push_str("</svg>");
    legend.push_str("<li>latency on a log scale</li></ul>");
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

/// Two tables, each in the page's width: a row per step with what it achieved, its percentiles
/// both ways and its failures; then, where the steps reported parts, a row per step with its
/// parts' means per request (and the server's queue, where it reported one).
fn steps_table(steps: &[StepResult]) -> String {
    let mut table = Table::new(
        "sortable steps",
        &[
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
        ],
    );
    for s in steps {
        table.row(
            "",
            vec![
                level_cell(s),
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
            ],
        );
        for x in &s.scripts {
            table.row("script", script_cells(x));
        }
    }
    let mut html = format!(
        "<div class=\"wide\">{}</div><p class=\"note\">p50 and p99 actual are from the actual \
         start, the others from the intended one; late: starts more than 2 ms after their \
         intended time; dropped: starts never issued, the step ended while they waited for room \
         in flight.</p>",
        table.finish()
    );
    if steps.iter().any(|s| !s.scripts.is_empty()) {
        html.push_str(
            "<p class=\"note\">Under each step, a line per script of the mix (↳): its commits a \
             second, its committed transactions' latencies and its failed requests.</p>",
        );
    }
    html.push_str(&parts_table(steps));
    html
}

/// A mix's script's line under its step: its commits a second and latencies (the committed
/// transactions', from the intended start), its errors; the rest of the step's columns empty.
fn script_cells(x: &crate::load::ScriptShare) -> Vec<Cell> {
    let empty = || Cell::text("");
    vec![
        Cell::text(&format!("↳ {} ({} requests)", x.script, x.requests)),
        Cell::figure(&format!("{:.1}/s", x.committed_per_s), x.committed_per_s),
        Cell::opt_ms(x.p50_ms),
        Cell::opt_ms(x.p90_ms),
        Cell::opt_ms(x.p99_ms),
        empty(),
        empty(),
        empty(),
        empty(),
        Cell::figure(&x.errors.to_string(), x.errors as f64),
        empty(),
        empty(),
    ]
}

/// A step's level as its table's first cell.
fn level_cell(s: &StepResult) -> Cell {
    Cell::figure(&s.level().describe(), s.level().value())
}

/// A row per step with its parts' means per request, and the server's queue where it reported
/// one; nothing where no step reported a part.
fn parts_table(steps: &[StepResult]) -> String {
    let parts: Vec<Part> = Part::ALL
        .into_iter()
        .filter(|p| steps.iter().any(|s| s.part_ms(*p) > 0.0))
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    let mut headings: Vec<&str> = vec!["step"];
    headings.extend(parts.iter().map(|p| p.label()));
    let queued = steps.iter().any(|s| s.server_queue_ms.is_some());
    if queued {
        headings.push("of server: queue");
    }
    let mut table = Table::new("sortable parts", &headings);
    for s in steps {
        let mut cells = vec![level_cell(s)];
        cells.extend(parts.iter().map(|p| Cell::ms(s.part_ms(*p))));
        if queued {
            cells.push(Cell::opt_ms(s.server_queue_ms));
        }
        table.row("", cells);
    }
    let mut html = format!(
        "<h3>Where each step's time went</h3><div class=\"wide\">{}</div>\
         <p class=\"note\">A step's parts are means per {}; they add up to its mean latency \
         from the actual start.</p>",
        table.finish(),
        if steps.iter().any(|s| s.committed.is_some()) {
            "committed transaction (its aborted attempts and back-offs among them)"
        } else {
            "request that ended ok"
        }
    );
    if queued {
        html.push_str(
            "<p class=\"note\">Of server: queue is the server's own figure for the wait in its \
             queue for a query thread: inside the server part, not added to the parts.</p>",
        );
    }
    html
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::load::{Ended, LoadSteps, StepCpu, StepLevel, StepTally};

    /// A step at `rate` whose requests took `latencies_ms`, its parts the server's.
    fn step(rate: f64, latencies_ms: &[u64]) -> StepResult {
        let mut tally = StepTally::new(StepLevel::Rate(rate));
        for &ms in latencies_ms {
            let ended = Ended {
                from_intended: Duration::from_millis(ms),
                from_start: Duration::from_millis(ms),
                ..Ended::default()
            };
            tally.ok(&ended, &Default::default());
        }
        let mut step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        step.parts.insert("server".into(), latencies_ms[0] as f64);
        step
    }

    /// Steps at 50 to 300 requests a second, 2 ms each until the last two's 400 and 900 ms.
    fn report() -> LoadReport {
        let rates = [50.0, 100.0, 150.0, 200.0, 250.0, 300.0];
        let plan = LoadSteps {
            model: Model::Open,
            levels: rates.iter().map(|&r| StepLevel::Rate(r)).collect(),
            step_duration: Duration::from_secs(1),
            max_in_flight: 10,
            drain: Duration::from_secs(1),
        };
        let steps = rates
            .iter()
            .map(|&r| match r {
                250.0 => step(r, &[400, 410]),
                300.0 => step(r, &[900, 950]),
                _ => step(r, &[2, 3]),
            })
            .collect();
        LoadReport::new(Default::default(), &plan, steps)
    }

    /// The words of the marks along the bottom of the first SVG of `class`.
    fn x_marks(page: &str, class: &str) -> Vec<String> {
        let svg = page
            .split(&format!("<svg class=\"{class}\""))
            .nth(1)
            .and_then(|rest| rest.split("</svg>").next())
            .unwrap_or_default();
        let bottom = format!("y=\"{}\"", num(HEIGHT - BOTTOM + 16.0));
        svg.split("<text ")
            .filter(|t| t.contains(&bottom) && t.contains("text-anchor=\"middle\""))
            .filter_map(|t| Some(t.split('>').nth(1)?.split('<').next()?.to_owned()))
            .collect()
    }

    #[test]
    fn a_mix_s_scripts_each_have_a_line_under_their_step_and_a_run_without_one_has_none() {
        let mut tally = StepTally::read_write(StepLevel::Concurrency(2))
            .with_scripts(&["transfer".to_owned(), "a<b".to_owned()]);
        tally.script_ended(0, Some(Duration::from_millis(4)), None);
        tally.script_ended(1, None, None);
        let step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        let table = steps_table(std::slice::from_ref(&step));
        assert_eq!(table.matches("<tr class=\"script\">").count(), 2, "{table}");
        assert!(table.contains("↳ transfer (1 requests)"), "{table}");
        assert!(table.contains("↳ a&lt;b (1 requests)"), "escaped: {table}");
        let alone = StepResult {
            scripts: Vec::new(),
            ..step
        };
        let table = steps_table(&[alone]);
        assert!(!table.contains("script") && !table.contains('↳'), "{table}");
    }

    #[test]
    fn the_latency_axis_is_whole_decades_marked_one_two_five() {
        let axis = LogAxis::around([2.0, 3.0, 950.0].into_iter());
        assert_eq!(
            axis,
            LogAxis {
                bottom: 0.0,
                top: 3.0
            }
        );
        let words: Vec<String> = axis.marks().into_iter().map(|m| m.1).collect();
        assert_eq!(
            words,
            [
                "1 ms", "2 ms", "5 ms", "10 ms", "20 ms", "50 ms", "100 ms", "200 ms", "500 ms",
                "1 s"
            ]
        );
        // 2 ms is a third of the way up, not on the floor as on a linear axis to 1 s.
        assert!((axis.at(2.0) - 2f64.log10() / 3.0).abs() < 1e-9);
        assert_eq!(axis.at(0.0), 0.0, "a zero sits on the floor");
        let wide = LogAxis::around([0.05, 20_000.0].into_iter());
        let words: Vec<String> = wide.marks().into_iter().map(|m| m.1).collect();
        assert_eq!(
            words,
            [
                "10 µs", "0.1 ms", "1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s"
            ]
        );
    }

    #[test]
    fn a_page_of_steps_to_300_per_second_has_its_axis_end_at_300_and_each_table_in_its_width() {
        let page = section(&report());
        let marks = x_marks(&page, "curve");
        assert_eq!(marks.first().map(String::as_str), Some("0/s"), "{marks:?}");
        assert_eq!(marks.last().map(String::as_str), Some("300/s"), "{marks:?}");
        assert!(!page.contains("500/s"), "{marks:?}");
        // The two p99 lines are told apart by colour as well as the dash.
        let p99 = |name: &str| LINES.iter().find(|l| l.0.starts_with(name)).map(|l| l.1);
        assert_ne!(p99("p99 from the intended"), p99("p99 from the actual"));
        // Two tables of at most twelve columns each: the steps, and where their time went.
        let tables: Vec<&str> = page.split("<table ").skip(1).collect();
        assert_eq!(tables.len(), 2);
        for table in &tables {
            let head = table.split("</thead>").next().unwrap_or_default();
            let columns = head.matches("<th>").count();
            assert!((2..=12).contains(&columns), "{columns}: {head}");
        }
        assert!(tables[0].contains("<th>dropped</th>") && tables[1].contains("<th>server</th>"));
        assert!(page.contains("latency on a log scale"));
    }
}
