//! The local instance's stream shapes (`--shape production|emulator|edge`), each proved by
//! spanprof's own decoders: both read every shape back to the rows it cut, and each shape has the
//! features it documents (where the statistics go, resume tokens, metadata on the first message
//! only, `""` and `[]` continuations, messages with no values, chunks ending at a row boundary,
//! every type cut).

use prost::Message as _;
use prost_types::value::Kind;
use spanprof::demo::seed23;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::server::Shape;
use spanprof::server::stream::encode_stream_shaped;
use spanprof::wire::{Row, Type};

use crate::support::{Twin, same_rows};

const ROWS: i64 = 120;

fn stats() -> pb::ResultSetStats {
    pb::ResultSetStats {
        row_count: Some(pb::result_set_stats::RowCount::RowCountExact(ROWS)),
        ..Default::default()
    }
}

/// Seed23's first rows cut in `shape` at `max_bytes`, the messages decoded back by both decoders
/// (which must agree and give the rows cut); the messages, parsed.
fn cut_and_read(shape: Shape, max_bytes: u32) -> Vec<pb::PartialResultSet> {
    let table = seed23::table();
    let rows: Vec<_> = (1..=ROWS).map(seed23::row).collect();
    let messages = encode_stream_shaped(
        &table.columns,
        rows.clone(),
        max_bytes,
        shape,
        Some(stats()),
    );
    let mut twin = Twin::new();
    let mut decoded = Vec::new();
    for m in &messages {
        twin.feed_bytes(m, &mut decoded).expect("decodes");
    }
    twin.finish().expect("ends cleanly");
    let want: Vec<Row> = rows.into_iter().map(Row).collect();
    assert!(
        same_rows(&decoded, &want),
        "{shape}: the rows cut are the rows read"
    );
    messages
        .iter()
        .map(|m| pb::PartialResultSet::decode(m.as_slice()).expect("a PartialResultSet"))
        .collect()
}

/// `""`, `[]`, or a list whose first element is one of them (`[""]`, `[[]]`).
fn is_empty_continuation(v: &prost_types::Value) -> bool {
    match &v.kind {
        Some(Kind::StringValue(s)) => s.is_empty(),
        Some(Kind::ListValue(l)) => l.values.first().is_none_or(is_empty_continuation),
        _ => false,
    }
}

/// Whether a message continues a chunked value with an empty `""` or `[]`.
fn continues_with_empty(messages: &[pb::PartialResultSet]) -> bool {
    messages.windows(2).any(|pair| {
        pair[0].chunked_value && pair[1].values.first().is_some_and(is_empty_continuation)
    })
}

#[test]
fn the_production_shape_has_a_token_on_every_message_metadata_first_only_and_stats_last() {
    let messages = cut_and_read(Shape::Production, 4096);
    assert!(messages.len() > 10);
    assert!(messages.iter().all(|m| !m.resume_token.is_empty()));
    assert!(
        messages[0]
            .metadata
            .as_ref()
            .is_some_and(|m| m.row_type.is_some())
    );
    // Absent, not empty, after the first: the official Rust client fails a stream on any later one.
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    let last = messages.last().expect("messages");
    assert!(last.stats.is_some() && last.last);
    assert!(
        messages[..messages.len() - 1]
            .iter()
            .all(|m| m.stats.is_none())
    );
    assert!(
        messages.iter().any(|m| m.chunked_value),
        "values cut mid-value"
    );
    assert!(
        !continues_with_empty(&messages),
        "production never continues with an empty value"
    );
}

#[test]
fn the_emulator_shape_has_stats_first_no_tokens_and_empty_continuations() {
    let messages = cut_and_read(Shape::Emulator, 4096);
    assert!(messages.iter().all(|m| m.resume_token.is_empty()));
    assert!(
        messages[0].stats.is_some(),
        "statistics with the first message"
    );
    assert!(messages[1..].iter().all(|m| m.stats.is_none()));
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    assert!(
        continues_with_empty(&messages),
        "a whole value continued with \"\" or []"
    );
}

#[test]
fn the_edge_shape_has_empty_messages_row_boundaries_and_a_cut_at_every_type() {
    let messages = cut_and_read(Shape::Edge, 1 << 20);
    let columns = seed23::table().columns;
    let width = columns.len();
    assert!(messages.iter().all(|m| !m.resume_token.is_empty()));
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    // Where each message ends in the flat sequence of values, and the column its last value
    // belongs to when it is cut.
    let mut at = 0usize;
    let mut cut_types = std::collections::BTreeSet::new();
    let (mut empty, mut at_row_end) = (0, 0);
    let mut carried = false;
    for m in &messages {
        if m.values.is_empty() {
            empty += 1;
            assert!(!carried, "no empty message between the pieces of a value");
        }
        // A chunked value's continuation is the same value, not a new one.
        at += m.values.len() - usize::from(carried && !m.values.is_empty());
        if m.chunked_value {
            let column = (at - 1) % width;
            cut_types.insert(columns[column].ty.to_string());
        } else if !m.values.is_empty() && at.is_multiple_of(width) {
            at_row_end += 1;
        }
        carried = m.chunked_value;
    }
    assert_eq!(at, ROWS as usize * width, "every value counted once");
    assert!(empty > 0, "messages with no values");
    assert!(at_row_end > 0, "messages ending exactly at a row's end");
    assert!(continues_with_empty(&messages), "\"\" and [] continuations");
    let splittable = columns
        .iter()
        .filter(|c| !matches!(c.ty, Type::Bool | Type::Float64 | Type::Float32));
    for c in splittable {
        assert!(
            cut_types.contains(&c.ty.to_string()),
            "a {} value cut: {cut_types:?}",
            c.ty
        );
    }
    let last = messages.last().expect("messages");
    assert!(
        last.values.is_empty() && last.stats.is_some(),
        "statistics alone, last"
    );
}
