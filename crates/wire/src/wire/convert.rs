//! Conversions between wire values (`google.protobuf.Value`) and typed [`Value`]s, by column type.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use prost_types::value::Kind;

use super::types::Type;
use super::value::{Date, Interval, Numeric, Timestamp, Uuid, Value};

/// Why a wire value does not fit its column's type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// The value's kind is not the one the type travels as (a number for INT64, say).
    #[error("{ty} value sent as {found}, expected {expected}")]
    WrongKind {
        /// The column or element type.
        ty: String,
        /// What the type travels as ("a string").
        expected: &'static str,
        /// What arrived ("a number").
        found: &'static str,
    },
    /// The value has the right kind but its content is not a valid value of the type.
    #[error("bad {ty} value {text}: {reason}")]
    Invalid {
        /// The column or element type.
        ty: String,
        /// The offending text, shortened for display.
        text: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A STRUCT value with the wrong number of fields.
    #[error("STRUCT with {expected} fields sent as a list of {found} values")]
    StructArity {
        /// Fields in the type.
        expected: usize,
        /// Values on the wire.
        found: usize,
    },
    /// An error inside an ARRAY element or STRUCT field, with its position.
    #[error("{where_} {index}: {inner}")]
    Nested {
        /// "element" or "field".
        where_: &'static str,
        /// The element or field index.
        index: usize,
        /// The error inside.
        inner: Box<ValueError>,
    },
}

/// A short name for a wire value's kind, for messages.
pub(crate) fn kind_name(kind: Option<&Kind>) -> &'static str {
    match kind {
        None => "a value with no kind",
        Some(Kind::NullValue(_)) => "null",
        Some(Kind::NumberValue(_)) => "a number",
        Some(Kind::StringValue(_)) => "a string",
        Some(Kind::BoolValue(_)) => "a bool",
        Some(Kind::StructValue(_)) => "a struct",
        Some(Kind::ListValue(_)) => "a list",
    }
}

/// Decodes one wire value as `ty`, taking the wire value's strings and lists over without copying.
pub fn decode_value(ty: &Type, value: prost_types::Value) -> Result<Value, ValueError> {
    let kind = match value.kind {
        Some(Kind::NullValue(_)) => return Ok(Value::Null),
        kind => kind,
    };
    match (ty, kind) {
        (Type::Bool, Some(Kind::BoolValue(b))) => Ok(Value::Bool(b)),
        (Type::Float64, Some(Kind::NumberValue(n))) => Ok(Value::Float64(n)),
        (Type::Float32, Some(Kind::NumberValue(n))) => Ok(Value::Float32(n as f32)),
        (Type::Float64, Some(Kind::StringValue(s))) => special_float(ty, &s).map(Value::Float64),
        (Type::Float32, Some(Kind::StringValue(s))) => {
            special_float(ty, &s).map(|f| Value::Float32(f as f32))
        }
        (Type::Array(element), Some(Kind::ListValue(list))) => {
            decode_list(element, list.values).map(Value::Array)
        }
        (Type::Struct(fields), Some(Kind::ListValue(list))) => {
            if list.values.len() != fields.len() {
                return Err(ValueError::StructArity {
                    expected: fields.len(),
                    found: list.values.len(),
                });
            }
            let values = fields
                .iter()
                .zip(list.values)
                .enumerate()
                .map(|(i, (field, v))| {
                    decode_value(&field.ty, v).map_err(|e| nested("field", i, e))
                })
                .collect::<Result<_, _>>()?;
            Ok(Value::Struct(values))
        }
        (_, Some(Kind::StringValue(s))) if travels_as_string(ty) => decode_string(ty, s),
        (_, kind) => Err(ValueError::WrongKind {
            ty: ty.to_string(),
            expected: expected_kind(ty),
            found: kind_name(kind.as_ref()),
        }),
    }
}

fn decode_list(element: &Type, values: Vec<prost_types::Value>) -> Result<Vec<Value>, ValueError> {
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| decode_value(element, v).map_err(|e| nested("element", i, e)))
        .collect()
}

pub(crate) fn nested(where_: &'static str, index: usize, inner: ValueError) -> ValueError {
    ValueError::Nested {
        where_,
        index,
        inner: Box::new(inner),
    }
}

fn travels_as_string(ty: &Type) -> bool {
    !matches!(
        ty,
        Type::Bool | Type::Float32 | Type::Float64 | Type::Array(_) | Type::Struct(_)
    )
}

pub(crate) fn expected_kind(ty: &Type) -> &'static str {
    match ty {
        Type::Bool => "a bool",
        Type::Float32 | Type::Float64 => "a number or \"NaN\"/\"Infinity\"/\"-Infinity\"",
        Type::Array(_) | Type::Struct(_) => "a list",
        _ => "a string",
    }
}

pub(crate) fn special_float(ty: &Type, s: &str) -> Result<f64, ValueError> {
    match s {
        "NaN" => Ok(f64::NAN),
        "Infinity" => Ok(f64::INFINITY),
        "-Infinity" => Ok(f64::NEG_INFINITY),
        _ => Err(invalid(
            ty,
            s,
            "a float sent as a string must be NaN, Infinity or -Infinity",
        )),
    }
}

/// A type that travels as a string: INT64, NUMERIC, STRING, BYTES, JSON, DATE, TIMESTAMP, PROTO, ENUM,
/// INTERVAL, UUID.
fn decode_string(ty: &Type, s: String) -> Result<Value, ValueError> {
    let checked = |r: Result<Value, String>, s: &str| r.map_err(|reason| invalid(ty, s, reason));
    match ty {
        Type::String => Ok(Value::String(s)),
        Type::Json { .. } => Ok(Value::Json(s)),
        Type::Int64 => checked(parse_i64(&s).map(Value::Int64), &s),
        Type::Enum(_) => checked(parse_i64(&s).map(Value::Enum), &s),
        Type::Numeric { pg } => {
            if !pg && s == "NaN" {
                return Err(invalid(ty, &s, "NaN is only valid for PostgreSQL numeric"));
            }
            Numeric::from_string(s.clone())
                .map(Value::Numeric)
                .map_err(|e| invalid(ty, &s, e.0))
        }
        Type::Bytes => checked(base64(&s).map(Value::Bytes), &s),
        Type::Proto(_) => checked(base64(&s).map(Value::Proto), &s),
        Type::Date => checked(Date::parse(&s).map(Value::Date).map_err(|e| e.0.into()), &s),
        Type::Timestamp => checked(
            Timestamp::parse(&s)
                .map(Value::Timestamp)
                .map_err(|e| e.0.into()),
            &s,
        ),
        Type::Interval => checked(
            Interval::parse(&s)
                .map(Value::Interval)
                .map_err(|e| e.0.into()),
            &s,
        ),
        Type::Uuid => checked(Uuid::parse(&s).map(Value::Uuid).map_err(|e| e.0.into()), &s),
        Type::Bool | Type::Float32 | Type::Float64 | Type::Array(_) | Type::Struct(_) => {
            Err(ValueError::WrongKind {
                ty: ty.to_string(),
                expected: expected_kind(ty),
                found: "a string",
            })
        }
    }
}

pub(crate) fn parse_i64(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err("not a decimal integer".into());
    }
    s.parse()
        .map_err(|_| "out of the 64-bit signed range".to_owned())
}

fn base64(s: &str) -> Result<Vec<u8>, String> {
    BASE64.decode(s).map_err(base64_reason)
}

/// Why a BYTES or PROTO value is not base64, in the words both decoders use.
pub(crate) fn base64_reason(e: base64::DecodeError) -> String {
    format!("not standard base64 ({e})")
}

pub(crate) fn invalid(ty: &Type, text: &str, reason: impl Into<String>) -> ValueError {
    const MAX: usize = 64;
    let shown = if text.len() <= MAX {
        format!("{text:?}")
    } else {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        format!("{:?}... ({} bytes)", &text[..end], text.len())
    };
    ValueError::Invalid {
        ty: ty.to_string(),
        text: shown,
        reason: reason.into(),
    }
}

/// The wire form of a typed value: what a Spanner server sends for it.
pub fn encode_value(value: &Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Int64(n) | Value::Enum(n) => Kind::StringValue(n.to_string()),
        Value::Float64(f) => encode_float(*f),
        Value::Float32(f) => encode_float(f64::from(*f)),
        Value::Numeric(n) => Kind::StringValue(n.to_string()),
        Value::String(s) | Value::Json(s) => Kind::StringValue(s.clone()),
        Value::Bytes(b) | Value::Proto(b) => Kind::StringValue(BASE64.encode(b)),
        Value::Date(d) => Kind::StringValue(d.to_string()),
        Value::Timestamp(t) => Kind::StringValue(t.to_string()),
        Value::Interval(i) => Kind::StringValue(i.to_string()),
        Value::Uuid(u) => Kind::StringValue(u.to_string()),
        Value::Array(items) | Value::Struct(items) => Kind::ListValue(prost_types::ListValue {
            values: items.iter().map(encode_value).collect(),
        }),
    };
    prost_types::Value { kind: Some(kind) }
}

fn encode_float(f: f64) -> Kind {
    if f.is_nan() {
        Kind::StringValue("NaN".into())
    } else if f == f64::INFINITY {
        Kind::StringValue("Infinity".into())
    } else if f == f64::NEG_INFINITY {
        Kind::StringValue("-Infinity".into())
    } else {
        Kind::NumberValue(f)
    }
}
