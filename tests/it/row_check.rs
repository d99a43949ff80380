//! `spanprof client`'s row check holds a bounded multiple of what it compares:
//! the printed rows are compared as they are read, not all kept first.

use prost::bytes::Bytes;
use spanprof::server::stream::encode_stream;
use spanprof::subject::check::{Expected, check};
use spanprof::wire::{Field, Type, Value};

/// An answer of one INT64 column and one row.
fn one_row() -> Expected {
    let columns = vec![Field {
        name: "n".into(),
        ty: Type::Int64,
    }];
    let messages: Vec<Bytes> = encode_stream(&columns, [vec![Value::Int64(1)]], 1 << 20)
        .into_iter()
        .map(Bytes::from)
        .collect();
    Expected::decode(&messages).expect("decodes")
}

#[test]
fn millions_of_printed_rows_are_checked_in_little_memory() {
    let expected = one_row();
    // 2,000,000 lines of `[]`, 6 MB: kept as JSON values they take 64 MB and more.
    let stdout = "[]\n".repeat(2_000_000).into_bytes();
    let checked = check(&expected, &stdout, false);
    let mismatch = checked.expect_err("no row is the one sent");
    assert_eq!(mismatch.printed, 2_000_000);
    assert!(
        mismatch
            .to_string()
            .contains("row 1 has 0 values, the result 1 columns"),
        "{mismatch}"
    );
}

#[test]
fn one_huge_printed_line_is_refused_before_it_is_parsed() {
    let expected = one_row();
    // One line of 5,000,000 numbers, 10 MB: as JSON values, 160 MB.
    let mut line = "0,".repeat(5_000_000);
    line.pop();
    let stdout = format!("[\"1\"]\n[{line}]\n").into_bytes();
    let checked = check(&expected, &stdout, false);
    let mismatch = checked.expect_err("the line is no row that was sent");
    let text = mismatch.to_string();
    assert!(
        text.contains("output line 2 is not a row: 10,000,001 bytes, longer than any row"),
        "{text}"
    );
}

/// The most resident memory `child` reaches before it exits (its VmHWM, read until it is gone), and
/// its output.
pub(crate) fn peak_of(child: std::process::Child) -> (u64, std::process::Output) {
    let status = format!("/proc/{}/status", child.id());
    let waiter = std::thread::spawn(move || child.wait_with_output());
    let mut peak = 0;
    while !waiter.is_finished() {
        let kib = std::fs::read_to_string(&status).ok().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
        peak = peak.max(kib.unwrap_or(0) * 1024);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let output = waiter.join().expect("joins").expect("waits");
    (peak, output)
}

/// In a real process, at full size: a program that reads its query and then prints
/// 20,000,000 lines of `[]` (60 MB, under the 256 MiB output cap) took `spanprof client` to 2.7 GB
/// before 07836c8, which kept every printed row as a JSON value. Now the rows are compared as they
/// are read: the output itself and a bounded rest. Measured (debug build): peak 195-221 MiB;
/// asserted under 400 MiB.
#[test]
fn twenty_million_printed_lines_are_checked_within_a_bound_of_memory() {
    const PEAK: u64 = 400 << 20;
    let bin = env!("CARGO_BIN_EXE_spanprof");
    let child = std::process::Command::new(bin)
        .args([
            "client",
            "--rows",
            "10",
            "--iterations",
            "1",
            "--warmup",
            "0",
            "--sql",
            "SELECT 1",
            "--",
            "sh",
            "-c",
            &format!("'{bin}' driver; yes '[]' | head -n 20000000"),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spanprof runs");
    let (peak, output) = peak_of(child);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("spanprof client peaked at {} MiB", peak >> 20);
    assert_eq!(output.status.code(), Some(3), "a wrong row: {stderr}");
    assert!(
        stderr.contains("20,000,001 of 1 rows: rows from row 2 on were never sent"),
        "{stderr}"
    );
    assert!(
        peak > 0 && peak < PEAK,
        "spanprof client peaked at {} MiB checking 60 MB of output",
        peak >> 20
    );
}
