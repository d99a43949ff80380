//! The slowest iteration's timeline beside the median one's, on one time axis, with the causes of
//! its extra time in words (as [`analysis::explain`](crate::analysis::explain) found them).
//!
//! Each lane is a row: the waits for the stream, the wire and row decodes, a cold start's steps
//! and the summed buckets of later messages. Rectangles narrower than a pixel that touch are drawn
//! as one, so a row costs at most a few hundred rectangles whatever the message count.

use std::fmt::Write as _;

use super::markup::{clipped, esc, hex, num};
use crate::analysis::{self, IterationCauses, RunConflicts};
use crate::part::Part;
use crate::report::{IterationRecord, RunReport, Timeline};
use crate::text::{ms, signed_ms};

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 150.0;
const ROW: f64 = 16.0;

/// The colour of a wait for the stream (the server's work and the network together: a
/// timeline cannot split them message by message).
const WAIT: [u8; 3] = [0x9a, 0xa5, 0xb1];

/// Rectangles of one kind on one row, merged where they touch within a pixel.
struct Strip {
    fill: String,
    scale: f64,
    out: String,
    open: Option<(f64, f64)>,
    drawn: usize,
}

impl Strip {
    fn new(fill: [u8; 3], scale: f64) -> Strip {
        Strip {
            fill: hex(fill),
            scale,
            out: String::new(),
            open: None,
            drawn: 0,
        }
    }

    fn add(&mut self, from_us: u64, to_us: u64) {
        let (a, b) = (from_us as f64 * self.scale, to_us as f64 * self.scale);
        match &mut self.open {
            Some((_, end)) if a <= *end + 1.0 => *end = end.max(b),
            _ => {
                self.flush_into_buffer();
                self.open = Some((a, b));
            }
        }
    }

    fn flush_into_buffer(&mut self) {
        if let Some((a, b)) = self.open.take() {
            self.drawn += 1;
            let _ = write!(
                self.out,
                "<rect x=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>",
                num(LEFT + a),
                num((b - a).max(0.6)),
                num(ROW - 4.0),
                self.fill
            );
        }
    }

    fn finish(mut self) -> String {
        self.flush_into_buffer();
        self.out
    }
}

/// One row per lane (and one for a cold start's steps) of `timeline`, starting at `y`.
fn rows(name: &str, timeline: &Timeline, scale: f64, y: &mut f64) -> String {
    let mut svg = String::new();
    if !timeline.setup.is_empty() {
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} cold start</text>\
             <g transform=\"translate(0 {})\">",
            num(LEFT - 6.0),
            num(*y + ROW - 5.0),
            esc(name),
            num(*y)
        );
        for step in &timeline.setup {
            let colour = Part::Cold(step.step).colour();
            let mut strip = Strip::new(colour, scale);
            strip.add(step.start_us, step.start_us.saturating_add(step.wall_us));
            let _ = write!(
                svg,
                "<g><title>{} {}</title>{}</g>",
                esc(step.step.key()),
                esc(&ms(step.wall_us as f64 / 1e3)),
                strip.finish()
            );
        }
        svg.push_str("</g>");
        *y += ROW;
    }
    for lane in &timeline.lanes {
        let mut waits = Strip::new(WAIT, scale);
        let mut wire = Strip::new(Part::WireDecode.colour(), scale);
        let mut row = Strip::new(Part::RowDecode.colour(), scale);
        let origin = lane.origin_us;
        for m in &lane.messages {
            waits.add(origin + m.waited_from_us, origin + m.arrived_us);
            wire.add(origin + m.wire.start_us, origin + m.wire.end_us());
            if let Some(r) = m.row {
                row.add(origin + r.start_us, origin + r.end_us());
            }
        }
        let mut buckets = Strip::new([0xd0, 0xd4, 0xd9], scale);
        for b in &lane.buckets {
            buckets.add(origin + b.from_us, origin + b.to_us);
        }
        let label = if timeline.lanes.len() == 1 {
            name.to_owned()
        } else {
            format!("{name} {}", lane.name)
        };
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\
             <g transform=\"translate(0 {})\">{}{}{}{}</g>",
            num(LEFT - 6.0),
            num(*y + ROW - 5.0),
            esc(&label),
            num(*y),
            buckets.finish(),
            waits.finish(),
            wire.finish(),
            row.finish()
        );
        *y += ROW;
    }
    svg
}

/// The two timelines on one axis (the longer one's length).
fn picture(slowest: (&str, &Timeline), median: (&str, &Timeline)) -> String {
    let longest = slowest.1.total_us.max(median.1.total_us).max(1) as f64;
    let scale = (WIDTH - LEFT - 10.0) / longest;
    let mut y = 4.0;
    let mut body = rows(slowest.0, slowest.1, scale, &mut y);
    y += 6.0;
    body.push_str(&rows(median.0, median.1, scale, &mut y));
    let height = y + 20.0;
    let mut svg = format!(
        "<svg class=\"timeline\" viewBox=\"0 0 {WIDTH} {}\" role=\"img\" \
         aria-label=\"the slowest iteration's timeline above the median one's\">{body}",
        num(height)
    );
    for i in 0..=4 {
        let x = LEFT + (WIDTH - LEFT - 10.0) * f64::from(i) / 4.0;
        let _ = write!(
            svg,
            "<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>",
            num(x),
            num(height - 6.0),
            if i == 4 { "end" } else { "middle" },
            esc(&ms(longest / 1e3 * f64::from(i) / 4.0))
        );
    }
    svg.push_str("</svg>");
    svg
}

/// The causes of one iteration's extra time as a list: each a part, by its label, with its
/// change and where it happened.
fn causes_list(it: &IterationCauses) -> String {
    let mut html = String::from("<ul class=\"causes\">");
    for c in &it.causes {
        let at = c
            .location
            .map_or(String::new(), |l| format!(" {}", l.words()));
        let _ = write!(
            html,
            "<li><b>{}</b> {}{} — {}</li>",
            esc(c.kind.label()),
            esc(&signed_ms(c.ms)),
            esc(&at),
            clipped(&c.detail)
        );
    }
    html.push_str("</ul>");
    html
}

/// The section, or a sentence saying why there is none (no timelines, a single iteration); a
/// transaction's attempts drawn a lane each, their waits for locks named as `conflicts` names
/// them.
pub fn section(report: &RunReport, conflicts: Option<&RunConflicts>) -> String {
    let explanation = match analysis::explain(report) {
        Ok(e) => e,
        Err(why) => {
            return format!(
                "<p class=\"note\">No timeline to show: {}.</p>",
                esc(&why.to_string())
            );
        }
    };
    let Some(slowest) = explanation
        .iterations
        .iter()
        .max_by(|a, b| a.total_ms.total_cmp(&b.total_ms))
    else {
        return "<p class=\"note\">No timed iteration kept its timeline.</p>".to_owned();
    };
    let find = |n: u32| -> Option<&IterationRecord> {
        report.iterations.iter().find(|r| r.iteration == n)
    };
    let (Some(slow), Some(median)) = (find(slowest.iteration), find(explanation.median_iteration))
    else {
        return String::new();
    };
    let mut html = format!(
        "<p>The slowest iteration, #{}, took {} ({} more than the median iteration, #{}, at {}).</p>",
        slow.iteration,
        esc(&ms(slow.total_ms)),
        esc(&signed_ms(slowest.extra_ms)),
        median.iteration,
        esc(&ms(median.total_ms))
    );
    let (Some(slow_tl), Some(median_tl)) = (&slow.timeline, &median.timeline) else {
        if slow.transaction.is_none() {
            return "<p class=\"note\">No timed iteration kept its timeline.</p>".to_owned();
        }
        // A read-write transaction keeps its attempts (the table above), not a timeline: they
        // are drawn a lane each, and its causes are its parts'.
        html.push_str(&super::attempt_lanes::picture(slow, conflicts));
        html.push_str("<p>Where its extra time went:</p>");
        html.push_str(&causes_list(slowest));
        return html;
    };
    html.push_str(&picture(
        (&format!("#{}", slow.iteration), slow_tl),
        (&format!("#{} (median)", median.iteration), median_tl),
    ));
    let _ = write!(
        html,
        "<ul class=\"legend\"><li><span class=\"swatch\" style=\"background:{}\"></span>waiting for \
         the stream (server and network)</li><li><span class=\"swatch\" style=\"background:{}\">\
         </span>wire decode</li><li><span class=\"swatch\" style=\"background:{}\"></span>row \
         decode</li><li><span class=\"swatch\" style=\"background:#d0d4d9\"></span>later messages, \
         summed</li></ul>",
        hex(WAIT),
        hex(Part::WireDecode.colour()),
        hex(Part::RowDecode.colour())
    );
    if slowest.iteration == explanation.median_iteration || slowest.causes.is_empty() {
        html.push_str("<p>It was no slower than the median iteration in any cause.</p>");
    } else {
        html.push_str("<p>Where its extra time went:</p>");
        html.push_str(&causes_list(slowest));
    }
    html
}
