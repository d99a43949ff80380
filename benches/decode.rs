//! Decoding speed: prost alone (bytes to PartialResultSet, no rows), the reference decoder and the fast
//! decoder, on Seed23 streams cut into 16 KiB, 64 KiB and 1 MiB messages (100 and 10,000 rows) and on
//! the shared recorded vector. Repetitions are interleaved (prost, reference, fast, prost, ...) so that
//! noise from other work on the machine hits all three alike; medians, MB/s of wire bytes, rows/s, and
//! the ratio fast/reference are printed. One thread.
//!
//! `cargo bench --bench decode`. Under `cargo test` (no `--bench` argument) it only runs each decoder
//! once on the small streams and checks that they agree.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use prost::Message as _;
use spanprof::demo::seed23;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::server::stream::encode_stream;
use spanprof::wire::stream_file::shared_frames;
use spanprof::wire::{FastDecoder, Row, RowBatch, StreamDecoder};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// One stream to decode: its messages and how many rows they hold.
struct Stream {
    name: String,
    messages: Vec<Bytes>,
    rows: usize,
}

impl Stream {
    fn wire_bytes(&self) -> usize {
        self.messages.iter().map(Bytes::len).sum()
    }
}

fn seed23_stream(rows: usize, max_bytes: u32) -> Stream {
    let columns = seed23::table().columns;
    let messages = encode_stream(&columns, (0..rows as i64).map(seed23::row), max_bytes)
        .into_iter()
        .map(Bytes::from)
        .collect();
    Stream {
        name: format!("seed23 {rows} rows, {} KiB msgs", max_bytes >> 10),
        messages,
        rows,
    }
}

fn vector_stream() -> anyhow::Result<Stream> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/seed23_100_16k.bin"
    );
    let file = Bytes::from(std::fs::read(path)?);
    Ok(Stream {
        name: "shared vector seed23_100_16k.bin".into(),
        messages: shared_frames(&file)?,
        rows: 100,
    })
}

fn prost_only(stream: &Stream) -> usize {
    let mut values = 0;
    for m in &stream.messages {
        let msg = pb::PartialResultSet::decode(&m[..]).expect("the bench streams are valid");
        values += msg.values.len();
        drop(black_box(msg));
    }
    values
}

fn reference(stream: &Stream) -> Vec<Row> {
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    for m in &stream.messages {
        decoder
            .feed_bytes(m, &mut rows)
            .expect("the bench streams are valid");
    }
    decoder.finish().expect("the bench streams end cleanly");
    rows
}

fn fast(stream: &Stream) -> RowBatch {
    let mut decoder = FastDecoder::new();
    let mut rows = RowBatch::new();
    for m in &stream.messages {
        decoder
            .feed_bytes(m.clone(), &mut rows)
            .expect("the bench streams are valid");
    }
    decoder.finish().expect("the bench streams end cleanly");
    rows
}

/// The fast decoder's "wire decode" phase alone: every message scanned, no value converted.
fn fast_scan_only(stream: &Stream) -> usize {
    let decoder = FastDecoder::new();
    let mut values = 0;
    for m in &stream.messages {
        let scanned = decoder
            .scan(m.clone())
            .expect("the bench streams are valid");
        values += scanned.wire_len();
        drop(black_box(scanned));
    }
    values
}

/// The fast decoder as a streaming consumer uses it: one batch, cleared after each message's rows
/// have been looked at (here: counted).
fn fast_streaming(stream: &Stream) -> usize {
    let mut decoder = FastDecoder::new();
    let mut batch = RowBatch::new();
    let mut rows = 0;
    for m in &stream.messages {
        decoder
            .feed_bytes(m.clone(), &mut batch)
            .expect("the bench streams are valid");
        rows += batch.len();
        batch.clear();
    }
    decoder.finish().expect("the bench streams end cleanly");
    rows
}

/// Both decoders give the same rows (canonical JSON, so NaN equals NaN).
fn check_agree(stream: &Stream) {
    let want: Vec<String> = reference(stream)
        .iter()
        .map(|r| r.to_canonical_json().to_string())
        .collect();
    let got: Vec<String> = fast(stream)
        .iter()
        .map(|r| r.to_row().to_canonical_json().to_string())
        .collect();
    assert_eq!(want.len(), stream.rows, "{}: reference rows", stream.name);
    assert!(want == got, "{}: the decoders disagree", stream.name);
    assert_eq!(
        fast_streaming(stream),
        stream.rows,
        "{}: streaming rows",
        stream.name
    );
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Medians of prost, reference, fast, fast streaming and fast scan alone over `reps` interleaved repetitions.
fn measure(stream: &Stream, reps: usize) -> [Duration; 5] {
    let mut times: [Vec<Duration>; 5] = Default::default();
    for _ in 0..reps {
        times[0].push(time(|| {
            black_box(prost_only(stream));
        }));
        times[1].push(time(|| drop(black_box(reference(stream)))));
        times[2].push(time(|| drop(black_box(fast(stream)))));
        times[3].push(time(|| {
            black_box(fast_streaming(stream));
        }));
        times[4].push(time(|| {
            black_box(fast_scan_only(stream));
        }));
    }
    times.map(|mut t| median(&mut t))
}

#[allow(clippy::print_stdout)] // A benchmark reports on stdout.
fn main() -> anyhow::Result<()> {
    let measuring = std::env::args().any(|a| a == "--bench");
    // `-- --bench fast-only`: the fast decoder alone on 10,000 rows in 64 KiB messages, for a
    // profiler (valgrind --tool=callgrind) to look at.
    if std::env::args().any(|a| a == "fast-only") {
        let stream = seed23_stream(10_000, 64 << 10);
        for _ in 0..3 {
            black_box(fast(&stream));
        }
        return Ok(());
    }
    let mut streams = vec![vector_stream()?];
    let sizes = [16 << 10, 64 << 10, 1 << 20];
    let row_counts: &[usize] = if measuring { &[100, 10_000] } else { &[100] };
    for &rows in row_counts {
        for max in sizes {
            streams.push(seed23_stream(rows, max));
        }
    }
    for stream in &streams {
        check_agree(stream);
    }
    if !measuring {
        println!(
            "decode: smoke run, both decoders agree on {} streams",
            streams.len()
        );
        return Ok(());
    }

    println!("decode: one thread, interleaved repetitions, medians; MB = 10^6 wire bytes");
    println!(
        "{:<36} {:>8} {:>5} | {:>22} | {:>22} | {:>32} | {:>6} {:>6} | {:>16} | {:>9}",
        "stream",
        "MB",
        "reps",
        "prost alone ms  MB/s",
        "reference ms  MB/s",
        "fast ms  MB/s  rows/s",
        "fast/ref",
        "fast/prost",
        "streaming MB/s",
        "scan MB/s"
    );
    for stream in &streams {
        let mb = stream.wire_bytes() as f64 / 1e6;
        // About 40 MB of decoding per contestant, and at least 31 repetitions even for the 11 MB
        // streams: on a shared machine a median of fewer moves with the neighbours' load.
        let reps = ((40.0 / mb) as usize).clamp(31, 301) | 1;
        let [p, r, f, st, sc] = measure(stream, reps);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mbps = |d: Duration| mb / d.as_secs_f64();
        println!(
            "{:<36} {:>8.3} {:>5} | {:>9.3} {:>9.0} MB/s | {:>9.3} {:>9.0} MB/s | {:>9.3} {:>6.0} MB/s {:>8.0} | {:>5.2}x {:>5.2}x | {:>6.0} MB/s {:>4.2}x | {:>5.0} MB/s",
            stream.name,
            mb,
            reps,
            ms(p),
            mbps(p),
            ms(r),
            mbps(r),
            ms(f),
            mbps(f),
            stream.rows as f64 / f.as_secs_f64(),
            r.as_secs_f64() / f.as_secs_f64(),
            p.as_secs_f64() / f.as_secs_f64(),
            mbps(st),
            r.as_secs_f64() / st.as_secs_f64(),
            mbps(sc),
        );
    }
    println!(
        "fast/ref and fast/prost are speed-ups: reference time / fast time, prost time / fast time"
    );
    println!(
        "streaming: the fast decoder with one batch cleared after each message (rows counted, not kept), and its speed-up over the reference"
    );
    println!(
        "scan: the fast decoder's wire-decode phase alone (framing walked, no value converted)"
    );
    Ok(())
}
