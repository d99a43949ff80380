//! READ: its table, columns, keys (literals and `@name`s) and lock hint, and the errors that name
//! what it expected.

use prost_types::value::Kind as K;

use super::{error, steps};
use crate::script::{KeyRead, KeyValue, MAX_READ_KEYS, ReadLock, ScriptError, Step};

/// The one READ `text` makes.
fn read(text: &str) -> KeyRead {
    match steps(text).as_slice() {
        [Step::Read(r)] => r.clone(),
        other => panic!("{text:?} made {other:?}"),
    }
}

fn literal(text: &str) -> KeyValue {
    KeyValue::Literal(prost_types::Value {
        kind: Some(K::StringValue(text.to_owned())),
    })
}

/// The problem a READ's error states.
fn problem(text: &str) -> String {
    match error(text) {
        ScriptError::Read { problem, .. } => problem,
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn a_read_names_its_table_columns_keys_and_lock_hint() {
    let r = read("READ Accounts (Balance) KEY (1) LOCK EXCLUSIVE");
    assert_eq!(r.table, "Accounts");
    assert_eq!(r.columns, ["Balance"]);
    assert_eq!(r.keys, [vec![literal("1")]]);
    assert_eq!(r.lock, ReadLock::Exclusive);
    assert_eq!(r.line, 1);
    let r = read("\n  read `Order Lines` (a, `b c`) keys (1, 'x'), (@id, @who) lock shared");
    assert_eq!(r.table, "Order Lines");
    assert_eq!(r.columns, ["a", "b c"]);
    assert_eq!(
        r.keys,
        [
            vec![literal("1"), literal("x")],
            vec![KeyValue::Param("id".into()), KeyValue::Param("who".into())]
        ]
    );
    assert_eq!((r.lock, r.line), (ReadLock::Shared, 2));
    assert_eq!(read("READ T (c) KEY (-3)").lock, ReadLock::Default);
}

#[test]
fn a_read_is_a_request_before_the_commit_and_no_sql_statement() {
    let script = crate::script::parse(
        "READ Accounts (Balance) KEY (1) LOCK EXCLUSIVE; SLEEP 20ms; \
         UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 1",
    )
    .expect("parses");
    assert!(script.steps[0].sends() && !script.steps[1].sends());
    assert_eq!(script.statements(), 1, "the UPDATE alone is SQL");
    assert_eq!(script.summary(), "1 read, 1 DML, 1 sleep");
}

#[test]
fn a_read_that_does_not_follow_the_grammar_says_what_it_expected() {
    assert!(problem("READ").contains("a table name"));
    assert!(problem("READ T KEY (1)").contains("`(` and the columns"));
    assert!(problem("READ T (c, C) KEY (1)").contains("named twice"));
    assert!(problem("READ T (c)").contains("KEY"));
    assert!(problem("READ T (c) KEY 1").contains("`(`"));
    assert!(problem("READ T (c) KEY (1), (1, 2)").contains("key 2 has 2 values"));
    assert!(problem("READ T (c) KEY (1) LOCK").contains("SHARED or EXCLUSIVE"));
    assert!(problem("READ T (c) KEY (1) LOCK UPDATE").contains("SHARED or EXCLUSIVE"));
    assert!(problem("READ T (c) KEY (1) FOR UPDATE").contains("LOCK"));
    assert!(problem("READ T (c) KEY (1) LOCK SHARED x").contains("the end of the statement"));
    assert!(problem("READ T (c) KEY (@)").contains("parameter's name"));
    let many: Vec<String> = (0..=MAX_READ_KEYS).map(|i| format!("({i})")).collect();
    let text = format!("READ T (c) KEY {}", many.join(", "));
    assert!(problem(&text).contains("at most 1000 keys"));
    // Inside a batch, a READ is refused as any other non-DML step.
    assert!(matches!(
        error("START BATCH DML; READ T (c) KEY (1); RUN BATCH"),
        ScriptError::Batch { .. }
    ));
}
