//! Every class of decoding error, each pinned to its kind, the 0-based message at fault and the column
//! involved; and positive checks that keep the decoder from being stricter than the wire allows.

use prost::Message as _;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::chunk::split;
use spanprof::wire::{
    ColumnRef, Date, DecodeError, DecodeErrorKind, Field, MergeError, Numeric, Row, Timestamp,
    Type, TypeError, Value, ValueError,
};

use crate::support::{Twin, boolean, col, decode_all, list, metadata, null, num, prs, s};

type WireValue = prost_types::Value;

// ---------------------------------------------------------------------------------------------
// Local helpers
// ---------------------------------------------------------------------------------------------

/// Feeds `messages` serialized, one by one, until one fails. Returns the 0-based index of the call
/// that failed, the error, and the rows handed out before it.
fn fail_at(messages: &[pb::PartialResultSet]) -> (usize, DecodeError, Vec<Row>) {
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        if let Err(e) = decoder.feed_bytes(&msg.encode_to_vec(), &mut rows) {
            return (i, e, rows);
        }
    }
    panic!(
        "no message failed ({} rows decoded, finish() says {:?})",
        rows.len(),
        decoder.finish()
    );
}

/// Feeds every message (each must be accepted) and returns the error `finish()` reports.
fn fail_at_finish(messages: &[pb::PartialResultSet]) -> (DecodeError, Vec<Row>) {
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        if let Err(e) = decoder.feed_bytes(&msg.encode_to_vec(), &mut rows) {
            panic!("message {i} should be accepted, got: {e}");
        }
    }
    let err = decoder
        .finish()
        .expect_err("the stream should not end cleanly");
    (err, rows)
}

/// Checks the error names message `message` and the column `column` (index, name), both in its fields
/// and in its Display text.
#[track_caller]
fn assert_at(err: &DecodeError, message: usize, column: Option<(usize, &str)>) {
    let text = err.to_string();
    assert_eq!(err.message, message, "message index of {text:?}");
    let want = column.map(|(index, name)| ColumnRef {
        index,
        name: name.to_owned(),
    });
    assert_eq!(err.column, want, "column of {text:?}");
    let prefix = format!("message {message}");
    assert!(
        text.starts_with(&prefix)
            && !text[prefix.len()..].starts_with(|c: char| c.is_ascii_digit()),
        "{text:?} does not name message {message}"
    );
    match column {
        Some((index, name)) => {
            let at = if name.is_empty() {
                format!("column {index}:")
            } else {
                format!("column {index} ({name})")
            };
            assert!(text.contains(&at), "{text:?} does not name {at:?}");
        }
        None => assert!(
            !text.contains("column "),
            "{text:?} names a column where none is involved"
        ),
    }
}

/// Decodes every message (each must be accepted, and the stream must end cleanly) and returns how many
/// rows each message completed, and the rows.
fn decode_counting(messages: &[pb::PartialResultSet]) -> (Vec<usize>, Vec<Row>) {
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    let mut per_message = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        let before = rows.len();
        if let Err(e) = decoder.feed_bytes(&msg.encode_to_vec(), &mut rows) {
            panic!("message {i} should be accepted, got: {e}");
        }
        per_message.push(rows.len() - before);
    }
    if let Err(e) = decoder.finish() {
        panic!("the stream should end cleanly, got: {e}");
    }
    assert_eq!(decoder.counters().rows, rows.len() as u64, "counted rows");
    assert_eq!(decoder.counters().messages, messages.len() as u64);
    (per_message, rows)
}

/// Cuts a flat sequence of values into message bodies. Each piece is `(end, split)`: the message holds
/// the values up to position `end` (exclusive); with `split = Some(at)`, its last value is cut at
/// weight `at` (see `chunk::split`), the head ends the message as a chunked value and the tail opens
/// the next message.
fn cut(values: Vec<WireValue>, pieces: &[(usize, Option<usize>)]) -> Vec<(Vec<WireValue>, bool)> {
    let mut out = Vec::new();
    let mut values = values.into_iter();
    let mut start = 0;
    let mut carry = None;
    for &(end, at) in pieces {
        let mut body: Vec<WireValue> = carry.take().into_iter().collect();
        body.extend(values.by_ref().take(end - start));
        start = end;
        let chunked = match at {
            Some(at) => {
                let last = body.pop().expect("a message to split has a value");
                let (head, tail) = split(last, at).expect("only strings and lists are split");
                body.push(head);
                carry = Some(tail);
                true
            }
            None => false,
        };
        out.push((body, chunked));
    }
    assert!(carry.is_none(), "the last piece must not be split");
    assert_eq!(values.next(), None, "the pieces must cover every value");
    out
}

/// Four columns, the third of type `ty` and named `Target`: the error classes about a single value put
/// their bad value there.
fn target_columns(ty: Type) -> Vec<Field> {
    vec![
        col("RowKey", Type::Int64),
        col("Label", Type::String),
        col("Target", ty),
        col("Flag", Type::Bool),
    ]
}

/// A valid row of [`target_columns`], with NULL (valid for any type) in the target column.
fn target_row(n: i64) -> Vec<WireValue> {
    vec![
        s(&n.to_string()),
        s(&format!("row {n}")),
        null(),
        boolean(n % 2 == 0),
    ]
}

/// A stream of `target_columns(ty)` that sends three good rows over two messages (the second starts
/// mid-row), then `bad` in the target column of the fourth row, in message 2. Checks the error is at
/// message 2, column 2 `Target`, that the three good rows came out, and returns the error.
#[track_caller]
fn bad_value(ty: Type, bad: WireValue) -> DecodeError {
    let columns = target_columns(ty);
    let mut first = target_row(0);
    let row1 = target_row(1);
    first.extend_from_slice(&row1[..2]);
    let mut second = row1[2..].to_vec();
    second.extend(target_row(2));
    let mut third = target_row(3);
    third[2] = bad;
    let messages = [
        prs(metadata(&columns), first, false),
        prs(None, second, false),
        prs(None, third, false),
    ];
    let (call, err, rows) = fail_at(&messages);
    assert_eq!(call, 2, "the third message should fail, got: {err}");
    assert_at(&err, 2, Some((2, "Target")));
    assert_eq!(rows.len(), 3, "the good rows before the bad one");
    err
}

/// The ValueError inside a BadValue error.
#[track_caller]
fn value_error(err: &DecodeError) -> &ValueError {
    match &err.kind {
        DecodeErrorKind::BadValue(e) => e,
        other => panic!("expected BadValue, got {other:?}"),
    }
}

fn int(n: i64) -> Value {
    Value::Int64(n)
}

fn string(text: &str) -> Value {
    Value::String(text.to_owned())
}

// ---------------------------------------------------------------------------------------------
// Metadata
// ---------------------------------------------------------------------------------------------

#[test]
fn first_message_without_metadata_is_no_metadata() {
    let columns = target_columns(Type::Float64);
    let no_metadata = [
        prs(None, target_row(0), false),
        prs(metadata(&columns), target_row(1), false),
    ];
    // Metadata present but without a row type declares no columns either.
    let no_row_type = [
        prs(Some(pb::ResultSetMetadata::default()), target_row(0), false),
        prs(metadata(&columns), target_row(1), false),
    ];
    // Not even a message with no values may come first without metadata.
    let empty_first = [prs(None, Vec::new(), false)];
    for messages in [&no_metadata[..], &no_row_type[..], &empty_first[..]] {
        let (call, err, rows) = fail_at(messages);
        assert_eq!(call, 0);
        assert_eq!(err.kind, DecodeErrorKind::NoMetadata);
        assert_at(&err, 0, None);
        assert!(rows.is_empty());
        assert!(err.to_string().contains("no metadata"), "{err}");
    }
}

#[test]
fn a_stream_with_no_messages_is_an_error() {
    let mut decoder = Twin::new();
    let err = decoder.finish().expect_err("nothing was received");
    assert_eq!(err.kind, DecodeErrorKind::NoMessages);
    assert_at(&err, 0, None);
    assert!(err.to_string().contains("no messages"), "{err}");
}

#[test]
fn metadata_that_changes_mid_stream_is_rejected_at_that_message() {
    let columns = vec![
        col("RowKey", Type::Int64),
        col("Label", Type::String),
        col("Score", Type::Float64),
    ];
    let before = "STRUCT<RowKey INT64, Label STRING, Score FLOAT64>";
    let changes = [
        (
            vec![
                col("RowKey", Type::Int64),
                col("Label", Type::Bytes),
                col("Score", Type::Float64),
            ],
            "STRUCT<RowKey INT64, Label BYTES, Score FLOAT64>",
        ),
        (
            vec![
                col("RowKey", Type::Int64),
                col("Title", Type::String),
                col("Score", Type::Float64),
            ],
            "STRUCT<RowKey INT64, Title STRING, Score FLOAT64>",
        ),
        (
            vec![col("RowKey", Type::Int64), col("Label", Type::String)],
            "STRUCT<RowKey INT64, Label STRING>",
        ),
    ];
    for (changed, after) in changes {
        let row = |n: i64| vec![s(&n.to_string()), s("x"), num(0.5)];
        let mut first = row(0);
        first.push(s("1"));
        let mut second = vec![s("y"), num(1.5)];
        second.extend(row(2));
        let messages = [
            prs(metadata(&columns), first, false),
            prs(metadata(&columns), second, false),
            prs(metadata(&changed), row(3), false),
        ];
        let (call, err, rows) = fail_at(&messages);
        assert_eq!(call, 2, "{after}: {err}");
        assert_eq!(
            err.kind,
            DecodeErrorKind::MetadataChanged {
                before: before.to_owned(),
                after: after.to_owned(),
            }
        );
        assert_at(&err, 2, None);
        assert!(err.to_string().contains(after), "{err}");
        assert_eq!(rows.len(), 3, "{after}: the rows before the change");
    }
}

/// The famous client's bug: later messages carried an empty `metadata`, the reader took it for a new
/// (empty) column list and dropped every row after the first message. Repeated metadata, metadata with
/// an empty row type and metadata without a row type must all leave the columns alone, and every row
/// of every message must come out.
#[test]
fn repeated_or_empty_metadata_keeps_every_row_of_every_message() {
    let columns = vec![
        col("RowKey", Type::Int64),
        col("Label", Type::String),
        col("Tags", Type::Array(Box::new(Type::String))),
    ];
    let wire_row = |n: i64| {
        vec![
            s(&n.to_string()),
            s(&format!("label {n} ünïcødé")),
            list(vec![s(&format!("t{n}")), null(), s("tag")]),
        ]
    };
    let typed_row = |n: i64| {
        Row(vec![
            int(n),
            string(&format!("label {n} ünïcødé")),
            Value::Array(vec![string(&format!("t{n}")), Value::Null, string("tag")]),
        ])
    };
    let values: Vec<WireValue> = (0..10).flat_map(wire_row).collect();
    // 30 values: message 0 ends mid-row 2, message 1 inside row 4's tags, message 2 inside row 7's
    // label, message 3 on a row boundary, message 4 holds the rest.
    let bodies = cut(
        values,
        &[
            (7, None),
            (15, Some(3)),
            (23, Some(2)),
            (24, None),
            (30, None),
        ],
    );
    let metadatas = [
        metadata(&columns),
        metadata(&columns),
        Some(pb::ResultSetMetadata {
            row_type: Some(pb::StructType { fields: Vec::new() }),
            ..Default::default()
        }),
        Some(pb::ResultSetMetadata::default()),
        Some(pb::ResultSetMetadata {
            row_type: Some(pb::StructType { fields: Vec::new() }),
            transaction: Some(pb::Transaction {
                id: b"tx".to_vec(),
                ..Default::default()
            }),
            ..Default::default()
        }),
    ];
    let messages: Vec<_> = metadatas
        .into_iter()
        .zip(bodies)
        .map(|(m, (values, chunked))| prs(m, values, chunked))
        .collect();
    let (per_message, rows) = decode_counting(&messages);
    assert_eq!(
        per_message,
        [2, 2, 3, 1, 2],
        "rows completed by each message"
    );
    assert_eq!(rows, (0..10).map(typed_row).collect::<Vec<_>>());
}

#[test]
fn unsupported_type_code_is_bad_type_naming_the_column() {
    let columns_with = |code: i32, nested: bool| {
        let columns = vec![
            col("RowKey", Type::Int64),
            col("Label", Type::String),
            col("Odd", Type::Array(Box::new(Type::Int64))),
            col("Flag", Type::Bool),
        ];
        let mut md = metadata(&columns).expect("metadata");
        let row_type = md.row_type.as_mut().expect("row type");
        let ty = row_type.fields[2].r#type.as_mut().expect("type");
        if nested {
            ty.array_element_type.as_mut().expect("element type").code = code;
        } else {
            *ty = pb::Type {
                code,
                ..Default::default()
            };
        }
        Some(md)
    };
    for (code, nested) in [(12, false), (12, true), (0, false), (99, true)] {
        let messages = [prs(
            columns_with(code, nested),
            vec![s("1"), s("a"), list(vec![]), boolean(true)],
            false,
        )];
        let (call, err, _) = fail_at(&messages);
        assert_eq!(call, 0);
        assert_eq!(
            err.kind,
            DecodeErrorKind::BadType(TypeError::UnknownCode(code))
        );
        assert_at(&err, 0, Some((2, "Odd")));
        assert!(err.to_string().contains(&format!("code {code}")), "{err}");
    }
}

#[test]
fn array_or_struct_types_without_their_parts_are_bad_types() {
    let columns = vec![
        col("RowKey", Type::Int64),
        col("Label", Type::String),
        col("Broken", Type::Int64),
    ];
    let cases = [
        (pb::TypeCode::Array, TypeError::ArrayWithoutElement),
        (pb::TypeCode::Struct, TypeError::StructWithoutFields),
    ];
    for (code, want) in cases {
        let mut md = metadata(&columns).expect("metadata");
        md.row_type.as_mut().expect("row type").fields[2].r#type = Some(pb::Type {
            code: code as i32,
            ..Default::default()
        });
        let (call, err, _) = fail_at(&[prs(Some(md), Vec::new(), false)]);
        assert_eq!(call, 0);
        assert_eq!(err.kind, DecodeErrorKind::BadType(want));
        assert_at(&err, 0, Some((2, "Broken")));
    }
}

// ---------------------------------------------------------------------------------------------
// Chunks
// ---------------------------------------------------------------------------------------------

#[test]
fn string_chunk_followed_by_a_list_cannot_merge() {
    let columns = target_columns(Type::String);
    let mut second = target_row(1);
    second.extend([s("2"), s("row 2"), s("half a str")]);
    let messages = [
        prs(metadata(&columns), target_row(0), false),
        prs(None, second, true),
        prs(None, vec![list(vec![s("ing")]), boolean(true)], false),
    ];
    let (call, err, rows) = fail_at(&messages);
    assert_eq!(call, 2);
    assert_eq!(
        err.kind,
        DecodeErrorKind::CannotMerge(MergeError {
            left: "a string",
            right: "a list",
        })
    );
    assert_at(&err, 2, Some((2, "Target")));
    assert!(err.to_string().contains("cannot merge"), "{err}");
    assert_eq!(rows.len(), 2);
}

#[test]
fn a_chunked_number_cannot_merge() {
    let columns = target_columns(Type::Float64);
    let mut second = target_row(1);
    second.extend([s("2"), s("row 2"), num(1.5)]);
    let messages = [
        prs(metadata(&columns), target_row(0), false),
        prs(None, second, true),
        prs(None, vec![num(2.5), boolean(true)], false),
    ];
    let (call, err, _) = fail_at(&messages);
    assert_eq!(call, 2);
    assert_eq!(
        err.kind,
        DecodeErrorKind::CannotMerge(MergeError {
            left: "a number",
            right: "a number",
        })
    );
    assert_at(&err, 2, Some((2, "Target")));
}

#[test]
fn a_chunk_continued_by_a_bool_or_null_cannot_merge() {
    for (next, right) in [(boolean(true), "a bool"), (null(), "null")] {
        let columns = target_columns(Type::String);
        let mut first = target_row(0);
        first.extend([s("1"), s("row 1"), s("chunk")]);
        let messages = [
            prs(metadata(&columns), first, true),
            prs(None, vec![], false),
            prs(None, vec![next, boolean(true)], false),
        ];
        let (call, err, _) = fail_at(&messages);
        assert_eq!(call, 2);
        assert_eq!(
            err.kind,
            DecodeErrorKind::CannotMerge(MergeError {
                left: "a string",
                right,
            })
        );
        assert_at(&err, 2, Some((2, "Target")));
    }
}

#[test]
fn chunked_value_on_a_message_without_values_is_an_error() {
    let columns = target_columns(Type::String);
    let messages = [
        prs(metadata(&columns), target_row(0), false),
        prs(None, Vec::new(), true),
    ];
    let (call, err, rows) = fail_at(&messages);
    assert_eq!(call, 1);
    assert_eq!(err.kind, DecodeErrorKind::ChunkedWithoutValues);
    assert_at(&err, 1, None);
    assert_eq!(rows.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// End of stream
// ---------------------------------------------------------------------------------------------

#[test]
fn stream_ending_mid_row_names_the_next_missing_column() {
    let columns = target_columns(Type::String);
    let mut second = target_row(1);
    second.push(s("2"));
    let messages = [
        prs(metadata(&columns), target_row(0), false),
        prs(None, second, false),
        prs(None, vec![s("row 2")], false),
    ];
    let (err, rows) = fail_at_finish(&messages);
    assert_eq!(err.kind, DecodeErrorKind::EndedMidRow { have: 2, want: 4 });
    // At the end of the stream the message index is the number of messages received.
    assert_at(&err, 3, Some((2, "Target")));
    assert!(err.to_string().contains("2 of 4"), "{err}");
    assert_eq!(rows.len(), 2);
}

#[test]
fn stream_ending_inside_a_chunked_value_names_its_column() {
    let columns = target_columns(Type::String);
    let mut second = target_row(1);
    second.extend([s("2"), s("row 2"), s("never fin")]);
    let messages = [
        prs(metadata(&columns), target_row(0), false),
        prs(None, second, true),
        // An empty message keeps the piece pending; the stream then ends.
        prs(None, Vec::new(), false),
    ];
    let (err, rows) = fail_at_finish(&messages);
    assert_eq!(err.kind, DecodeErrorKind::EndedInChunk);
    assert_at(&err, 3, Some((2, "Target")));
    assert!(err.to_string().contains("chunked"), "{err}");
    assert_eq!(rows.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Values that do not fit their column
// ---------------------------------------------------------------------------------------------

#[test]
fn a_number_for_int64_is_the_wrong_kind() {
    let err = bad_value(Type::Int64, num(42.0));
    assert_eq!(
        value_error(&err),
        &ValueError::WrongKind {
            ty: "INT64".into(),
            expected: "a string",
            found: "a number",
        }
    );
}

#[test]
fn a_string_for_bool_is_the_wrong_kind() {
    let err = bad_value(Type::Bool, s("true"));
    assert_eq!(
        value_error(&err),
        &ValueError::WrongKind {
            ty: "BOOL".into(),
            expected: "a bool",
            found: "a string",
        }
    );
}

#[test]
fn a_list_for_string_is_the_wrong_kind() {
    let err = bad_value(Type::String, list(vec![s("a")]));
    assert_eq!(
        value_error(&err),
        &ValueError::WrongKind {
            ty: "STRING".into(),
            expected: "a string",
            found: "a list",
        }
    );
}

#[test]
fn bad_base64_for_bytes_is_invalid() {
    for text in ["not base64!", "aGVsbG8", "aGVsbG8=="] {
        let err = bad_value(Type::Bytes, s(text));
        assert!(
            matches!(value_error(&err),
                ValueError::Invalid { ty, text: shown, reason }
                    if ty == "BYTES" && *shown == format!("{text:?}") && reason.contains("base64")),
            "{text}: {err}"
        );
    }
}

#[test]
fn a_bad_timestamp_is_invalid() {
    for text in [
        "2024-07-04T11:22:20",
        "2024-07-04 11:22:20Z",
        "2024-02-30T00:00:00Z",
        "yesterday",
    ] {
        let err = bad_value(Type::Timestamp, s(text));
        assert!(
            matches!(value_error(&err),
                ValueError::Invalid { ty, text: shown, .. }
                    if ty == "TIMESTAMP" && *shown == format!("{text:?}")),
            "{text}: {err}"
        );
    }
}

#[test]
fn a_bad_date_is_invalid() {
    let err = bad_value(Type::Date, s("2023-02-29"));
    assert_eq!(
        value_error(&err),
        &ValueError::Invalid {
            ty: "DATE".into(),
            text: "\"2023-02-29\"".into(),
            reason: "no such date".into(),
        }
    );
    assert!(err.to_string().contains("2023-02-29"), "{err}");
}

#[test]
fn a_non_numeric_numeric_is_invalid() {
    // NaN is only valid for PostgreSQL's numeric.
    for text in ["12,5", "1e5", "abc", "NaN"] {
        let err = bad_value(Type::Numeric { pg: false }, s(text));
        assert!(
            matches!(value_error(&err),
                ValueError::Invalid { ty, text: shown, .. }
                    if ty == "NUMERIC" && *shown == format!("{text:?}")),
            "{text}: {err}"
        );
    }
}

#[test]
fn int64_out_of_range_is_invalid() {
    let err = bad_value(Type::Int64, s("9223372036854775808"));
    assert_eq!(
        value_error(&err),
        &ValueError::Invalid {
            ty: "INT64".into(),
            text: "\"9223372036854775808\"".into(),
            reason: "out of the 64-bit signed range".into(),
        }
    );
    let err = bad_value(Type::Int64, s("12a"));
    assert!(
        matches!(value_error(&err), ValueError::Invalid { ty, .. } if ty == "INT64"),
        "{err}"
    );
}

#[test]
fn a_float64_string_other_than_nan_or_infinities_is_invalid() {
    for text in ["1.5", "inf", "infinity", "nan", "+Infinity", ""] {
        let err = bad_value(Type::Float64, s(text));
        assert_eq!(
            value_error(&err),
            &ValueError::Invalid {
                ty: "FLOAT64".into(),
                text: format!("{text:?}"),
                reason: "a float sent as a string must be NaN, Infinity or -Infinity".into(),
            },
            "{text}"
        );
    }
}

#[test]
fn a_bad_element_of_an_array_names_its_index() {
    let ty = Type::Array(Box::new(Type::Int64));
    let err = bad_value(ty.clone(), list(vec![s("1"), null(), num(3.0), s("4")]));
    assert_eq!(
        value_error(&err),
        &ValueError::Nested {
            where_: "element",
            index: 2,
            inner: Box::new(ValueError::WrongKind {
                ty: "INT64".into(),
                expected: "a string",
                found: "a number",
            }),
        }
    );
    assert!(err.to_string().contains("element 2"), "{err}");

    let err = bad_value(ty, list(vec![s("1"), s("2"), s("3"), s("x4")]));
    assert!(
        matches!(value_error(&err),
            ValueError::Nested { where_: "element", index: 3, inner }
                if matches!(inner.as_ref(), ValueError::Invalid { ty, .. } if ty == "INT64")),
        "{err}"
    );
    assert!(err.to_string().contains("element 3"), "{err}");
}

#[test]
fn a_struct_of_the_wrong_arity_inside_an_array_is_an_error() {
    let ty = Type::Array(Box::new(Type::Struct(vec![
        col("a", Type::Int64),
        col("b", Type::String),
    ])));
    let bad = list(vec![
        list(vec![s("1"), s("one")]),
        list(vec![s("2")]),
        list(vec![s("3"), s("three")]),
    ]);
    let err = bad_value(ty.clone(), bad);
    assert_eq!(
        value_error(&err),
        &ValueError::Nested {
            where_: "element",
            index: 1,
            inner: Box::new(ValueError::StructArity {
                expected: 2,
                found: 1,
            }),
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("element 1") && text.contains("STRUCT with 2 fields"),
        "{text}"
    );

    // Too many fields, and a bad field, are errors too.
    let err = bad_value(ty.clone(), list(vec![list(vec![s("1"), s("a"), s("x")])]));
    assert!(
        matches!(value_error(&err), ValueError::Nested { index: 0, inner, .. }
            if **inner == ValueError::StructArity { expected: 2, found: 3 }),
        "{err}"
    );
    let err = bad_value(ty, list(vec![list(vec![num(1.0), s("a")])]));
    assert!(
        matches!(value_error(&err), ValueError::Nested { index: 0, inner, .. }
            if matches!(inner.as_ref(), ValueError::Nested { where_: "field", index: 0, .. })),
        "{err}"
    );
}

#[test]
fn an_unnamed_column_is_named_by_its_index() {
    let columns = vec![
        col("RowKey", Type::Int64),
        col("", Type::String),
        col("", Type::Int64),
    ];
    let messages = [
        prs(metadata(&columns), vec![s("1"), s("a"), s("2")], false),
        prs(None, vec![s("3"), s("b"), s("four")], false),
    ];
    let (call, err, _) = fail_at(&messages);
    assert_eq!(call, 1);
    assert!(matches!(
        err.kind,
        DecodeErrorKind::BadValue(ValueError::Invalid { .. })
    ));
    assert_at(&err, 1, Some((2, "")));
    assert!(
        err.to_string().starts_with("message 1, column 2: "),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Shape of the stream
// ---------------------------------------------------------------------------------------------

#[test]
fn values_without_columns_are_an_error() {
    let none: Vec<Field> = Vec::new();
    let messages = [
        prs(metadata(&none), Vec::new(), false),
        prs(None, vec![s("1"), s("2"), s("3")], false),
    ];
    let (call, err, _) = fail_at(&messages);
    assert_eq!(call, 1);
    assert_eq!(err.kind, DecodeErrorKind::ValuesWithoutColumns(3));
    assert_at(&err, 1, None);

    let (call, err, _) = fail_at(&[prs(metadata(&none), vec![s("1")], false)]);
    assert_eq!(call, 0);
    assert_eq!(err.kind, DecodeErrorKind::ValuesWithoutColumns(1));
    assert_at(&err, 0, None);

    // No columns and no values (a DML statement's answer) is a clean, empty stream.
    let rows = decode_all(&[
        prs(metadata(&none), Vec::new(), false),
        prs(None, Vec::new(), false),
    ])
    .expect("no columns and no values is fine");
    assert!(rows.is_empty());
}

#[test]
fn bytes_that_are_not_a_partial_result_set_are_a_protobuf_error() {
    let columns = target_columns(Type::String);
    let good = prs(metadata(&columns), target_row(0), false).encode_to_vec();
    let garbage: [&[u8]; 4] = [
        // A length-delimited `values` field claiming more bytes than follow.
        b"\x12\x7f\x01\x02",
        // An unterminated varint tag.
        b"\xff\xff\xff",
        // Wire type 7 does not exist.
        b"\x0f",
        // `chunked_value` (varint field 3) sent as a length-delimited field of junk.
        b"\x1a\x03abc\x12",
    ];
    for bytes in garbage {
        let mut decoder = Twin::new();
        let mut rows = Vec::new();
        decoder
            .feed_bytes(&good, &mut rows)
            .expect("the first message is good");
        let err = decoder
            .feed_bytes(bytes, &mut rows)
            .expect_err("garbage is not a PartialResultSet");
        assert!(
            matches!(err.kind, DecodeErrorKind::Protobuf(_)),
            "{bytes:?}: {err:?}"
        );
        assert_at(&err, 1, None);
        assert!(err.to_string().contains("not a PartialResultSet"), "{err}");
        assert_eq!(rows.len(), 1);
    }
}

#[test]
fn the_decoder_is_spent_after_an_error() {
    let columns = target_columns(Type::Int64);
    let good = |n| prs(None, target_row(n), false);
    let mut bad_row = target_row(1);
    bad_row[2] = num(1.0);
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    decoder
        .feed(prs(metadata(&columns), target_row(0), false), &mut rows)
        .expect("good");
    let err = decoder
        .feed(prs(None, bad_row, false), &mut rows)
        .expect_err("bad value");
    assert_at(&err, 1, Some((2, "Target")));

    let err = decoder.feed(good(2), &mut rows).expect_err("spent");
    assert_eq!(err.kind, DecodeErrorKind::AlreadyFailed);
    assert_at(&err, 2, None);
    let err = decoder
        .feed_bytes(&good(3).encode_to_vec(), &mut rows)
        .expect_err("spent");
    assert_eq!(err.kind, DecodeErrorKind::AlreadyFailed);
    let err = decoder.finish().expect_err("spent");
    assert_eq!(err.kind, DecodeErrorKind::AlreadyFailed);
    assert!(err.to_string().contains("already failed"), "{err}");
    assert_eq!(rows.len(), 1, "no row comes out of a spent decoder");

    // Also after a protobuf error.
    let mut decoder = Twin::new();
    decoder
        .feed(prs(metadata(&columns), target_row(0), false), &mut rows)
        .expect("good");
    decoder.feed_bytes(b"\xff", &mut rows).expect_err("garbage");
    let err = decoder.feed(good(1), &mut rows).expect_err("spent");
    assert_eq!(err.kind, DecodeErrorKind::AlreadyFailed);
    assert_at(&err, 2, None);
}

/// The decoder documents that after an error "every later call returns AlreadyFailed"; bytes that do
/// not parse must not slip past that check.
#[test]
fn garbage_fed_to_a_spent_decoder_is_already_failed() {
    let columns = target_columns(Type::Int64);
    let mut bad_row = target_row(1);
    bad_row[2] = num(1.0);
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    decoder
        .feed(prs(metadata(&columns), target_row(0), false), &mut rows)
        .expect("good");
    decoder
        .feed(prs(None, bad_row, false), &mut rows)
        .expect_err("bad value");
    let err = decoder.feed_bytes(b"\xff", &mut rows).expect_err("spent");
    assert_eq!(err.kind, DecodeErrorKind::AlreadyFailed, "{err}");
    assert_at(&err, 2, None);
}

// ---------------------------------------------------------------------------------------------
// Not stricter than the wire
// ---------------------------------------------------------------------------------------------

#[test]
fn float64_specials_sent_in_chunks_decode() {
    let columns = target_columns(Type::Float64);
    let cases = [
        (("Infin", "ity"), f64::INFINITY),
        (("-Inf", "inity"), f64::NEG_INFINITY),
        (("", "Infinity"), f64::INFINITY),
        (("-Infinity", ""), f64::NEG_INFINITY),
    ];
    for ((head, tail), want) in cases {
        let mut first = target_row(0);
        first.extend([s("1"), s("row 1"), s(head)]);
        let messages = [
            prs(metadata(&columns), first, true),
            prs(None, vec![s(tail), boolean(false)], false),
        ];
        let rows = decode_all(&messages).expect("a chunked special float is valid");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].values()[2], Value::Float64(want), "{head}+{tail}");
    }
    // NaN has no equality: check it separately.
    let mut first = target_row(0);
    first.extend([s("1"), s("row 1"), s("Na")]);
    let messages = [
        prs(metadata(&columns), first, true),
        prs(None, vec![s("N"), boolean(false)], false),
    ];
    let rows = decode_all(&messages).expect("NaN in two chunks is valid");
    assert!(matches!(rows[1].values()[2], Value::Float64(f) if f.is_nan()));
}

#[test]
fn int64_extremes_sent_in_chunks_decode() {
    let columns = target_columns(Type::Int64);
    for ((head, tail), want) in [
        (("-92233", "72036854775808"), i64::MIN),
        (("92233720368547758", "07"), i64::MAX),
    ] {
        let mut first = target_row(0);
        first.extend([s("1"), s("row 1"), s(head)]);
        let messages = [
            prs(metadata(&columns), first, true),
            prs(None, vec![s(tail), boolean(false)], false),
        ];
        let rows = decode_all(&messages).expect("a chunked INT64 is valid");
        assert_eq!(rows[1].values()[2], int(want));
    }
}

#[test]
fn bytes_split_inside_their_base64_decode() {
    let columns = target_columns(Type::Bytes);
    // "hello world" is aGVsbG8gd29ybGQ=; cut inside a 4-character group and before the padding.
    for (head, tail) in [("aGV", "sbG8gd29ybGQ="), ("aGVsbG8gd29ybGQ", "=")] {
        let mut first = target_row(0);
        first.extend([s("1"), s("row 1"), s(head)]);
        let messages = [
            prs(metadata(&columns), first, true),
            prs(None, vec![s(tail), boolean(false)], false),
        ];
        let rows = decode_all(&messages).expect("base64 merges before it decodes");
        assert_eq!(rows[1].values()[2], Value::Bytes(b"hello world".to_vec()));
    }
}

#[test]
fn list_chunks_merge_as_the_wire_documents() {
    let ty = Type::Array(Box::new(Type::Array(Box::new(Type::String))));
    let columns = target_columns(ty);
    // [["a"], ["b","c"]] then [["d"], ["e"]]: the inner lists merge, their last/first strings too.
    let mut first = target_row(0);
    first.extend([
        s("1"),
        s("row 1"),
        list(vec![list(vec![s("a")]), list(vec![s("b"), s("c")])]),
    ]);
    let messages = [
        prs(metadata(&columns), first, true),
        prs(
            None,
            vec![
                list(vec![list(vec![s("d")]), list(vec![s("e")])]),
                boolean(false),
            ],
            false,
        ),
    ];
    let rows = decode_all(&messages).expect("lists merge");
    let strings = |items: &[&str]| Value::Array(items.iter().map(|t| string(t)).collect());
    assert_eq!(
        rows[1].values()[2],
        Value::Array(vec![
            strings(&["a"]),
            strings(&["b", "cd"]),
            strings(&["e"])
        ])
    );

    // Numbers and nulls inside a chunked list are never merged.
    let columns = target_columns(Type::Array(Box::new(Type::Float64)));
    let mut first = target_row(0);
    first.extend([s("1"), s("row 1"), list(vec![num(1.0), null()])]);
    let messages = [
        prs(metadata(&columns), first, true),
        prs(
            None,
            vec![list(vec![null(), num(2.0)]), boolean(false)],
            false,
        ),
    ];
    let rows = decode_all(&messages).expect("lists merge");
    assert_eq!(
        rows[1].values()[2],
        Value::Array(vec![
            Value::Float64(1.0),
            Value::Null,
            Value::Null,
            Value::Float64(2.0)
        ])
    );
}

#[test]
fn null_decodes_in_every_column_type() {
    let types = vec![
        Type::Bool,
        Type::Int64,
        Type::Float32,
        Type::Float64,
        Type::Numeric { pg: false },
        Type::Numeric { pg: true },
        Type::String,
        Type::Bytes,
        Type::Json { pg: false },
        Type::Json { pg: true },
        Type::Date,
        Type::Timestamp,
        Type::Array(Box::new(Type::Int64)),
        Type::Array(Box::new(Type::Struct(vec![col("x", Type::Bool)]))),
        Type::Struct(vec![col("a", Type::Int64), col("b", Type::String)]),
        Type::Proto("examples.Msg".into()),
        Type::Enum("examples.Kind".into()),
        Type::Interval,
        Type::Uuid,
    ];
    let columns: Vec<Field> = types
        .into_iter()
        .enumerate()
        .map(|(i, ty)| col(&format!("c{i}"), ty))
        .collect();
    let n = columns.len();
    // Two rows of NULLs, cut mid-row across three messages.
    let messages = [
        prs(metadata(&columns), vec![null(); 5], false),
        prs(None, vec![null(); n], false),
        prs(None, vec![null(); n - 5], false),
    ];
    let rows = decode_all(&messages).expect("NULL is valid in every type");
    assert_eq!(rows, vec![Row(vec![Value::Null; n]); 2]);
}

#[test]
fn a_message_without_values_between_two_chunks_keeps_the_pending_value() {
    let columns = target_columns(Type::String);
    let mut first = target_row(0);
    first.extend([s("1"), s("row 1"), s("ab")]);
    let empty = pb::PartialResultSet {
        resume_token: b"token".to_vec(),
        ..Default::default()
    };
    let messages = [
        prs(metadata(&columns), first, true),
        empty.clone(),
        empty,
        prs(None, vec![s("cd")], true),
        prs(None, Vec::new(), false),
        prs(None, vec![s("ef"), boolean(true)], false),
    ];
    let (per_message, rows) = decode_counting(&messages);
    assert_eq!(per_message, [1, 0, 0, 0, 0, 1]);
    assert_eq!(
        rows[1],
        Row(vec![
            int(1),
            string("row 1"),
            string("abcdef"),
            Value::Bool(true)
        ])
    );
}

#[test]
fn values_of_every_kind_decode_across_messages() {
    let columns = vec![
        col("RowKey", Type::Int64),
        col("Amount", Type::Numeric { pg: false }),
        col("Day", Type::Date),
        col("At", Type::Timestamp),
        col("Ratio", Type::Float64),
        col("Ids", Type::Array(Box::new(Type::Int64))),
    ];
    let values = vec![
        s("-1"),
        s("-12.50"),
        s("2024-02-29"),
        s("2024-07-04T11:22:20.500Z"),
        num(0.25),
        list(vec![s("1"), null(), s("-3")]),
    ];
    let bodies = cut(values, &[(3, Some(4)), (6, None)]);
    let messages: Vec<_> = bodies
        .into_iter()
        .enumerate()
        .map(|(i, (v, c))| prs(if i == 0 { metadata(&columns) } else { None }, v, c))
        .collect();
    let rows = decode_all(&messages).expect("valid values");
    assert_eq!(
        rows,
        vec![Row(vec![
            int(-1),
            Value::Numeric(Numeric::parse("-12.50").expect("valid")),
            Value::Date(Date::new(2024, 2, 29).expect("valid")),
            Value::Timestamp(Timestamp::parse("2024-07-04T11:22:20.5Z").expect("valid")),
            Value::Float64(0.25),
            Value::Array(vec![int(1), Value::Null, int(-3)]),
        ])]
    );
}
