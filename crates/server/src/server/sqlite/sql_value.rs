//! Values between SQLite and Spanner: typed values stored into SQLite, SQLite results sent as wire
//! values of their Spanner column type, and query parameters bound from wire values.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost::Message as _;
use prost_types::Value as WireValue;
use prost_types::value::Kind;
use rusqlite::types::{Value as SqlValue, ValueRef};

use crate::wire::{Type, Value, decode_value, encode_value};

/// How a typed value is stored in SQLite: integers, reals, text, blobs; arrays and structs as the
/// serialized `google.protobuf.ListValue` of their wire form (a fraction of the cost of JSON both ways).
/// Takes the value to reuse its buffers.
pub fn to_sql(value: Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(b)),
        Value::Int64(n) | Value::Enum(n) => SqlValue::Integer(n),
        Value::Float64(f) => SqlValue::Real(f),
        Value::Float32(f) => SqlValue::Real(f64::from(f)),
        Value::Numeric(n) => SqlValue::Text(n.to_string()),
        Value::String(s) | Value::Json(s) => SqlValue::Text(s),
        Value::Bytes(b) | Value::Proto(b) => SqlValue::Blob(b),
        Value::Date(d) => SqlValue::Text(d.to_string()),
        Value::Timestamp(t) => SqlValue::Text(t.to_string()),
        Value::Interval(i) => SqlValue::Text(i.to_string()),
        Value::Uuid(u) => SqlValue::Text(u.to_string()),
        Value::Array(_) | Value::Struct(_) => match encode_value(&value).kind {
            Some(Kind::ListValue(list)) => SqlValue::Blob(list.encode_to_vec()),
            _ => SqlValue::Null,
        },
    }
}

/// The Spanner type a result column gets when it does not come straight from a table column: from
/// the SQLite storage class of its first non-NULL value (INT64 when there is none, as Spanner types
/// a bare NULL).
pub fn type_of_sql(value: ValueRef<'_>) -> Option<Type> {
    match value {
        ValueRef::Null => None,
        ValueRef::Integer(_) => Some(Type::Int64),
        ValueRef::Real(_) => Some(Type::Float64),
        ValueRef::Text(_) => Some(Type::String),
        ValueRef::Blob(_) => Some(Type::Bytes),
    }
}

/// Converts a SQLite result value to the wire form of `ty`. Fails with a message when the stored value
/// is not a value of that type: a value of one type is never sent as another (no number as a STRING,
/// no text as BYTES, no text that is not UTF-8).
pub fn from_sql(ty: &Type, value: ValueRef<'_>) -> Result<WireValue, String> {
    let kind = match (ty, value) {
        (_, ValueRef::Null) => Kind::NullValue(0),
        (Type::Bool, ValueRef::Integer(n)) => Kind::BoolValue(n != 0),
        (Type::Float64 | Type::Float32, ValueRef::Real(f)) => Kind::NumberValue(f),
        (Type::Float64 | Type::Float32, ValueRef::Integer(n)) => Kind::NumberValue(n as f64),
        (Type::Int64 | Type::Enum(_), ValueRef::Integer(n)) => Kind::StringValue(n.to_string()),
        (Type::Int64 | Type::Enum(_), ValueRef::Real(f))
            if f.fract() == 0.0 && f.abs() < 9.2e18 =>
        {
            Kind::StringValue((f as i64).to_string())
        }
        (Type::Bytes | Type::Proto(_), ValueRef::Blob(b)) => Kind::StringValue(BASE64.encode(b)),
        (Type::Array(_) | Type::Struct(_), ValueRef::Blob(bytes)) => {
            let list = prost_types::ListValue::decode(bytes)
                .map_err(|e| format!("stored {ty} is not a ListValue: {e}"))?;
            Kind::ListValue(list)
        }
        (Type::Array(_) | Type::Struct(_), ValueRef::Text(text)) => {
            let json: serde_json::Value = serde_json::from_slice(text)
                .map_err(|e| format!("stored {ty} is not JSON: {e}"))?;
            return Ok(json_to_wire(json));
        }
        (ty, ValueRef::Text(text)) if travels_as_text(ty) => match std::str::from_utf8(text) {
            Ok(text) => Kind::StringValue(text.to_owned()),
            Err(_) => return Err(format!("a TEXT value that is not UTF-8 is not a {ty}")),
        },
        (ty, other) => return Err(misfit(ty, other)),
    };
    Ok(WireValue { kind: Some(kind) })
}

/// Whether values of `ty` travel as strings and are stored as text: STRING, JSON, NUMERIC, DATE,
/// TIMESTAMP, INTERVAL, UUID.
fn travels_as_text(ty: &Type) -> bool {
    matches!(
        ty,
        Type::String
            | Type::Json { .. }
            | Type::Numeric { .. }
            | Type::Date
            | Type::Timestamp
            | Type::Interval
            | Type::Uuid
    )
}

/// Why a value cannot be sent as `ty`.
fn misfit(ty: &Type, value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Real(f) if matches!(ty, Type::Int64 | Type::Enum(_)) => {
            format!("the REAL value {f} is not a whole {ty}")
        }
        other => format!("a SQLite {} value is not a {ty}", storage_class(other)),
    }
}

/// Writes the wire form of `value` as `ty` to `out` as the body of an encoded `google.protobuf.Value`:
/// the same value [`from_sql`] builds, without building it, and the same refusals. The common cells
/// go straight from SQLite's memory to the buffer; the rare ones (JSON text arrays, whole reals as
/// INT64, misfits) take the tree path.
pub fn encode_sql(ty: &Type, value: ValueRef<'_>, out: &mut Vec<u8>) -> Result<(), String> {
    use crate::server::encoded::{
        is_list_value, put_base64, put_bool, put_delimited, put_int, put_null, put_number, tag,
    };
    match (ty, value) {
        (_, ValueRef::Null) => put_null(out),
        (Type::Bool, ValueRef::Integer(n)) => put_bool(out, n != 0),
        (Type::Float64 | Type::Float32, ValueRef::Real(f)) => put_number(out, f),
        (Type::Float64 | Type::Float32, ValueRef::Integer(n)) => put_number(out, n as f64),
        (Type::Int64 | Type::Enum(_), ValueRef::Integer(n)) => put_int(out, n),
        (Type::Bytes | Type::Proto(_), ValueRef::Blob(b)) => put_base64(out, b),
        (Type::Array(_) | Type::Struct(_), ValueRef::Blob(bytes)) => {
            if !is_list_value(bytes) {
                return Err(format!("stored {ty} is not a ListValue"));
            }
            put_delimited(out, tag::LIST, bytes);
        }
        (ty, ValueRef::Text(text))
            if travels_as_text(ty) && simdutf8::basic::from_utf8(text).is_ok() =>
        {
            put_delimited(out, tag::STRING, text)
        }
        _ => prost::Message::encode_raw(&from_sql(ty, value)?, out),
    }
    Ok(())
}

fn storage_class(value: ValueRef<'_>) -> &'static str {
    match value {
        ValueRef::Null => "NULL",
        ValueRef::Integer(_) => "INTEGER",
        ValueRef::Real(_) => "REAL",
        ValueRef::Text(_) => "TEXT",
        ValueRef::Blob(_) => "BLOB",
    }
}

/// JSON text (an array built with SQLite's JSON functions, say) in wire form: canonical JSON and the
/// wire encoding of values coincide.
fn json_to_wire(json: serde_json::Value) -> WireValue {
    use serde_json::Value as J;
    let kind = match json {
        J::Null => Kind::NullValue(0),
        J::Bool(b) => Kind::BoolValue(b),
        J::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(f64::NAN)),
        J::String(s) => Kind::StringValue(s),
        J::Array(items) => Kind::ListValue(prost_types::ListValue {
            values: items.into_iter().map(json_to_wire).collect(),
        }),
        J::Object(map) => Kind::StructValue(prost_types::Struct {
            fields: map.into_iter().map(|(k, v)| (k, json_to_wire(v))).collect(),
        }),
    };
    WireValue { kind: Some(kind) }
}

/// A query parameter: the wire value decoded by its declared type (STRING when undeclared, as
/// Spanner infers untyped string parameters), then stored the way the tables store that type.
pub fn param_to_sql(ty: Option<&Type>, value: WireValue) -> Result<SqlValue, String> {
    let ty = ty.cloned().unwrap_or(Type::String);
    let typed = decode_value(&ty, value).map_err(|e| e.to_string())?;
    Ok(to_sql(typed))
}

/// The SQLite column type that stores values of `ty`.
pub fn sqlite_type(ty: &Type) -> &'static str {
    match ty {
        Type::Bool | Type::Int64 | Type::Enum(_) => "INTEGER",
        Type::Float32 | Type::Float64 => "REAL",
        Type::Bytes | Type::Proto(_) => "BLOB",
        _ => "TEXT",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Date, Timestamp};

    fn round_trip(ty: &Type, value: Value) -> Value {
        let stored = to_sql(value.clone());
        let wire = from_sql(ty, ValueRef::from(&stored)).expect("converts");
        decode_value(ty, wire).expect("decodes")
    }

    #[test]
    fn typed_values_survive_sqlite() {
        let cases = vec![
            (Type::Bool, Value::Bool(true)),
            (Type::Int64, Value::Int64(i64::MIN)),
            (Type::Float64, Value::Float64(0.1)),
            (Type::String, Value::String("Straße 🚀".into())),
            (Type::Bytes, Value::Bytes(vec![0, 255, 7])),
            (
                Type::Date,
                Value::Date(Date::new(1999, 12, 31).expect("valid")),
            ),
            (
                Type::Timestamp,
                Value::Timestamp(Timestamp::new(1_700_000_000, 5).expect("valid")),
            ),
            (
                Type::Array(Box::new(Type::Float64)),
                Value::Array(vec![
                    Value::Float64(1.25),
                    Value::Null,
                    Value::Float64(f64::INFINITY),
                ]),
            ),
            (
                Type::Array(Box::new(Type::Bytes)),
                Value::Array(vec![Value::Bytes(b"hi".to_vec())]),
            ),
            (Type::Int64, Value::Null),
        ];
        for (ty, value) in cases {
            assert_eq!(round_trip(&ty, value.clone()), value, "{ty}");
        }
    }

    #[test]
    fn impossible_conversions_are_errors() {
        assert!(from_sql(&Type::Bool, ValueRef::Text(b"yes")).is_err());
        assert!(from_sql(&Type::Array(Box::new(Type::Int64)), ValueRef::Text(b"[1,")).is_err());
        assert!(
            from_sql(
                &Type::Array(Box::new(Type::Int64)),
                ValueRef::Blob(b"\xff\xff")
            )
            .is_err()
        );
        // Arrays built in SQL (json_array) arrive as JSON text and still convert.
        let json = from_sql(
            &Type::Array(Box::new(Type::Int64)),
            ValueRef::Text(b"[\"1\",null]"),
        )
        .expect("JSON text converts");
        assert_eq!(
            decode_value(&Type::Array(Box::new(Type::Int64)), json),
            Ok(Value::Array(vec![Value::Int64(1), Value::Null]))
        );
        assert_eq!(type_of_sql(ValueRef::Real(1.0)), Some(Type::Float64));
        assert_eq!(type_of_sql(ValueRef::Null), None);
    }

    /// Every branch of the direct encoding against the tree [`from_sql`] builds.
    #[test]
    fn direct_encoding_is_what_the_tree_encodes() {
        use prost::Message as _;
        let list = to_sql(Value::Array(vec![Value::String("a".into()), Value::Null]));
        let list = ValueRef::from(&list);
        let array = Type::Array(Box::new(Type::String));
        let cells: Vec<(Type, ValueRef<'_>)> = vec![
            (Type::Int64, ValueRef::Null),
            (Type::Bool, ValueRef::Integer(2)),
            (Type::Bool, ValueRef::Integer(0)),
            (Type::Float64, ValueRef::Real(-0.5)),
            (Type::Float32, ValueRef::Integer(3)),
            (Type::Int64, ValueRef::Integer(-42)),
            (Type::Int64, ValueRef::Real(7.0)),
            (Type::Enum("e".into()), ValueRef::Integer(1)),
            (Type::Bytes, ValueRef::Blob(b"\x00\xffab")),
            (array.clone(), list),
            (array.clone(), ValueRef::Text(b"[\"x\", null]")),
            (Type::String, ValueRef::Text("Straße 🚀".as_bytes())),
            (Type::Timestamp, ValueRef::Text(b"2020-01-01T00:00:00Z")),
        ];
        for (ty, cell) in cells {
            let mut direct = Vec::new();
            encode_sql(&ty, cell, &mut direct).expect("encodes");
            let tree = from_sql(&ty, cell).expect("converts").encode_to_vec();
            assert_eq!(direct, tree, "{ty} {cell:?}");
        }
        // A value of one type is never sent as another: these were once sent, mangled.
        for (ty, cell) in [
            (Type::Bool, ValueRef::Text(b"yes")),
            (array.clone(), ValueRef::Blob(b"\xff\xff")),
            (array, ValueRef::Real(1.0)),
            (Type::Bytes, ValueRef::Text(b"text")),
            (Type::String, ValueRef::Text(b"bad \xff utf-8")),
            (Type::String, ValueRef::Integer(5)),
            (Type::String, ValueRef::Real(2.5)),
            (Type::String, ValueRef::Blob(b"blob")),
            (Type::Int64, ValueRef::Text(b"abc")),
            (Type::Int64, ValueRef::Real(2.5)),
            (Type::Float64, ValueRef::Text(b"1.5")),
            (Type::Date, ValueRef::Integer(20200101)),
        ] {
            assert!(
                encode_sql(&ty, cell, &mut Vec::new()).is_err(),
                "{ty} {cell:?}"
            );
            assert!(from_sql(&ty, cell).is_err(), "{ty} {cell:?}");
        }
    }

    #[test]
    fn parameters_follow_their_declared_type() {
        let int = WireValue {
            kind: Some(Kind::StringValue("42".into())),
        };
        assert_eq!(
            param_to_sql(Some(&Type::Int64), int.clone()),
            Ok(SqlValue::Integer(42))
        );
        assert_eq!(param_to_sql(None, int), Ok(SqlValue::Text("42".into())));
        let bad = WireValue {
            kind: Some(Kind::StringValue("4x".into())),
        };
        assert!(param_to_sql(Some(&Type::Int64), bad).is_err());
    }
}
