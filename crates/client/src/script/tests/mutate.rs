//! MUTATE and its literals: each kind of mutation, the values as Spanner encodes them, the errors.

use prost_types::value::Kind as K;

use super::{error, steps};
use crate::proto::google::spanner::v1 as pb;
use crate::script::{ScriptError, Step};

/// The one mutation `text` (one MUTATE statement) makes.
fn mutation(text: &str) -> pb::mutation::Operation {
    match steps(text).as_slice() {
        [Step::Mutate(m)] if m.len() == 1 => m[0].operation.clone().expect("an operation"),
        other => panic!("{text:?} made {other:?}"),
    }
}

fn write(text: &str) -> pb::mutation::Write {
    match mutation(text) {
        pb::mutation::Operation::Insert(w) => w,
        other => panic!("{text:?}: {other:?}"),
    }
}

fn s(text: &str) -> K {
    K::StringValue(text.to_owned())
}

/// The kinds of a row's values.
fn row(list: &prost_types::ListValue) -> Vec<K> {
    list.values
        .iter()
        .map(|v| v.kind.clone().expect("a kind"))
        .collect()
}

/// The one value of `MUTATE INSERT T (c) VALUES (<literal>)`.
fn value(literal: &str) -> K {
    let w = write(&format!("MUTATE INSERT T (c) VALUES ({literal})"));
    row(&w.values[0]).remove(0)
}

#[test]
fn an_insert_carries_int64_as_a_string_and_the_rest_as_spanner_encodes_them() {
    let w = write(
        "MUTATE INSERT Accounts (AccountId, Balance, Rate, Name, Active, Note, Blob) \
         VALUES (1, -1000, 1.5, 'Ann', TRUE, NULL, b'\\x00\\xff')",
    );
    assert_eq!(w.table, "Accounts");
    assert_eq!(
        w.columns,
        [
            "AccountId",
            "Balance",
            "Rate",
            "Name",
            "Active",
            "Note",
            "Blob"
        ]
    );
    assert_eq!(
        row(&w.values[0]),
        [
            s("1"),
            s("-1000"),
            K::NumberValue(1.5),
            s("Ann"),
            K::BoolValue(true),
            K::NullValue(0),
            s("AP8="),
        ]
    );
}

#[test]
fn every_write_kind_is_its_operation_and_takes_several_rows() {
    use pb::mutation::Operation as Op;
    let rows = "T (a, b) VALUES (1, 'x'), (2, 'y'),\n(3, 'z')";
    for (kind, expected) in [
        ("INSERT", "insert"),
        ("update", "update"),
        ("Insert_Or_Update", "insert_or_update"),
        ("REPLACE", "replace"),
    ] {
        let (name, w) = match mutation(&format!("MUTATE {kind} {rows}")) {
            Op::Insert(w) => ("insert", w),
            Op::Update(w) => ("update", w),
            Op::InsertOrUpdate(w) => ("insert_or_update", w),
            Op::Replace(w) => ("replace", w),
            Op::Delete(d) => panic!("{d:?}"),
        };
        assert_eq!(name, expected);
        assert_eq!(w.values.len(), 3);
        assert_eq!(row(&w.values[2]), [s("3"), s("z")]);
    }
}

#[test]
fn a_delete_takes_keys_or_all() {
    use pb::mutation::Operation as Op;
    let Op::Delete(d) = mutation("MUTATE DELETE Accounts KEYS (1), (2)") else {
        panic!("not a delete")
    };
    assert_eq!(d.table, "Accounts");
    let keys = d.key_set.expect("a key set");
    assert!(!keys.all && keys.ranges.is_empty());
    assert_eq!(
        keys.keys.iter().map(row).collect::<Vec<_>>(),
        [[s("1")], [s("2")]]
    );
    let Op::Delete(d) = mutation("mutate delete Orders keys (1, 'a')") else {
        panic!("not a delete")
    };
    assert_eq!(row(&d.key_set.expect("keys").keys[0]), [s("1"), s("a")]);
    let Op::Delete(d) = mutation("MUTATE DELETE Accounts ALL") else {
        panic!("not a delete")
    };
    let all = d.key_set.expect("a key set");
    assert!(all.all && all.keys.is_empty());
}

#[test]
fn literals_read_as_googlesql_writes_them() {
    let cases = [
        ("0x1F", s("31")),
        ("-0x10", s("-16")),
        ("9223372036854775807", s("9223372036854775807")),
        ("-9223372036854775808", s("-9223372036854775808")),
        ("1e3", K::NumberValue(1000.0)),
        ("-2.5E-1", K::NumberValue(-0.25)),
        (".5", K::NumberValue(0.5)),
        ("\"double\"", s("double")),
        ("'a;b'", s("a;b")),
        ("'it\\'s'", s("it's")),
        ("'\\n\\t\\\\'", s("\n\t\\")),
        ("'\\x41\\101\\u00e9\\U0001F600'", s("AAé😀")),
        ("'\\xe9'", s("é")),
        ("r'\\n'", s("\\n")),
        ("'''two\nlines'''", s("two\nlines")),
        ("\"\"\"say \"hi\\\"\"\"\"", s("say \"hi\"")),
        ("b'abc'", s("YWJj")),
        ("B\"\\377\"", s("/w==")),
        ("rb'\\x'", s("XHg=")),
        ("false", K::BoolValue(false)),
        ("null", K::NullValue(0)),
        ("DATE '2026-12-05'", s("2026-12-05")),
        (
            "TIMESTAMP '2026-12-05T10:00:00Z'",
            s("2026-12-05T10:00:00Z"),
        ),
        ("NUMERIC '1.25'", s("1.25")),
        ("JSON '{\"a\": 1}'", s("{\"a\": 1}")),
    ];
    for (literal, expected) in cases {
        assert_eq!(value(literal), expected, "{literal}");
    }
    let K::ListValue(list) = value("[1, 'two', NULL]") else {
        panic!("not a list")
    };
    assert_eq!(row(&list), [s("1"), s("two"), K::NullValue(0)]);
    assert_eq!(value("[]"), K::ListValue(prost_types::ListValue::default()));
}

#[test]
fn names_may_be_backquoted_and_a_table_named_in_its_schema() {
    let w = write("MUTATE INSERT `Order` (`Select`, `a\\`b`) VALUES (1, 2)");
    assert_eq!(
        (w.table.as_str(), w.columns.as_slice()),
        ("Order", &["Select".to_owned(), "a`b".to_owned()][..])
    );
    assert_eq!(
        write("MUTATE INSERT sales.Orders (a) VALUES (1)").table,
        "sales.Orders"
    );
}

/// The problem `text` (after a first line) is refused with, which must be a MUTATE error on `line`.
fn problem(text: &str, line: u32) -> String {
    match error(&format!("SELECT 1;\n{text}")) {
        ScriptError::Mutate {
            line: l, problem, ..
        } => {
            assert_eq!(l, line, "{text:?}: {problem}");
            problem
        }
        other => panic!("{text:?}: {other:?}"),
    }
}

#[test]
fn syntax_errors_say_what_was_expected_and_what_was_found() {
    let cases = [
        (
            "MUTATE",
            "expected INSERT, UPDATE, INSERT_OR_UPDATE, REPLACE or DELETE, found the end of the statement",
        ),
        (
            "MUTATE UPSERT T (a) VALUES (1)",
            "expected INSERT, UPDATE, INSERT_OR_UPDATE, REPLACE or DELETE, found `UPSERT`",
        ),
        (
            "MUTATE INSERT (a) VALUES (1)",
            "expected a table name, found `(`",
        ),
        (
            "MUTATE INSERT T a VALUES (1)",
            "expected `(` and the columns, found `a`",
        ),
        (
            "MUTATE INSERT T (a) VALUE (1)",
            "expected VALUES, found `VALUE`",
        ),
        (
            "MUTATE INSERT T (a b) VALUES (1)",
            "expected `,` or `)`, found `b`",
        ),
        (
            "MUTATE INSERT T (a) VALUES 1",
            "expected `(` and a row's values, found `1`",
        ),
        (
            "MUTATE INSERT T (a) VALUES (1) (2)",
            "expected `,` and another row, or the end of the statement, found `(`",
        ),
        (
            "MUTATE DELETE T",
            "expected KEYS or ALL, found the end of the statement",
        ),
        (
            "MUTATE DELETE T ALL (1)",
            "expected the end of the statement, found `(`",
        ),
        (
            "MUTATE DELETE T KEYS 1",
            "expected `(` and a key's values, found `1`",
        ),
        ("MUTATE INSERT T (a) VALUES (x)", "expected a literal"),
        (
            "MUTATE INSERT T (a) VALUES (50ms)",
            "`50ms` is not a number",
        ),
        (
            "MUTATE INSERT T (a) VALUES (9223372036854775808)",
            "`9223372036854775808` is out of INT64's range",
        ),
        (
            "MUTATE INSERT T (a) VALUES (0x1G)",
            "`0x1G` is not an INT64",
        ),
        ("MUTATE INSERT T (a) VALUES ('\\q')", "unknown escape `\\q`"),
        (
            "MUTATE INSERT T (a) VALUES ('\\x4')",
            "the escape `\\x` takes 2 digits",
        ),
        (
            "MUTATE INSERT T (a) VALUES ('\\uD800')",
            "U+D800 is not a Unicode character",
        ),
        (
            "MUTATE INSERT T (a) VALUES (b'\\u0041')",
            "unknown escape `\\u`",
        ),
        (
            "MUTATE INSERT T (a) VALUES ([[1]])",
            "an array cannot hold an array",
        ),
        (
            "MUTATE INSERT T (a) VALUES ([1 2])",
            "expected `,` or `]`, found `2`",
        ),
        (
            "MUTATE INSERT T (a) VALUES (DATE 5)",
            "expected a quoted string after DATE",
        ),
        (
            "MUTATE INSERT T (a) VALUES (- x)",
            "expected a number after `-`",
        ),
    ];
    for (text, expected) in cases {
        let found = problem(text, 2);
        assert!(
            found.contains(expected),
            "{text:?}: {found:?} lacks {expected:?}"
        );
    }
}

#[test]
fn rows_and_keys_must_fit_the_columns_and_each_other() {
    assert_eq!(
        problem("MUTATE INSERT T (a, b)\nVALUES (1, 2),\n(3)", 4),
        "row 2 has 1 values for 2 columns"
    );
    assert_eq!(
        problem("MUTATE DELETE T KEYS (1, 2), (3)", 2),
        "key 2 has 1 values where key 1 has 2"
    );
    assert_eq!(
        problem("MUTATE UPDATE T (a, A) VALUES (1, 2)", 2),
        "the column A is named twice"
    );
}

#[test]
fn a_mutate_error_names_its_line_and_shows_the_statement() {
    let e = error("SELECT 1;\nMUTATE INSERT T (a)\n  VALUES (1, 2)");
    assert_eq!(e.line(), Some(3));
    assert_eq!(
        e.to_string(),
        "line 3: `MUTATE INSERT T (a) VALUES (1, 2)`: row 1 has 2 values for 1 columns"
    );
}
