//! Property tests: random rows of every type, cut into messages at random legal points with chunked
//! values anywhere, decode to exactly the rows that were encoded, and each row is handed out by the
//! message that completes it.

use std::collections::VecDeque;

use proptest::collection::vec;
use proptest::prelude::*;
use prost::Message as _;
use prost_types::Value as WireValue;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::wire::chunk::{split, splittable, weight};
use spanprof::wire::{
    Date, Field, Interval, Numeric, Row, Timestamp, Type, Uuid, Value, encode_value,
};

use crate::support::{Twin, metadata, same_rows};

/// Column types: every scalar, and arrays and structs nested in any combination.
fn any_type() -> impl Strategy<Value = Type> {
    let leaf = prop_oneof![
        Just(Type::Bool),
        Just(Type::Int64),
        Just(Type::Float32),
        Just(Type::Float64),
        any::<bool>().prop_map(|pg| Type::Numeric { pg }),
        Just(Type::String),
        Just(Type::Bytes),
        any::<bool>().prop_map(|pg| Type::Json { pg }),
        Just(Type::Date),
        Just(Type::Timestamp),
        Just(Type::Proto("examples.music.SingerInfo".into())),
        Just(Type::Enum("examples.music.Genre".into())),
        Just(Type::Interval),
        Just(Type::Uuid),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| Type::Array(Box::new(t))),
            vec(("[A-Za-z_]{0,6}", inner), 0..4).prop_map(|fields| Type::Struct(
                fields
                    .into_iter()
                    .map(|(name, ty)| Field { name, ty })
                    .collect()
            )),
        ]
    })
}

/// Text: mostly short and often non-ASCII (4-byte emoji included), sometimes empty, rarely megabytes.
fn any_text(big: u32) -> BoxedStrategy<String> {
    prop_oneof![
        8 => "\\PC{0,12}",
        4 => any::<String>(),
        2 => Just(String::new()),
        1 => "[a-zé😀\\u{10FFFF}]{1,3}",
        big => ("\\PC{1,6}", 1usize..3).prop_map(|(unit, mib)| unit.repeat((mib << 20) / unit.len() + 1)),
    ]
    .boxed()
}

fn any_bytes(big: u32) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        8 => vec(any::<u8>(), 0..48),
        big => (any::<u8>(), 1usize..3).prop_map(|(b, mib)| (0..mib << 20).map(|i| b.wrapping_add(i as u8)).collect()),
    ]
    .boxed()
}

fn any_numeric(pg: bool) -> BoxedStrategy<Numeric> {
    let decimal = ("-?[0-9]{1,29}", proptest::option::of("[0-9]{1,9}")).prop_map(|(int, frac)| {
        let text = match frac {
            Some(frac) => format!("{int}.{frac}"),
            None => int,
        };
        Numeric::parse(&text).expect("generated decimals are valid")
    });
    if pg {
        prop_oneof![9 => decimal, 1 => Just(Numeric::parse("NaN").expect("valid"))].boxed()
    } else {
        decimal.boxed()
    }
}

fn any_timestamp() -> impl Strategy<Value = Timestamp> {
    let nanos = prop_oneof![
        Just(0u32),
        (0u32..1000).prop_map(|ms| ms * 1_000_000),
        (0u32..1_000_000).prop_map(|us| us * 1000),
        0u32..1_000_000_000,
    ];
    (-62_135_596_800i64..=253_402_300_799, nanos)
        .prop_map(|(s, n)| Timestamp::new(s, n).expect("generated in range"))
}

fn any_interval() -> impl Strategy<Value = Interval> {
    (
        -120_000i64..120_000,
        -3_660_000i64..3_660_000,
        -316_224_000_000_000_000_000i128..316_224_000_000_000_000_000,
    )
        .prop_map(|(months, days, nanos)| Interval {
            months,
            days,
            nanos,
        })
}

/// A value of `ty`, NULL about one time in ten. `big` weighs how often strings and bytes are megabytes.
fn any_value(ty: &Type, big: u32) -> BoxedStrategy<Value> {
    let value = match ty {
        Type::Bool => any::<bool>().prop_map(Value::Bool).boxed(),
        Type::Int64 => any::<i64>().prop_map(Value::Int64).boxed(),
        Type::Enum(_) => any::<i64>().prop_map(Value::Enum).boxed(),
        Type::Float64 => any::<f64>().prop_map(Value::Float64).boxed(),
        Type::Float32 => any::<f32>().prop_map(Value::Float32).boxed(),
        Type::Numeric { pg } => any_numeric(*pg).prop_map(Value::Numeric).boxed(),
        Type::String => any_text(big).prop_map(Value::String).boxed(),
        Type::Json { .. } => any_text(big).prop_map(Value::Json).boxed(),
        Type::Bytes => any_bytes(big).prop_map(Value::Bytes).boxed(),
        Type::Proto(_) => any_bytes(big).prop_map(Value::Proto).boxed(),
        Type::Date => (-719_162i64..=2_932_896)
            .prop_map(|d| Value::Date(Date::from_days_since_epoch(d).expect("in range")))
            .boxed(),
        Type::Timestamp => any_timestamp().prop_map(Value::Timestamp).boxed(),
        Type::Interval => any_interval().prop_map(Value::Interval).boxed(),
        Type::Uuid => any::<u128>().prop_map(|u| Value::Uuid(Uuid(u))).boxed(),
        Type::Array(element) => vec(any_value(element, big), 0..5)
            .prop_map(Value::Array)
            .boxed(),
        Type::Struct(fields) => fields
            .iter()
            .map(|f| any_value(&f.ty, big))
            .collect::<Vec<_>>()
            .prop_map(Value::Struct)
            .boxed(),
    };
    prop_oneof![1 => Just(Value::Null), 9 => value].boxed()
}

/// A schema of one to six columns and up to `max_rows` rows for it.
fn any_table(max_rows: usize, big: u32) -> impl Strategy<Value = (Vec<Field>, Vec<Vec<Value>>)> {
    vec(any_type(), 1..7).prop_flat_map(move |types| {
        let columns: Vec<Field> = types
            .iter()
            .enumerate()
            .map(|(i, ty)| Field {
                name: format!("c{i}"),
                ty: ty.clone(),
            })
            .collect();
        let row = types
            .iter()
            .map(|ty| any_value(ty, big))
            .collect::<Vec<_>>();
        (Just(columns), vec(row, 0..max_rows))
    })
}

/// A stream cut at the points `choices` dictate, and how many whole values each message completes.
struct Cut {
    messages: Vec<pb::PartialResultSet>,
    complete_values_after: Vec<usize>,
}

/// Cuts the flat value sequence into messages. Each choice either ends the message (possibly leaving it
/// empty), moves the next value into it whole, or splits the next string or list at a random point and
/// ends the message with `chunked_value` set. When the choices run out, the rest goes into one message.
fn cut(columns: &[Field], values: Vec<WireValue>, choices: &[u32]) -> Cut {
    let mut queue: VecDeque<WireValue> = values.into();
    let mut messages = Vec::new();
    let mut complete_values_after = Vec::new();
    let mut complete = 0;
    let mut current = pb::PartialResultSet {
        metadata: metadata(columns),
        ..Default::default()
    };
    let mut choices = choices.iter();
    let mut end = |current: &mut pb::PartialResultSet, complete: usize| {
        messages.push(std::mem::take(current));
        complete_values_after.push(complete);
    };
    while let Some(next) = queue.pop_front() {
        let choice = choices.next().copied().unwrap_or(1);
        match choice % 4 {
            0 => {
                queue.push_front(next);
                end(&mut current, complete);
            }
            3 if splittable(&next) => {
                let at = (choice / 4) as usize % (weight(&next) + 1);
                let (left, right) = split(next, at).expect("splittable");
                current.values.push(left);
                current.chunked_value = true;
                queue.push_front(right);
                end(&mut current, complete);
            }
            _ => {
                current.values.push(next);
                complete += 1;
            }
        }
    }
    current.last = true;
    end(&mut current, complete);
    Cut {
        messages,
        complete_values_after,
    }
}

/// Decodes the messages as they travel (serialized), checking after each one that exactly the rows it
/// completed were handed out.
fn decode_checking_progress(cut: &Cut, columns: usize) -> Result<Vec<Row>, TestCaseError> {
    // Both decoders: the twin checks the fast one hands out the same rows after every message.
    let mut decoder = Twin::new();
    let mut rows = Vec::new();
    for (i, msg) in cut.messages.iter().enumerate() {
        decoder
            .feed_bytes(&msg.encode_to_vec(), &mut rows)
            .map_err(|e| TestCaseError::fail(format!("feed: {e}")))?;
        prop_assert_eq!(
            rows.len(),
            cut.complete_values_after[i] / columns,
            "rows handed out after message {}",
            i
        );
    }
    decoder
        .finish()
        .map_err(|e| TestCaseError::fail(format!("finish: {e}")))?;
    let counters = decoder.counters();
    prop_assert_eq!(counters.messages, cut.messages.len() as u64);
    prop_assert_eq!(counters.rows, rows.len() as u64);
    let chunked = cut.messages.iter().filter(|m| m.chunked_value).count();
    prop_assert_eq!(counters.chunked_values, chunked as u64);
    let bytes: usize = cut.messages.iter().map(|m| m.encoded_len()).sum();
    prop_assert_eq!(counters.wire_bytes, bytes as u64);
    Ok(rows)
}

/// Rows as canonical JSON text: equal texts mean equal values (NaN included, which `==` would reject).
fn canonical(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .map(|r| r.to_canonical_json().to_string())
        .collect()
}

fn check_round_trip(
    columns: &[Field],
    table: Vec<Vec<Value>>,
    choices: &[u32],
) -> Result<(), TestCaseError> {
    let expected: Vec<Row> = table.into_iter().map(Row).collect();
    let flat: Vec<WireValue> = expected
        .iter()
        .flat_map(|r| r.values().iter().map(encode_value))
        .collect();

    let whole = cut(columns, flat.clone(), &[]);
    prop_assert_eq!(whole.messages.len(), 1);
    let uncut_rows = decode_checking_progress(&whole, columns.len())?;

    let pieces = cut(columns, flat, choices);
    let cut_rows = decode_checking_progress(&pieces, columns.len())?;

    prop_assert_eq!(canonical(&uncut_rows), canonical(&expected));
    prop_assert_eq!(canonical(&cut_rows), canonical(&uncut_rows));
    // Canonical JSON hides the difference between some types (BYTES and PROTO are both base64):
    // compare the typed values too, NaN-safe through their bit patterns.
    prop_assert!(same_rows(&cut_rows, &expected), "typed values differ");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 3000,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    })]

    /// Thousands of random tables, cut anywhere: the rows come back exactly.
    #[test]
    fn any_cutting_decodes_to_the_same_rows(
        (columns, table) in any_table(8, 0),
        choices in vec(any::<u32>(), 0..96),
    ) {
        check_round_trip(&columns, table, &choices)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    })]

    /// Megabyte strings and bytes among the values, cut many times.
    #[test]
    fn megabyte_values_survive_any_cutting(
        (columns, table) in any_table(4, 3),
        choices in vec(any::<u32>(), 0..256),
    ) {
        check_round_trip(&columns, table, &choices)?;
    }
}

/// The proptest generators above must actually produce what the properties claim to cover; a
/// generator that silently stopped making megabyte values or chunked messages would make them vacuous.
#[test]
fn the_generators_cover_what_the_properties_claim() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let strategy = (any_table(4, 3), vec(any::<u32>(), 0..256));
    let (mut megabyte, mut nested, mut chunked, mut nulls, mut empty) = (0, 0, 0, 0, 0);
    for _ in 0..200 {
        let ((columns, table), choices) = strategy.new_tree(&mut runner).expect("a tree").current();
        let flat: Vec<WireValue> = table.iter().flatten().map(encode_value).collect();
        megabyte += flat.iter().filter(|v| weight(v) >= 1 << 20).count();
        nested += columns
            .iter()
            .filter(|c| matches!(&c.ty, Type::Array(t) if matches!(**t, Type::Struct(_) | Type::Array(_))))
            .count();
        nulls += table
            .iter()
            .flatten()
            .filter(|v| **v == Value::Null)
            .count();
        empty += table
            .iter()
            .flatten()
            .filter(|v| {
                matches!(v, Value::Array(a) if a.is_empty())
                    || matches!(v, Value::String(s) if s.is_empty())
            })
            .count();
        chunked += cut(&columns, flat, &choices)
            .messages
            .iter()
            .filter(|m| m.chunked_value)
            .count();
    }
    assert!(megabyte > 0, "no megabyte values generated");
    assert!(nested > 0, "no nested arrays generated");
    assert!(chunked > 100, "only {chunked} chunked messages");
    assert!(
        nulls > 0 && empty > 0,
        "nulls {nulls}, empty values {empty}"
    );
}
