//! The recorded stream in `tests/vectors/` decodes to exactly the rows an official client decoded.

use prost::Message as _;
use serde_json::Value as Json;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::stream_file::frames;
use spanprof::wire::{StreamDecoder, decode_stream_file};

use crate::support::vector;

fn golden() -> Json {
    let text = std::fs::read_to_string(vector("seed23_golden_100.json")).expect("golden file");
    serde_json::from_str(&text).expect("golden JSON")
}

/// Equal in the canonical encoding: floats compared as numbers, everything else exactly.
pub fn assert_canonical_eq(got: &Json, want: &Json, at: &str) {
    match (got, want) {
        (Json::Number(a), Json::Number(b)) => {
            assert_eq!(a.as_f64(), b.as_f64(), "{at}: {a} != {b}");
        }
        (Json::Array(a), Json::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{at}: lengths differ");
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                assert_canonical_eq(x, y, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(got, want, "{at}"),
    }
}

#[test]
fn the_seed23_vector_decodes_to_the_golden_rows() {
    let file = std::fs::read(vector("seed23_100_16k.bin")).expect("vector");
    let decoded = decode_stream_file(&file).expect("the vector decodes");
    let golden = golden();

    let want_columns = golden["columns"].as_array().expect("columns");
    let got_columns: Vec<Json> = decoded
        .columns
        .iter()
        .map(|f| serde_json::json!({"name": f.name, "type": f.ty.to_string()}))
        .collect();
    assert_eq!(&got_columns, want_columns);

    let want_rows = golden["rows"].as_array().expect("rows");
    assert_eq!(decoded.rows.len(), 100);
    assert_eq!(want_rows.len(), 100);
    for (i, (row, want)) in decoded.rows.iter().zip(want_rows).enumerate() {
        assert_canonical_eq(&row.to_canonical_json(), want, &format!("row {i}"));
    }
    assert_eq!(decoded.counters.messages, 8);
    assert_eq!(decoded.counters.chunked_values, 5);
    assert_eq!(decoded.counters.resume_tokens, 8);
}

/// Rows come out as the messages that complete them arrive, not at the end of the stream.
#[test]
fn rows_are_handed_out_message_by_message() {
    let file = std::fs::read(vector("seed23_100_16k.bin")).expect("vector");
    let frames = frames(&file).expect("frames");
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    let mut after_each = Vec::new();
    for frame in &frames {
        decoder.feed_bytes(frame, &mut rows).expect("decodes");
        after_each.push(rows.len());
    }
    decoder.finish().expect("ends cleanly");
    assert!(
        after_each[0] > 0 && after_each[0] < 100,
        "first message gave {after_each:?}"
    );
    assert!(after_each.windows(2).all(|w| w[0] < w[1]), "{after_each:?}");
    assert!(decoder.stream().saw_last());
    assert!(!decoder.stream().resume_token().is_empty());
}

/// The PHP-client bug: a re-encoder that put an empty `metadata` on every later message made a reader
/// drop every row after the first message. Those messages must decode to all the rows.
#[test]
fn empty_metadata_on_later_messages_loses_no_rows() {
    let file = std::fs::read(vector("seed23_100_16k.bin")).expect("vector");
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    for (i, frame) in frames(&file).expect("frames").iter().enumerate() {
        let mut msg = pb::PartialResultSet::decode(*frame).expect("a message");
        if i > 0 {
            msg.metadata = Some(pb::ResultSetMetadata::default());
        }
        decoder
            .feed_bytes(&msg.encode_to_vec(), &mut rows)
            .expect("decodes");
    }
    decoder.finish().expect("ends cleanly");
    assert_eq!(rows.len(), 100);
}
