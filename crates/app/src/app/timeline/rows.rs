//! The timeline view's rows as plain data, built once when an iteration's timeline is opened:
//! per iteration a row of a cold start's steps (dns, tcp, tls, http2, token, session) when it had
//! them, a row of the server's reported time, then per lane (stream or partition) a row
//! of waits (each message's wait, its arrival tick, the summed buckets, the resumes) and a row of
//! decode spans (wire, row and the end-of-stream check, each with its CPU time). Every item is in
//! microseconds from the iteration's start, sorted by start, with the running maximum of the ends
//! beside it so the view finds what is visible by binary search ([`Row::visible`]) instead of
//! walking every message each frame.
//! How the server's time splits against the client's is the record's accounting's to say, not
//! the timeline's.

use std::ops::Range;

use crate::report::{IterationRecord, Lane, Timeline};

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The client waited for a message.
    Wait,
    /// A wait the causes named: a stall before that message.
    Stall,
    /// A message's wire decode.
    Wire,
    /// A message's row decode.
    Row,
    /// The decoder's end-of-stream check.
    Finish,
    /// Later messages summed (the report keeps every message up to a limit, then buckets).
    Bucket,
    /// A stream that broke, from the break to the request sent again.
    Resume,
    /// The server's reported elapsed time, placed from when the request was sent.
    Server,
    /// A cold start's step (a new connection, token, session) before the query.
    Setup,
}

impl Kind {
    /// Every kind, in a fixed order (for sums by kind).
    pub const ALL: [Kind; 9] = [
        Kind::Wait,
        Kind::Stall,
        Kind::Wire,
        Kind::Row,
        Kind::Finish,
        Kind::Bucket,
        Kind::Resume,
        Kind::Server,
        Kind::Setup,
    ];

    /// Its place in [`Kind::ALL`].
    pub fn index(self) -> usize {
        Kind::ALL.iter().position(|&k| k == self).unwrap_or(0)
    }
}

/// Items summed per block, so a zoomed-out frame takes a block of narrow items at once instead of
/// walking each.
pub const BLOCK: usize = 64;

/// [`BLOCK`] consecutive items of a row, summed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Block {
    /// The first item's start.
    pub start_us: u64,
    /// The latest end among them.
    pub end_us: u64,
    /// The longest of them.
    pub max_len_us: u64,
    /// Their lengths by kind, in [`Kind::ALL`] order.
    pub lengths: [u64; Kind::ALL.len()],
    /// Their lengths summed.
    pub wall_us: u64,
    /// Their CPU time summed (an item without one counts its length).
    pub cpu_us: u64,
}

impl Block {
    fn of(items: &[Item]) -> Block {
        let mut b = Block {
            start_us: items.first().map_or(0, |i| i.start_us),
            ..Block::default()
        };
        for i in items {
            let len = i.len_us();
            b.end_us = b.end_us.max(i.end_us);
            b.max_len_us = b.max_len_us.max(len);
            b.lengths[i.kind.index()] = b.lengths[i.kind.index()].saturating_add(len);
            b.wall_us = b.wall_us.saturating_add(len);
            b.cpu_us = b.cpu_us.saturating_add(i.cpu_us.unwrap_or(len).min(len));
        }
        b
    }
}

/// Which message, bucket or resume of its lane an item shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `lane.messages[i]`.
    Message(usize),
    /// `lane.buckets[i]`.
    Bucket(usize),
    /// `lane.resumes[i]`.
    Resume(usize),
    /// `lane.finish`.
    Finish,
    /// The record's server time.
    Server,
    /// `timeline.setup[i]`.
    Setup(usize),
}

/// One bar of a row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Item {
    /// From the iteration's start, microseconds.
    pub start_us: u64,
    /// Where it ends (at least its start).
    pub end_us: u64,
    /// For a span of the client's work, the CPU time its thread got (at most its wall time).
    pub cpu_us: Option<u64>,
    /// What it is.
    pub kind: Kind,
    /// What of its lane it shows.
    pub source: Source,
}

impl Item {
    /// Its length.
    pub fn len_us(&self) -> u64 {
        self.end_us.saturating_sub(self.start_us)
    }
}

/// What a row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    /// A cold start's steps.
    Setup,
    /// The server's reported time.
    Server,
    /// A lane's waits, arrivals and resumes.
    Waits,
    /// A lane's decode spans.
    Decode,
}

/// One row of the picture.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Its name on the axis (`#3 waits`, `#5 p2 decode`).
    pub label: String,
    /// The iteration it belongs to.
    pub iteration: u32,
    /// The lane of that iteration's timeline (0 for the server's row).
    pub lane: usize,
    /// What it shows.
    pub kind: RowKind,
    /// Its bars, sorted by start.
    pub items: Vec<Item>,
    /// `max_end[i]`: the latest end of `items[..=i]`.
    max_end: Vec<u64>,
    /// `blocks[k]` sums `items[k * BLOCK..]`, at most [`BLOCK`] of them.
    pub blocks: Vec<Block>,
    /// When each message arrived (a tick each), sorted.
    pub ticks: Vec<u64>,
    /// When a request was sent (the first and after each resume), and when the headers came.
    pub marks: Vec<(u64, Mark)>,
}

/// A point in time a row marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A request was sent.
    Request,
    /// The response headers came.
    Headers,
}

impl Row {
    fn new(label: String, iteration: u32, lane: usize, kind: RowKind, mut items: Vec<Item>) -> Row {
        items.sort_by_key(|i| (i.start_us, i.end_us));
        let mut latest = 0u64;
        let max_end = items
            .iter()
            .map(|i| {
                latest = latest.max(i.end_us);
                latest
            })
            .collect();
        let mut row = Row {
            label,
            iteration,
            lane,
            kind,
            items,
            max_end,
            blocks: Vec::new(),
            ticks: Vec::new(),
            marks: Vec::new(),
        };
        row.refresh_blocks();
        row
    }

    /// Sums the items into blocks again (after their kinds changed).
    pub fn refresh_blocks(&mut self) {
        self.blocks = self.items.chunks(BLOCK).map(Block::of).collect();
    }

    /// The items that may reach into `[from_us, to_us]`: every one outside the range returned
    /// ends before `from_us` or starts after `to_us`; some inside it may still lie outside (an
    /// early long item keeps later short ones in), which the caller skips.
    pub fn visible(&self, from_us: u64, to_us: u64) -> Range<usize> {
        let first = self.max_end.partition_point(|&end| end < from_us);
        let last = self.items.partition_point(|i| i.start_us <= to_us);
        first..last.max(first)
    }

    /// The ticks in `[from_us, to_us]`.
    pub fn visible_ticks(&self, from_us: u64, to_us: u64) -> &[u64] {
        let first = self.ticks.partition_point(|&t| t < from_us);
        let last = self.ticks.partition_point(|&t| t <= to_us);
        &self.ticks[first..last.max(first)]
    }
}

/// Where a lane's time `t` (from its origin) lies from the iteration's start.
fn at(lane: &Lane, t: u64) -> u64 {
    lane.origin_us.saturating_add(t)
}

/// A span as an item of `kind`, its CPU time capped by its wall time.
fn span_item(lane: &Lane, span: &crate::report::Span, kind: Kind, source: Source) -> Item {
    let start_us = at(lane, span.start_us);
    Item {
        start_us,
        end_us: start_us.saturating_add(span.wall_us),
        cpu_us: Some(span.cpu_us.unwrap_or(span.wall_us).min(span.wall_us)),
        kind,
        source,
    }
}

/// A lane's waits row and decode row; the messages in `stalls` (numbers from 1) are marked as
/// stalls.
fn lane_rows(prefix: &str, iteration: u32, index: usize, lane: &Lane, stalls: &[u32]) -> [Row; 2] {
    let mut waits = Vec::with_capacity(lane.messages.len() + lane.buckets.len());
    let mut decode = Vec::with_capacity(lane.messages.len() * 2 + 1);
    let mut ticks = Vec::with_capacity(lane.messages.len());
    for (i, m) in lane.messages.iter().enumerate() {
        let kind = if stalls.contains(&m.number) {
            Kind::Stall
        } else {
            Kind::Wait
        };
        waits.push(Item {
            start_us: at(lane, m.waited_from_us),
            end_us: at(lane, m.arrived_us.max(m.waited_from_us)),
            cpu_us: None,
            kind,
            source: Source::Message(i),
        });
        ticks.push(at(lane, m.arrived_us));
        decode.push(span_item(lane, &m.wire, Kind::Wire, Source::Message(i)));
        if let Some(row) = &m.row {
            decode.push(span_item(lane, row, Kind::Row, Source::Message(i)));
        }
    }
    for (i, b) in lane.buckets.iter().enumerate() {
        waits.push(Item {
            start_us: at(lane, b.from_us),
            end_us: at(lane, b.to_us.max(b.from_us)),
            cpu_us: None,
            kind: Kind::Bucket,
            source: Source::Bucket(i),
        });
    }
    for (i, r) in lane.resumes.iter().enumerate() {
        waits.push(Item {
            start_us: at(lane, r.at_us),
            end_us: at(lane, r.resent_us.max(r.at_us)),
            cpu_us: None,
            kind: Kind::Resume,
            source: Source::Resume(i),
        });
    }
    if let Some(finish) = &lane.finish {
        decode.push(span_item(lane, finish, Kind::Finish, Source::Finish));
    }
    ticks.sort_unstable();
    let name = if lane.name == "stream" || lane.name.is_empty() {
        String::new()
    } else {
        format!(" {}", crate::report::printable(&lane.name))
    };
    let mut waits = Row::new(
        format!("{prefix}{name} waits"),
        iteration,
        index,
        RowKind::Waits,
        waits,
    );
    waits.ticks = ticks;
    waits.marks = lane
        .requests_us
        .iter()
        .map(|&t| (at(lane, t), Mark::Request))
        .chain(lane.headers_us.map(|t| (at(lane, t), Mark::Headers)))
        .collect();
    waits.marks.sort_unstable_by_key(|(t, _)| *t);
    let decode = Row::new(
        format!("{prefix}{name} decode"),
        iteration,
        index,
        RowKind::Decode,
        decode,
    );
    [waits, decode]
}

/// When the iteration's first request was sent (0 without one).
pub fn first_request_us(timeline: &Timeline) -> u64 {
    timeline
        .lanes
        .iter()
        .filter_map(|l| l.requests_us.first().map(|&t| at(l, t)))
        .min()
        .unwrap_or(0)
}

/// The rows of one iteration: its server's row (when the server reported its time), then two
/// per lane. `prefix` names them (`#3`, `#5 median`); `stalls` are the messages the causes named.
pub fn iteration_rows(
    prefix: &str,
    record: &IterationRecord,
    timeline: &Timeline,
    stalls: &[u32],
) -> Vec<Row> {
    let mut rows = Vec::with_capacity(2 + 2 * timeline.lanes.len());
    if !timeline.setup.is_empty() {
        let steps = timeline.setup.iter().enumerate().map(|(i, step)| Item {
            start_us: step.start_us,
            end_us: step.start_us.saturating_add(step.wall_us),
            cpu_us: None,
            kind: Kind::Setup,
            source: Source::Setup(i),
        });
        rows.push(Row::new(
            format!("{prefix} cold start"),
            record.iteration,
            0,
            RowKind::Setup,
            steps.collect(),
        ));
    }
    if let Some(server_us) = record.query.server_elapsed_ms.and_then(ms_to_us) {
        let start_us = first_request_us(timeline);
        let item = Item {
            start_us,
            end_us: start_us.saturating_add(server_us),
            cpu_us: None,
            kind: Kind::Server,
            source: Source::Server,
        };
        rows.push(Row::new(
            format!("{prefix} server"),
            record.iteration,
            0,
            RowKind::Server,
            vec![item],
        ));
    }
    for (i, lane) in timeline.lanes.iter().enumerate() {
        rows.extend(lane_rows(prefix, record.iteration, i, lane, stalls));
    }
    rows
}

/// Milliseconds as whole microseconds, for a finite, non-negative figure below a day.
pub fn ms_to_us(ms: f64) -> Option<u64> {
    (ms.is_finite() && (0.0..86_400_000.0).contains(&ms)).then(|| (ms * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Bucket, Message, Resume, Span};

    fn message(number: u32, from: u64, arrived: u64, wire: u64, row: u64) -> Message {
        Message {
            number,
            waited_from_us: from,
            arrived_us: arrived,
            wire: Span {
                start_us: arrived,
                wall_us: wire,
                cpu_us: Some(wire / 2),
            },
            row: Some(Span {
                start_us: arrived + wire,
                wall_us: row,
                cpu_us: None,
            }),
            ..Message::default()
        }
    }

    fn lane() -> Lane {
        Lane {
            name: "stream".into(),
            requests_us: vec![10],
            headers_us: Some(300),
            messages: vec![
                message(1, 20, 500, 100, 200),
                message(2, 800, 900, 100, 100),
                message(3, 1_100, 81_100, 100, 100),
            ],
            buckets: vec![Bucket {
                first: 4,
                last: 9,
                from_us: 81_400,
                to_us: 90_000,
                wait_us: 4_000,
                wire_wall_us: 2_000,
                row_wall_us: 1_000,
                ..Bucket::default()
            }],
            resumes: vec![Resume {
                at_us: 700,
                resent_us: 790,
                ..Resume::default()
            }],
            end_us: 90_100,
            ..Lane::default()
        }
    }

    fn record(server_ms: Option<f64>) -> IterationRecord {
        {
            let mut r = IterationRecord::new("r", 3, false, "t");
            r.total_ms = 90.2;
            r.query.server_elapsed_ms = server_ms;
            r.timeline = Some(Timeline {
                lanes: vec![lane()],
                total_us: 90_200,
                setup: Vec::new(),
            });
            r
        }
    }

    #[test]
    fn a_cold_iteration_has_a_row_of_its_steps_before_the_server_row() {
        let mut r = record(Some(2.0));
        let timeline = r.timeline.as_mut().expect("a timeline");
        timeline.setup = crate::report::ColdStep::ALL
            .into_iter()
            .enumerate()
            .map(|(i, step)| crate::report::SetupStep {
                step,
                start_us: i as u64 * 100,
                wall_us: 90,
            })
            .collect();
        let timeline = r.timeline.as_ref().expect("a timeline");
        let rows = iteration_rows("#3", &r, timeline, &[]);
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            ["#3 cold start", "#3 server", "#3 waits", "#3 decode"]
        );
        assert_eq!(rows[0].kind, RowKind::Setup);
        let spans: Vec<(u64, u64)> = rows[0]
            .items
            .iter()
            .map(|i| (i.start_us, i.end_us))
            .collect();
        assert_eq!(spans[0], (0, 90));
        assert_eq!(spans[5], (500, 590));
        let text = super::super::paint::item_text(&rows[0], timeline, &rows[0].items[2], None);
        assert!(text.contains("cold start: tls 90.0 µs"), "{text}");
        assert!(
            iteration_rows("#3", &record(None), timeline, &[])
                .iter()
                .any(|row| row.kind == RowKind::Setup),
            "the steps come from the timeline"
        );
        let warm = record(None);
        assert!(
            !iteration_rows(
                "#3",
                &warm,
                warm.timeline.as_ref().expect("a timeline"),
                &[]
            )
            .iter()
            .any(|row| row.kind == RowKind::Setup),
            "a warm iteration has none"
        );
    }

    #[test]
    fn an_iteration_has_a_server_row_and_a_waits_and_decode_row_per_lane() {
        let r = record(Some(2.0));
        let rows = iteration_rows("#3", &r, r.timeline.as_ref().expect("a timeline"), &[3]);
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["#3 server", "#3 waits", "#3 decode"]);
        assert_eq!(rows[0].items[0].start_us, 10, "from the request's sending");
        assert_eq!(rows[0].items[0].end_us, 2_010);
        let kinds: Vec<Kind> = rows[1].items.iter().map(|i| i.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Wait,
                Kind::Resume,
                Kind::Wait,
                Kind::Stall,
                Kind::Bucket
            ],
            "sorted by start, message 3 marked a stall"
        );
        assert_eq!(rows[1].ticks, [500, 900, 81_100]);
        assert_eq!(rows[1].marks, [(10, Mark::Request), (300, Mark::Headers)]);
        assert_eq!(rows[2].items.len(), 6);
        assert_eq!(rows[2].items[0].cpu_us, Some(50), "wire CPU kept");
        assert_eq!(rows[2].items[1].cpu_us, Some(200), "no CPU clock: all CPU");
        let none = iteration_rows(
            "#3",
            &record(None),
            r.timeline.as_ref().expect("a timeline"),
            &[],
        );
        assert_eq!(none.len(), 2, "no server time, no server row");
    }

    #[test]
    fn a_partitioned_read_has_two_rows_per_partition_from_its_own_origin() {
        let mut r = record(None);
        let mut second = lane();
        second.name = "partition 2".into();
        second.origin_us = 5_000;
        let timeline = r.timeline.as_mut().expect("a timeline");
        timeline.lanes[0].name = "partition 1".into();
        timeline.lanes.push(second);
        let rows = iteration_rows("#3", &r, r.timeline.as_ref().expect("a timeline"), &[]);
        let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "#3 partition 1 waits",
                "#3 partition 1 decode",
                "#3 partition 2 waits",
                "#3 partition 2 decode"
            ]
        );
        assert_eq!(rows[2].lane, 1);
        assert_eq!(rows[2].items[0].start_us, 5_020, "from the lane's origin");
        assert_eq!(rows[2].marks[0], (5_010, Mark::Request));
    }

    #[test]
    fn visible_finds_only_what_reaches_into_the_range() {
        let r = record(None);
        let rows = iteration_rows("#3", &r, r.timeline.as_ref().expect("a timeline"), &[]);
        let waits = &rows[0];
        let shown: Vec<u64> = waits.items[waits.visible(850, 1_000)]
            .iter()
            .map(|i| i.start_us)
            .collect();
        assert_eq!(shown, [800], "the wait that spans 850..1000");
        let stall = waits.visible(40_000, 41_000);
        assert_eq!(waits.items[stall].len(), 1, "inside the long wait");
        assert!(waits.visible(95_000, 99_000).is_empty());
        assert!(waits.visible(0, 5).is_empty());
        assert_eq!(waits.visible_ticks(600, 90_000), [900, 81_100]);
    }
}
