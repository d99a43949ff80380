//! The fast decoder against the reference. Most of the proof is elsewhere: every test that decodes
//! through `support::Twin` (the property tests, the fuzzers, the error classes) runs both decoders and
//! asserts they agree. Here: the shared vector and Seed23 streams through the public API, borrowing
//! checked, the scan/feed split, and valid-but-odd protobuf that the fast path hands to prost.

use bytes::Bytes;
use prost::Message as _;
use spanprof::demo::seed23;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::server::stream::encode_stream;
use spanprof::wire::stream_file::frames;
use spanprof::wire::{
    DecodeErrorKind, FastDecoder, Field, Row, RowBatch, StreamDecoder, Type, ValueRef,
};

use crate::support::{Twin, assert_same_stream, col, metadata, same_rows, vector};

/// Decodes with the reference, then with the fast decoder through `scan` + `feed_scanned`, and checks
/// the rows, counters and trailer agree. Returns the batch.
fn both(messages: &[Bytes]) -> RowBatch {
    let mut reference = StreamDecoder::new();
    let mut want = Vec::new();
    for m in messages {
        reference
            .feed_bytes(m, &mut want)
            .expect("reference decodes");
    }
    reference.finish().expect("reference ends cleanly");

    let mut fast = FastDecoder::new();
    let mut batch = RowBatch::new();
    for m in messages {
        let scanned = fast.scan(m.clone()).expect("scans");
        assert_eq!(scanned.wire_len(), m.len());
        assert_eq!(scanned.bytes(), m);
        fast.feed_scanned(scanned, &mut batch)
            .expect("fast decodes");
    }
    fast.finish().expect("fast ends cleanly");
    let got: Vec<Row> = batch.to_rows();
    assert!(same_rows(&got, &want), "rows differ");
    assert_same_stream(fast.stream(), reference.stream());
    batch
}

#[test]
fn the_shared_vector_decodes_the_same_and_text_borrows_from_the_messages() {
    let file = Bytes::from(std::fs::read(vector("seed23_100_16k.bin")).expect("vector"));
    let messages: Vec<Bytes> = frames(&file)
        .expect("frames")
        .into_iter()
        .map(|f| file.slice_ref(f))
        .collect();
    let batch = both(&messages);
    assert_eq!(batch.len(), 100);

    // Names are STRING cells: their text lies inside the file's buffer, unless the name is NULL (5%) or
    // in a row that spans two messages (about one per message), which the decoder carries as owned.
    let inside = |s: &str| {
        let (p, start) = (s.as_ptr() as usize, file.as_ptr() as usize);
        p >= start && p + s.len() <= start + file.len()
    };
    let borrowed = batch
        .iter()
        .filter(|row| matches!(row.get(1), ValueRef::String(s) if inside(s)))
        .count();
    assert!(borrowed >= 80, "only {borrowed} of 100 names borrowed");
    let row = batch.row(3);
    assert_eq!(row.len(), seed23::COLUMN_COUNT);
    assert!(matches!(row.get(0), ValueRef::Int64(_)));
    assert!(
        matches!(row.get(99), ValueRef::Null),
        "past the last column"
    );
    assert_eq!(
        row.iter().map(|v| v.to_value()).collect::<Vec<_>>(),
        row.to_row().0
    );
}

fn seed23_stream(rows: i64, max_bytes: u32) -> Vec<Bytes> {
    encode_stream(
        &seed23::table().columns,
        (0..rows).map(seed23::row),
        max_bytes,
    )
    .into_iter()
    .map(Bytes::from)
    .collect()
}

#[test]
fn seed23_streams_of_every_message_size_decode_the_same() {
    for max in [16 << 10, 64 << 10, 1 << 20] {
        let messages = seed23_stream(1_500, max);
        // 34,500 cells: more than one chunk of the batch.
        let mut batch = both(&messages);
        assert_eq!(batch.len(), 1_500, "{max}-byte messages");
        // The same batch, cleared, takes the stream again (into the chunks it kept).
        let first = batch.to_rows();
        batch.clear();
        let mut fast = FastDecoder::new();
        for m in &messages {
            fast.feed_bytes(m.clone(), &mut batch).expect("decodes");
        }
        fast.finish().expect("ends cleanly");
        assert!(same_rows(&batch.to_rows(), &first), "{max}: a reused batch");
        // Through the twin too: the batch is cleared every other message, rows carried across.
        let mut twin = Twin::new();
        let mut rows = Vec::new();
        for m in &messages {
            twin.feed_bytes(m, &mut rows).expect("decodes");
        }
        twin.finish().expect("ends cleanly");
    }
}

/// A message declaring `columns` whose values are the given raw `google.protobuf.Value` bodies.
fn raw_message(columns: &[Field], values: &[&[u8]]) -> Vec<u8> {
    let mut out = pb::PartialResultSet {
        metadata: metadata(columns),
        ..Default::default()
    }
    .encode_to_vec();
    for body in values {
        out.push(0x12);
        prost::encoding::encode_varint(body.len() as u64, &mut out);
        out.extend_from_slice(body);
    }
    out
}

fn list_of(elements: &[&[u8]]) -> Vec<u8> {
    let mut body = Vec::new();
    for e in elements {
        body.push(0x0a);
        prost::encoding::encode_varint(e.len() as u64, &mut body);
        body.extend_from_slice(e);
    }
    let mut value = vec![0x32];
    prost::encoding::encode_varint(body.len() as u64, &mut value);
    value.extend(body);
    value
}

/// Decodes one message through both decoders (the twin asserts they agree) and finishes.
fn twin_decode(bytes: &[u8]) -> Result<Vec<Row>, spanprof::wire::DecodeError> {
    let mut twin = Twin::new();
    let mut rows = Vec::new();
    twin.feed_bytes(bytes, &mut rows)?;
    twin.finish()?;
    Ok(rows)
}

#[test]
fn valid_but_unusual_values_decode_as_prost_reads_them() {
    let strings = Type::Array(Box::new(Type::String));
    let columns = [
        col("two_strings", Type::String),
        col("string_then_number", Type::Float64),
        col("list_twice", strings.clone()),
        col("unknown_field", Type::String),
        col("group", Type::String),
        col("list_with_unknown", strings),
    ];
    let mut list_twice = list_of(&[b"\x1a\x01x"]);
    list_twice.extend(list_of(&[b"\x1a\x01y"]));
    let mut list_with_unknown = list_of(&[b"\x1a\x01q"]);
    list_with_unknown.splice(2..2, [0x10, 0x01]);
    list_with_unknown[1] += 2;
    let values: [&[u8]; 6] = [
        b"\x1a\x01a\x1a\x02bc",
        b"\x1a\x03NaN\x11\x00\x00\x00\x00\x00\x00\xf8\x3f",
        &list_twice,
        b"\x38\x05\x1a\x01z",
        b"\x4b\x08\x01\x4c\x1a\x01g",
        &list_with_unknown,
    ];
    let rows = twin_decode(&raw_message(&columns, &values)).expect("valid protobuf");
    let json = rows[0].to_canonical_json().to_string();
    assert_eq!(json, r#"["bc",1.5,["x","y"],"z","g",["q"]]"#);
}

#[test]
fn struct_values_empty_values_and_bad_framing_fail_alike() {
    let columns = [col("s", Type::String)];
    // A struct value {"k": null}, a Value with no kind, invalid UTF-8, a wrong wire type, a group
    // closed by another field: each must fail in both decoders with the same class (the twin checks).
    let cases: [(&[u8], bool); 5] = [
        (b"\x2a\x09\x0a\x07\x0a\x01k\x12\x02\x08\x00", false),
        (b"", false),
        (b"\x1a\x02\xc3\x28", true),
        (b"\x19\x01", true),
        (b"\x4b\x54\x1a\x01g", true),
    ];
    for (body, protobuf) in cases {
        let err = twin_decode(&raw_message(&columns, &[body])).expect_err("an error");
        assert_eq!(
            matches!(err.kind, DecodeErrorKind::Protobuf(_)),
            protobuf,
            "{body:?}: {err}"
        );
    }
}

#[test]
fn deep_arrays_decode_alike_up_to_and_past_prost_limit() {
    // The fast path walks lists up to 48 deep and hands deeper ones to prost, which stops at its
    // recursion limit (about 50 arrays); the twin checks both decoders agree at every depth.
    for depth in [1, 20, 45, 47, 48, 49, 50, 51, 70] {
        let mut ty = Type::Int64;
        let mut value = b"\x1a\x017".to_vec();
        for _ in 0..depth {
            ty = Type::Array(Box::new(ty));
            value = list_of(&[&value]);
        }
        let result = twin_decode(&raw_message(&[col("deep", ty)], &[&value]));
        if depth <= 48 {
            assert!(result.is_ok(), "depth {depth}: {result:?}");
        }
        if depth >= 70 {
            assert!(result.is_err(), "depth {depth}");
        }
    }
}
