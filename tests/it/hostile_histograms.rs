//! A load report's histograms are HdrHistogram's V2 encoding in base64, read back by `load merge`
//! (from a file, an HTML page or the history). Before they were checked, a 40-byte header
//! claiming a 4 GiB payload made `load merge` allocate 4 GiB (under a 3 GB address-space cap it
//! aborted: "memory allocation of 4294967280 bytes failed"), and a compressed histogram of a few
//! MB inflated to 2.4 GiB of zero counts (12 s, 2.5 GB resident, exit 0). Now each is refused
//! with a clear error, quickly, in little memory, under the same cap.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use spanprof::load::{
    Ended, LoadReport, LoadSteps, Model, RunFacts, StepCpu, StepLevel, StepResult, StepTally,
};
use spanprof::report::Parts;

use crate::row_check::peak_of;

/// The plain V2 encoding's cookie, and the compressed one's (HdrHistogram's format).
const COOKIE: u32 = 0x1c84_9313;
const COMPRESSED_COOKIE: u32 = 0x1c84_9314;

/// A V2 header of spanprof's bounds (1 µs to an hour, 3 digits) claiming `payload` bytes.
fn header(payload: u32) -> Vec<u8> {
    let mut h = Vec::new();
    h.extend(COOKIE.to_be_bytes());
    h.extend(payload.to_be_bytes());
    h.extend(0u32.to_be_bytes());
    h.extend(3u32.to_be_bytes());
    h.extend(1u64.to_be_bytes());
    h.extend(3_600_000_000u64.to_be_bytes());
    h.extend(1f64.to_be_bytes());
    h
}

/// A compressed histogram that inflates to a header and `zeros` zero bytes (each a zero count).
fn bomb(zeros: u64) -> Vec<u8> {
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&header(u32::try_from(zeros).unwrap_or(u32::MAX)))
        .expect("into a Vec");
    let chunk = vec![0u8; 1 << 20];
    let mut left = zeros;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        z.write_all(&chunk[..n]).expect("into a Vec");
        left -= n as u64;
    }
    let body = z.finish().expect("into a Vec");
    let mut out = COMPRESSED_COOKIE.to_be_bytes().to_vec();
    out.extend(u32::try_from(body.len()).expect("small").to_be_bytes());
    out.extend(body);
    out
}

/// A run of one step at 10 req/s, three requests measured.
fn run(label: &str) -> LoadReport {
    let mut tally = StepTally::new(StepLevel::Rate(10.0));
    for ms in [5, 6, 7] {
        tally.ok(
            &Ended {
                from_intended: Duration::from_millis(ms),
                from_start: Duration::from_millis(ms),
                at: Duration::from_secs(1),
                rows: 1,
                bytes: 100,
                decode_cpu: Duration::from_micros(50),
                work_cpu: Duration::from_micros(10),
            },
            &Parts::default(),
        );
    }
    let step: StepResult = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
    let plan = LoadSteps {
        model: Model::Open,
        levels: vec![StepLevel::Rate(10.0)],
        step_duration: Duration::from_secs(1),
        max_in_flight: 10,
        drain: Duration::from_secs(1),
    };
    let facts = RunFacts {
        label: label.into(),
        sql: "SELECT 1".into(),
        target: "local".into(),
        started_at: "2026-12-04T10:00:00Z".into(),
        cores: 2,
        ..RunFacts::default()
    };
    LoadReport::new(facts, &plan, vec![step])
}

/// `load merge` of a good run and one whose step histogram is `hostile`, under a 3 GB
/// address-space cap: its peak resident memory, how long it took, its exit and stderr.
fn merge_with(dir: &Path, hostile: &[u8]) -> (u64, Duration, Option<i32>, String) {
    let good = dir.join("good.json");
    let bad = dir.join("bad.json");
    std::fs::write(&good, serde_json::to_vec(&run("good")).expect("JSON")).expect("written");
    let mut other = run("bad");
    other.steps[0].histogram = base64::engine::general_purpose::STANDARD.encode(hostile);
    std::fs::write(&bad, serde_json::to_vec(&other).expect("JSON")).expect("written");
    let script = format!(
        "ulimit -v 3000000 && exec '{}' load merge '{}' '{}' --json '{}'",
        env!("CARGO_BIN_EXE_spanprof"),
        good.display(),
        bad.display(),
        dir.join("merged.json").display()
    );
    let began = Instant::now();
    let child = Command::new("sh")
        .args(["-c", &script])
        .env_remove("SPANPROF_HISTORY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let (peak, out) = peak_of(child);
    let took = began.elapsed();
    (
        peak,
        took,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused(what: &str, hostile: &[u8], why: &str) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (peak, took, code, stderr) = merge_with(dir.path(), hostile);
    eprintln!("{what}: {peak} bytes peak, {took:?}, exit {code:?}: {stderr}");
    assert_eq!(code, Some(1), "{what}: a refusal, not an abort: {stderr}");
    assert!(
        stderr.contains("run 2, step 1") && stderr.contains(why),
        "{what}: {stderr}"
    );
    assert!(took < Duration::from_secs(10), "{what}: {took:?}");
    assert!(
        peak < 300 << 20,
        "{what}: {peak} bytes resident at its peak"
    );
    assert!(!dir.path().join("merged.json").exists(), "nothing written");
}

#[test]
fn a_forty_byte_histogram_claiming_four_gib_is_refused_in_little_memory() {
    let claim = header(u32::MAX - 15);
    assert_eq!(claim.len(), 40);
    assert_refused("the plain claim", &claim, "claims 4294967280 bytes");
    // The same claim compressed.
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&claim).expect("into a Vec");
    let body = z.finish().expect("into a Vec");
    let mut compressed = COMPRESSED_COOKIE.to_be_bytes().to_vec();
    compressed.extend(u32::try_from(body.len()).expect("small").to_be_bytes());
    compressed.extend(body);
    assert_refused(
        "the compressed claim",
        &compressed,
        "claims 4294967280 bytes",
    );
}

#[test]
fn a_decompression_bomb_is_refused_before_it_inflates() {
    // 2.4 GiB of zero counts deflate to about 2.4 MB: longer than any histogram's encoding.
    assert_refused(
        "the 2.4 GiB bomb",
        &bomb(2_400 << 20),
        "the histogram's encoding is",
    );
    // Within the encoding's bound, about 700 MB of zeros: refused where the inflating passes
    // what a histogram of spanprof's bounds takes.
    assert_refused("the 700 MB bomb", &bomb(700 << 20), "inflates past");
}
