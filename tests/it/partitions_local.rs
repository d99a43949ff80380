//! A partitioned profile of 40 partitions against the local instance
//! failed every iteration: the client streams up to 64 partitions at once, the instance runs 32
//! queries at once and refused the rest with RESOURCE_EXHAUSTED.

use std::process::Command;

use spanprof::export::read_json;
use spanprof::report::Status;

use crate::history::text;

/// Against main (ef0cf4c) all 3 iterations failed ("partition 12 of 40: ... running 32 queries,
/// its limit"). Now a partition refused before its first message asks again once another has
/// ended: every iteration reads all 40 partitions, every row once.
#[test]
fn forty_partitions_take_their_turns_on_an_instance_that_runs_thirty_two_queries() {
    const ROWS: u64 = 20_000;
    let dir = tempfile::tempdir().expect("a directory");
    let json = dir.path().join("p.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "profile",
            "--local",
            "--rows",
            &ROWS.to_string(),
            "--no-history",
        ])
        .args(["--sql", "SELECT * FROM Seed23", "--query-mode", "normal"])
        .args(["--partitioned", "--max-partitions", "40"])
        .args(["--iterations", "3", "--warmup", "0", "--json"])
        .arg(&json)
        .output()
        .expect("runs");
    eprintln!("{}", text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let runs = read_json(&std::fs::read(&json).expect("the report")).expect("a report");
    for it in &runs[0].iterations {
        assert_eq!(it.status(), Status::Ok, "{:?}", it.error());
        assert_eq!(it.answer.rows, ROWS, "every row, once");
        let lanes = it.timeline.as_ref().map_or(0, |t| t.lanes.len());
        assert_eq!(lanes, 40, "a lane for each of the 40 partitions");
    }
}
