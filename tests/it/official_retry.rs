//! The official clients in the retry lab (`spanprof client --read-write --abort-every 3`), each
//! through its read-write driver: every transaction lands, and each rule of a correct retry gets
//! the verdict this client earns today. A verdict that changes means the client changed (or the
//! check did): a failure here is a finding about the client, written down in
//! docs/commands/client.md, not a check to bend.
//!
//! Needs the clients installed (`scripts/test` sets SPANPROF_PYTHON, SPANPROF_NODE_MODULES and
//! SPANPROF_RUST_CLIENT); `#[ignore]`d for a bare `cargo test`, and failing loudly without them.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use serde_json::Value as Json;

fn var(name: &str) -> String {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!("{name} is not set: run ./scripts/test, which installs the official clients"),
    }
}

/// The lab's JSON for `command` (with `env`), and the verdict of each rule by name.
fn lab(command: &[String], env: &[(&str, String)]) -> (Json, BTreeMap<String, String>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("lab.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args([
            "client",
            "--read-write",
            "--abort-every",
            "3",
            "--limit",
            "240s",
            "--json",
        ])
        .arg(&json)
        .arg("--")
        .args(command)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .output()
        .expect("spanprof runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!("{stdout}");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let exported: Json = serde_json::from_str(&text).expect("JSON");
    assert_eq!(
        exported["success"], true,
        "the driver exits 0: {exported:#}"
    );
    let verdicts = exported["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            let name = r["rule"].as_str().expect("a rule").to_owned();
            (name, r["verdict"].as_str().expect("a verdict").to_owned())
        })
        .collect();
    (exported, verdicts)
}

fn expect(verdicts: &BTreeMap<String, String>, table: &[(&str, &str)], exported: &Json) {
    let table: BTreeMap<String, String> = table
        .iter()
        .map(|(r, v)| ((*r).to_owned(), (*v).to_owned()))
        .collect();
    assert_eq!(verdicts, &table, "{exported:#}");
}

/// 6 transactions committed, each third new one aborted once: 8 attempts for them.
fn six_committed(exported: &Json, failing: u64) {
    let amp = &exported["amplification"];
    assert_eq!(amp["committed"], 6, "{amp}");
    assert_eq!(amp["transactions"], 6 + failing, "{amp}");
    assert_eq!(amp["attempts"], 8 + failing, "{amp}");
}

#[test]
#[ignore = "needs the official Python client: run ./scripts/test"]
fn the_official_python_client_in_the_retry_lab() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/clients/python_read_write.py"
    );
    let (exported, verdicts) = lab(&[var("SPANPROF_PYTHON"), script.into()], &[]);
    six_committed(&exported, 1);
    expect(
        &verdicts,
        &[
            ("same_session", "not_exercised"),
            ("previous_transaction", "pass"),
            ("same_tag", "pass"),
            ("latest_token", "pass"),
            ("retry_delay", "pass"),
            // run_in_transaction re-raises a GoogleAPICallError without Transaction.rollback().
            ("rollback_after_failure", "fail"),
        ],
        &exported,
    );
}

#[test]
#[ignore = "needs the official Node client: run ./scripts/test"]
fn the_official_node_client_in_the_retry_lab() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/clients/node_read_write.js"
    );
    let env = [("NODE_PATH", var("SPANPROF_NODE_MODULES"))];
    let (exported, verdicts) = lab(&["node".into(), script.into()], &env);
    six_committed(&exported, 1);
    expect(
        &verdicts,
        &[
            ("same_session", "not_exercised"),
            ("previous_transaction", "pass"),
            // The retry's explicit BeginTransaction carries no transaction tag.
            ("same_tag", "fail"),
            ("latest_token", "pass"),
            ("retry_delay", "pass"),
            // Nothing rolls the transaction back after the refused statement.
            ("rollback_after_failure", "fail"),
        ],
        &exported,
    );
}

#[test]
#[ignore = "needs the official Rust client's driver: run ./scripts/test"]
fn the_official_rust_client_in_the_retry_lab() {
    let command = [var("SPANPROF_RUST_CLIENT"), "transfer".into(), "6".into()];
    let (exported, verdicts) = lab(&command, &[]);
    six_committed(&exported, 0);
    expect(
        &verdicts,
        &[
            ("same_session", "not_exercised"),
            ("previous_transaction", "pass"),
            // Its transfer mode tags nothing and fails nothing.
            ("same_tag", "not_exercised"),
            ("latest_token", "pass"),
            ("retry_delay", "pass"),
            ("rollback_after_failure", "not_exercised"),
        ],
        &exported,
    );
}
