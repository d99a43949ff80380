//! Chrome trace event JSON (the format Perfetto UI, chrome://tracing and speedscope open): a
//! process per run, a thread per lane, complete (`X`) events in microseconds, and metadata
//! events naming the processes and threads.
//!
//! Iterations are laid end to end in the order they ran (by `seq` across the runs of one
//! profile, else run by run), each one top-level slice on thread 1 as long as its total. A plain
//! read's stream is drawn inside that slice on the same thread; a partitioned read's partitions
//! each on a thread of their own, inside the iteration's bounds. Inside a slice the client's waits,
//! wire and row decodes, summed buckets, resumes and the end-of-stream check follow each other
//! without overlap: every slice is clamped into its parent and after its previous sibling, so the
//! events are strictly nested on each thread whatever the report held.

use serde_json::{Value, json};

use crate::report::{IterationRecord, Lane, RunReport, printable};

use super::{ExportError, Exporter};

/// Chrome trace event JSON of every run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trace;

impl Exporter for Trace {
    fn extension(&self) -> &'static str {
        "json"
    }

    fn export(&self, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        let mut events = Vec::new();
        for (pid, run) in (1u64..).zip(reports) {
            events.push(meta("process_name", pid, 0, &printable(&run.config.label)));
            let lanes = run
                .iterations
                .iter()
                .filter_map(|r| r.timeline.as_ref())
                .map(|t| t.lanes.len())
                .max()
                .unwrap_or(0);
            events.push(meta("thread_name", pid, 1, "iterations"));
            if lanes > 1 {
                for lane in 1..=lanes as u64 {
                    let name = format!("partition {lane}");
                    events.push(meta("thread_name", pid, lane + 1, &name));
                }
            }
        }
        let mut cursor = 0u64;
        for (pid, record) in in_order(reports) {
            let total = us(record.total_ms);
            events.extend(iteration(pid, cursor, total, record));
            // A 100 µs gap keeps consecutive iterations apart in a viewer.
            cursor = cursor.saturating_add(total).saturating_add(100);
        }
        let document = json!({ "traceEvents": events, "displayTimeUnit": "ms" });
        Ok(serde_json::to_vec(&document)?)
    }
}

/// Milliseconds as whole microseconds (0 for anything not finite or negative).
fn us(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        (ms * 1000.0).round().min(u64::MAX as f64) as u64
    } else {
        0
    }
}

/// Every iteration of every run with its run's process id, in the order they ran.
fn in_order(reports: &[RunReport]) -> Vec<(u64, &IterationRecord)> {
    let mut all: Vec<(u64, &IterationRecord)> = (1u64..)
        .zip(reports)
        .flat_map(|(pid, run)| run.iterations.iter().map(move |r| (pid, r)))
        .collect();
    if all.iter().all(|(_, r)| r.seq.is_some()) {
        all.sort_by_key(|(pid, r)| (r.seq, *pid));
    }
    all
}

fn meta(kind: &str, pid: u64, tid: u64, name: &str) -> Value {
    json!({ "name": kind, "ph": "M", "pid": pid, "tid": tid, "args": { "name": name } })
}

/// A slice to be placed: name, start, duration, arguments.
struct Slice {
    name: String,
    start: u64,
    dur: u64,
    args: Value,
}

fn slice(name: String, start: u64, dur: u64, args: Value) -> Slice {
    Slice {
        name,
        start,
        dur,
        args,
    }
}

/// One iteration's events starting at `at`: its top-level slice, then each lane's slices.
fn iteration(pid: u64, at: u64, total: u64, record: &IterationRecord) -> Vec<Value> {
    let name = format!("#{} {}", record.iteration, record.status().as_str());
    let args = json!({
        "iteration": record.iteration,
        "warmup": record.warmup,
        "total_ms": record.total_ms,
        "rows": record.answer.rows,
        "messages": record.answer.messages,
        "error": record.error(),
    });
    let mut events = vec![event(pid, 1, &slice(name, at, total, args), "iteration")];
    // A cold start's steps (dns, tcp, tls, http2, token, session) before the query's lanes.
    let setup = record.timeline.as_ref().map_or(&[][..], |t| &t.setup[..]);
    let steps = setup
        .iter()
        .filter(|s| s.wall_us > 0)
        .map(|s| slice(s.step.key().to_owned(), s.start_us, s.wall_us, json!({})))
        .collect();
    events.extend(place(pid, 1, at, nest(steps, 0, total)));
    let lanes = record.timeline.as_ref().map_or(&[][..], |t| &t.lanes[..]);
    if let [one] = lanes {
        events.extend(place(pid, 1, at, nest(lane_slices(one), 0, total)));
        return events;
    }
    for (tid, lane) in (2u64..).zip(lanes) {
        // A partition's own slice, inside the iteration's bounds, with its events inside it.
        let start = lane.origin_us;
        let whole = slice(lane.name.clone(), start, lane.end_us, json!({}));
        let outer = nest(vec![whole], 0, total);
        let Some(bounds) = outer
            .first()
            .map(|s| (s.start, s.start.saturating_add(s.dur)))
        else {
            continue;
        };
        let inner = nest(lane_slices(lane), bounds.0, bounds.1);
        events.extend(place(pid, tid, at, outer.into_iter().chain(inner)));
    }
    events
}

fn place(pid: u64, tid: u64, at: u64, slices: impl IntoIterator<Item = Slice>) -> Vec<Value> {
    slices
        .into_iter()
        .map(|s| {
            let moved = Slice {
                start: s.start.saturating_add(at),
                ..s
            };
            event(pid, tid, &moved, "stream")
        })
        .collect()
}

fn event(pid: u64, tid: u64, s: &Slice, cat: &str) -> Value {
    json!({
        "name": s.name, "cat": cat, "ph": "X", "ts": s.start, "dur": s.dur,
        "pid": pid, "tid": tid, "args": s.args,
    })
}

/// A lane's slices, offsets from the iteration's start.
fn lane_slices(lane: &Lane) -> Vec<Slice> {
    let o = lane.origin_us;
    let at = |t: u64| o.saturating_add(t);
    let mut out = Vec::new();
    for m in &lane.messages {
        let wait = m.wait_us();
        out.push(slice(
            format!("wait #{}", m.number),
            at(m.waited_from_us),
            wait,
            json!({}),
        ));
        let args = json!({
            "bytes": m.bytes, "values": m.values, "rows": m.rows,
            "resume_token": m.resume_token, "chunked": m.chunked, "cpu_us": m.wire.cpu_us,
        });
        out.push(slice(
            format!("wire decode #{}", m.number),
            at(m.wire.start_us),
            m.wire.wall_us,
            args,
        ));
        if let Some(row) = &m.row {
            let args = json!({ "cpu_us": row.cpu_us, "rows": m.rows });
            out.push(slice(
                format!("row decode #{}", m.number),
                at(row.start_us),
                row.wall_us,
                args,
            ));
        }
    }
    for b in &lane.buckets {
        let args = json!({
            "bytes": b.bytes, "rows": b.rows, "wait_us": b.wait_us, "max_wait_us": b.max_wait_us,
            "max_wait_at": b.max_wait_at, "wire_wall_us": b.wire_wall_us, "wire_cpu_us": b.wire_cpu_us,
            "row_wall_us": b.row_wall_us, "row_cpu_us": b.row_cpu_us,
        });
        let dur = b.to_us.saturating_sub(b.from_us);
        out.push(slice(
            format!("messages {}-{}", b.first, b.last),
            at(b.from_us),
            dur,
            args,
        ));
    }
    for r in &lane.resumes {
        let args = json!({
            "status": printable(&r.status), "dropped_messages": r.dropped_messages,
            "dropped_bytes": r.dropped_bytes, "backoff_us": r.backoff_us,
        });
        let dur = r.resent_us.saturating_sub(r.at_us);
        out.push(slice("resume".into(), at(r.at_us), dur, args));
    }
    if let Some(f) = &lane.finish {
        out.push(slice(
            "finish".into(),
            at(f.start_us),
            f.wall_us,
            json!({ "cpu_us": f.cpu_us }),
        ));
    }
    out
}

/// `slices` as siblings inside `[from, to]`: in order of their start, each clamped into the
/// bounds and to begin where the previous one ended; what no longer fits is dropped.
fn nest(mut slices: Vec<Slice>, from: u64, to: u64) -> Vec<Slice> {
    slices.sort_by_key(|s| s.start);
    let mut out: Vec<Slice> = Vec::with_capacity(slices.len());
    let mut free = from;
    for s in slices {
        let start = s.start.max(free);
        let end = s.start.saturating_add(s.dur).min(to);
        if start >= to || end < start {
            continue;
        }
        free = end;
        out.push(Slice {
            start,
            dur: end - start,
            ..s
        });
    }
    out
}

#[cfg(test)]
#[path = "trace/tests.rs"]
mod tests;
