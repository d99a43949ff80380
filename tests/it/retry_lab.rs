//! The retry lab (`spanprof client --read-write`) against fake clients that each break one rule
//! of a correct retry (`examples/retry_fake.rs`: real programs on gRPC), and one that follows them
//! all: each check fails exactly when its rule is broken, with its first evidence. Then
//! starvation on one hot row: a client whose retries name no previous transaction restarts young
//! each time and keeps losing to older transactions, while with the id nobody starves, held to
//! the lock journal's `Begun` events (previous, age) where exactness matters.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value as Json;
use spanprof::engine::retry_lab::requests;
use spanprof::retry_lab::{RetryCheck, STARVED_ATTEMPTS};
use spanprof::server::txn::journal::EventKind;
use spanprof::server::txn::lock_key::{Age, TxnId};
use spanprof::server::{KnobSettings, LocalInstance, ServerConfig};

/// The fake client, built once (an example: `cargo test --test it` alone does not build it).
fn fake() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "--example", "retry_fake"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo runs");
            assert!(status.success(), "the fake client builds");
            let exe = std::env::current_exe().expect("the test binary's path");
            let debug = exe
                .parent()
                .and_then(|deps| deps.parent())
                .expect("target/debug");
            debug.join("examples").join("retry_fake")
        })
        .clone()
}

/// Runs the lab on `fake ARGS` (its mode first), every second new transaction aborted at its
/// commit with a 30 ms RetryInfo; its JSON export.
fn lab(args: &[&str]) -> Json {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let json = dir.path().join("lab.json");
    let out = Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(["client", "--read-write", "--abort-every", "2"])
        .args(["--abort-retry-delay", "30ms", "--limit", "120s", "--json"])
        .arg(&json)
        .arg("--")
        .arg(fake())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spanprof runs");
    let text = std::fs::read_to_string(&json).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let exported: Json = serde_json::from_str(&text).expect("JSON");
    let passed = exported["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .all(|r| r["verdict"] != "fail");
    assert_eq!(
        out.status.code() == Some(0),
        passed,
        "exit code 3 when a rule fails: {text}"
    );
    exported
}

/// Each rule's verdict ("pass", "fail", "not_exercised") by its name.
fn verdicts(exported: &Json) -> HashMap<String, String> {
    exported["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| {
            (
                r["rule"].as_str().expect("a rule").to_owned(),
                r["verdict"].as_str().expect("a verdict").to_owned(),
            )
        })
        .collect()
}

/// `mode` fails `rule` (and only it), with evidence whose `seen` contains `seen`.
fn breaks(mode: &[&str], rule: &str, seen: &str) {
    let exported = lab(mode);
    let verdicts = verdicts(&exported);
    assert_eq!(verdicts[rule], "fail", "{mode:?}: {exported:#}");
    for (other, verdict) in &verdicts {
        if other != rule {
            assert_ne!(verdict, "fail", "{mode:?} breaks only {rule}: {exported:#}");
        }
    }
    let failed = exported["rules"]
        .as_array()
        .and_then(|rules| rules.iter().find(|r| r["rule"] == rule))
        .expect("the rule");
    let evidence = &failed["evidence"];
    assert!(
        evidence["seen"].as_str().is_some_and(|s| s.contains(seen)),
        "{evidence:#}"
    );
    assert!(
        evidence["attempt"].as_u64().is_some_and(|a| a >= 1),
        "{evidence:#}"
    );
}

#[test]
fn the_fake_client_that_follows_every_rule_passes_every_check() {
    let exported = lab(&["follow"]);
    for (rule, verdict) in verdicts(&exported) {
        assert_eq!(verdict, "pass", "{rule}: {exported:#}");
    }
    let amp = &exported["amplification"];
    // 4 transactions on a regular session, 4 on a multiplexed one, 1 rolled back; every second
    // new one aborted once.
    assert_eq!(amp["transactions"], 9, "{amp}");
    assert_eq!(amp["committed"], 8, "{amp}");
    assert!(amp["attempts"].as_u64().is_some_and(|a| a > 9), "{amp}");
    assert_eq!(exported["starved"], serde_json::json!([]));
}

#[test]
fn inline_begun_retries_are_checked_as_explicit_ones_are() {
    // Every attempt begins with its read: the retry's inline begin names the aborted attempt.
    let exported = lab(&["follow", "--inline"]);
    for (rule, verdict) in verdicts(&exported) {
        assert_eq!(verdict, "pass", "{rule}: {exported:#}");
    }
    breaks(&["no-previous", "--inline"], "previous_transaction", "none");
}

#[test]
fn a_retry_on_another_regular_session_fails_the_same_session_check() {
    breaks(&["other-session"], "same_session", "session ");
}

#[test]
fn a_multiplexed_retry_naming_no_previous_transaction_fails_its_check() {
    breaks(&["no-previous"], "previous_transaction", "none");
}

#[test]
fn a_commit_without_the_transaction_tag_fails_the_tag_check() {
    breaks(&["no-tag"], "same_tag", "tag \"\"");
}

#[test]
fn a_commit_with_a_stale_precommit_token_fails_the_token_check() {
    breaks(&["stale-token"], "latest_token", "token seq 1");
}

#[test]
fn a_retry_that_does_not_wait_the_retry_info_delay_fails_its_check() {
    breaks(&["no-wait"], "retry_delay", "ms after it");
}

#[test]
fn a_failed_transaction_left_without_a_rollback_fails_its_check() {
    breaks(&["no-rollback"], "rollback_after_failure", "idle reaper");
}

/// Four clients on AccountId 1 for `seconds`, each on its own multiplexed session, reading the
/// row, thinking 20 ms and writing it: three follow every rule, the fourth (`last`, tagged `bad`)
/// runs as `last` says. The check of what the instance saw, and the journal's begun attempts
/// (tag, previous, age) in order.
async fn hot_row(
    last: &str,
    seconds: u32,
) -> (RetryCheck, Vec<(String, TxnId, Option<TxnId>, Age)>) {
    let instance = LocalInstance::start(ServerConfig {
        port: 0,
        seed23_rows: 10,
        knobs: KnobSettings::default(),
        connections: Default::default(),
    })
    .await
    .expect("the local instance starts");
    let tap = instance.rw_tap();
    tap.watch();
    let zero = Instant::now();
    let fake = fake();
    let run = |mode: &str, tag: &str| {
        Command::new(&fake)
            .args([mode, "--multiplexed", "--think-ms", "20", "--tag", tag])
            .args(["--seconds", &seconds.to_string()])
            .env("SPANNER_EMULATOR_HOST", instance.host_port())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the fake client starts")
    };
    let children = vec![
        run("follow", "good-1"),
        run("follow", "good-2"),
        run("follow", "good-3"),
        run(last, "bad"),
    ];
    let waited = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().expect("it ends"))
            .collect::<Vec<_>>()
    });
    let outputs = tokio::time::timeout(Duration::from_secs(120), waited)
        .await
        .expect("the clients end")
        .expect("joined");
    for out in &outputs {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let seen = tap.take();
    tap.stop();
    let check = spanprof::analysis::retry_check(&requests(&seen.calls, zero), seen.overflow);
    let begun = instance.locks().journal(|journal| {
        journal
            .events()
            .filter_map(|e| match &e.kind {
                EventKind::Begun {
                    txn,
                    previous,
                    age,
                    tag,
                    ..
                } => Some((tag.to_string(), *txn, *previous, *age)),
                _ => None,
            })
            .collect()
    });
    (check, begun)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_whose_retries_name_no_previous_transaction_starves_on_a_hot_row() {
    let (check, begun) = hot_row("no-previous", 3).await;
    // The journal, exactly: each of its attempts began locking with no previous attempt and a
    // younger age than the one before; every retry of the others kept its first attempt's age.
    let bad: Vec<_> = begun.iter().filter(|b| b.0 == "bad").collect();
    assert!(bad.iter().all(|b| b.2.is_none()), "{bad:?}");
    assert!(
        bad.windows(2).all(|w| w[0].3 < w[1].3),
        "each restart is younger: {bad:?}"
    );
    let ages: HashMap<TxnId, Age> = begun.iter().map(|b| (b.1, b.3)).collect();
    let good_retries: Vec<_> = begun
        .iter()
        .filter(|b| b.0 != "bad" && b.2.is_some())
        .collect();
    assert!(
        !good_retries.is_empty(),
        "the hot row aborted some of the others too"
    );
    for (tag, _, previous, age) in &good_retries {
        if let Some(first) = previous.and_then(|p| ages.get(&p)) {
            assert_eq!(first, age, "{tag}'s retry kept its age");
        }
    }
    // The lab: its one transaction took STARVED_ATTEMPTS or more attempts, and says why; the
    // others' stayed small.
    let starved: Vec<_> = check.starved.iter().filter(|s| s.tag == "bad").collect();
    assert_eq!(starved.len(), 1, "{check:#?}");
    let s = starved[0];
    assert!(s.attempts >= STARVED_ATTEMPTS && !s.kept_age, "{s:?}");
    assert!(
        s.attempts as usize <= bad.len(),
        "the lab's attempts are the journal's: {s:?}"
    );
    assert_eq!(
        s.note,
        format!(
            "starved: {} attempts, retries did not keep their age — they named no previous transaction",
            s.attempts
        )
    );
    assert!(check.starved.iter().all(|s| s.tag == "bad"), "{check:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_previous_transaction_id_nobody_starves_on_the_hot_row() {
    let (check, begun) = hot_row("follow", 3).await;
    assert_eq!(check.starved, [], "{:#?}", check.amplification);
    assert!(
        check.amplification.max_attempts < STARVED_ATTEMPTS,
        "{:#?}",
        check.amplification
    );
    let bad_retries = begun
        .iter()
        .filter(|b| b.0 == "bad" && b.2.is_some())
        .count();
    assert!(
        bad_retries > 0,
        "the same client's retries now name their previous attempt"
    );
}
