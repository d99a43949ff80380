//! Properties over text no one wrote by hand: any text parses or is refused without a panic, and
//! a script's statements joined again with `;` cut into the same statements.

use proptest::collection::vec;
use proptest::prelude::*;

use crate::script::{Step, parse};

/// Text made of what lexing turns on: quotes, prefixes, backslashes, comments, semicolons, the
/// words of the client statements.
fn tricky() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("'".to_owned()),
        Just("\"".to_owned()),
        Just("'''".to_owned()),
        Just("`".to_owned()),
        Just("\\".to_owned()),
        Just(";".to_owned()),
        Just("\n".to_owned()),
        Just(" ".to_owned()),
        Just("--".to_owned()),
        Just("#".to_owned()),
        Just("/*".to_owned()),
        Just("*/".to_owned()),
        Just("@{".to_owned()),
        Just("}".to_owned()),
        Just("r".to_owned()),
        Just("b".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just(",".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("-".to_owned()),
        Just("SELECT 1".to_owned()),
        Just("UPDATE T SET a = 1".to_owned()),
        Just("START BATCH DML".to_owned()),
        Just("RUN BATCH".to_owned()),
        Just("ABORT BATCH".to_owned()),
        Just("SLEEP ".to_owned()),
        Just("MUTATE INSERT T (a) VALUES ".to_owned()),
        Just("MUTATE DELETE T KEYS ".to_owned()),
        "[0-9.exXµ]{1,6}".prop_map(|s| s),
        "[a-zA-Z_]{1,6}".prop_map(|s| s),
        any::<char>().prop_map(String::from),
    ];
    vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

/// One SQL statement with what must not cut it: strings, identifiers and comments holding `;`.
fn statement() -> impl Strategy<Value = String> {
    let inner = "[a-z ;'\"`\\-#/*]{0,8}";
    let part = prop_oneof![
        "[A-Za-z_][A-Za-z0-9_]{0,5}".prop_map(|s| s),
        "[0-9]{1,4}".prop_map(|s| s),
        Just("=".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        "[a-z ;\"`#]{0,8}".prop_map(|s| format!("'{s}'")),
        "[a-z ;'`#]{0,8}".prop_map(|s| format!("\"{s}\"")),
        inner.prop_map(|s| format!("'''{}'''", s.replace(['\'', '\\'], ""))),
        "[a-z ;'\"#]{0,8}".prop_map(|s| format!("`{s}`")),
        "[a-z ;'\"]{0,8}".prop_map(|s| format!("r'{}'", s.replace('\'', ""))),
        "[a-z ;'\"]{0,8}".prop_map(|s| format!("b\"{}\"", s.replace('"', ""))),
        "[a-z ;'\"]{0,8}".prop_map(|s| format!("-- {s}\n")),
        "[a-z ;'\"]{0,8}".prop_map(|s| format!("# {s}\n")),
        "[a-z ;'\"\n]{0,8}".prop_map(|s| format!("/* {s} */")),
        Just("\n".to_owned()),
    ];
    let keyword = prop_oneof![
        Just("SELECT"),
        Just("UPDATE"),
        Just("INSERT"),
        Just("DELETE"),
        Just("WITH")
    ];
    (keyword, vec(part, 0..8)).prop_map(|(keyword, parts)| {
        let mut sql = keyword.to_owned();
        for part in parts {
            sql.push(' ');
            sql.push_str(&part);
        }
        // A statement ends with a token: a comment at its end is not part of it.
        sql.push_str(" x");
        sql
    })
}

/// The SQL of each step of a script of queries and DML.
fn sqls(steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|step| match step {
            Step::Query(s) | Step::Dml(s) => s.sql.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any text at all: a script or an error, never a panic.
    #[test]
    fn any_text_parses_or_is_refused_without_a_panic(text in any::<String>()) {
        let _ = parse(&text);
    }

    /// Text built of the characters and words the lexer and the client statements turn on.
    #[test]
    fn tricky_text_parses_or_is_refused_without_a_panic(text in tricky()) {
        if let Err(e) = parse(&text) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    /// Statements joined with `;` come back as written; joined again, they cut the same way.
    #[test]
    fn statements_joined_again_with_semicolons_cut_the_same(
        statements in vec(statement(), 1..6),
        blank in prop_oneof![Just(""), Just(" "), Just("\n"), Just(" -- c\n"), Just(";")],
    ) {
        let text = statements.join(&format!(";{blank}"));
        let first = parse(&text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        let written: Vec<String> = statements.iter().map(|s| s.trim().to_owned()).collect();
        prop_assert_eq!(&sqls(&first.steps), &written);
        let again = sqls(&first.steps).join(";");
        let second = parse(&again).map_err(|e| TestCaseError::fail(format!("{again:?}: {e}")))?;
        prop_assert_eq!(sqls(&second.steps), sqls(&first.steps));
    }
}
