//! The canonical JSON encoding of rows (defined in `shared/vectors/README.md`), used to compare what
//! two decoders produced and printed by `spanprof decode`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value as Json;

use super::decoder::Row;
use super::value::Value;

impl Value {
    /// NULL as null, BOOL as a boolean, INT64/ENUM as a decimal string, floats as numbers (non-finite ones
    /// as "NaN"/"Infinity"/"-Infinity"), NUMERIC as sent, BYTES/PROTO as padded standard base64, TIMESTAMP
    /// in RFC 3339 UTC without trailing fractional zeros, ARRAY and STRUCT as arrays, anything else as
    /// its text.
    pub fn to_canonical_json(&self) -> Json {
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int64(n) | Value::Enum(n) => Json::String(n.to_string()),
            Value::Float64(f) => float_json(*f),
            // The shortest decimal that reads back as the same f32, so 0.1f32 prints as 0.1.
            Value::Float32(f) => float_json(f.to_string().parse().unwrap_or(f64::from(*f))),
            Value::Numeric(n) => Json::String(n.to_string()),
            Value::String(s) | Value::Json(s) => Json::String(s.clone()),
            Value::Bytes(b) | Value::Proto(b) => Json::String(BASE64.encode(b)),
            Value::Date(d) => Json::String(d.to_string()),
            Value::Timestamp(t) => Json::String(t.to_string()),
            Value::Interval(i) => Json::String(i.to_string()),
            Value::Uuid(u) => Json::String(u.to_string()),
            Value::Array(items) | Value::Struct(items) => {
                Json::Array(items.iter().map(Value::to_canonical_json).collect())
            }
        }
    }
}

fn float_json(f: f64) -> Json {
    match serde_json::Number::from_f64(f) {
        Some(n) => Json::Number(n),
        None if f.is_nan() => Json::String("NaN".into()),
        None if f > 0.0 => Json::String("Infinity".into()),
        None => Json::String("-Infinity".into()),
    }
}

impl Row {
    /// The row as a JSON array of its values' canonical encodings.
    pub fn to_canonical_json(&self) -> Json {
        Json::Array(self.0.iter().map(Value::to_canonical_json).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Date, Numeric, Timestamp};

    #[test]
    fn encodes_each_kind_as_documented() {
        let row = Row(vec![
            Value::Null,
            Value::Int64(-9_223_372_036_854_775_808),
            Value::Float64(f64::NEG_INFINITY),
            Value::Float32(0.1),
            Value::Numeric(Numeric::parse("1.50").expect("valid")),
            Value::Bytes(vec![0xff, 0x00, 0x10]),
            Value::Date(Date::new(2024, 2, 29).expect("valid")),
            Value::Timestamp(Timestamp::new(0, 120_000_000).expect("valid")),
            Value::Array(vec![Value::Bool(true), Value::Null]),
        ]);
        assert_eq!(
            row.to_canonical_json().to_string(),
            r#"[null,"-9223372036854775808","-Infinity",0.1,"1.50","/wAQ","2024-02-29","1970-01-01T00:00:00.12Z",[true,null]]"#
        );
    }
}
