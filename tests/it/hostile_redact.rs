//! `--redact` against what could carry a secret past it: a load run's page with its label and
//! names, the JSON and the other files written beside a redacted page, and (against the real
//! emulator) the server's errors, which echo a literal with its escapes decoded, a hex number in
//! decimal, and the query's line with its comments.

use std::path::Path;
use std::process::{Command, Output};

use spanprof::client::Timeouts;
use spanprof::emulator::{Emulator, SeedTarget, seed_blocking};

fn spanprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_spanprof"))
        .args(args)
        .env_remove("SPANNER_EMULATOR_HOST")
        .env_remove("SPANPROF_HISTORY")
        .output()
        .expect("spanprof runs")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).expect("written")).into_owned()
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8")
}

/// `load` of a query with a literal, labelled with it, on a named project, instance and database
/// of the local instance, writing `out.html` and `out.json` with `extra`; what it said on stderr.
fn load(dir: &Path, extra: &[&str]) -> String {
    let (html, json) = (dir.join("out.html"), dir.join("out.json"));
    let mut args = vec![
        "load",
        "--local",
        "--no-history",
        "--project",
        "acmeprodproj",
        "--instance",
        "westzoneinst",
        "--database",
        "orderbookdb",
        "--label",
        "orders of 'Zanzibar'",
        "--sql",
        "SELECT 'Zanzibar' AS Place",
        "--rate",
        "20",
        "--step-duration",
        "1s",
        "--html",
        path(&html),
        "--json",
        path(&json),
    ];
    args.extend(extra);
    ok(&spanprof(&args))
}

const LOAD_SECRETS: [&str; 4] = ["Zanzibar", "acmeprodproj", "westzoneinst", "orderbookdb"];

#[test]
fn a_load_run_s_page_redacted_with_names_holds_no_name_and_no_literal_of_its_label() {
    let dir = tempfile::tempdir().expect("a temp dir");
    // Unredacted, the page holds every one of them: the check below can fail.
    load(dir.path(), &[]);
    let plain = read(&dir.path().join("out.html"));
    for secret in LOAD_SECRETS {
        assert!(plain.contains(secret), "{secret} is not in the plain page");
    }
    let said = load(dir.path(), &["--redact", "names"]);
    let page = read(&dir.path().join("out.html"));
    for secret in LOAD_SECRETS {
        assert!(!page.contains(secret), "{secret} is in the redacted page");
    }
    let back = spanprof::export::read_load_report(page.as_bytes()).expect("reads back");
    assert_eq!(back.database, "projects/?/instances/?/databases/?");
    // The JSON written beside it is redacted too, and the command says what is not.
    let json = read(&dir.path().join("out.json"));
    for secret in LOAD_SECRETS {
        assert!(!json.contains(secret), "{secret} is in the JSON beside it");
    }
    assert!(said.contains("--redact leaves"), "{said}");
}

#[test]
fn every_file_written_beside_a_redacted_page_is_redacted_and_the_command_says_what_is_not() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let files = ["r.json", "r.csv", "r.md", "r.trace.json", "r.html"].map(|f| dir.path().join(f));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "profile",
            "--no-history",
            "--sql",
            "SELECT Id FROM Seed23 WHERE Name != 'Zanzibar' LIMIT 3",
            "--label",
            "not 'Zanzibar'",
            "--iterations",
            "1",
            "--warmup",
            "0",
            "--json",
            path(&files[0]),
            "--csv",
            path(&files[1]),
            "--markdown",
            path(&files[2]),
            "--trace",
            path(&files[3]),
            "--html",
            path(&files[4]),
        ];
        args.extend(extra);
        ok(&spanprof(&args))
    };
    let said = run(&[]);
    assert!(!said.contains("--redact"), "{said}");
    for file in &files {
        assert!(read(file).contains("Zanzibar"), "{file:?} plain");
    }
    let said = run(&["--redact"]);
    for file in &files {
        assert!(
            !read(file).contains("Zanzibar"),
            "{file:?} keeps the literal"
        );
    }
    assert!(said.contains("--redact leaves"), "{said}");
    assert!(said.contains("history"), "{said}");
}

/// Queries whose errors, from the emulator, echo a secret in another spelling than the SQL's:
/// each query and the secret as the server writes it.
const ECHOES: [(&str, &str); 5] = [
    ("SELECT ERROR('RTSEC\\x45RRX1')", "RTSECERRX1"),
    ("SELECT CAST('CASTSEC\\x43RET' AS INT64)", "CASTSECCRET"),
    ("SELECT 1 /* COMMENTSECRET */ + 'x'", "COMMENTSECRET"),
    ("SELECT 2 + 'y' -- DASHSECRET", "DASHSECRET"),
    ("SELECT 0x7ABCDEF012345678 * 1000", "8844188890927748728"),
];

#[test]
#[ignore = "needs the Cloud Spanner emulator: run ./scripts/test"]
fn against_the_emulator_no_secret_the_server_echoes_in_its_errors_is_in_a_redacted_page() {
    let emulator = Emulator::start("127.0.0.1:0").expect("the emulator starts");
    let (project, instance, database) = ("secretproj", "secretinst", "secretdb");
    seed_blocking(&SeedTarget {
        endpoint: emulator.address().to_owned(),
        project: project.into(),
        instance: instance.into(),
        database: database.into(),
        seed23_rows: 10,
        timeouts: Timeouts::DEFAULT,
    })
    .expect("seeded");
    let dir = tempfile::tempdir().expect("a temp dir");
    let (html, json) = (dir.path().join("e.html"), dir.path().join("e.json"));
    let profile = |sql: &str, extra: &[&str]| {
        let mut args = vec![
            "profile",
            "--no-history",
            "--endpoint",
            emulator.address(),
            "--project",
            project,
            "--instance",
            instance,
            "--database",
            database,
            "--sql",
            sql,
            "--iterations",
            "1",
            "--warmup",
            "0",
            "--html",
            path(&html),
            "--json",
            path(&json),
        ];
        args.extend(extra);
        for file in [&html, &json] {
            let _ = std::fs::remove_file(file);
        }
        let out = spanprof(&args);
        assert!(
            html.exists(),
            "{sql}: no page\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (read(&html), read(&json))
    };
    for (sql, secret) in ECHOES {
        // The server echoes it: without --redact it is in the page.
        let (page, _) = profile(sql, &[]);
        assert!(page.contains(secret), "the emulator did not echo {secret}");
        let (page, json) = profile(sql, &["--redact", "names"]);
        let embedded = spanprof::export::read_reports(page.as_bytes()).expect("reads back");
        let embedded = serde_json::to_string(&embedded).expect("serializes");
        for (what, text) in [
            ("page", &page),
            ("embedded report", &embedded),
            ("JSON", &json),
        ] {
            for secret in [secret, project, instance, database] {
                assert!(!text.contains(secret), "{secret} of {sql} is in the {what}");
            }
        }
    }
}
