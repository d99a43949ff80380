//! Hostile input never panics: arbitrary bytes, well-formed protobuf with nonsense in it, and a real
//! stream with bytes flipped, cut or inserted. Each either decodes or returns an error.

use proptest::collection::vec;
use proptest::prelude::*;
use prost::Message as _;
use prost_types::value::Kind;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::DecodeErrorKind;
use spanprof::wire::stream_file::frames;

use crate::support::{Twin, vector};

/// Feeds every message, then finishes; after the first error, the decoder must keep refusing. Both
/// decoders are fed (a [`Twin`]): they must agree on every answer and every row.
fn feed_all<'a>(messages: impl IntoIterator<Item = &'a [u8]>) {
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    let mut failed = false;
    for bytes in messages {
        match decoder.feed_bytes(bytes, &mut rows) {
            Ok(()) => assert!(!failed, "accepted a message after an error"),
            Err(e) if failed => assert_eq!(e.kind, DecodeErrorKind::AlreadyFailed),
            Err(e) => {
                // Errors must render on one line, naming the message.
                let text = e.to_string();
                assert!(
                    text.starts_with("message ") && !text.contains('\n'),
                    "{text}"
                );
                failed = true;
            }
        }
    }
    let _ = decoder.finish();
}

fn wire_value() -> impl Strategy<Value = prost_types::Value> {
    let leaf = prop_oneof![
        Just(None),
        any::<i32>().prop_map(|n| Some(Kind::NullValue(n))),
        any::<f64>().prop_map(|n| Some(Kind::NumberValue(n))),
        prop_oneof![
            Just("NaN".to_owned()),
            Just("Infin".to_owned()),
            "-?[0-9]{0,25}",
            "[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]{0,14}Z?)?",
            "[A-Za-z0-9+/=]{0,12}",
            any::<String>(),
        ]
        .prop_map(|s| Some(Kind::StringValue(s))),
        any::<bool>().prop_map(|b| Some(Kind::BoolValue(b))),
    ]
    .prop_map(|kind| prost_types::Value { kind });
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(|values| prost_types::Value {
                kind: Some(Kind::ListValue(prost_types::ListValue { values })),
            }),
            vec(("[a-z]{0,3}", inner), 0..3).prop_map(|fields| prost_types::Value {
                kind: Some(Kind::StructValue(prost_types::Struct {
                    fields: fields.into_iter().collect(),
                })),
            }),
        ]
    })
}

fn wire_type() -> impl Strategy<Value = pb::Type> {
    let leaf = (-2i32..20, -1i32..6, "[a-z.]{0,8}").prop_map(|(code, annotation, fqn)| pb::Type {
        code,
        type_annotation: annotation,
        proto_type_fqn: fqn,
        ..Default::default()
    });
    leaf.prop_recursive(3, 16, 4, |inner| {
        (
            inner.clone(),
            proptest::option::of(inner.clone()),
            proptest::option::of(vec(("[a-z]{0,3}", proptest::option::of(inner)), 0..3)),
        )
            .prop_map(|(mut ty, element, fields)| {
                ty.array_element_type = element.map(Box::new);
                ty.struct_type = fields.map(|fields| pb::StructType {
                    fields: fields
                        .into_iter()
                        .map(|(name, r#type)| pb::struct_type::Field { name, r#type })
                        .collect(),
                });
                ty
            })
    })
}

fn nonsense_message() -> impl Strategy<Value = pb::PartialResultSet> {
    (
        proptest::option::of(proptest::option::of(vec(("[a-z]{0,3}", wire_type()), 0..4))),
        vec(wire_value(), 0..8),
        any::<bool>(),
        vec(any::<u8>(), 0..4),
        proptest::option::of(vec(("[a-z_]{0,12}", wire_value()), 0..4)),
        any::<bool>(),
    )
        .prop_map(|(metadata, values, chunked_value, token, stats, last)| {
            pb::PartialResultSet {
                metadata: metadata.map(|row_type| pb::ResultSetMetadata {
                    row_type: row_type.map(|fields| pb::StructType {
                        fields: fields
                            .into_iter()
                            .map(|(name, ty)| pb::struct_type::Field {
                                name,
                                r#type: Some(ty),
                            })
                            .collect(),
                    }),
                    ..Default::default()
                }),
                values,
                chunked_value,
                resume_token: token,
                stats: stats.map(|entries| pb::ResultSetStats {
                    query_stats: Some(prost_types::Struct {
                        fields: entries.into_iter().collect(),
                    }),
                    ..Default::default()
                }),
                last,
                ..Default::default()
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(messages in vec(vec(any::<u8>(), 0..256), 0..6)) {
        feed_all(messages.iter().map(Vec::as_slice));
    }

    #[test]
    fn nonsense_protobuf_never_panics(messages in vec(nonsense_message(), 0..5)) {
        let encoded: Vec<Vec<u8>> = messages.iter().map(|m| m.encode_to_vec()).collect();
        feed_all(encoded.iter().map(Vec::as_slice));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// A real stream with bytes flipped, removed or inserted at random places.
    #[test]
    fn a_damaged_real_stream_never_panics(
        edits in vec((any::<prop::sample::Index>(), any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8),
    ) {
        let file = std::fs::read(vector("seed23_100_16k.bin")).expect("vector");
        let mut messages: Vec<Vec<u8>> = frames(&file).expect("frames").iter().map(|f| f.to_vec()).collect();
        for (which, at, byte, op) in edits {
            let msg = &mut messages[which.index(8)];
            let pos = at.index(msg.len() + 1);
            match op {
                0 if pos < msg.len() => msg[pos] ^= byte | 1,
                1 if pos < msg.len() => { msg.remove(pos); }
                _ => msg.insert(pos, byte),
            }
        }
        feed_all(messages.iter().map(Vec::as_slice));
    }
}
