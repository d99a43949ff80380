//! `spanprof client`'s row check holds a bounded multiple of what it compares (issue 23, item 10):
//! the printed rows are compared as they are read, not all kept first.

use prost::bytes::Bytes;
use spanprof::server::stream::encode_stream;
use spanprof::subject::check::{Expected, check};
use spanprof::wire::{Field, Type, Value};

/// An answer of one INT64 column and one row.
fn one_row() -> Expected {
    let columns = vec![Field {
        name: "n".into(),
        ty: Type::Int64,
    }];
    let messages: Vec<Bytes> = encode_stream(&columns, [vec![Value::Int64(1)]], 1 << 20)
        .into_iter()
        .map(Bytes::from)
        .collect();
    Expected::decode(&messages).expect("decodes")
}

#[test]
fn millions_of_printed_rows_are_checked_in_little_memory() {
    let expected = one_row();
    // 2,000,000 lines of `[]`, 6 MB: kept as JSON values they take 64 MB and more.
    let stdout = "[]\n".repeat(2_000_000).into_bytes();
    let checked = check(&expected, &stdout, false);
    let mismatch = checked.expect_err("no row is the one sent");
    assert_eq!(mismatch.printed, 2_000_000);
    assert!(
        mismatch
            .to_string()
            .contains("row 1 has 0 values, the result 1 columns"),
        "{mismatch}"
    );
}

#[test]
fn one_huge_printed_line_is_refused_before_it_is_parsed() {
    let expected = one_row();
    // One line of 5,000,000 numbers, 10 MB: as JSON values, 160 MB.
    let mut line = "0,".repeat(5_000_000);
    line.pop();
    let stdout = format!("[\"1\"]\n[{line}]\n").into_bytes();
    let checked = check(&expected, &stdout, false);
    let mismatch = checked.expect_err("the line is no row that was sent");
    let text = mismatch.to_string();
    assert!(
        text.contains("output line 2 is not a row: 10,000,001 bytes, longer than any row"),
        "{text}"
    );
}
