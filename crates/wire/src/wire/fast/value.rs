//! One serialized `google.protobuf.Value` to a cell, by column type, without building the value:
//! the same checks and errors as [`decode_value`](crate::wire::decode_value), with text borrowed from
//! the message and base64 decoded straight into the batch's arena.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::batch::{Cell, Slots, Span, Store, TOO_LARGE, TextSpan, arena_span, pack_timestamp};
use super::protobuf::{FIXED64, Fail, LEN, Reader, VARINT};
use crate::wire::convert::{
    ValueError, base64_reason, expected_kind, invalid, nested, parse_i64, special_float,
};
use crate::wire::fields::list_value;
use crate::wire::fields::value::{
    BOOL_KEY, BOOL_VALUE, LIST_KEY, LIST_VALUE, NULL_KEY, NULL_VALUE, NUMBER_KEY, NUMBER_VALUE,
    STRING_KEY, STRING_VALUE, STRUCT_VALUE,
};
use crate::wire::types::Type;
use crate::wire::value::{Date, Interval, Numeric, ParseError, Timestamp, Uuid};

/// Lists nested deeper than this go to prost, which knows its own recursion limit.
const MAX_DEPTH: u32 = 48;

/// The message the values are read from, and its index among the batch's buffers.
#[derive(Clone, Copy)]
pub(super) struct Source<'a> {
    pub(super) message: &'a [u8],
    pub(super) buf: u32,
}

/// What a `google.protobuf.Value` holds, its bytes still unchecked.
enum Kind<'a> {
    Null,
    Number(f64),
    String(&'a [u8]),
    Bool(bool),
    List(&'a [u8]),
}

/// Reads the one field of a Value. Anything unusual (no field, several, a struct value) goes to prost.
#[inline(always)]
fn read_kind(data: &[u8]) -> Result<Kind<'_>, Fail> {
    let mut r = Reader::new(data);
    let mut kind = None;
    while !r.is_empty() {
        let (field, wire_type) = r.key()?;
        let next = match (field, wire_type) {
            (NULL_VALUE, VARINT) => {
                r.varint()?;
                Kind::Null
            }
            (NUMBER_VALUE, FIXED64) => Kind::Number(f64::from_le_bytes(r.fixed64()?)),
            (STRING_VALUE, LEN) => Kind::String(r.bytes()?),
            (BOOL_VALUE, VARINT) => Kind::Bool(r.varint()? != 0),
            (LIST_VALUE, LEN) => Kind::List(r.bytes()?),
            // A struct value: prost checks its map entries; it fits no column type anyway.
            (STRUCT_VALUE, LEN) => return Err(Fail::Fallback),
            (NULL_VALUE..=LIST_VALUE, _) => {
                return Err(Fail::Wire("invalid wire type for Value.kind"));
            }
            _ => {
                r.skip(field, wire_type)?;
                continue;
            }
        };
        if kind.is_some() {
            // Several kind fields: prost's oneof rules (last wins, lists merge) apply.
            return Err(Fail::Fallback);
        }
        kind = Some(next);
    }
    kind.ok_or(Fail::Fallback)
}

/// Decodes the Value in `data` (a part of `src.message`) as `ty`.
#[inline]
pub(super) fn decode(
    store: &mut Store,
    src: Source<'_>,
    data: &[u8],
    ty: &Type,
    depth: u32,
) -> Result<Cell, Fail> {
    match read_kind(data)? {
        Kind::Null => Ok(Cell::Null),
        Kind::String(bytes) => string(store, src, bytes, ty),
        Kind::Number(n) => match ty {
            Type::Float64 => Ok(Cell::Float64(n)),
            Type::Float32 => Ok(Cell::Float32(n as f32)),
            _ => Err(wrong_kind(ty, "a number")),
        },
        Kind::Bool(b) => match ty {
            Type::Bool => Ok(Cell::Bool(b)),
            _ => Err(wrong_kind(ty, "a bool")),
        },
        Kind::List(body) => {
            if depth >= MAX_DEPTH {
                return Err(Fail::Fallback);
            }
            match ty {
                Type::Array(element) => {
                    let n = count_elements(body)?;
                    let (start, slots) = store.reserve_slots(n)?;
                    fill(store, src, body, start, |_| element, "element", depth)?;
                    Ok(Cell::Array(slots))
                }
                Type::Struct(fields) => {
                    let n = count_elements(body)?;
                    if n != fields.len() {
                        return Err(Fail::value(ValueError::StructArity {
                            expected: fields.len(),
                            found: n,
                        }));
                    }
                    let (start, slots) = store.reserve_slots(n)?;
                    fill(store, src, body, start, |i| &fields[i].ty, "field", depth)?;
                    Ok(Cell::Struct(slots))
                }
                _ => Err(wrong_kind(ty, "a list")),
            }
        }
    }
}

/// How the values of one column are decoded, worked out once per message from the column's type so
/// that the hot loop does not walk `Type` trees.
#[derive(Clone, Copy)]
pub(super) enum Plan {
    /// A scalar column.
    Scalar(Scalar),
    /// An ARRAY of a scalar type: one walk over the list, elements pushed as they are read.
    Array(Scalar),
    /// Anything else (structs, arrays of arrays or structs): the general path.
    General,
}

/// The scalar types, as a small code.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Scalar {
    Bool,
    Int64,
    Float32,
    Float64,
    Numeric,
    PgNumeric,
    String,
    Json,
    Bytes,
    Proto,
    Date,
    Timestamp,
    Enum,
    Interval,
    Uuid,
}

impl Scalar {
    fn of(ty: &Type) -> Option<Scalar> {
        Some(match ty {
            Type::Bool => Scalar::Bool,
            Type::Int64 => Scalar::Int64,
            Type::Float32 => Scalar::Float32,
            Type::Float64 => Scalar::Float64,
            Type::Numeric { pg: false } => Scalar::Numeric,
            Type::Numeric { pg: true } => Scalar::PgNumeric,
            Type::String => Scalar::String,
            Type::Json { .. } => Scalar::Json,
            Type::Bytes => Scalar::Bytes,
            Type::Proto(_) => Scalar::Proto,
            Type::Date => Scalar::Date,
            Type::Timestamp => Scalar::Timestamp,
            Type::Enum(_) => Scalar::Enum,
            Type::Interval => Scalar::Interval,
            Type::Uuid => Scalar::Uuid,
            Type::Array(_) | Type::Struct(_) => return None,
        })
    }
}

impl Plan {
    /// The plan for a column of type `ty`.
    pub(super) fn of(ty: &Type) -> Plan {
        if let Some(s) = Scalar::of(ty) {
            return Plan::Scalar(s);
        }
        match ty {
            Type::Array(element) => Scalar::of(element).map_or(Plan::General, Plan::Array),
            _ => Plan::General,
        }
    }
}

/// The fast path: decodes the Value in `data` by `plan` when it has the usual form (one field, the
/// kind the column expects, canonical text) and is valid. `None` leaves the store as it was and sends
/// the value to [`decode`], which gives the same cell or works out the error; so this path never has
/// to build an error.
#[inline(always)]
pub(super) fn fast(store: &mut Store, src: Source<'_>, data: &[u8], plan: Plan) -> Option<Cell> {
    match plan {
        Plan::Scalar(s) => scalar(store, src, data, s),
        Plan::Array(s) => array(store, src, data, s),
        Plan::General => None,
    }
}

/// The kind of a Value that is exactly one field, as every encoder writes it; `None` for anything
/// else (which [`read_kind`] sorts out on the slow path).
#[inline(always)]
fn one_field(data: &[u8]) -> Option<Kind<'_>> {
    let (&key, rest) = data.split_first()?;
    match key {
        STRING_KEY | LIST_KEY => {
            let (len, body) = match rest.split_first() {
                Some((&len, body)) if len < 0x80 => (usize::from(len), body),
                _ => {
                    let mut r = Reader::new(rest);
                    let len = usize::try_from(r.varint().ok()?).ok()?;
                    (len, r.rest())
                }
            };
            if len != body.len() {
                return None;
            }
            Some(if key == STRING_KEY {
                Kind::String(body)
            } else {
                Kind::List(body)
            })
        }
        NULL_KEY => match rest {
            [v] if *v < 0x80 => Some(Kind::Null),
            _ => None,
        },
        NUMBER_KEY => {
            let n: [u8; 8] = rest.try_into().ok()?;
            Some(Kind::Number(f64::from_le_bytes(n)))
        }
        BOOL_KEY => match rest {
            [v] if *v < 0x80 => Some(Kind::Bool(*v != 0)),
            _ => None,
        },
        _ => None,
    }
}

#[inline(always)]
fn scalar(store: &mut Store, src: Source<'_>, data: &[u8], s: Scalar) -> Option<Cell> {
    match one_field(data)? {
        Kind::String(bytes) => text(store, src, bytes, s),
        Kind::Null => Some(Cell::Null),
        Kind::Number(n) => match s {
            Scalar::Float64 => Some(Cell::Float64(n)),
            Scalar::Float32 => Some(Cell::Float32(n as f32)),
            _ => None,
        },
        Kind::Bool(b) => (s == Scalar::Bool).then_some(Cell::Bool(b)),
        Kind::List(_) => None,
    }
}

/// An ARRAY of scalars in one walk: each element pushed to `store.nested` as it is read.
#[inline]
fn array(store: &mut Store, src: Source<'_>, data: &[u8], s: Scalar) -> Option<Cell> {
    let body = match one_field(data)? {
        Kind::List(body) => body,
        Kind::Null => return Some(Cell::Null),
        _ => return None,
    };
    let mark = store.mark();
    let start = store.nested.len();
    if elements(store, src, body, s).is_some()
        && let (Ok(start), Ok(len)) = (
            u32::try_from(start),
            u32::try_from(store.nested.len() - start),
        )
    {
        return Some(Cell::Array(Slots { start, len }));
    }
    store.truncate(mark);
    None
}

#[inline(always)]
fn elements(store: &mut Store, src: Source<'_>, body: &[u8], s: Scalar) -> Option<()> {
    let mut rest = body;
    while let Some((&key, tail)) = rest.split_first() {
        if key != list_value::VALUES_KEY {
            return None;
        }
        let (len, tail) = match tail.split_first() {
            Some((&len, tail)) if len < 0x80 => (usize::from(len), tail),
            _ => {
                let mut r = Reader::new(tail);
                let len = usize::try_from(r.varint().ok()?).ok()?;
                (len, r.rest())
            }
        };
        if len > tail.len() {
            return None;
        }
        let (element, tail) = tail.split_at(len);
        let cell = scalar(store, src, element, s)?;
        store.nested.push(cell);
        rest = tail;
    }
    Some(())
}

/// A string value as scalar `s`. Types whose fast parsers accept only ASCII skip the UTF-8 check.
#[inline(always)]
fn text(store: &mut Store, src: Source<'_>, bytes: &[u8], s: Scalar) -> Option<Cell> {
    // An `Option`, not a `Result` (which the compiler kept on the stack and read back across two
    // stores: a store-forwarding stall on every text cell).
    let here = |text: &str| TextSpan::within(src.buf, src.message, text);
    Some(match s {
        Scalar::String => Cell::String(here(utf8(bytes)?)?),
        Scalar::Int64 => Cell::Int64(int64_ascii(bytes)?),
        Scalar::Bytes => Cell::Bytes(base64_fast(store, bytes)?),
        Scalar::Timestamp => Cell::Timestamp(pack_timestamp(utc_timestamp(bytes)?)),
        Scalar::Date => Cell::Date(date(bytes)?),
        Scalar::Json => Cell::Json(here(utf8(bytes)?)?),
        Scalar::Numeric | Scalar::PgNumeric => {
            // NaN (valid for PostgreSQL only) goes to the general path.
            Cell::Numeric(here(decimal(bytes)?)?)
        }
        Scalar::Enum => Cell::Enum(int64_ascii(bytes)?),
        Scalar::Proto => Cell::Proto(base64_fast(store, bytes)?),
        Scalar::Uuid => store.push_uuid(Uuid::parse(utf8(bytes)?).ok()?),
        Scalar::Interval => store.push_interval(Interval::parse(utf8(bytes)?).ok()?),
        Scalar::Bool | Scalar::Float32 | Scalar::Float64 => return None,
    })
}

/// `b` as text if it is a plain decimal number as [`Numeric::check`] reads it (an optional sign, digits
/// with at most one point, at least one digit). `NaN` is not.
#[allow(unsafe_code)]
#[inline]
fn decimal(b: &[u8]) -> Option<&str> {
    let body = match b.split_first() {
        Some((b'-' | b'+', rest)) => rest,
        _ => b,
    };
    let (mut digits, mut points) = (0usize, 0usize);
    for &c in body {
        if c.is_ascii_digit() {
            digits += 1;
        } else if c == b'.' {
            points += 1;
        } else {
            return None;
        }
    }
    if digits == 0 || points > 1 {
        return None;
    }
    // SAFETY: ASCII, so UTF-8: every byte of `b` is a leading sign or, as the loop checked, an ASCII
    // digit or '.'.
    Some(unsafe { std::str::from_utf8_unchecked(b) })
}

/// `YYYY-MM-DD`, as [`Date::parse`] reads it.
#[inline]
fn date(b: &[u8]) -> Option<Date> {
    let b: &[u8; 10] = b.try_into().ok()?;
    if b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let two = |i: usize| {
        let (x, y) = (b[i].wrapping_sub(b'0'), b[i + 1].wrapping_sub(b'0'));
        (x < 10 && y < 10).then(|| u32::from(x) * 10 + u32::from(y))
    };
    let year = two(0)? * 100 + two(2)?;
    Date::new(year as u16, two(5)? as u8, two(8)? as u8)
}

/// A decimal INT64 of up to 19 digits, as `parse_i64` reads it; `None` for anything else. Eight
/// digits at a time where there are that many.
#[inline]
fn int64_ascii(b: &[u8]) -> Option<i64> {
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let (eights, rest) = digits.as_chunks::<8>();
    let mut n: u64 = 0;
    for eight in eights {
        n = n * 100_000_000 + u64::from(eight_digits(*eight)?);
    }
    for &d in rest {
        let v = d.wrapping_sub(b'0');
        if v > 9 {
            return None;
        }
        n = n * 10 + u64::from(v);
    }
    if negative {
        0i64.checked_sub_unsigned(n)
    } else {
        i64::try_from(n).ok()
    }
}

/// Eight ASCII digits (the first the most significant) as a number, or `None` if one is no digit.
#[inline(always)]
fn eight_digits(b: [u8; 8]) -> Option<u32> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const TENS: u64 = 0x7676_7676_7676_7676;
    let v = u64::from_le_bytes(b) ^ 0x3030_3030_3030_3030;
    if (v | v.wrapping_add(TENS)) & HIGH != 0 {
        return None;
    }
    // Pairs, then quads, then all eight: each step multiplies the more significant half by a power
    // of ten and adds the other, in place (the byte order is little-endian: the first digit lowest).
    let v = (v * 10 + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v * 100 + (v >> 16)) & 0x0000_ffff_0000_ffff;
    let v = (v * 10_000 + (v >> 32)) & 0xffff_ffff;
    Some(v as u32)
}

/// Canonical base64 into the arena; `None` (with the arena as it was) for anything else.
#[inline]
fn base64_fast(store: &mut Store, text: &[u8]) -> Option<Span> {
    let (chunk, room) = store.arena.room(text.len() / 4 * 3 + 3);
    let start = room.len();
    if super::base64::decode_canonical(text, room) {
        // Built directly, not through `arena_span`'s `Result` (see `text`).
        let len = room.len() - start;
        let (Ok(chunk), Ok(start), Ok(len)) = (
            u32::try_from(chunk),
            u32::try_from(start),
            u32::try_from(len),
        ) else {
            return None;
        };
        if chunk >= super::batch::ARENA {
            return None;
        }
        return Some(Span {
            buf: super::batch::ARENA + chunk,
            len,
            start,
        });
    }
    room.truncate(start);
    None
}

/// The number of values in a ListValue body, checking its framing.
fn count_elements(body: &[u8]) -> Result<usize, Fail> {
    let mut r = Reader::new(body);
    let mut n = 0;
    while !r.is_empty() {
        match r.key()? {
            (list_value::VALUES, LEN) => {
                r.bytes()?;
                n += 1;
            }
            (list_value::VALUES, _) => {
                return Err(Fail::Wire("invalid wire type for ListValue.values"));
            }
            (field, wire_type) => r.skip(field, wire_type)?,
        }
    }
    Ok(n)
}

/// Decodes the values of a ListValue body into the reserved slots from `start`.
fn fill<'t>(
    store: &mut Store,
    src: Source<'_>,
    body: &[u8],
    start: usize,
    ty_of: impl Fn(usize) -> &'t Type,
    where_: &'static str,
    depth: u32,
) -> Result<(), Fail> {
    let mut r = Reader::new(body);
    let mut i = 0;
    while !r.is_empty() {
        match r.key()? {
            (list_value::VALUES, _) => {
                let element = r.bytes()?;
                let cell =
                    decode(store, src, element, ty_of(i), depth + 1).map_err(|e| match e {
                        Fail::Value(inner) => Fail::value(nested(where_, i, *inner)),
                        other => other,
                    })?;
                if let Some(slot) = store.nested.get_mut(start + i) {
                    *slot = cell;
                }
                i += 1;
            }
            (field, wire_type) => r.skip(field, wire_type)?,
        }
    }
    Ok(())
}

fn wrong_kind(ty: &Type, found: &'static str) -> Fail {
    Fail::value(ValueError::WrongKind {
        ty: ty.to_string(),
        expected: expected_kind(ty),
        found,
    })
}

/// A string value: checked as UTF-8 (as prost does), then by type.
#[inline]
fn string(store: &mut Store, src: Source<'_>, bytes: &[u8], ty: &Type) -> Result<Cell, Fail> {
    let Some(s) = utf8(bytes) else {
        return Err(Fail::Wire(
            "invalid string value: data is not UTF-8 encoded",
        ));
    };
    let here = || TextSpan::within(src.buf, src.message, s).ok_or(TOO_LARGE);
    let bad = |reason: &str| Fail::value(invalid(ty, s, reason));
    Ok(match ty {
        Type::String => Cell::String(here()?),
        Type::Json { .. } => Cell::Json(here()?),
        Type::Int64 => Cell::Int64(int64(s).map_err(|r| bad(&r))?),
        Type::Enum(_) => Cell::Enum(int64(s).map_err(|r| bad(&r))?),
        Type::Numeric { pg } => {
            if !pg && s == "NaN" {
                return Err(bad("NaN is only valid for PostgreSQL numeric"));
            }
            Numeric::check(s).map_err(|e| bad(e.0))?;
            Cell::Numeric(here()?)
        }
        Type::Bytes => Cell::Bytes(base64(store, s).map_err(|r| bad(&r))??),
        Type::Proto(_) => Cell::Proto(base64(store, s).map_err(|r| bad(&r))??),
        Type::Date => Cell::Date(Date::parse(s).map_err(|e| bad(e.0))?),
        Type::Timestamp => Cell::Timestamp(pack_timestamp(timestamp(s).map_err(|e| bad(e.0))?)),
        Type::Interval => store.push_interval(Interval::parse(s).map_err(|e| bad(e.0))?),
        Type::Uuid => store.push_uuid(Uuid::parse(s).map_err(|e| bad(e.0))?),
        Type::Float64 => Cell::Float64(special_float(ty, s).map_err(Fail::value)?),
        Type::Float32 => Cell::Float32(special_float(ty, s).map_err(Fail::value)? as f32),
        Type::Bool | Type::Array(_) | Type::Struct(_) => return Err(wrong_kind(ty, "a string")),
    })
}

/// The text of a string value, if it is UTF-8. Short ASCII strings (most cells) are checked here with
/// at most two overlapping loads; longer ones eight bytes at a time; the rest by simdutf8.
#[allow(unsafe_code)]
#[inline(always)]
fn utf8(bytes: &[u8]) -> Option<&str> {
    let n = bytes.len();
    let high = if let (Some(first), Some(last)) =
        (bytes.first_chunk::<8>(), bytes.last_chunk::<8>())
    {
        if n > 16 {
            return utf8_long(bytes);
        }
        u64::from_le_bytes(*first) | u64::from_le_bytes(*last)
    } else if let (Some(first), Some(last)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        u64::from(u32::from_le_bytes(*first) | u32::from_le_bytes(*last))
    } else {
        bytes.iter().fold(0u64, |acc, &b| acc | u64::from(b))
    };
    if high & 0x8080_8080_8080_8080 == 0 {
        // SAFETY: ASCII, so UTF-8: `high` is the OR of every byte of `bytes` (the two loads overlap
        // and cover all 4 to 16 of them, or the fold reads each of fewer), and no high bit is set.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    simdutf8::basic::from_utf8(bytes).ok()
}

/// [`utf8`] for text longer than 16 bytes.
#[allow(unsafe_code)]
#[inline(never)]
fn utf8_long(bytes: &[u8]) -> Option<&str> {
    if bytes.len() <= 64 {
        let (words, tail) = bytes.as_chunks::<8>();
        let mut high = tail.iter().fold(0u64, |acc, &b| acc | u64::from(b));
        for w in words {
            high |= u64::from_le_bytes(*w);
        }
        if high & 0x8080_8080_8080_8080 == 0 {
            // SAFETY: ASCII, so UTF-8: `high` is the OR of every byte of `bytes` (the whole words,
            // then the tail), and no high bit is set.
            return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
    }
    simdutf8::basic::from_utf8(bytes).ok()
}

/// A TIMESTAMP: the form Spanner sends (`YYYY-MM-DDTHH:MM:SS[.fraction]Z`) read directly, anything
/// else (offsets, lowercase, errors) by [`Timestamp::parse`].
#[inline]
fn timestamp(s: &str) -> Result<Timestamp, ParseError> {
    match utc_timestamp(s.as_bytes()) {
        Some(t) => Ok(t),
        None => Timestamp::parse(s),
    }
}

fn utc_timestamp(b: &[u8]) -> Option<Timestamp> {
    /// `'0'` where a digit goes, the separators where they go: XORed with the text, a digit becomes
    /// its value and a right separator zero.
    const PATTERN: [u8; 19] = *b"0000-00-00T00:00:00";
    /// The separators' bytes in the words below.
    const SEP_LO: u64 = 0xff00_00ff_0000_0000; // "YYYY-MM-": bytes 4 and 7
    const SEP_HI: u64 = 0x0000_ff00_00ff_0000; // "HH:MM:SS" (from byte 11): bytes 2 and 5
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const TENS: u64 = 0x7676_7676_7676_7676; // a byte above 9 plus this sets its high bit
    let (head, rest) = b.split_first_chunk::<19>()?;
    let word = |i: usize| {
        let (mut w, mut p) = ([0u8; 8], [0u8; 8]);
        w.copy_from_slice(&head[i..i + 8]);
        p.copy_from_slice(&PATTERN[i..i + 8]);
        u64::from_le_bytes(w) ^ u64::from_le_bytes(p)
    };
    // "YYYY-MM-" and "HH:MM:SS"; bytes 8..=10 ("DDT") on their own.
    let (lo, hi) = (word(0), word(11));
    let (d0, d1) = (head[8].wrapping_sub(b'0'), head[9].wrapping_sub(b'0'));
    let bad = (lo | lo.wrapping_add(TENS) | hi | hi.wrapping_add(TENS)) & HIGH
        | lo & SEP_LO
        | hi & SEP_HI;
    if bad != 0 || d0 > 9 || d1 > 9 || head[10] != b'T' {
        return None;
    }
    let digit = |w: u64, i: u32| (w >> (8 * i)) as u32 & 0xff;
    let two = |w: u64, i: u32| digit(w, i) * 10 + digit(w, i + 1);
    let year = two(lo, 0) * 100 + two(lo, 2);
    let (month, day) = (two(lo, 5), u32::from(d0) * 10 + u32::from(d1));
    let (hour, minute, second) = (two(hi, 0), two(hi, 3), two(hi, 6));
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let date = Date::new(year as u16, month as u8, day as u8)?;
    const SCALE: [u32; 10] = [
        1_000_000_000,
        100_000_000,
        10_000_000,
        1_000_000,
        100_000,
        10_000,
        1_000,
        100,
        10,
        1,
    ];
    let nanos = match rest {
        [b'Z'] => 0,
        [b'.', fraction @ .., b'Z'] if (1..=9).contains(&fraction.len()) => {
            let mut n = 0u32;
            for &c in fraction {
                let v = c.wrapping_sub(b'0');
                if v > 9 {
                    return None;
                }
                n = n * 10 + u32::from(v);
            }
            n * SCALE[fraction.len()]
        }
        _ => return None,
    };
    let seconds = date.days_since_epoch() * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    Timestamp::new(seconds, nanos)
}

/// A decimal INT64, without allocating unless it is invalid.
#[inline]
fn int64(s: &str) -> Result<i64, String> {
    let b = s.as_bytes();
    let (negative, digits) = match b.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, b),
    };
    // Up to 18 digits cannot overflow; longer ones take the careful path.
    if digits.is_empty() || digits.len() > 18 {
        return parse_i64(s);
    }
    let mut n: i64 = 0;
    for &d in digits {
        let v = d.wrapping_sub(b'0');
        if v > 9 {
            return parse_i64(s);
        }
        n = n * 10 + i64::from(v);
    }
    Ok(if negative { -n } else { n })
}

/// Decodes base64 text into the arena: canonical text by hand, anything else by the `base64` crate
/// (which decides, in the reference's words, whether it is valid).
#[inline]
fn base64(store: &mut Store, s: &str) -> Result<Result<Span, Fail>, String> {
    let (chunk, room) = store.arena.room(s.len() / 4 * 3 + 3);
    let start = room.len();
    if super::base64::decode_canonical(s.as_bytes(), room) {
        return Ok(arena_span(chunk, start, room.len() - start));
    }
    room.truncate(start);
    let decoded = BASE64.decode(s).map_err(base64_reason)?;
    Ok(store.push_arena(&decoded))
}

#[cfg(test)]
mod tests;
