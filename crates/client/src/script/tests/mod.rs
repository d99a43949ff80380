//! The script language, rule by rule: splitting, kinds, batches, SLEEP, the helpers and the bounds
//! here; MUTATE in `mutate.rs`; READ in `read.rs`; properties over arbitrary text in `props.rs`.

mod mutate;
mod props;
mod read;

use std::time::Duration;

use super::*;

/// The steps of `text`, which must parse.
fn steps(text: &str) -> Vec<Step> {
    match parse(text) {
        Ok(script) => script.steps,
        Err(e) => panic!("{text:?} did not parse: {e}"),
    }
}

/// The error `text` gives, which must not parse.
fn error(text: &str) -> ScriptError {
    match parse(text) {
        Ok(script) => panic!("{text:?} parsed: {script:?}"),
        Err(e) => e,
    }
}

fn statement(sql: &str, line: u32) -> Statement {
    Statement {
        sql: sql.to_owned(),
        line,
    }
}

fn dml(sql: &str, line: u32) -> Step {
    Step::Dml(statement(sql, line))
}

fn query(sql: &str, line: u32) -> Step {
    Step::Query(statement(sql, line))
}

#[test]
fn the_issues_transfer_is_two_dml_steps() {
    assert_eq!(
        steps(
            "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1; \
             UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2"
        ),
        [
            dml(
                "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1",
                1
            ),
            dml(
                "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2",
                1
            ),
        ]
    );
}

#[test]
fn a_read_a_think_and_a_write_are_a_query_a_sleep_and_dml() {
    assert_eq!(
        steps(
            "SELECT Balance FROM Accounts WHERE AccountId = 1; SLEEP 50ms; \
             UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1"
        ),
        [
            query("SELECT Balance FROM Accounts WHERE AccountId = 1", 1),
            Step::Sleep(Duration::from_millis(50)),
            dml(
                "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1",
                1
            ),
        ]
    );
}

#[test]
fn semicolons_inside_strings_identifiers_and_comments_do_not_split() {
    for sql in [
        "SELECT 'a;b'",
        "SELECT \"a;b\"",
        "SELECT 'it\\'s; fine'",
        "SELECT \"say \\\"hi;\\\"\"",
        "SELECT '''a;\n'b';\nc'''",
        "SELECT \"\"\"a;\"\"b\"\"\"",
        "SELECT r'\\';'",
        "SELECT b'\\x3b;'",
        "SELECT RB\";\"",
        "SELECT `odd;name` FROM T",
        "SELECT 1 -- a; comment\nFROM T",
        "SELECT 1 # a; comment\nFROM T",
        "SELECT /* a; comment */ 1",
        "SELECT /* a;\n comment\n over lines; */ 1",
    ] {
        assert_eq!(steps(sql), [query(sql, 1)], "{sql:?}");
        let two = format!("{sql}; SELECT 2");
        assert_eq!(steps(&two).len(), 2, "{two:?}");
    }
}

#[test]
fn empty_statements_are_skipped_and_comments_around_a_statement_left_out() {
    let text = ";;\n-- a comment alone;\n;  /* lead */ SELECT 1 -- trail\n;;\n# done\n;";
    assert_eq!(steps(text), [query("SELECT 1", 3)]);
    assert_eq!(
        steps("SELECT 1 /* kept */ + 1"),
        [query("SELECT 1 /* kept */ + 1", 1)]
    );
}

#[test]
fn a_script_without_a_statement_is_refused() {
    for text in [
        "",
        "   \n",
        ";;;",
        "-- nothing\n",
        "/* nothing */;",
        "START BATCH DML; ABORT BATCH",
    ] {
        assert_eq!(error(text), ScriptError::Empty, "{text:?}");
    }
    assert_eq!(
        ScriptError::Empty.to_string(),
        "the script has no statement"
    );
}

#[test]
fn a_statement_knows_the_line_it_starts_on() {
    let text =
        "SELECT 1;\n\n  -- why\n  UPDATE T\n  SET x = 1\n  WHERE y = 2; DELETE FROM T WHERE true\n";
    assert_eq!(
        steps(text),
        [
            query("SELECT 1", 1),
            dml("UPDATE T\n  SET x = 1\n  WHERE y = 2", 4),
            dml("DELETE FROM T WHERE true", 6),
        ]
    );
    let after_a_long_string = "SELECT '''\n\n'''; SELECT 2;\nSELECT 3";
    let lines: Vec<u32> = steps(after_a_long_string)
        .iter()
        .map(|s| match s {
            Step::Query(q) => q.line,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(lines, [1, 3, 4]);
}

#[test]
fn a_statements_kind_is_its_first_keyword_after_comments_and_a_hint() {
    for sql in [
        "select 1",
        "WITH t AS (SELECT 1 AS x) SELECT x FROM t",
        "(SELECT 1) UNION ALL (SELECT 2)",
        "@{USE_ADDITIONAL_PARALLELISM=TRUE} SELECT 1",
        "@{ LOCK_SCANNED_RANGES = exclusive } /* c */ SELECT * FROM Accounts",
    ] {
        assert_eq!(steps(sql), [query(sql, 1)], "{sql:?}");
    }
    for sql in [
        "insert into T (a) values (1)",
        "INSERT OR UPDATE INTO T (a) VALUES (1)",
        "UPDATE T SET a = 2 WHERE true",
        "DELETE FROM T WHERE a = 1 THEN RETURN a",
        "@{PDML_MAX_PARALLELISM=10} UPDATE T SET a = 1 WHERE true",
    ] {
        assert_eq!(steps(sql), [dml(sql, 1)], "{sql:?}");
    }
}

#[test]
fn ddl_is_refused_inside_a_transaction() {
    for sql in [
        "CREATE TABLE T (Id INT64) PRIMARY KEY (Id)",
        "alter table T add column x INT64",
        "DROP INDEX I",
        "START BATCH DDL",
    ] {
        let e = error(&format!("SELECT 1;\n{sql}"));
        assert_eq!(e.line(), Some(2), "{sql}");
        assert!(
            e.to_string()
                .contains("DDL cannot run inside a transaction"),
            "{e}"
        );
    }
}

#[test]
fn other_statements_are_refused_naming_the_statement_and_what_is_allowed() {
    let e = error("GRAPH FinGraph MATCH (n) RETURN n");
    let text = e.to_string();
    assert!(
        text.starts_with("line 1: `GRAPH FinGraph MATCH (n) RETURN n`: "),
        "{text}"
    );
    assert!(
        text.contains("SELECT, WITH") && text.contains("INSERT, UPDATE, DELETE"),
        "{text}"
    );
    assert!(
        text.contains("START BATCH DML, RUN BATCH, ABORT BATCH, SLEEP, MUTATE and READ"),
        "{text}"
    );
    for sql in [
        "CALL cancel_query('1')",
        "SHOW TABLES",
        "42",
        "@{X=1} SLEEP 1s",
        "@{X=1}",
    ] {
        assert!(
            matches!(error(sql), ScriptError::NotAllowed { line: 1, .. }),
            "{sql}"
        );
    }
    let e = error("BEGIN; UPDATE T SET a = 1 WHERE true; COMMIT");
    assert!(
        e.to_string()
            .contains("begins and commits the transaction itself"),
        "{e}"
    );
}

#[test]
fn what_does_not_end_is_an_error_on_the_line_it_starts() {
    let cases = [
        ("SELECT 1;\nSELECT 'abc", 2, Unclosed::String),
        ("SELECT 'abc\ndef'", 1, Unclosed::String),
        ("SELECT \"a\\\"", 1, Unclosed::String),
        ("SELECT '''abc\n\n", 1, Unclosed::String),
        ("SELECT r'abc", 1, Unclosed::String),
        ("SELECT `name", 1, Unclosed::Identifier),
        ("SELECT 1;\n\n/* comment ; SELECT 2", 3, Unclosed::Comment),
        ("@{HINT=1 SELECT 1", 1, Unclosed::Hint),
        ("@ SELECT 1", 1, Unclosed::Hint),
    ];
    for (text, line, what) in cases {
        match error(text) {
            ScriptError::Unterminated {
                line: l, what: w, ..
            } => {
                assert_eq!((l, w), (line, what), "{text:?}");
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
    let e = error("SELECT 1;\nSELECT 'abc");
    assert_eq!(
        e.to_string(),
        "line 2: unterminated string literal (a quoted string ends on its line; use ''' or \"\"\" \
         for several): `'abc`"
    );
}

#[test]
fn client_statements_that_do_not_exist_are_named() {
    for text in [
        "START TRANSACTION",
        "RUN BATCH NOW",
        "ABORT",
        "start batch",
        "RUN",
    ] {
        let e = error(text);
        assert!(
            matches!(e, ScriptError::UnknownClientStatement { line: 1, .. }),
            "{text}: {e:?}"
        );
        assert!(e.to_string().contains("unknown client statement"), "{e}");
    }
}

#[test]
fn a_batch_of_dml_is_one_step_between_statements() {
    let text = "UPDATE A SET x = 1 WHERE true;\nstart batch dml;\nINSERT INTO T (a) VALUES (1);\n\
                UPDATE T SET a = 2 WHERE a = 1;\nRun Batch;\nSELECT 1";
    assert_eq!(
        steps(text),
        [
            dml("UPDATE A SET x = 1 WHERE true", 1),
            Step::BatchDml(vec![
                statement("INSERT INTO T (a) VALUES (1)", 3),
                statement("UPDATE T SET a = 2 WHERE a = 1", 4),
            ]),
            query("SELECT 1", 6),
        ]
    );
}

#[test]
fn abort_batch_drops_the_batch() {
    let text = "START BATCH DML; UPDATE T SET a = 1 WHERE true; ABORT BATCH; SELECT 1";
    assert_eq!(steps(text), [query("SELECT 1", 1)]);
}

#[test]
fn only_dml_goes_in_a_batch() {
    for inside in [
        "SELECT 1",
        "SLEEP 1s",
        "MUTATE DELETE T ALL",
        "START BATCH DML",
    ] {
        let text =
            format!("START BATCH DML;\nUPDATE T SET a = 1 WHERE true;\n{inside};\nRUN BATCH");
        let e = error(&text);
        assert!(
            matches!(e, ScriptError::Batch { line: 3, .. }),
            "{inside}: {e:?}"
        );
        assert!(e.to_string().contains("the batch opened on line 1"), "{e}");
    }
}

#[test]
fn a_batch_must_be_opened_closed_and_hold_something() {
    let open = error("SELECT 1;\nSTART BATCH DML;\nUPDATE T SET a = 1 WHERE true");
    assert!(
        matches!(open, ScriptError::Batch { line: 2, .. }),
        "{open:?}"
    );
    assert!(open.to_string().contains("never run"), "{open}");
    let empty = error("START BATCH DML;\nRUN BATCH");
    assert!(
        matches!(empty, ScriptError::Batch { line: 2, .. }),
        "{empty:?}"
    );
    assert!(empty.to_string().contains("is empty"), "{empty}");
    for text in ["RUN BATCH", "SELECT 1; ABORT BATCH"] {
        let e = error(text);
        assert!(e.to_string().contains("no batch is open"), "{e}");
    }
}

#[test]
fn sleep_takes_a_duration_of_at_most_a_minute() {
    let cases = [
        ("SLEEP 50ms", Duration::from_millis(50)),
        ("sleep 1s", Duration::from_secs(1)),
        ("SLEEP 1.5s", Duration::from_millis(1500)),
        ("SLEEP 250us", Duration::from_micros(250)),
        ("SLEEP 250µs", Duration::from_micros(250)),
        ("SLEEP 50 ms", Duration::from_millis(50)),
        ("SLEEP 1m", Duration::from_secs(60)),
        ("SLEEP 60s", Duration::from_secs(60)),
    ];
    for (text, duration) in cases {
        assert_eq!(steps(text), [Step::Sleep(duration)], "{text}");
    }
    for text in [
        "SLEEP",
        "SLEEP 0s",
        "SLEEP 61s",
        "SLEEP 2m",
        "SLEEP 50",
        "SLEEP -1s",
        "SLEEP soon",
        "SLEEP 1s 2s",
        "SLEEP 0.1ns",
    ] {
        let e = error(&format!("SELECT 1;\n{text}"));
        assert!(
            matches!(e, ScriptError::Sleep { line: 2, .. }),
            "{text}: {e:?}"
        );
    }
    assert!(error("SLEEP 2m").to_string().contains("at most 60 s"));
}

#[test]
fn the_helpers_count_and_summarise() {
    let script = parse(
        "SELECT 1; UPDATE T SET a = 1 WHERE true; SLEEP 5ms; DELETE FROM T WHERE a = 2; \
         SELECT 2; START BATCH DML; UPDATE T SET a = 3 WHERE true; UPDATE T SET a = 4 WHERE true; \
         RUN BATCH; MUTATE DELETE T ALL; MUTATE INSERT T (a) VALUES (1)",
    )
    .expect("parses");
    assert_eq!(script.statements(), 6);
    assert!(script.has_writes());
    assert_eq!(
        script.summary(),
        "2 DML, 1 batch of 2 DML, 2 queries, 2 mutations, 1 sleep"
    );
    let issue =
        parse("SELECT 1; SLEEP 1ms; UPDATE T SET a = 1 WHERE true; UPDATE T SET a = 2 WHERE true")
            .expect("parses");
    assert_eq!(issue.summary(), "2 DML, 1 query, 1 sleep");
    let reads = parse("SELECT 1; SLEEP 1ms").expect("parses");
    assert!(!reads.has_writes());
    assert_eq!(reads.statements(), 1);
    assert!(parse("MUTATE DELETE T ALL").expect("parses").has_writes());
    assert_eq!(Script::default().summary(), "nothing");
}

#[test]
fn a_script_past_a_mebibyte_is_refused() {
    let mut text = String::from("SELECT 1");
    text.push_str(&" ".repeat(MAX_SCRIPT_BYTES - text.len()));
    assert_eq!(steps(&text).len(), 1);
    text.push(' ');
    let e = error(&text);
    assert_eq!(
        e,
        ScriptError::TooLong {
            bytes: MAX_SCRIPT_BYTES + 1
        }
    );
    assert_eq!(
        e.to_string(),
        "the script is 1048577 bytes: a script may be at most 1,048,576 bytes (1 MiB)"
    );
}

#[test]
fn a_script_of_more_than_a_thousand_statements_is_refused() {
    let thousand = "SELECT 1;\n".repeat(MAX_STATEMENTS);
    assert_eq!(steps(&thousand).len(), MAX_STATEMENTS);
    let e = error(&format!("{thousand}SELECT 2"));
    assert_eq!(e, ScriptError::TooManyStatements { line: 1001 });
    // Client statements count too: a batch of a thousand DML is more than a thousand statements.
    let batch = format!(
        "START BATCH DML;{}RUN BATCH",
        "DELETE FROM T WHERE true;".repeat(999)
    );
    assert!(matches!(
        error(&batch),
        ScriptError::TooManyStatements { .. }
    ));
    // Empty statements do not.
    let sparse = format!("{};SELECT 1", ";".repeat(100_000));
    assert_eq!(steps(&sparse).len(), 1);
}

#[test]
fn an_error_shows_the_statement_on_one_shortened_line() {
    let e = error(
        "SELECT 1;\nCREATE TABLE Accounts (\n  AccountId INT64 NOT NULL,\n  Balance INT64 NOT NULL\n) PRIMARY KEY (AccountId)",
    );
    assert_eq!(
        e.to_string(),
        "line 2: `CREATE TABLE Accounts ( AccountId INT64 NOT NULL, Balance IN…`: DDL cannot \
         run inside a transaction"
    );
    let e = error("DROP TABLE `\u{1b}[31mred`");
    assert!(e.to_string().contains("\\u{1b}"), "{e}");
}

#[test]
fn the_scripts_in_the_users_guide_parse_as_it_says() {
    let guide = include_str!("../../../../../docs/commands/read-write-scripts.md");
    let blocks: Vec<&str> = guide
        .split("```sql\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .filter(|b| !b.contains("{INSERT |") && !b.contains("{SHARED |"))
        .collect();
    assert_eq!(blocks.len(), 3, "the guide's example scripts");
    let transfer = parse(blocks[0]).expect("the guide's transfer parses");
    let summary = transfer.summary();
    assert_eq!(summary, "1 batch of 2 DML, 1 query, 1 mutation, 1 sleep");
    assert!(
        guide.contains(&format!("(`{summary}`")),
        "the guide quotes the summary"
    );
    let mutations = parse(blocks[1]).expect("the guide's mutations parse");
    assert_eq!(mutations.summary(), "3 mutations");
    let read = parse(blocks[2]).expect("the guide's READ parses");
    assert_eq!(read.summary(), "1 read, 1 DML, 1 sleep");
    let issue = guide
        .split("--sql \\\n  \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the guide's --sql example");
    assert_eq!(parse(issue).expect("parses").summary(), "2 DML");
}
