//! JSON read into `serde_json::Value`s within a budget. A `Value` costs far more than its text:
//! `{"a":1}` is 7 bytes and an object of its own (a map, its entry, its key), so 63 MiB of small
//! objects read as one `Value` took 5.1 GB and aborted `spanprof plan`. Where a file
//! from anyone is read into `Value`s (a query plan in Spanner's JSON, a plan node's metadata and
//! statistics in a report), each value is charged to a budget first, and the read fails once the
//! budget is spent: the memory follows the budget, not the file.
//!
//! A scalar costs [`SCALAR`] unit, an array [`ARRAY`], an object [`OBJECT`] and each of its keys
//! [`SCALAR`] more: about a unit per 40 bytes of memory. Text (strings and keys) is not charged:
//! it costs what it took in the file, which is bounded before it is read.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What a number, a string, a boolean, a null or an object's key costs.
pub const SCALAR: usize = 1;
/// What an array costs, beside its elements.
pub const ARRAY: usize = 2;
/// What an object costs, beside its keys and values (its map is the dearest part).
pub const OBJECT: usize = 8;

/// What one read may spend: 4,000,000 units, a few hundred MB at most. A real plan of a few
/// thousand nodes with their statistics takes under 500,000.
pub const BUDGET: usize = 4_000_000;

thread_local! {
    /// The units left to the reads of [`within`] on this thread; `None` outside one.
    static LEFT: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `read` with `budget` units for every [`bounded`] field it deserializes on this thread,
/// all together (a nested call has its own budget until it returns).
pub fn within<T>(budget: usize, read: impl FnOnce() -> T) -> T {
    let outer = LEFT.with(|left| left.replace(Some(budget)));
    let result = read();
    LEFT.with(|left| left.set(outer));
    result
}

/// For `#[serde(deserialize_with = "...")]` on a `Value` field: the value, charged to the budget
/// of the [`within`] around the read (outside one, to a [`BUDGET`] of its own).
pub fn bounded<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
    match LEFT.with(Cell::get) {
        Some(left) => {
            let budget = Cell::new(left);
            let value = Charged { left: &budget }.deserialize(deserializer);
            LEFT.with(|l| l.set(Some(budget.get())));
            value
        }
        None => Charged {
            left: &Cell::new(BUDGET),
        }
        .deserialize(deserializer),
    }
}

/// A whole document read as a `Value` within `budget` units.
pub fn from_slice(bytes: &[u8], budget: usize) -> serde_json::Result<Value> {
    let left = Cell::new(budget);
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = Charged { left: &left }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// Builds a `Value` as serde_json's own does, charging each part to `left` before it is kept.
#[derive(Clone, Copy)]
struct Charged<'b> {
    left: &'b Cell<usize>,
}

impl Charged<'_> {
    fn charge<E: de::Error>(self, units: usize) -> Result<(), E> {
        match self.left.get().checked_sub(units) {
            Some(rest) => {
                self.left.set(rest);
                Ok(())
            }
            None => Err(E::custom(format_args!(
                "more JSON values than this reader keeps ({BUDGET} units, about a unit per 40 \
                 bytes of memory)"
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Charged<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Charged<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::from(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.charge(SCALAR)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.charge(ARRAY)?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.charge(OBJECT)?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            self.charge(SCALAR)?;
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_within_its_budget_reads_as_serde_json_reads_it() {
        let text =
            br#"{"a": [1, -2, 3.5, "x", null, true], "b": {"c": {}}, "d": 18446744073709551615}"#;
        let read = from_slice(text, 1_000).expect("within the budget");
        let reference: Value = serde_json::from_slice(text).expect("valid");
        assert_eq!(read, reference);
        // 3 objects, 4 keys, 1 array of 6, 1 number: 3*8 + 4 + 2 + 6 + 1.
        assert!(from_slice(text, 37).is_ok());
        assert!(from_slice(text, 36).is_err());
    }

    #[test]
    fn many_small_objects_stop_at_the_budget() {
        let mut text = String::from("[");
        for _ in 0..100_000 {
            text.push_str(r#"{"a":1},"#);
        }
        text.push_str("{}]");
        let error = from_slice(text.as_bytes(), 10_000).expect_err("past the budget");
        assert!(
            error.to_string().contains("more JSON values than"),
            "{error}"
        );
        assert!(from_slice(br#"[1] x"#, 100).is_err(), "trailing text");
    }

    #[derive(serde::Deserialize)]
    struct Two {
        #[serde(deserialize_with = "bounded")]
        first: Value,
        #[serde(deserialize_with = "bounded")]
        second: Value,
    }

    #[test]
    fn fields_read_within_one_budget_share_it() {
        let text = r#"{"first": [1, 2, 3], "second": [4, 5, 6]}"#;
        // Each field costs 2 + 3 = 5: both fit in 10, not in 9.
        let both = within(10, || serde_json::from_str::<Two>(text)).expect("within 10");
        assert_eq!(both.first, serde_json::json!([1, 2, 3]));
        assert_eq!(both.second, serde_json::json!([4, 5, 6]));
        assert!(within(9, || serde_json::from_str::<Two>(text)).is_err());
        // Outside a budget each field has its own.
        assert!(serde_json::from_str::<Two>(text).is_ok());
    }
}
