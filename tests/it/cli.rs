//! The `spanprof decode` command, run as a real process, and the library's stream-file decoder, both
//! checked against the rows the official Python client decoded from the same recorded stream.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value as Json;
use spanprof::wire::{DecodeErrorKind, StreamFileError, decode_stream_file};

use crate::support::vector;

const STREAM: &str = "seed23_100_16k.bin";
const GOLDEN: &str = "seed23_golden_100.json";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Runs the `spanprof` binary with `args`.
fn spanprof<I, A>(args: I) -> Output
where
    I: IntoIterator<Item = A>,
    A: AsRef<OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .output()
        .expect("the spanprof binary runs")
}

/// The golden file: its column names and its rows.
struct Golden {
    columns: Vec<String>,
    rows: Vec<Json>,
    json: Json,
}

fn golden() -> Golden {
    let text = std::fs::read_to_string(vector(GOLDEN)).expect("the golden file is readable");
    let json: Json = serde_json::from_str(&text).expect("the golden file is JSON");
    let columns = json["columns"]
        .as_array()
        .expect("golden columns are an array")
        .iter()
        .map(|c| c["name"].as_str().expect("a column name").to_owned())
        .collect();
    let rows = json["rows"]
        .as_array()
        .expect("golden rows are an array")
        .clone();
    Golden {
        columns,
        rows,
        json,
    }
}

/// Where two canonical JSON values first differ, as a path suffix and the two values
/// (`"[2]: got 1.5, want 1.25"`), or `None` when they are equal. Numbers are compared as f64 (the
/// canonical encoding's floats); everything else must be exactly equal.
fn first_difference(got: &Json, want: &Json) -> Option<String> {
    match (got, want) {
        (Json::Number(a), Json::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) if x == y => None,
            _ => Some(format!(": got {a}, want {b}")),
        },
        (Json::Array(a), Json::Array(b)) => {
            let inner = a
                .iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y).map(|d| format!("[{i}]{d}")));
            inner.or_else(|| {
                (a.len() != b.len())
                    .then(|| format!(": got {} elements, want {}", a.len(), b.len()))
            })
        }
        (Json::Object(a), Json::Object(b)) => {
            let inner = b.iter().find_map(|(key, y)| match a.get(key) {
                Some(x) => first_difference(x, y).map(|d| format!(".{key}{d}")),
                None => Some(format!(".{key}: missing")),
            });
            inner.or_else(|| {
                a.keys()
                    .find(|key| !b.contains_key(*key))
                    .map(|key| format!(".{key}: unexpected"))
            })
        }
        _ => (got != want).then(|| format!(": got {got}, want {want}")),
    }
}

/// Compares decoded rows with golden rows; on the first mismatch, says which row and column.
fn compare_rows(got: &[Json], want: &[Json], columns: &[String]) -> Result<(), String> {
    for (r, (g, w)) in got.iter().zip(want).enumerate() {
        let (Json::Array(g), Json::Array(w)) = (g, w) else {
            return Err(format!("row {r}: got {g}, want {w} (rows are arrays)"));
        };
        for (c, (x, y)) in g.iter().zip(w).enumerate() {
            if let Some(d) = first_difference(x, y) {
                let name = columns.get(c).map_or("?", String::as_str);
                return Err(format!("row {r}, column {c} ({name}){d}"));
            }
        }
        if g.len() != w.len() {
            return Err(format!(
                "row {r}: got {} columns, want {}",
                g.len(),
                w.len()
            ));
        }
    }
    if got.len() != want.len() {
        return Err(format!("got {} rows, want {}", got.len(), want.len()));
    }
    Ok(())
}

/// Parses stdout as one JSON row per line.
fn stdout_rows(out: &Output) -> Vec<Json> {
    let text = std::str::from_utf8(&out.stdout).expect("stdout is UTF-8");
    assert!(text.ends_with('\n'), "stdout ends with a newline");
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("line {i} is not JSON ({e}): {line}"))
        })
        .collect()
}

/// A file in the system temporary directory, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(tag: &str, bytes: &[u8]) -> Self {
        let file = Self::unused(tag);
        std::fs::write(&file.0, bytes).expect("the temporary directory is writable");
        file
    }

    /// A unique path that is not created.
    fn unused(tag: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("spanprof-it-cli-{}-{n}-{tag}", std::process::id());
        TempFile(std::env::temp_dir().join(name))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Checks a decode error: exit code 1, nothing on stdout, exactly one non-empty line on stderr that
/// contains every one of `expected`. Returns that line.
#[track_caller]
fn assert_one_line_failure(out: &Output, expected: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "exit code; stderr: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout should be empty, got {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr, got {stderr:?}");
    let line = lines[0];
    assert!(
        line.starts_with("spanprof: ") && line.len() > "spanprof: ".len(),
        "{line:?}"
    );
    for want in expected {
        assert!(line.contains(want), "{line:?} should mention {want:?}");
    }
    line.to_owned()
}

/// Like [`assert_one_line_failure`], for `decode` of a stream that breaks part way: rows are printed
/// as they are decoded, so stdout holds the rows before the break, each a whole line and the same
/// as the official client's, and then nothing; stderr says where it broke.
fn assert_rows_then_one_line_failure(out: &Output, expected: &[&str]) -> String {
    let printed = String::from_utf8(out.stdout.clone()).expect("UTF-8 rows");
    let golden = golden();
    let lines: Vec<&str> = printed.lines().collect();
    assert!(
        lines.len() < golden.rows.len(),
        "fewer rows than the whole stream"
    );
    assert!(
        printed.is_empty() || printed.ends_with('\n'),
        "whole lines only"
    );
    for (i, line) in lines.iter().enumerate() {
        let row: Json = serde_json::from_str(line).expect("a whole JSON row");
        assert_eq!(row, golden.rows[i], "row {i}");
    }
    let only_stderr = Output {
        stdout: Vec::new(),
        ..out.clone()
    };
    assert_one_line_failure(&only_stderr, expected)
}

/// `(offset, length)` of each frame of a stream file.
fn frame_spans(file: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut offset = 0;
    while offset < file.len() {
        let prefix: [u8; 4] = file[offset..offset + 4].try_into().expect("4 bytes");
        let length = u32::from_be_bytes(prefix) as usize;
        spans.push((offset, length));
        offset += 4 + length;
    }
    assert_eq!(offset, file.len(), "the vector is well framed");
    spans
}

// ---------------------------------------------------------------------------------------------
// The comparison itself
// ---------------------------------------------------------------------------------------------

#[test]
fn the_row_comparison_reports_the_first_mismatch() {
    let columns = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
    let parse = |text: &str| -> Vec<Json> { serde_json::from_str(text).expect("test JSON") };
    let want = parse(r#"[["1", 1.5, [true, null]], ["2", 3, ["x", 0.1]]]"#);

    assert_eq!(compare_rows(&want, &want, &columns), Ok(()));
    // 3 and 3.0 are the same float.
    let same = parse(r#"[["1", 1.5, [true, null]], ["2", 3.0, ["x", 0.1]]]"#);
    assert_eq!(compare_rows(&same, &want, &columns), Ok(()));

    let cases = [
        (
            r#"[["1", 1.5, [true, null]], ["2", 3, ["x", 0.10000000000000002]]]"#,
            "row 1, column 2 (c)[1]: got 0.10000000000000002, want 0.1",
        ),
        (
            r#"[["1", 1.5, [true, null]], [2, 3, ["x", 0.1]]]"#,
            r#"row 1, column 0 (a): got 2, want "2""#,
        ),
        (
            r#"[["1", 1.5, [false, null]], ["2", 4, ["x", 0.1]]]"#,
            "row 0, column 2 (c)[0]: got false, want true",
        ),
        (
            r#"[["1", 1.5, [true]], ["2", 3, ["x", 0.1]]]"#,
            "row 0, column 2 (c): got 1 elements, want 2",
        ),
        (
            r#"[["1", 1.5, [true, null]], ["2", 3]]"#,
            "row 1: got 2 columns, want 3",
        ),
        (r#"[["1", 1.5, [true, null]]]"#, "got 1 rows, want 2"),
    ];
    for (got, message) in cases {
        assert_eq!(
            compare_rows(&parse(got), &want, &columns),
            Err(message.to_owned()),
            "{got}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The binary
// ---------------------------------------------------------------------------------------------

#[test]
fn decode_prints_the_golden_rows() {
    let golden = golden();
    let out = spanprof([OsStr::new("decode"), vector(STREAM).as_os_str()]);
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "nothing on stderr without --repeat, got {:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows = stdout_rows(&out);
    assert_eq!(rows.len(), 100, "one line per row");
    if let Err(mismatch) = compare_rows(&rows, &golden.rows, &golden.columns) {
        panic!("spanprof decode differs from the golden rows: {mismatch}");
    }
}

/// `--decoder fast` (the default) and `--decoder reference` print byte-identical rows.
#[test]
fn decode_prints_the_same_bytes_with_either_decoder() {
    let run = |decoder: &str| {
        let out = spanprof([
            OsStr::new("decode"),
            vector(STREAM).as_os_str(),
            OsStr::new("--decoder"),
            OsStr::new(decoder),
        ]);
        assert!(
            out.status.success(),
            "--decoder {decoder}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let fast = run("fast");
    assert_eq!(fast.iter().filter(|&&b| b == b'\n').count(), 100);
    assert!(
        fast == run("reference"),
        "the decoders print different rows"
    );
    let default = spanprof([OsStr::new("decode"), vector(STREAM).as_os_str()]);
    assert!(
        default.stdout == fast,
        "the default is not the fast decoder's output"
    );
}

#[test]
fn decode_with_repeat_reports_timings_and_prints_the_same_rows() {
    let golden = golden();
    let stream = vector(STREAM);
    let once = spanprof([OsStr::new("decode"), stream.as_os_str()]);
    let out = spanprof([
        OsStr::new("decode"),
        stream.as_os_str(),
        OsStr::new("--repeat"),
        OsStr::new("5"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    assert_eq!(
        out.stdout, once.stdout,
        "the rows are printed once, as without --repeat"
    );
    let rows = stdout_rows(&out);
    assert_eq!(rows.len(), 100);
    if let Err(mismatch) = compare_rows(&rows, &golden.rows, &golden.columns) {
        panic!("spanprof decode --repeat 5 differs from the golden rows: {mismatch}");
    }

    let last = stderr.lines().last().expect("a timing line on stderr");
    let numbers = (|| {
        let rest = last.strip_prefix("decode: 5 runs, median ")?;
        let (ms, rest) = rest.split_once(" ms, ")?;
        let (mb_s, rest) = rest.split_once(" MB/s, ")?;
        let rows_s = rest.strip_suffix(" rows/s")?;
        Some([ms, mb_s, rows_s].map(|n| n.parse::<f64>().ok()))
    })();
    let Some([Some(ms), Some(mb_s), Some(rows_s)]) = numbers else {
        panic!(
            "the last stderr line {last:?} is not `decode: 5 runs, median X ms, Y MB/s, Z rows/s`"
        );
    };
    for (what, x) in [("ms", ms), ("MB/s", mb_s), ("rows/s", rows_s)] {
        assert!(x.is_finite() && x > 0.0, "{what} = {x} in {last:?}");
    }
    // Throughputs come from the same median: rows/s over MB/s is 100 rows per file size in MB.
    let file_mb = std::fs::metadata(&stream).expect("the vector exists").len() as f64 / 1e6;
    let ratio = rows_s / mb_s;
    let want = 100.0 / file_mb;
    assert!(
        (ratio - want).abs() / want < 0.02,
        "rows/s / MB/s = {ratio}, expected about {want}: {last:?}"
    );
}

#[test]
fn decode_of_a_missing_file_fails_with_one_line() {
    let missing = TempFile::unused("missing.bin");
    let out = spanprof([OsStr::new("decode"), missing.path().as_os_str()]);
    let name = missing
        .path()
        .file_name()
        .and_then(OsStr::to_str)
        .expect("a UTF-8 file name");
    assert_one_line_failure(&out, &["cannot read", name]);
}

#[test]
fn decode_of_a_truncated_file_fails_with_one_line() {
    let bytes = std::fs::read(vector(STREAM)).expect("the vector is readable");
    let truncated = &bytes[..bytes.len() - 10];
    let file = TempFile::new("truncated.bin", truncated);
    let out = spanprof([OsStr::new("decode"), file.path().as_os_str()]);
    // The last frame (index 7) loses its last 10 bytes.
    let spans = frame_spans(&bytes);
    assert_eq!(spans.len(), 8);
    let (offset, length) = spans[7];
    assert!(length > 10, "the last frame is longer than what is cut");
    let expected = format!(
        "frame 7 at byte {offset} says {length} bytes but only {} remain",
        length - 10
    );
    assert_rows_then_one_line_failure(&out, &[&expected]);
}

#[test]
fn decode_of_random_garbage_fails_with_one_line() {
    // A fixed xorshift sequence: reproducible garbage.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let garbage: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect();
    let claimed = u32::from_be_bytes([garbage[0], garbage[1], garbage[2], garbage[3]]) as usize;
    assert!(
        claimed > garbage.len() - 4,
        "this garbage claims a too-long first frame"
    );
    let file = TempFile::new("garbage.bin", &garbage);
    let out = spanprof([OsStr::new("decode"), file.path().as_os_str()]);
    let expected = format!(
        "frame 0 at byte 0 says {claimed} bytes but only {} remain",
        garbage.len() - 4
    );
    assert_one_line_failure(&out, &[&expected]);
}

#[test]
fn decode_of_a_well_framed_garbage_message_names_the_message() {
    let bytes = std::fs::read(vector(STREAM)).expect("the vector is readable");
    // The first real frame, then a frame that is not a PartialResultSet.
    let (_, first_length) = frame_spans(&bytes)[0];
    let mut file = bytes[..4 + first_length].to_vec();
    file.extend_from_slice(&3u32.to_be_bytes());
    file.extend_from_slice(b"\xff\xff\xff");
    let file = TempFile::new("framed-garbage.bin", &file);
    let out = spanprof([OsStr::new("decode"), file.path().as_os_str()]);
    assert_rows_then_one_line_failure(
        &out,
        &["cannot decode", "message 1", "not a PartialResultSet"],
    );
}

#[test]
fn decode_of_an_empty_file_fails_with_one_line() {
    let file = TempFile::new("empty.bin", b"");
    let out = spanprof([OsStr::new("decode"), file.path().as_os_str()]);
    assert_one_line_failure(&out, &["message 0", "no messages"]);
}

#[test]
fn decode_of_a_stream_cut_at_a_frame_boundary_is_not_silently_short() {
    // Dropping whole messages keeps the framing valid. Every message of this vector ends mid-row or
    // inside a chunked value, so each such prefix must be reported (naming the message count and the
    // column), never printed as a shorter but "successful" result.
    let bytes = std::fs::read(vector(STREAM)).expect("the vector is readable");
    let spans = frame_spans(&bytes);
    for (kept, &(offset, _)) in spans.iter().enumerate().skip(1) {
        let prefix = &bytes[..offset];
        let err = match decode_stream_file(prefix) {
            Ok(decoded) => panic!("{kept} messages decoded as {} rows", decoded.rows.len()),
            Err(StreamFileError::Decode(e)) => e,
            Err(e) => panic!("{kept} messages: not a decode error: {e}"),
        };
        assert!(
            matches!(
                err.kind,
                DecodeErrorKind::EndedInChunk | DecodeErrorKind::EndedMidRow { want: 23, .. }
            ),
            "{kept} messages: {err}"
        );
        assert_eq!(err.message, kept, "{err}");
        assert!(err.column.is_some(), "{err}");

        let file = TempFile::new(&format!("first-{kept}.bin"), prefix);
        let out = spanprof([OsStr::new("decode"), file.path().as_os_str()]);
        let line = assert_rows_then_one_line_failure(
            &out,
            &["cannot decode", &format!("message {kept}, column ")],
        );
        assert!(line.ends_with(&err.to_string()), "{line:?} vs {err}");
    }
}

#[test]
fn decode_with_repeat_zero_is_a_usage_error() {
    let out = spanprof([
        OsStr::new("decode"),
        vector(STREAM).as_os_str(),
        OsStr::new("--repeat"),
        OsStr::new("0"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "--repeat 0 must fail");
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap's usage-error code; stderr: {stderr}"
    );
    assert!(out.stdout.is_empty(), "no rows printed");
    assert!(stderr.contains("--repeat"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// The library
// ---------------------------------------------------------------------------------------------

#[test]
fn library_decode_matches_the_golden_rows_and_counts() {
    let golden = golden();
    let bytes = std::fs::read(vector(STREAM)).expect("the vector is readable");
    let decoded = decode_stream_file(&bytes).expect("the vector decodes");

    let rows: Vec<Json> = decoded.rows.iter().map(|r| r.to_canonical_json()).collect();
    if let Err(mismatch) = compare_rows(&rows, &golden.rows, &golden.columns) {
        panic!("decode_stream_file differs from the golden rows: {mismatch}");
    }

    let columns: Vec<(String, String)> = decoded
        .columns
        .iter()
        .map(|f| (f.name.clone(), f.ty.to_string()))
        .collect();
    let golden_columns: Vec<(String, String)> = golden.json["columns"]
        .as_array()
        .expect("golden columns")
        .iter()
        .map(|c| {
            let text = |key: &str| c[key].as_str().expect("a string").to_owned();
            (text("name"), text("type"))
        })
        .collect();
    assert_eq!(columns, golden_columns);

    let frames = frame_spans(&bytes).len();
    assert_eq!(frames, 8);
    let counters = decoded.counters;
    assert_eq!(counters.messages, 8);
    assert_eq!(golden.json["stream_messages"], 8);
    assert_eq!(counters.chunked_values, 5);
    assert_eq!(golden.json["stream_chunked_messages"], 5);
    assert_eq!(counters.rows, 100);
    assert_eq!(decoded.rows.len(), 100);
    assert_eq!(counters.wire_bytes, (bytes.len() - 4 * frames) as u64);
    assert_eq!(
        counters.resume_tokens, 8,
        "every message carries a resume token"
    );
}

/// `plan`, `compare` and a baseline read at most a bounded number of bytes, so an
/// endless file (a device) or a huge one gets a one-line error instead of taking all memory.
#[test]
fn report_readers_refuse_endless_and_huge_files_in_one_line() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let huge = dir.path().join("huge.json");
    let file = std::fs::File::create(&huge).expect("creates");
    file.set_len(65 << 20).expect("a sparse 65 MiB file");
    for args in [
        vec!["plan".to_owned(), "/dev/zero".to_owned()],
        vec!["plan".to_owned(), huge.display().to_string()],
        vec![
            "compare".to_owned(),
            huge.display().to_string(),
            huge.display().to_string(),
        ],
    ] {
        let out = spanprof(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        // A device is refused unread (not a regular file), a huge file past its bound.
        assert!(
            stderr.contains("larger than 64 MiB") || stderr.contains("a character device"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.lines().count() <= 3, "{args:?}: {stderr}");
    }
}

/// A plan of 100,000 nested operators (a 29 MB report) printed 5 GB of
/// indentation; now deep operators say their depth, and every line stays short.
#[test]
fn a_plan_of_a_hundred_thousand_nested_operators_prints_in_short_lines() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = dir.path().join("p.json");
    let out = spanprof([
        "profile",
        "--no-history",
        "--rows",
        "1000",
        "--sql",
        "SELECT COUNT(*) FROM Seed23 WHERE Id < 100",
        "--query-mode",
        "profile",
        "--iterations",
        "1",
        "--warmup",
        "0",
        "--json",
        report.to_str().expect("UTF-8 path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut json: Json =
        serde_json::from_slice(&std::fs::read(&report).expect("written")).expect("a JSON report");
    const N: usize = 100_000;
    let run = &mut json["runs"][0]["plans"];
    run["plans"][0]["nodes"] = (0..N)
        .map(|i| {
            let links: Vec<Json> = if i + 1 < N {
                vec![serde_json::json!([i + 1, "", ""])]
            } else {
                vec![]
            };
            serde_json::json!({"index": i, "kind": "RELATIONAL", "display_name": "Filter",
                "child_links": links, "short_representation": null, "metadata": {},
                "execution_stats": null})
        })
        .collect();
    run["iterations"][0]["operators"] = (0..N)
        .map(|i| {
            serde_json::json!({"node": i, "total_ms": (N - i) as f64, "self_ms": 1.0,
                "cpu_ms": null, "rows": 1.0, "scanned_rows": null, "executions": 1})
        })
        .collect();
    let chain = dir.path().join("chain.json");
    std::fs::write(&chain, serde_json::to_vec(&json).expect("serializes")).expect("written");
    let out = spanprof(["plan", chain.to_str().expect("UTF-8 path")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(depth 99999) Filter"),
        "the deepest is drawn"
    );
    assert!(text.len() < 30 << 20, "{} bytes printed", text.len());
    assert!(text.lines().all(|l| l.len() < 300), "every line short");
}
