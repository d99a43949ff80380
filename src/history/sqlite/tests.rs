use super::*;
use crate::history::record::Filter;
use crate::report::{IterationRecord, RunConfig};

fn report(label: &str, sql: &str, started_at: &str, totals: &[f64]) -> RunReport {
    RunReport {
        config: RunConfig {
            label: label.into(),
            target: "local".into(),
            sql: sql.into(),
            query_mode: "with-stats".into(),
            iterations: totals.len() as u32,
            ..RunConfig::default()
        },
        started_at: started_at.into(),
        iterations: totals
            .iter()
            .enumerate()
            .map(|(i, &t)| IterationRecord {
                total_ms: t,
                ..IterationRecord::new(label, i as u32, false, started_at)
            })
            .collect(),
        plans: Default::default(),
    }
}

fn stored(r: &RunReport) -> StoredRun {
    StoredRun::new(r, "db").expect("serializable")
}

#[test]
fn runs_are_listed_newest_first_with_their_medians_and_read_back_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("deep/er/history.sqlite");
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let a = report("a", "SELECT 1", "2026-01-01T00:00:00Z", &[1.0, 3.0, 2.0]);
    let b = report("b", "select   1", "2026-01-02T00:00:00Z", &[5.0]);
    let c = report("c", "SELECT 2", "2026-01-03T00:00:00Z", &[7.0]);
    let ids = store
        .save(&[stored(&a), stored(&b), stored(&c)])
        .expect("saves");
    assert_eq!(ids.len(), 3);
    let all = store.list(&Filter::default()).expect("lists");
    let labels: Vec<&str> = all.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["c", "b", "a"]);
    assert_eq!(all[2].median_total_ms, Some(2.0));
    assert_eq!(all[2].iterations, 3);
    assert_eq!(all[1].fingerprint, all[2].fingerprint);
    assert_ne!(all[0].fingerprint, all[2].fingerprint);
    let same = store
        .list(&Filter {
            fingerprint: Some(all[2].fingerprint.clone()),
            ..Filter::default()
        })
        .expect("lists");
    assert_eq!(same.len(), 2);
    let by_text = store
        .list(&Filter {
            sql_contains: Some("2".into()),
            ..Filter::default()
        })
        .expect("lists");
    assert_eq!(by_text.len(), 1);
    let since = store
        .list(&Filter {
            since_ms: crate::history::record::unix_ms("2026-01-02T00:00:00Z"),
            limit: Some(1),
            ..Filter::default()
        })
        .expect("lists");
    assert_eq!(since.len(), 1);
    assert_eq!(since[0].label, "c");
    assert_eq!(store.get(&ids[0]).expect("reads"), Some(a));
    assert_eq!(store.get("999").expect("reads"), None);
    assert_eq!(store.get("not a number").expect("reads"), None);
    assert_eq!(
        schema_version(&path).expect("version"),
        MIGRATIONS.len() as i64
    );
}

#[test]
fn two_writers_at_once_both_land() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
                for i in 0..20 {
                    let r = report(
                        &format!("w{w}-{i}"),
                        "SELECT 1",
                        "2026-01-01T00:00:00Z",
                        &[1.0],
                    );
                    store.save(&[stored(&r)]).expect("saves");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("a writer finished");
    }
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    assert_eq!(store.list(&Filter::default()).expect("lists").len(), 40);
}

#[test]
fn a_file_of_random_bytes_is_kept_aside_and_a_fresh_store_started() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let garbage: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&path, &garbage).expect("writes");
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens afresh");
    let notices = store.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("kept as"), "{}", notices[0]);
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .expect("lists")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .collect();
    assert_eq!(kept.len(), 1);
    assert_eq!(std::fs::read(kept[0].path()).expect("reads"), garbage);
    let r = report("a", "SELECT 1", "2026-01-01T00:00:00Z", &[1.0]);
    store.save(&[stored(&r)]).expect("saves");
    assert_eq!(store.list(&Filter::default()).expect("lists").len(), 1);
}

#[test]
fn retention_keeps_the_newest_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    let keep = Retention {
        max_runs: 3,
        max_age_days: 10_000,
    };
    let mut store = SqliteStore::open(&path, keep).expect("opens");
    for i in 0..5 {
        let r = report(&format!("r{i}"), "SELECT 1", "2026-01-01T00:00:00Z", &[1.0]);
        store.save(&[stored(&r)]).expect("saves");
    }
    let labels: Vec<String> = store
        .list(&Filter::default())
        .expect("lists")
        .into_iter()
        .map(|r| r.label)
        .collect();
    assert_eq!(labels, ["r4", "r3", "r2"]);
}

#[test]
fn a_directory_that_cannot_be_written_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A file where the store's directory should be.
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, b"x").expect("writes");
    let result = SqliteStore::open(&blocker.join("history.sqlite"), Retention::default());
    assert!(matches!(result, Err(HistoryError::Io { .. })));
}

#[test]
fn a_newer_schema_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("history.sqlite");
    drop(SqliteStore::open(&path, Retention::default()).expect("opens"));
    let c = Connection::open(&path).expect("opens");
    c.pragma_update(None, "user_version", 99).expect("sets");
    drop(c);
    let refused = SqliteStore::open(&path, Retention::default());
    assert!(
        matches!(refused, Err(HistoryError::NewerSchema { found: 99, .. })),
        "{:?}",
        refused.err()
    );
}
