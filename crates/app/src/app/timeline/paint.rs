//! Drawing the timeline's rows over the plot: only what lies in the visible range (found by binary
//! search, never by walking every message), items narrower than a couple of pixels merged with
//! their neighbours into one bar (so a zoomed-out run of 20,000 messages draws a few hundred
//! rectangles), a tick per message arrival (one per pixel at most), and text only for the few
//! things that need it (the stalls, the resumes, each iteration's end). What was drawn is kept
//! ([`Drawn`]) so the hover finds its item without walking the rows again, and the tooltip's text
//! is made for the hovered item only.

use egui::{Align2, Color32, FontId, Pos2, Rect, Stroke, StrokeKind};

use super::rows::{BLOCK, Block, Item, Kind, Mark, Row, RowKind, Source};
use crate::app::theme;
use crate::part::Part;
use crate::report::{Lane, Timeline};
use crate::text::micros;

/// An item narrower than this (pixels) is merged with its small neighbours.
const MERGE_PX: f32 = 2.0;
/// A merged bar grows to about this wide (pixels) before a new one starts.
const CLUSTER_PX: f32 = 4.0;

/// One rectangle drawn: a row's items `first..=last`, merged when more than one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Drawn {
    /// The row's index.
    pub row: usize,
    /// Its left and right edge, in points.
    pub x0: f32,
    /// See `x0`.
    pub x1: f32,
    /// The first item it shows.
    pub first: usize,
    /// The last.
    pub last: usize,
    /// The kind it is drawn as (the one covering most of its time).
    pub kind: Kind,
    /// The share of its wall time its thread was on the CPU (1 for what is not the client's work).
    pub cpu_share: f32,
}

/// A merged bar being built.
struct Cluster {
    drawn: Drawn,
    lengths: [u64; Kind::ALL.len()],
    wall: u64,
    cpu: u64,
}

impl Cluster {
    fn new(row: usize, index: usize, item: &Item, x0: f32, x1: f32) -> Cluster {
        let mut lengths = [0; Kind::ALL.len()];
        lengths[item.kind.index()] = item.len_us();
        Cluster {
            drawn: Drawn {
                row,
                x0,
                x1,
                first: index,
                last: index,
                kind: item.kind,
                cpu_share: 1.0,
            },
            lengths,
            wall: item.len_us(),
            cpu: item.cpu_us.unwrap_or(item.len_us()),
        }
    }

    fn of_block(row: usize, first: usize, last: usize, b: &Block, x0: f32, x1: f32) -> Cluster {
        Cluster {
            drawn: Drawn {
                row,
                x0,
                x1,
                first,
                last,
                kind: Kind::Wait,
                cpu_share: 1.0,
            },
            lengths: b.lengths,
            wall: b.wall_us,
            cpu: b.cpu_us,
        }
    }

    fn add_block(&mut self, last: usize, b: &Block, x1: f32) {
        self.drawn.x1 = self.drawn.x1.max(x1);
        self.drawn.last = last;
        for (sum, len) in self.lengths.iter_mut().zip(b.lengths) {
            *sum = sum.saturating_add(len);
        }
        self.wall = self.wall.saturating_add(b.wall_us);
        self.cpu = self.cpu.saturating_add(b.cpu_us);
    }

    /// Whether something starting at `x0` joins it.
    fn takes(&self, x0: f32) -> bool {
        x0 <= self.drawn.x1 + 1.0 && self.drawn.x1 - self.drawn.x0 < CLUSTER_PX
    }

    fn add(&mut self, index: usize, item: &Item, x1: f32) {
        self.drawn.x1 = self.drawn.x1.max(x1);
        self.drawn.last = index;
        let k = item.kind.index();
        self.lengths[k] = self.lengths[k].saturating_add(item.len_us());
        self.wall = self.wall.saturating_add(item.len_us());
        self.cpu = self
            .cpu
            .saturating_add(item.cpu_us.unwrap_or(item.len_us()));
    }

    fn finish(mut self) -> Drawn {
        // A stall or a resume in a merged bar is never hidden by its neighbours.
        let loud = [Kind::Stall, Kind::Resume]
            .into_iter()
            .find(|&k| self.lengths[k.index()] > 0);
        let most = (0..Kind::ALL.len())
            .max_by_key(|&k| self.lengths[k])
            .map_or(self.drawn.kind, |k| Kind::ALL[k]);
        self.drawn.kind = loud.unwrap_or(most);
        self.drawn.cpu_share = if self.wall == 0 {
            1.0
        } else {
            (self.cpu.min(self.wall) as f64 / self.wall as f64) as f32
        };
        self.drawn
    }
}

/// The rectangles of `row` (index `index`) between `from_us` and `to_us`, where `px` maps a
/// time to its x in points: one per item at least `MERGE_PX` wide, the narrower ones merged with
/// their neighbours. At most a few per pixel of width, whatever the number of items.
pub fn layout_row(
    row: &Row,
    index: usize,
    from_us: u64,
    to_us: u64,
    px: impl Fn(u64) -> f32,
    out: &mut Vec<Drawn>,
) {
    let mut open: Option<Cluster> = None;
    let range = row.visible(from_us, to_us);
    let mut i = range.start;
    while i < range.end {
        // A whole block of narrow items inside the range, narrower than a merged bar: taken at
        // once, so a zoomed-out frame walks blocks, not items.
        let block_end = (i + BLOCK).min(row.items.len());
        if i.is_multiple_of(BLOCK)
            && block_end <= range.end
            && let Some(b) = row.blocks.get(i / BLOCK)
            && b.start_us >= from_us
            && b.end_us <= to_us
        {
            let (x0, x1) = (px(b.start_us), px(b.end_us));
            let widest = px(b.start_us.saturating_add(b.max_len_us)) - x0;
            if widest < MERGE_PX && x1 - x0 <= CLUSTER_PX {
                match &mut open {
                    Some(c) if c.takes(x0) => c.add_block(block_end - 1, b, x1),
                    _ => {
                        out.extend(open.take().map(Cluster::finish));
                        open = Some(Cluster::of_block(index, i, block_end - 1, b, x0, x1));
                    }
                }
                i = block_end;
                continue;
            }
        }
        let item = &row.items[i];
        let at = i;
        i += 1;
        if item.end_us < from_us || item.start_us > to_us {
            continue;
        }
        let (x0, x1) = (px(item.start_us), px(item.end_us));
        if x1 - x0 >= MERGE_PX {
            out.extend(open.take().map(Cluster::finish));
            out.push(Cluster::new(index, at, item, x0, x1).finish());
            continue;
        }
        match &mut open {
            Some(c) if c.takes(x0) => c.add(at, item, x1),
            _ => {
                out.extend(open.take().map(Cluster::finish));
                open = Some(Cluster::new(index, at, item, x0, x1));
            }
        }
    }
    out.extend(open.map(Cluster::finish));
}

/// The colour of a kind.
pub fn color(kind: Kind) -> Color32 {
    match kind {
        Kind::Wait => theme::part(Part::Network).gamma_multiply(0.55),
        Kind::Stall => theme::WARN,
        Kind::Wire => theme::part(Part::WireDecode),
        Kind::Row | Kind::Finish => theme::part(Part::RowDecode),
        Kind::Bucket => theme::MUTED.gamma_multiply(0.6),
        Kind::Resume => theme::ERROR,
        Kind::Server => theme::part(Part::Server),
        Kind::Setup => theme::SETUP,
    }
}

/// How faded the off-CPU part of a decode span is drawn.
pub const OFF_CPU_FADE: f32 = 0.3;

/// Where each row is drawn: its band's top and bottom in points.
pub type Band = (f32, f32);

/// Paints the rectangles, CPU part solid and off-CPU part faded for the client's decode spans.
pub fn paint_drawn(painter: &egui::Painter, drawn: &[Drawn], bands: &[Band]) {
    for d in drawn {
        let Some(&(top, bottom)) = bands.get(d.row) else {
            continue;
        };
        let x1 = d.x1.max(d.x0 + 1.0);
        let fill = color(d.kind);
        let decode = matches!(d.kind, Kind::Wire | Kind::Row | Kind::Finish);
        if decode && d.cpu_share < 0.999 {
            let split = d.x0 + (x1 - d.x0) * d.cpu_share;
            painter.rect_filled(Rect::from_x_y_ranges(d.x0..=split, top..=bottom), 0.0, fill);
            painter.rect_filled(
                Rect::from_x_y_ranges(split..=x1, top..=bottom),
                0.0,
                fill.gamma_multiply(OFF_CPU_FADE),
            );
        } else {
            painter.rect_filled(Rect::from_x_y_ranges(d.x0..=x1, top..=bottom), 0.0, fill);
        }
    }
}

/// Paints a waits row's arrival ticks (one per pixel at most) and its request and headers marks.
pub fn paint_ticks(
    painter: &egui::Painter,
    row: &Row,
    band: Band,
    range_us: (u64, u64),
    us_per_point: f64,
    px: impl Fn(u64) -> f32,
) -> usize {
    let (top, bottom) = band;
    let stroke = Stroke::new(1.0, Color32::from_gray(200).gamma_multiply(0.7));
    let tick_bottom = top + (bottom - top) * 0.4;
    let mut drawn = 0;
    let ticks = row.visible_ticks(range_us.0, range_us.1);
    // One tick per 1.5 points at most: the next drawn is the first past that, found by search.
    let step_us = (1.5 * us_per_point).max(1.0) as u64;
    let mut k = 0;
    while let Some(&t) = ticks.get(k) {
        let next = t.saturating_add(step_us);
        k += ticks[k..].partition_point(|&u| u < next).max(1);
        let x = px(t).round();
        drawn += 1;
        painter.line_segment([Pos2::new(x, top - 3.0), Pos2::new(x, tick_bottom)], stroke);
    }
    for &(t, mark) in &row.marks {
        if t < range_us.0 || t > range_us.1 {
            continue;
        }
        let x = px(t);
        let (color, size) = match mark {
            Mark::Request => (Color32::WHITE, 5.0),
            Mark::Headers => (theme::part(Part::Server), 4.0),
        };
        let tip = Pos2::new(x, top);
        painter.add(egui::Shape::convex_polygon(
            vec![
                tip,
                Pos2::new(x - size, top - size * 1.4),
                Pos2::new(x + size, top - size * 1.4),
            ],
            color,
            Stroke::NONE,
        ));
    }
    drawn
}

/// Labels painted per frame, at most.
const MAX_LABELS: usize = 12;

/// Paints the words on the bars that need them: the stalls (`stall_text` for message N) and the
/// resumes, on their bar when it is wide enough, else beside it; the longest first, and none over
/// another (a handful of texts per frame, whatever the zoom).
pub fn paint_labels(
    painter: &egui::Painter,
    rows: &[Row],
    drawn: &[Drawn],
    bands: &[Band],
    stall_text: impl Fn(&Row, &Item) -> String,
) {
    let font = FontId::proportional(12.0);
    let mut loud: Vec<&Drawn> = drawn
        .iter()
        .filter(|d| matches!(d.kind, Kind::Stall | Kind::Resume))
        .collect();
    loud.sort_by(|a, b| (b.x1 - b.x0).total_cmp(&(a.x1 - a.x0)));
    let mut placed: Vec<Rect> = Vec::new();
    for d in loud {
        if placed.len() >= MAX_LABELS {
            break;
        }
        let (Some(row), Some(&(top, bottom))) = (rows.get(d.row), bands.get(d.row)) else {
            continue;
        };
        let Some(item) = row.items[d.first..=d.last]
            .iter()
            .find(|i| i.kind == d.kind)
        else {
            continue;
        };
        let text = match d.kind {
            Kind::Stall => stall_text(row, item),
            _ => "resume".to_owned(),
        };
        // On the bar in a colour that reads on it, else beside it on a dark ground.
        let inside = if d.kind == Kind::Stall {
            Color32::BLACK
        } else {
            Color32::WHITE
        };
        let probe = painter.layout_no_wrap(text.clone(), font.clone(), inside);
        let size = probe.size();
        let y = (top + bottom) / 2.0 - size.y / 2.0;
        let on_bar = size.x + 8.0 <= d.x1 - d.x0;
        // Beside it: to its right, or to its left where the right runs past the plot's edge
        // (a label is never cut: "stall 74.7 ms befor").
        let edge = painter.clip_rect();
        let pos = if on_bar {
            Pos2::new((d.x0 + d.x1) / 2.0 - size.x / 2.0, y)
        } else if d.x1 + 4.0 + size.x + 2.0 > edge.max.x {
            Pos2::new((d.x0 - 4.0 - size.x).max(edge.min.x + 2.0), y)
        } else {
            Pos2::new(d.x1 + 4.0, y)
        };
        let rect = Rect::from_min_size(pos, size).expand(2.0);
        if placed.iter().any(|p| p.intersects(rect)) {
            continue;
        }
        placed.push(rect);
        if on_bar {
            painter.galley(pos, probe, inside);
        } else {
            let galley = painter.layout_no_wrap(text, font.clone(), color(d.kind));
            painter.rect_filled(rect, 2.0, Color32::from_black_alpha(220));
            painter.galley(pos, galley, color(d.kind));
        }
    }
}

/// Paints the end of an iteration: a dashed line across its rows and its total above them.
pub fn paint_end(painter: &egui::Painter, x: f32, top: f32, bottom: f32, total_ms: f64) {
    let stroke = Stroke::new(1.0, theme::MUTED);
    painter.add(egui::Shape::dashed_line(
        &[Pos2::new(x, top), Pos2::new(x, bottom)],
        stroke,
        4.0,
        3.0,
    ));
    painter.text(
        Pos2::new(x - 3.0, top),
        Align2::RIGHT_TOP,
        format!("end {}", crate::text::ms(total_ms)),
        FontId::proportional(11.0),
        theme::MUTED,
    );
}

/// Paints the server's reported time as a translucent band behind the rows of its iteration, so
/// the client's waits and decode inside it show where the two overlap.
pub fn paint_server_band(painter: &egui::Painter, x0: f32, x1: f32, top: f32, bottom: f32) {
    let fill = theme::part(Part::Server).gamma_multiply(0.10);
    painter.rect(
        Rect::from_x_y_ranges(x0..=x1.max(x0 + 1.0), top..=bottom),
        0.0,
        fill,
        Stroke::new(1.0, theme::part(Part::Server).gamma_multiply(0.4)),
        StrokeKind::Inside,
    );
}

/// The drawn rectangle under the pointer at `x` in row `row`: the one containing it, else the
/// nearest within 3 points.
pub fn hit(drawn: &[Drawn], row: usize, x: f32) -> Option<&Drawn> {
    let distance = |d: &Drawn| {
        if x < d.x0 {
            d.x0 - x
        } else if x > d.x1.max(d.x0 + 1.0) {
            x - d.x1.max(d.x0 + 1.0)
        } else {
            0.0
        }
    };
    drawn
        .iter()
        .filter(|d| d.row == row)
        .map(|d| (distance(d), d))
        .filter(|(dist, _)| *dist <= 3.0)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d)
}

/// A span's figures: wall, CPU and off-CPU time.
fn span_text(item: &Item) -> String {
    let wall = item.len_us();
    let cpu = item.cpu_us.unwrap_or(wall).min(wall);
    format!(
        "{} wall · {} CPU · {} off the CPU\nfrom {:.3} to {}",
        micros(wall),
        micros(cpu),
        micros(wall - cpu),
        micros(item.start_us),
        micros(item.end_us)
    )
}

/// Every figure of one item, exactly.
pub fn item_text(row: &Row, timeline: &Timeline, item: &Item, server_ms: Option<f64>) -> String {
    let lane = timeline.lanes.get(row.lane);
    match (item.source, lane) {
        (Source::Server, _) => format!(
            "the server reports {} elapsed\ndrawn from the request's sending ({}), the earliest it can have begun",
            server_ms.map_or_else(|| micros(item.len_us()), crate::text::ms),
            micros(item.start_us)
        ),
        (Source::Message(i), Some(lane)) => message_text(row, lane, i, item),
        (Source::Bucket(i), Some(lane)) => bucket_text(lane, i),
        (Source::Resume(i), Some(lane)) => lane.resumes.get(i).map_or_else(String::new, |r| {
            format!(
                "resume after {}\ndropped {} messages ({} bytes) to receive them again\nback-off {} · request sent again at {}",
                crate::report::printable(&r.status),
                r.dropped_messages,
                r.dropped_bytes,
                micros(r.backoff_us),
                micros(lane.origin_us.saturating_add(r.resent_us))
            )
        }),
        (Source::Finish, _) => format!("end-of-stream check\n{}", span_text(item)),
        (Source::Setup(i), _) => timeline.setup.get(i).map_or_else(String::new, |step| {
            format!(
                "cold start: {} {}\nfrom {:.3} to {}, before the query's request",
                step.step.key(),
                micros(item.len_us()),
                micros(item.start_us),
                micros(item.end_us)
            )
        }),
        _ => String::new(),
    }
}

fn message_text(row: &Row, lane: &Lane, i: usize, item: &Item) -> String {
    let Some(m) = lane.messages.get(i) else {
        return String::new();
    };
    let what = match (row.kind, item.kind) {
        (RowKind::Decode, Kind::Wire) => {
            format!("wire decode of message {}\n{}", m.number, span_text(item))
        }
        (RowKind::Decode, _) => format!("row decode of message {}\n{}", m.number, span_text(item)),
        (_, kind) => format!(
            "message {}{}: waited {}\nfrom {}, arrived at {}",
            m.number,
            if kind == Kind::Stall {
                " (a stall)"
            } else {
                ""
            },
            micros(m.wait_us()),
            micros(item.start_us),
            micros(item.end_us)
        ),
    };
    format!(
        "{what}\n{} · {} values · {} rows completed\nresume token: {} · chunked: {}",
        crate::text::bytes(m.bytes),
        crate::text::count(m.values),
        crate::text::count(m.rows),
        if m.resume_token { "yes" } else { "no" },
        if m.chunked { "yes" } else { "no" }
    )
}

fn bucket_text(lane: &Lane, i: usize) -> String {
    let Some(b) = lane.buckets.get(i) else {
        return String::new();
    };
    format!(
        "messages {}–{}, summed (the report keeps each message up to a limit)\nfrom {:.3} to {} · {} bytes · {} values · {} rows\nwaits {}, the longest {} before message {}\nwire decode {} wall, {} CPU · row decode {} wall, {} CPU\n{} with a resume token · {} chunked",
        b.first,
        b.last,
        micros(lane.origin_us.saturating_add(b.from_us)),
        micros(lane.origin_us.saturating_add(b.to_us)),
        b.bytes,
        b.values,
        b.rows,
        micros(b.wait_us),
        micros(b.max_wait_us),
        b.max_wait_at,
        micros(b.wire_wall_us),
        micros(b.wire_cpu_us),
        micros(b.row_wall_us),
        micros(b.row_cpu_us),
        b.resume_tokens,
        b.chunked
    )
}

/// The hover text of a drawn rectangle: one item's figures, or the merged items summed.
pub fn drawn_text(row: &Row, timeline: &Timeline, d: &Drawn, server_ms: Option<f64>) -> String {
    let items = &row.items[d.first..=d.last.min(row.items.len().saturating_sub(1))];
    if let [one] = items {
        return item_text(row, timeline, one, server_ms);
    }
    let messages = |i: &Item| match i.source {
        Source::Message(k) => timeline
            .lanes
            .get(row.lane)
            .and_then(|l| l.messages.get(k))
            .map(|m| m.number),
        _ => None,
    };
    let numbers: Vec<u32> = items.iter().filter_map(messages).collect();
    let (lo, hi) = (
        numbers.iter().min().copied().unwrap_or(0),
        numbers.iter().max().copied().unwrap_or(0),
    );
    let wall: u64 = items.iter().map(Item::len_us).sum();
    let cpu: u64 = items
        .iter()
        .map(|i| i.cpu_us.unwrap_or(i.len_us()).min(i.len_us()))
        .sum();
    let from = items.iter().map(|i| i.start_us).min().unwrap_or(0);
    let to = items.iter().map(|i| i.end_us).max().unwrap_or(0);
    let mut text = format!(
        "{} items, messages {lo}–{hi} (zoom in to see each)\nfrom {:.3} to {}",
        items.len(),
        micros(from),
        micros(to)
    );
    match row.kind {
        RowKind::Setup => text.push_str(&format!("\nsteps {}", micros(wall))),
        RowKind::Decode => text.push_str(&format!(
            "\ndecode {} wall · {} CPU · {} off the CPU",
            micros(wall),
            micros(cpu),
            micros(wall - cpu.min(wall))
        )),
        _ => text.push_str(&format!("\nwaits {}", micros(wall))),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{IterationRecord, Message, Span};

    fn rows(messages: u32, gap_us: u64) -> (IterationRecord, Vec<Row>) {
        let lane = Lane {
            name: "stream".into(),
            requests_us: vec![0],
            messages: (0..messages)
                .map(|k| {
                    let t = u64::from(k) * gap_us;
                    Message {
                        number: k + 1,
                        waited_from_us: t,
                        arrived_us: t + gap_us / 2,
                        wire: Span {
                            start_us: t + gap_us / 2,
                            wall_us: gap_us / 4,
                            cpu_us: Some(gap_us / 8),
                        },
                        ..Message::default()
                    }
                })
                .collect(),
            ..Lane::default()
        };
        let record = IterationRecord {
            timeline: Some(Timeline {
                lanes: vec![lane],
                total_us: u64::from(messages) * gap_us,
                setup: Vec::new(),
            }),
            ..IterationRecord::new("r", 1, false, "t")
        };
        let built = super::super::rows::iteration_rows(
            "#1",
            &record,
            record.timeline.as_ref().expect("a timeline"),
            &[],
        );
        (record, built)
    }

    #[test]
    fn twenty_thousand_messages_zoomed_out_draw_a_few_rectangles_per_pixel() {
        let (_, rows) = rows(20_000, 100);
        let total = 2_000_000u64;
        let width = 600.0f32;
        let px = |t: u64| t as f32 / total as f32 * width;
        let mut drawn = Vec::new();
        layout_row(&rows[0], 0, 0, total, px, &mut drawn);
        assert!(
            drawn.len() <= 200,
            "{} rectangles for 600 points",
            drawn.len()
        );
        let covered: usize = drawn.iter().map(|d| d.last - d.first + 1).sum();
        assert_eq!(covered, 20_000, "every wait is in one rectangle");
        // Zoomed in on ten messages: each drawn alone, exactly.
        drawn.clear();
        let px = |t: u64| (t as f32 - 50_000.0) / 1_000.0 * width;
        layout_row(&rows[1], 1, 50_000, 51_000, px, &mut drawn);
        assert_eq!(drawn.len(), 10);
        assert!(drawn.iter().all(|d| d.first == d.last));
        assert!((drawn[0].cpu_share - 0.5).abs() < 0.03, "{:?}", drawn[0]);
    }

    #[test]
    fn a_stall_merged_with_its_neighbours_still_shows_as_a_stall() {
        let (record, mut rows) = rows(50, 10);
        rows[0].items[20].kind = Kind::Stall;
        let mut drawn = Vec::new();
        layout_row(&rows[0], 0, 0, 500, |t| t as f32 / 500.0 * 20.0, &mut drawn);
        assert!(drawn.iter().any(|d| d.kind == Kind::Stall), "{drawn:?}");
        let hover = hit(&drawn, 0, drawn[0].x0).expect("a rectangle under the pointer");
        let text = drawn_text(
            &rows[0],
            record.timeline.as_ref().expect("a timeline"),
            hover,
            None,
        );
        assert!(text.contains("items, messages 1–"), "{text}");
        assert!(hit(&drawn, 1, drawn[0].x0).is_none(), "another row");
    }

    #[test]
    fn one_message_s_tooltip_has_its_exact_figures() {
        let (record, rows) = rows(3, 1_000);
        let timeline = record.timeline.as_ref().expect("a timeline");
        let wait = item_text(&rows[0], timeline, &rows[0].items[1], None);
        assert!(wait.starts_with("message 2: waited 500 µs"), "{wait}");
        let wire = item_text(&rows[1], timeline, &rows[1].items[1], None);
        assert!(
            wire.contains("250 µs wall · 125 µs CPU · 125 µs off the CPU"),
            "{wire}"
        );
    }
}
