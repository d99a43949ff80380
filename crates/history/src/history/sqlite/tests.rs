use super::*;
use crate::history::stored::Filter;
use crate::report::{IterationRecord, RunConfig};

fn report(label: &str, sql: &str, started_at: &str, totals: &[f64]) -> RunReport {
    RunReport {
        config: RunConfig {
            label: label.into(),
            target: "local".into(),
            sql: sql.into(),
            query_mode: crate::kind::QueryMode::WithStats,
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
        stopped: None,
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
            since_ms: crate::history::stored::unix_ms("2026-01-02T00:00:00Z"),
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

#[test]
fn queries_are_found_by_sql_or_label_and_a_trend_is_one_querys_runs_oldest_first() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut store =
        SqliteStore::open(&dir.path().join("h.sqlite"), Retention::default()).expect("opens");
    let runs = [
        report("wide", "SELECT 1", "2026-01-01T00:00:00Z", &[1.0, 3.0]),
        report("narrow", "SELECT 2", "2026-01-02T00:00:00Z", &[5.0]),
        report("again", "select   1", "2026-01-03T00:00:00Z", &[2.0]),
    ];
    let ids = store
        .save(&runs.iter().map(stored).collect::<Vec<_>>())
        .expect("saves");
    let all = store.queries("", 10).expect("lists");
    assert_eq!(all.len(), 2);
    assert_eq!((all[0].runs, all[1].runs), (2, 1), "latest query first");
    assert_eq!(all[0].last_started_at, "2026-01-03T00:00:00Z");
    let by_label = store.queries("WIDE", 10).expect("lists");
    assert_eq!(by_label.len(), 1);
    assert_eq!(by_label[0].runs, 2, "the query counts all its runs");
    assert_eq!(store.queries("2", 10).expect("lists")[0].sql, "SELECT 2");
    assert_eq!(store.queries("1", 1).expect("lists").len(), 1);
    assert!(store.queries("nothing%", 10).expect("lists").is_empty());
    let trend = store.trend(&all[0].fingerprint, 10).expect("reads");
    let labels: Vec<&str> = trend.iter().map(|p| p.summary.label.as_str()).collect();
    assert_eq!(labels, ["wide", "again"]);
    assert_eq!(trend[0].measures[0].median, 2.0);
    let latest = store.trend(&all[0].fingerprint, 1).expect("reads");
    assert_eq!(latest[0].summary.id, ids[2]);
}

#[test]
fn runs_are_relabelled_pinned_past_retention_and_deleted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keep = Retention {
        max_runs: 2,
        max_age_days: 10_000,
    };
    let mut store = SqliteStore::open(&dir.path().join("h.sqlite"), keep).expect("opens");
    let first = report("first", "SELECT 1", "2026-01-01T00:00:00Z", &[1.0]);
    let id = store.save(&[stored(&first)]).expect("saves").remove(0);
    assert!(store.set_label(&id, "before the index").expect("relabels"));
    assert!(store.set_pinned(&id, true).expect("pins"));
    assert!(!store.set_pinned("424242", true).expect("no such run"));
    assert!(!store.set_label("x", "y").expect("no such run"));
    for i in 0..3 {
        let r = report(&format!("r{i}"), "SELECT 1", "2026-01-02T00:00:00Z", &[1.0]);
        store.save(&[stored(&r)]).expect("saves");
    }
    let fingerprint = store.list(&Filter::default()).expect("lists")[0]
        .fingerprint
        .clone();
    let trend = store.trend(&fingerprint, 10).expect("reads");
    let kept: Vec<(&str, bool)> = trend
        .iter()
        .map(|p| (p.summary.label.as_str(), p.pinned))
        .collect();
    assert_eq!(
        kept,
        [("before the index", true), ("r1", false), ("r2", false)]
    );
    assert!(store.delete(&id).expect("deletes"));
    assert!(!store.delete(&id).expect("gone already"));
    assert_eq!(store.get(&id).expect("reads"), None);
}

#[test]
fn a_store_of_the_first_schema_is_migrated_and_keeps_its_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("h.sqlite");
    {
        let mut c = Connection::open(&path).expect("opens");
        let tx = c.transaction().expect("begins");
        tx.execute_batch(MIGRATIONS[0]).expect("version 1");
        tx.execute(
            "INSERT INTO runs (started_at, started_ms, saved_ms, label, target, fingerprint,
             sql, iterations, report) VALUES ('t', 0, ?1, 'old', 'local', 'f', 'SELECT 1', 0, '{}')",
            [now_ms()],
        )
        .expect("an old run");
        tx.pragma_update(None, "user_version", 1).expect("sets");
        tx.commit().expect("commits");
    }
    let mut store = SqliteStore::open(&path, Retention::default()).expect("migrates");
    assert_eq!(
        schema_version(&path).expect("reads"),
        MIGRATIONS.len() as i64
    );
    let old = store.list(&Filter::default()).expect("lists");
    assert_eq!(old[0].label, "old");
    assert!(store.set_pinned(&old[0].id, true).expect("pins"));
    let trend = store
        .trend("f", 10)
        .expect("an unreadable report is still a point");
    assert!(trend[0].pinned && trend[0].failed);
}

fn load_report(sql: &str, started_at: &str) -> crate::load::LoadReport {
    use crate::load::{LoadSteps, Model, StepLevel};
    use crate::load::{StepCpu, StepTally};
    let plan = LoadSteps {
        model: Model::Open,
        levels: vec![StepLevel::Rate(10.0)],
        step_duration: Duration::from_secs(1),
        max_in_flight: 10,
        drain: Duration::from_secs(1),
    };
    let step = StepTally::new(StepLevel::Rate(10.0)).finish(
        Duration::ZERO,
        Duration::from_secs(1),
        StepCpu::default(),
    );
    let facts = crate::load::RunFacts {
        label: "load".into(),
        sql: sql.into(),
        target: "local".into(),
        started_at: started_at.into(),
        ..Default::default()
    };
    crate::load::LoadReport::new(facts, &plan, vec![step])
}

#[test]
fn load_runs_have_ids_of_their_own_and_a_bad_row_is_named_not_fatal() {
    use crate::history::StoredLoad;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("h.sqlite");
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let run = stored(&report("a", "SELECT 1", "2026-01-01T00:00:00Z", &[1.0]));
    let run_id = store.save(&[run]).expect("saves")[0].clone();
    let a = load_report("SELECT 1", "2026-01-02T00:00:00Z");
    let b = load_report("SELECT   1", "2026-01-03T00:00:00Z");
    let ids: Vec<String> = [&a, &b]
        .iter()
        .map(|r| {
            let stored = StoredLoad::new(r).expect("serializable");
            store.save_load(&stored).expect("saves")
        })
        .collect();
    assert_eq!(ids, ["L1", "L2"]);
    assert_eq!(run_id, "1", "runs and load runs count apart");
    let listed = store.list_loads(&Filter::default()).expect("lists");
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].id, "L2", "newest first");
    assert_eq!(listed[0].fingerprint, listed[1].fingerprint, "one query");
    assert_eq!(store.get_load("L1").expect("reads"), Some(a));
    assert_eq!(store.get_load("1").expect("reads"), None);
    assert_eq!(store.list(&Filter::default()).expect("lists").len(), 1);

    // A row no load run can be is skipped and named; the others stay listed.
    store
        .connection
        .execute("UPDATE load_runs SET steps = -1 WHERE id = 1", [])
        .expect("a hostile row");
    let listed = store.list_loads(&Filter::default()).expect("lists");
    assert_eq!(listed.len(), 1);
    let notices = store.take_notices();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("L1") && n.contains("steps")),
        "{notices:?}"
    );
    assert!(store.delete("L2").expect("deletes"));
    assert!(!store.delete("L2").expect("gone already"));
    assert!(store.get("1").expect("reads").is_some(), "the run stays");
}

#[test]
fn a_load_run_numbered_two_to_the_63_minus_1_does_not_stop_load_saves() {
    use crate::history::StoredLoad;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("h.sqlite");
    let mut store = SqliteStore::open(&path, Retention::default()).expect("opens");
    let save = |store: &mut SqliteStore, day: u32| {
        let r = load_report("SELECT 1", &format!("2026-01-{day:02}T00:00:00Z"));
        store.save_load(&StoredLoad::new(&r).expect("serializable"))
    };
    assert_eq!(save(&mut store, 1).expect("saves"), "L1");
    store
        .connection
        .execute("UPDATE load_runs SET id = ?1 WHERE id = 1", [i64::MAX])
        .expect("a hostile row");
    // Before: "database or disk is full" for this save and every later one.
    assert_eq!(save(&mut store, 2).expect("saves below it"), "L1");
    assert_eq!(save(&mut store, 3).expect("saves below it"), "L2");
    assert!(
        store
            .take_notices()
            .iter()
            .any(|n| n.contains("L9223372036854775807")),
        "the spent id is named"
    );
    assert_eq!(
        store.list_loads(&Filter::default()).expect("lists").len(),
        3
    );
}
