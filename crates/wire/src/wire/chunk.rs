//! Chunked values: merging the pieces a stream sends back into one value, and cutting a value
//! into such pieces (what a server does, and what the property tests do at random points).
//!
//! The rule (SPANNER_WIRE.md, "Merging chunked values"): strings concatenate; lists concatenate after
//! the last element of the left is merged with the first of the right when both are strings or both
//! are lists, recursively. Bools, numbers and nulls are never chunked.

use prost_types::Value as WireValue;
use prost_types::value::Kind;

use super::convert::kind_name;

/// Two pieces of a chunked value whose kinds cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot merge a chunked {left} with {right}")]
pub struct MergeError {
    /// The kind of the piece carried over from the previous message.
    pub left: &'static str,
    /// The kind of the first value of the next message.
    pub right: &'static str,
}

/// Merges the chunk `right` onto the incomplete value `left`.
pub fn merge(left: WireValue, right: WireValue) -> Result<WireValue, MergeError> {
    match (left.kind, right.kind) {
        (Some(Kind::StringValue(mut a)), Some(Kind::StringValue(b))) => {
            a.push_str(&b);
            Ok(string(a))
        }
        (Some(Kind::ListValue(mut a)), Some(Kind::ListValue(b))) => {
            let mut rest = b.values.into_iter();
            if let Some(first) = rest.next() {
                match a.values.pop() {
                    Some(last) if mergeable(&last, &first) => a.values.push(merge(last, first)?),
                    Some(last) => a.values.extend([last, first]),
                    None => a.values.push(first),
                }
            }
            a.values.extend(rest);
            Ok(WireValue {
                kind: Some(Kind::ListValue(a)),
            })
        }
        (l, r) => Err(MergeError {
            left: kind_name(l.as_ref()),
            right: kind_name(r.as_ref()),
        }),
    }
}

fn mergeable(a: &WireValue, b: &WireValue) -> bool {
    matches!(
        (&a.kind, &b.kind),
        (Some(Kind::StringValue(_)), Some(Kind::StringValue(_)))
            | (Some(Kind::ListValue(_)), Some(Kind::ListValue(_)))
    )
}

fn string(s: String) -> WireValue {
    WireValue {
        kind: Some(Kind::StringValue(s)),
    }
}

fn list(values: Vec<WireValue>) -> WireValue {
    WireValue {
        kind: Some(Kind::ListValue(prost_types::ListValue { values })),
    }
}

/// Whether a value can be sent in pieces: strings and lists can, bools, numbers and nulls cannot.
pub fn splittable(value: &WireValue) -> bool {
    matches!(
        value.kind,
        Some(Kind::StringValue(_)) | Some(Kind::ListValue(_))
    )
}

/// The split weight of a value: bytes of a string, the sum over a list's elements, 1 for anything else.
/// [`split`] takes a position in `0..=weight`.
pub fn weight(value: &WireValue) -> usize {
    match &value.kind {
        Some(Kind::StringValue(s)) => s.len(),
        Some(Kind::ListValue(l)) => l.values.iter().map(weight).sum(),
        _ => 1,
    }
}

/// Cuts a string or list value at `at` (a position in `0..=weight(value)`, snapped back to a UTF-8
/// boundary inside strings) into two pieces such that `merge(left, right)` gives `value` back.
///
/// A cut that falls exactly between two strings or two lists inside a list leaves an empty `""` or
/// `[]` at the start of the right piece, as Spanner does, so the merge does not join them.
/// Returns the value unchanged in `Err` if it is a bool, number or null.
pub fn split(value: WireValue, at: usize) -> Result<(WireValue, WireValue), WireValue> {
    match value.kind {
        Some(Kind::StringValue(mut s)) => {
            let mut cut = at.min(s.len());
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            let right = s.split_off(cut);
            Ok((string(s), string(right)))
        }
        Some(Kind::ListValue(l)) => Ok(split_list(l.values, at)),
        kind => Err(WireValue { kind }),
    }
}

fn split_list(mut values: Vec<WireValue>, at: usize) -> (WireValue, WireValue) {
    let mut before = 0;
    for i in 0..values.len() {
        let w = weight(&values[i]);
        if at < before + w {
            let right_values = values.split_off(i + 1);
            let element = values.pop().unwrap_or_default();
            let (left_piece, right_piece) = match split(element, at - before) {
                Ok(pieces) => pieces,
                // A bool, number or null: cut just before it. The merge never joins it to anything.
                Err(atom) => {
                    let mut right = vec![atom];
                    right.extend(right_values);
                    return (list(values), list(right));
                }
            };
            values.push(left_piece);
            let mut right = vec![right_piece];
            right.extend(right_values);
            return (list(values), list(right));
        }
        before += w;
    }
    (list(values), list(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> WireValue {
        string(text.to_owned())
    }

    fn n(x: f64) -> WireValue {
        WireValue {
            kind: Some(Kind::NumberValue(x)),
        }
    }

    #[test]
    fn merges_nested_lists_as_documented() {
        // ["a", ["b","c"]] then [["d"],"e"] gives ["a", ["b","cd"], "e"].
        let left = list(vec![s("a"), list(vec![s("b"), s("c")])]);
        let right = list(vec![list(vec![s("d")]), s("e")]);
        let expected = list(vec![s("a"), list(vec![s("b"), s("cd")]), s("e")]);
        assert_eq!(merge(left, right), Ok(expected));
    }

    #[test]
    fn numbers_inside_lists_are_not_merged() {
        let left = list(vec![n(1.0)]);
        let right = list(vec![n(2.0)]);
        assert_eq!(merge(left, right), Ok(list(vec![n(1.0), n(2.0)])));
    }

    #[test]
    fn mismatched_kinds_are_an_error() {
        assert_eq!(
            merge(s("a"), list(vec![])),
            Err(MergeError {
                left: "a string",
                right: "a list"
            })
        );
        assert!(merge(n(1.0), n(2.0)).is_err());
    }

    #[test]
    fn every_cut_of_a_nested_list_merges_back() {
        let value = list(vec![
            s("ab"),
            s("été"),
            n(3.0),
            list(vec![]),
            list(vec![s(""), s("xy"), list(vec![s("z")])]),
            s("q"),
        ]);
        for at in 0..=weight(&value) + 1 {
            let (l, r) = split(value.clone(), at).expect("a list splits");
            assert_eq!(merge(l, r).as_ref(), Ok(&value), "cut at {at}");
        }
    }

    #[test]
    fn strings_are_cut_on_char_boundaries() {
        let (l, r) = split(s("a😀b"), 2).expect("a string splits");
        assert_eq!((l, r), (s("a"), s("😀b")));
        assert!(split(n(1.0), 0).is_err());
    }
}
