//! The team history in Spanner, in the real emulator. Any writer of the team's
//! database can write any row: one with `Iterations` -1 or 2^40 broke every listing and every
//! `history:last` gate of the team ("a row of SpanprofRuns is not a run", no id named), an
//! unparsable newest report failed everyone's gate, and a report over 2,621,440 characters (about
//! 1,100 iterations) was never saved (the limit of a STRING(MAX) cell).

use std::time::Duration;

use spanprof::client::rows;
use spanprof::history::spanner::{SpannerStore, TABLE};
use spanprof::history::{
    Baseline, Filter, HistoryStore, Location, StoredRun, Wanted, baseline, fingerprint,
};
use spanprof::report::{IterationRecord, RunConfig, RunReport};
use spanprof::wire::Value;

use crate::history::start_emulator;

fn database(name: &str) -> spanprof::history::location::SpannerDatabase {
    match Location::parse(&format!(
        "spanner://projects/team/instances/runs/databases/{name}"
    )) {
        Ok(Location::Spanner(database)) => database,
        other => panic!("a Spanner location: {other:?}"),
    }
}

/// A run of `SELECT 1` on `local`, started on March `day`, of `iterations` iterations of `total`.
fn report(day: u32, iterations: usize, total: f64) -> RunReport {
    let started_at = format!("2026-03-{day:02}T10:00:00Z");
    RunReport {
        config: RunConfig {
            label: format!("day {day}"),
            target: "local".into(),
            sql: "SELECT 1".into(),
            ..RunConfig::default()
        },
        iterations: (0..iterations)
            .map(|i| IterationRecord {
                total_ms: total + i as f64 * 1e-3,
                ..IterationRecord::new("day", i as u32, false, started_at.as_str())
            })
            .collect(),
        started_at,
        plans: Default::default(),
        stopped: None,
    }
}

/// Writes a row straight into the team's table, as any writer could: `iterations` and `report`
/// as given, the rest a run of `SELECT 1` on `local` started on March `day`.
fn write_row(host: &str, name: &str, id: &str, day: u32, iterations: i64, report: &str) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let good = StoredRun::new(&self::report(day, 1, 1.0), "db").expect("serialises");
    let row = vec![
        Value::String(id.into()),
        Value::String(good.summary.started_at.clone()),
        Value::Int64(good.started_ms),
        Value::Timestamp(
            spanprof::wire::Timestamp::new(spanprof::history::stored::now_ms() / 1000, 0)
                .expect("a time"),
        ),
        Value::String(format!("hostile {id}")),
        Value::String("local".into()),
        Value::String(good.summary.fingerprint.clone()),
        Value::String("SELECT 1".into()),
        Value::Int64(iterations),
        Value::Float64(0.001),
        Value::Float64(0.001),
        Value::String(report.into()),
    ];
    let columns: Vec<String> = [
        "Id",
        "StartedAt",
        "StartedMs",
        "SavedAt",
        "Label",
        "Target",
        "Fingerprint",
        "Sql",
        "Iterations",
        "MedianTotalMs",
        "P90TotalMs",
        "Report",
    ]
    .map(String::from)
    .to_vec();
    runtime.block_on(async {
        let channel =
            spanprof::client::connect_plaintext_answering_within(host, Duration::from_secs(10))
                .await
                .expect("connects");
        rows::insert_rows(channel, name, TABLE, &columns, &[row])
            .await
            .expect("written");
    });
}

/// Against the tree before the fix (5d67cf1) the listing and the gate both failed with "a row of
/// SpanprofRuns is not a run", naming no row. Now the two bad rows are skipped and named, and
/// `history:last` passes over the newest run, whose report does not parse, to the one before.
#[test]
fn a_hostile_row_is_skipped_and_named_never_the_listing_or_the_gate() {
    let emulator = start_emulator();
    let database = database("hostile");
    let mut store = SpannerStore::open_at(emulator.address(), &database).expect("opens");
    let good = store
        .save(&[
            StoredRun::new(&report(1, 3, 10.0), "db").expect("serialises"),
            StoredRun::new(&report(2, 3, 12.0), "db").expect("serialises"),
        ])
        .expect("saves");
    let name = database.name();
    write_row(emulator.address(), &name, "minus-one", 3, -1, "{}");
    write_row(emulator.address(), &name, "two-to-the-40", 4, 1 << 40, "{}");
    write_row(
        emulator.address(),
        &name,
        "garbled",
        5,
        1,
        "{\"not\": a report",
    );
    let listed = store
        .list(&Filter::default())
        .expect("the listing survives");
    let ids: Vec<&str> = listed.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["garbled", good[1].as_str(), good[0].as_str()]);
    let notices = store.take_notices().join("\n");
    eprintln!("{notices}");
    assert!(notices.contains("minus-one") && notices.contains("Iterations is -1"));
    assert!(notices.contains("two-to-the-40") && notices.contains("Iterations is 1099511627776"));
    let now = report(6, 3, 11.0);
    let wanted = Wanted {
        fingerprint: &fingerprint(&now.config, "db"),
        report: &now,
    };
    let base = baseline(&mut store, &Baseline::Last, &wanted)
        .expect("the gate survives")
        .expect("a baseline");
    assert_eq!(base.config.label, "day 2", "the newest run that reads back");
    let notices = store.take_notices().join("\n");
    eprintln!("{notices}");
    assert!(
        notices.contains("garbled") && notices.contains("does not read back"),
        "{notices}"
    );
}

/// A report of 9,000 iterations (3.4 MB of JSON, more than a cell holds). Against the tree
/// before the fix (5d67cf1) its save failed; now it is kept in parts and read back whole, and
/// deleting the run deletes its parts.
#[test]
fn a_report_too_long_for_one_cell_is_saved_in_parts_and_read_back_whole() {
    let emulator = start_emulator();
    let database = database("long");
    let mut store = SpannerStore::open_at(emulator.address(), &database).expect("opens");
    let long = report(1, 9_000, 10.0);
    let stored = StoredRun::new(&long, "db").expect("serialises");
    eprintln!("the report: {} bytes of JSON", stored.report_json.len());
    assert!(stored.report_json.len() > 2_621_440);
    let ids = store.save(&[stored]).expect("saved, in parts");
    let back = store.get(&ids[0]).expect("reads").expect("there");
    assert_eq!(back, long, "read back whole");
    let listed = store.list(&Filter::default()).expect("lists");
    assert_eq!(listed[0].iterations, 9_000);
    assert!(store.delete(&ids[0]).expect("deletes"));
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let parts = runtime.block_on(async {
        let channel = spanprof::client::connect_plaintext_answering_within(
            emulator.address(),
            Duration::from_secs(10),
        )
        .await
        .expect("connects");
        rows::text_rows(
            channel,
            &database.name(),
            "SELECT COUNT(*) FROM SpanprofReportParts",
            &[],
        )
        .await
        .expect("counts")
    });
    assert_eq!(parts, [[Some("0".to_owned())]], "its parts went with it");
}
