//! Cutting a result into PartialResultSets the way production Spanner does: messages up to a maximum
//! size, strings and lists split mid-value with `chunked_value`, a resume token on every message; or
//! in another [`Shape`] (the emulator's, or every legal one).

use std::collections::VecDeque;

use prost::Message as _;
use prost::bytes::Bytes;
use prost::encoding::{WireType, encode_varint, encoded_len_varint};
use prost_types::Value as WireValue;
use prost_types::value::Kind;

pub use super::token::{ResumePoint, TokenStamp};
use crate::server::encoded::{is_splittable, tag};
use crate::server::shape::{EdgeCut, EdgeWalk, Shape};

use crate::proto::google::spanner::v1 as pb;
use crate::wire::chunk::{merge, split, splittable, weight};
use crate::wire::fields::partial_result_set as field;
use crate::wire::{Field, struct_type};

/// The metadata of an answer with `columns`, read in `transaction`.
pub fn metadata(columns: &[Field], transaction: Option<pb::Transaction>) -> pb::ResultSetMetadata {
    pb::ResultSetMetadata {
        row_type: Some(struct_type(columns)),
        transaction,
        undeclared_parameters: None,
    }
}

/// Encoded size of `value` as one element of `PartialResultSet.values` (tag, length and body).
fn field_len(value: &WireValue) -> usize {
    prost::encoding::message::encoded_len(field::VALUES, value)
}

/// Encoded size of a string value of `len` bytes as one element of `PartialResultSet.values`.
fn string_field_len(len: usize) -> usize {
    let value_len = 1 + encoded_len_varint(len as u64) + len;
    1 + encoded_len_varint(value_len as u64) + value_len
}

/// Pieces smaller than this are not worth a split: the message is closed instead.
const MIN_PIECE_BYTES: usize = 24;

/// Room kept in every message for the fields added when it is closed: the resume token (48 bytes and
/// its framing), `chunked_value` and `last`.
const TRAILER_BYTES: usize = super::token::TOKEN_BYTES + 8;

/// Builds the messages of one stream from a flat sequence of values, as encoded bytes.
///
/// Values usually arrive already encoded ([`MessageBuilder::push_encoded`]) and are copied into the
/// message once; only a value that must be split across messages is decoded, cut and re-encoded.
/// Completed messages queue up in [`MessageBuilder::pop`]; the message being filled is held back so the
/// last one can carry the stats and `last = true` ([`MessageBuilder::finish`]).
#[derive(Debug)]
pub struct MessageBuilder {
    /// Room for values and their framing in the message being filled.
    max_bytes: usize,
    /// That room in every message after the first.
    later_max_bytes: usize,
    /// The message being filled, encoded: the metadata (first message only) and the values so far.
    current: Vec<u8>,
    /// Values in `current`.
    current_values: usize,
    /// Whether the last value of `current` continues in the next message.
    chunked: bool,
    next_seq: u64,
    token: TokenStamp,
    ready: VecDeque<Bytes>,
    value_bytes: u64,
    /// How the last value in `current` is continued when a message ends on it whole, in the
    /// shapes that do so.
    last_tail: Option<Continuation>,
    /// Where the edge shape is in its walk through the cases.
    edge: EdgeWalk,
}

impl MessageBuilder {
    /// A builder whose first message carries `metadata`.
    pub fn new(metadata: pb::ResultSetMetadata, token: TokenStamp) -> Self {
        let mut current = Vec::with_capacity(initial_capacity(token.max_bytes as usize));
        let slack = widest_metadata_len(&metadata).saturating_sub(
            prost::encoding::message::encoded_len(field::METADATA, &metadata),
        );
        prost::encoding::message::encode(field::METADATA, &metadata, &mut current);
        let later_max_bytes = (token.max_bytes as usize).saturating_sub(TRAILER_BYTES);
        MessageBuilder {
            max_bytes: later_max_bytes.saturating_sub(slack),
            later_max_bytes,
            current,
            current_values: 0,
            chunked: false,
            next_seq: 0,
            token,
            ready: VecDeque::new(),
            value_bytes: 0,
            last_tail: None,
            edge: EdgeWalk::default(),
        }
    }

    /// The shape it cuts in.
    pub fn shape(&self) -> Shape {
        self.token.shape
    }

    /// A row is complete. The edge shape may close the message exactly here, and add a message
    /// with no values after it; the other shapes do nothing.
    #[inline]
    pub fn end_row(&mut self) {
        if self.token.shape != Shape::Edge {
            return;
        }
        let (close, empty) = self.edge.end_row();
        if close && self.current_values > 0 {
            self.complete(None, false);
        }
        if empty {
            self.complete(None, false);
        }
    }

    /// Adds the next value of the result, given as the body of an encoded `google.protobuf.Value`.
    pub fn push_encoded(&mut self, body: &[u8]) {
        if self.token.shape == Shape::Edge && self.edge_cut(body) {
            return;
        }
        loop {
            let need = 1 + encoded_len_varint(body.len() as u64) + body.len();
            let room = self.max_bytes.saturating_sub(self.current.len());
            if need <= room || (self.current_values == 0 && !is_splittable(body)) {
                self.append_body(body);
                return;
            }
            if is_splittable(body) {
                match WireValue::decode(body) {
                    Ok(value) => return self.push(value),
                    // Not a value: it goes out as it came, for the client to report.
                    Err(_) if self.current_values == 0 => return self.append_body(body),
                    Err(_) => {}
                }
            }
            self.boundary();
        }
    }

    /// The edge shape's cut of a value that fits: its left piece ends this message, chunked, and
    /// the rest goes on as any value does. Whether it cut.
    fn edge_cut(&mut self, body: &[u8]) -> bool {
        let Some(cut) = self.edge.next_value() else {
            return false;
        };
        let need = 1 + encoded_len_varint(body.len() as u64) + body.len();
        if !is_splittable(body) || need > self.max_bytes.saturating_sub(self.current.len()) {
            return false;
        }
        let Ok(value) = WireValue::decode(body) else {
            return false;
        };
        let total = weight(&value);
        let at = match cut {
            EdgeCut::Middle => total / 2,
            EdgeCut::Early => 1,
            EdgeCut::End => total,
        };
        if total == 0 || at == 0 {
            return false;
        }
        let (left, right) = match split(value, at) {
            Ok(pieces) => pieces,
            Err(_) => return false,
        };
        if weight(&left) == 0 {
            // Nothing to the left of the cut (a cut snapped back to the start of a character).
            if let Ok(whole) = merge(left, right) {
                self.push(whole);
            }
            return true;
        }
        self.append(left);
        self.chunked = true;
        self.complete(None, false);
        self.push(right);
        true
    }

    /// Adds the next value of the result, splitting it across messages when it does not fit.
    pub fn push(&mut self, value: WireValue) {
        match value.kind {
            Some(Kind::StringValue(s)) => self.push_string(s),
            kind => self.push_value(WireValue { kind }),
        }
    }

    /// A string is cut by walking an offset through it, so a value of megabytes in small messages
    /// costs one copy of its bytes, not one copy of the remainder per piece.
    fn push_string(&mut self, s: String) {
        let mut start = 0;
        loop {
            let room = self.max_bytes.saturating_sub(self.current.len());
            let rest = s.len() - start;
            if string_field_len(rest) <= room
                || (start == 0 && self.current_values == 0 && room < MIN_PIECE_BYTES)
            {
                let piece = if start == 0 { s } else { s[start..].to_owned() };
                self.append(string_value(piece));
                return;
            }
            if room >= MIN_PIECE_BYTES {
                // Framing of a piece is at most 12 bytes for any message size we allow.
                let mut cut = start + room.saturating_sub(12).min(rest);
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                if cut > start {
                    self.append(string_value(s[start..cut].to_owned()));
                    self.chunked = true;
                    self.complete(None, false);
                    start = cut;
                    continue;
                }
            }
            self.boundary();
        }
    }

    fn append(&mut self, value: WireValue) {
        self.last_tail = Continuation::of(&value);
        let before = self.current.len();
        prost::encoding::message::encode(field::VALUES, &value, &mut self.current);
        self.value_bytes += (self.current.len() - before) as u64;
        self.current_values += 1;
    }

    fn append_body(&mut self, body: &[u8]) {
        self.last_tail = match body.first() {
            _ if !self.token.shape.continues_at_boundaries() => None,
            Some(&tag::STRING) => Some(Continuation::String),
            // Only at the end of a message is it used, but which element ends a list is only known
            // from the list: the shapes that continue lists are for checking clients, not speed.
            Some(&tag::LIST) => WireValue::decode(body)
                .ok()
                .and_then(|v| Continuation::of(&v)),
            _ => None,
        };
        let before = self.current.len();
        prost::encoding::encode_key(field::VALUES, WireType::LengthDelimited, &mut self.current);
        encode_varint(body.len() as u64, &mut self.current);
        self.current.extend_from_slice(body);
        self.value_bytes += (self.current.len() - before) as u64;
        self.current_values += 1;
    }

    fn push_value(&mut self, mut value: WireValue) {
        loop {
            let need = field_len(&value);
            let room = self.max_bytes.saturating_sub(self.current.len());
            if need <= room || (self.current_values == 0 && !splittable(&value)) {
                self.append(value);
                return;
            }
            if splittable(&value) && room >= MIN_PIECE_BYTES {
                match split_to_fit(value, room) {
                    Ok((left, right)) => {
                        self.append(left);
                        self.chunked = true;
                        self.complete(None, false);
                        value = right;
                        continue;
                    }
                    Err(whole) => value = whole,
                }
            }
            self.boundary();
        }
    }

    /// Takes the next completed message (a serialized PartialResultSet), if any.
    pub fn pop(&mut self) -> Option<Bytes> {
        self.ready.pop_front()
    }

    /// Bytes of values (as message fields) pushed so far: what the stream returns, without framing.
    pub fn value_bytes(&self) -> u64 {
        self.value_bytes
    }

    /// Number of the next message to be completed.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Closes the stream: the message being filled becomes the last, with `stats` and `last = true`
    /// (the edge shape closes it and sends them in a message of their own, with no values).
    /// Returns every message not yet popped.
    pub fn finish(mut self, stats: Option<pb::ResultSetStats>) -> Vec<Bytes> {
        if self.token.shape == Shape::Edge && self.current_values > 0 {
            self.complete(None, false);
        }
        self.complete(stats.as_ref(), true);
        self.ready.into()
    }

    /// Ends the message being filled at a value boundary because the next value does not fit. The
    /// shapes that do so mark a whole string or list at its end chunked, and continue it in the
    /// next message with an empty one.
    fn boundary(&mut self) {
        let continuation = match self.last_tail {
            _ if !self.token.shape.continues_at_boundaries() || self.current_values == 0 => None,
            tail => tail.map(Continuation::value),
        };
        self.chunked = continuation.is_some();
        self.complete(None, false);
        if let Some(empty) = continuation {
            self.append(empty);
        }
    }

    /// Ends the message being filled: its remaining fields in field order, then the queue.
    fn complete(&mut self, stats: Option<&pb::ResultSetStats>, last: bool) {
        // No shape sends `metadata` after the first message: production leaves the field out.
        let next = Vec::with_capacity(initial_capacity(self.max_bytes + TRAILER_BYTES));
        let mut msg = std::mem::replace(&mut self.current, next);
        if std::mem::take(&mut self.chunked) {
            prost::encoding::bool::encode(field::CHUNKED_VALUE, &true, &mut msg);
        }
        if self.token.shape.resume_tokens() {
            let token = ResumePoint {
                seq: self.next_seq,
                stamp: self.token,
            }
            .encode();
            prost::encoding::bytes::encode(field::RESUME_TOKEN, &token, &mut msg);
        }
        if let Some(stats) = stats {
            prost::encoding::message::encode(field::STATS, stats, &mut msg);
        }
        if last {
            prost::encoding::bool::encode(field::LAST, &true, &mut msg);
        }
        self.next_seq += 1;
        self.max_bytes = self.later_max_bytes;
        self.current_values = 0;
        self.last_tail = None;
        self.ready.push_back(Bytes::from(msg));
    }
}

/// The encoded size `metadata` would have with its read timestamp at its widest. A resumed stream
/// whose query runs again skips the messages its client has, so they must be cut exactly as before,
/// but the new run reads at a new timestamp, whose varints may take other numbers of bytes: the first
/// message is charged for the widest timestamp, so its cut (and every later one) does not depend on it.
fn widest_metadata_len(metadata: &pb::ResultSetMetadata) -> usize {
    let len = |m: &pb::ResultSetMetadata| prost::encoding::message::encoded_len(field::METADATA, m);
    let Some(transaction) = &metadata.transaction else {
        return len(metadata);
    };
    if transaction.read_timestamp.is_none() {
        return len(metadata);
    }
    let widest = pb::ResultSetMetadata {
        transaction: Some(pb::Transaction {
            read_timestamp: Some(prost_types::Timestamp {
                seconds: i64::MIN,
                nanos: i32::MIN,
            }),
            ..transaction.clone()
        }),
        ..metadata.clone()
    };
    len(&widest)
}

/// Room a new message starts with: its whole size up to 1 MiB (a larger limit grows as it fills, so a
/// huge limit with small answers costs nothing).
fn initial_capacity(max_bytes: usize) -> usize {
    max_bytes.min(1 << 20)
}

/// A whole result cut into serialized messages of at most `max_bytes`, as the local instance would send
/// it (resume tokens included, no stats): for benchmarks and tests of the decoders.
pub fn encode_stream(
    columns: &[crate::wire::Field],
    rows: impl IntoIterator<Item = Vec<crate::wire::Value>>,
    max_bytes: u32,
) -> Vec<Vec<u8>> {
    encode_stream_shaped(columns, rows, max_bytes, Shape::Production, None)
}

/// A whole result cut into serialized messages of at most `max_bytes` in `shape`, the last with
/// `stats` (with the first, for the emulator's shape), as the local instance would send it.
pub fn encode_stream_shaped(
    columns: &[crate::wire::Field],
    rows: impl IntoIterator<Item = Vec<crate::wire::Value>>,
    max_bytes: u32,
    shape: Shape,
    stats: Option<pb::ResultSetStats>,
) -> Vec<Vec<u8>> {
    let metadata = pb::ResultSetMetadata {
        row_type: Some(crate::wire::struct_type(columns)),
        ..Default::default()
    };
    let stamp = TokenStamp {
        max_bytes,
        request_key: 0,
        stream: 0,
        shape,
    };
    let mut builder = MessageBuilder::new(metadata, stamp);
    let mut out = Vec::new();
    for row in rows {
        for value in &row {
            builder.push_encoded(&crate::wire::encode_value(value).encode_to_vec());
        }
        builder.end_row();
        out.extend(std::iter::from_fn(|| builder.pop()).map(|m| m.to_vec()));
    }
    let (last, first) = if shape.stats_first() {
        (None, stats)
    } else {
        (stats, None)
    };
    out.extend(builder.finish(last).into_iter().map(|m| m.to_vec()));
    if let (Some(stats), Some(message)) = (first, out.first_mut()) {
        append_stats(message, &stats);
    }
    out
}

/// How a value that ends a message whole is continued in the next one (the emulator's habit): a
/// string with `""`, a list exactly at its end with an empty last element, `[""]` or `[[]]`, which
/// merges into that element and leaves it as it was. Lists that end in another kind of element
/// are not continued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Continuation {
    String,
    ListOfString,
    ListOfList,
}

impl Continuation {
    fn of(value: &WireValue) -> Option<Continuation> {
        match &value.kind {
            Some(Kind::StringValue(_)) => Some(Continuation::String),
            Some(Kind::ListValue(list)) => match list.values.last().and_then(|v| v.kind.as_ref()) {
                Some(Kind::StringValue(_)) => Some(Continuation::ListOfString),
                Some(Kind::ListValue(_)) => Some(Continuation::ListOfList),
                _ => None,
            },
            _ => None,
        }
    }

    fn value(self) -> WireValue {
        let list = |element: WireValue| WireValue {
            kind: Some(Kind::ListValue(prost_types::ListValue {
                values: vec![element],
            })),
        };
        match self {
            Continuation::String => string_value(String::new()),
            Continuation::ListOfString => list(string_value(String::new())),
            Continuation::ListOfList => list(WireValue {
                kind: Some(Kind::ListValue(prost_types::ListValue::default())),
            }),
        }
    }
}

/// Appends `stats` to an encoded message (fields may come in any order; the emulator's shape puts
/// the statistics on its first message once the answer is complete).
pub fn append_stats(message: &mut Vec<u8>, stats: &pb::ResultSetStats) {
    prost::encoding::message::encode(field::STATS, stats, message);
}

fn string_value(s: String) -> WireValue {
    WireValue {
        kind: Some(Kind::StringValue(s)),
    }
}

/// Splits `value` so that the left piece, as a message field, takes at most `room` bytes and carries
/// something. Gives the value back whole when no such cut exists.
fn split_to_fit(value: WireValue, room: usize) -> Result<(WireValue, WireValue), WireValue> {
    let total_weight = weight(&value);
    let total_len = field_len(&value).max(1);
    // Weight is close to bytes for strings; lists add framing per element, so scale by their ratio.
    let mut at =
        (room.saturating_sub(16) as u128 * total_weight as u128 / total_len as u128) as usize;
    let mut value = value;
    while at > 0 {
        let (left, right) = split(value, at)?;
        if field_len(&left) <= room && weight(&left) > 0 {
            return Ok((left, right));
        }
        // The pieces of a split always merge back (the chunk module's tests prove it for any cut).
        value = merge(left, right).expect("the pieces of a split merge back");
        at = at * 3 / 4;
    }
    Err(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Field, Row, StreamDecoder, Type, Value, encode_value, struct_type};

    fn stamp(max_bytes: u32) -> TokenStamp {
        TokenStamp {
            max_bytes,
            request_key: 42,
            stream: 7,
            shape: Shape::Production,
        }
    }

    fn build(columns: &[Field], rows: &[Vec<Value>], max: u32) -> Vec<pb::PartialResultSet> {
        let metadata = pb::ResultSetMetadata {
            row_type: Some(struct_type(columns)),
            ..Default::default()
        };
        let mut builder = MessageBuilder::new(metadata, stamp(max));
        let mut out = Vec::new();
        for (i, value) in rows.iter().flatten().enumerate() {
            // Both ways in: trees, and encoded bodies (split when they do not fit).
            if i % 2 == 0 {
                builder.push(encode_value(value));
            } else {
                builder.push_encoded(&encode_value(value).encode_to_vec());
            }
            out.extend(std::iter::from_fn(|| builder.pop()));
        }
        out.extend(builder.finish(None));
        out.iter()
            .map(|m| {
                let msg = pb::PartialResultSet::decode(&m[..]).expect("a message");
                // Fields in order, as prost would write them: the bytes are canonical.
                assert_eq!(msg.encode_to_vec(), m[..]);
                msg
            })
            .collect()
    }

    fn decode(messages: &[pb::PartialResultSet]) -> Vec<Row> {
        let mut decoder = StreamDecoder::new();
        let mut rows = Vec::new();
        for m in messages {
            decoder
                .feed_bytes(&m.encode_to_vec(), &mut rows)
                .expect("decodes");
        }
        decoder.finish().expect("ends cleanly");
        rows
    }

    /// A stream's messages as values and chunk flags, with `metadata` on the first.
    fn cut_with(metadata: pb::ResultSetMetadata, text: &str) -> Vec<(Vec<WireValue>, bool)> {
        let mut builder = MessageBuilder::new(metadata, stamp(512));
        let mut out = Vec::new();
        for i in 0..40 {
            builder.push(encode_value(&Value::Int64(i)));
            builder.push(encode_value(&Value::String(text.into())));
            out.extend(std::iter::from_fn(|| builder.pop()));
        }
        out.extend(builder.finish(None));
        out.iter()
            .map(|m| {
                let msg = pb::PartialResultSet::decode(&m[..]).expect("a message");
                assert!(m.len() <= 512);
                (msg.values, msg.chunked_value)
            })
            .collect()
    }

    #[test]
    fn the_cut_does_not_depend_on_the_read_timestamp() {
        // A query run again for a resume reads at a new timestamp: the messages it skips must be
        // the ones its client already has, whatever the varints of the new timestamp take.
        let columns = [
            Field {
                name: "Id".into(),
                ty: Type::Int64,
            },
            Field {
                name: "Text".into(),
                ty: Type::String,
            },
        ];
        let at = |seconds: i64, nanos: i32| pb::ResultSetMetadata {
            row_type: Some(struct_type(&columns)),
            transaction: Some(pb::Transaction {
                read_timestamp: Some(prost_types::Timestamp { seconds, nanos }),
                ..Default::default()
            }),
            undeclared_parameters: None,
        };
        let text = "x".repeat(150);
        let first = cut_with(at(1_800_000_000, 999_999_999), &text);
        assert!(first.len() > 10 && first.iter().any(|(_, chunked)| *chunked));
        for (seconds, nanos) in [(1_800_000_000, 0), (1, 5), (1_800_000_001, 268_435_456)] {
            let cut = cut_with(at(seconds, nanos), &text);
            let differs = (0..first.len().max(cut.len())).find(|&k| first.get(k) != cut.get(k));
            assert_eq!(
                differs, None,
                "read at {seconds}.{nanos}: first differing message"
            );
        }
    }

    #[test]
    fn messages_respect_the_size_and_decode_back() {
        let columns = vec![
            Field {
                name: "s".into(),
                ty: Type::String,
            },
            Field {
                name: "a".into(),
                ty: Type::Array(Box::new(Type::String)),
            },
            Field {
                name: "n".into(),
                ty: Type::Float64,
            },
        ];
        let rows: Vec<Vec<Value>> = (0..50)
            .map(|i| {
                vec![
                    Value::String("héllo😀".repeat(i * 7)),
                    Value::Array((0..i).map(|j| Value::String("x".repeat(j * 13))).collect()),
                    Value::Float64(i as f64),
                ]
            })
            .collect();
        let messages = build(&columns, &rows, 1024);
        assert!(messages.len() > 20, "{} messages", messages.len());
        for (i, m) in messages.iter().enumerate() {
            let limit = if i == 0 { 1024 + 64 } else { 1024 };
            assert!(
                m.encoded_len() <= limit,
                "message {i}: {} bytes",
                m.encoded_len()
            );
            let point = ResumePoint::decode(&m.resume_token).expect("a token");
            assert_eq!(point.seq, i as u64);
            assert_eq!(point.stamp, stamp(1024));
        }
        assert!(messages.iter().filter(|m| m.chunked_value).count() > 5);
        assert!(messages.last().is_some_and(|m| m.last));
        let decoded = decode(&messages);
        assert_eq!(decoded, rows.into_iter().map(Row).collect::<Vec<_>>());
    }

    #[test]
    fn an_empty_result_is_one_message_with_metadata() {
        let columns = vec![Field {
            name: "x".into(),
            ty: Type::Int64,
        }];
        let messages = build(&columns, &[], 1 << 20);
        assert_eq!(messages.len(), 1);
        assert!(messages[0].metadata.is_some() && messages[0].last);
    }

    #[test]
    fn tokens_round_trip_and_reject_garbage() {
        let point = ResumePoint {
            seq: 7,
            stamp: stamp(300),
        };
        assert_eq!(ResumePoint::decode(&point.encode()), Ok(point));
        assert!(ResumePoint::decode(b"SPT1short").is_err());
        assert!(ResumePoint::decode(b"").is_err());
        let mut long = point.encode();
        long.push(0);
        assert!(ResumePoint::decode(&long).is_err());
    }

    #[test]
    fn unsplittable_values_fill_messages_whole() {
        let value = WireValue {
            kind: Some(Kind::NumberValue(1.5)),
        };
        let mut builder = MessageBuilder::new(pb::ResultSetMetadata::default(), stamp(256));
        for i in 0..100 {
            if i % 2 == 0 {
                builder.push(value.clone());
            } else {
                builder.push_encoded(&value.encode_to_vec());
            }
        }
        let messages: Vec<_> = std::iter::from_fn(|| builder.pop())
            .map(|m| pb::PartialResultSet::decode(&m[..]).expect("a message"))
            .collect();
        assert!(
            messages
                .iter()
                .all(|m| !m.chunked_value && m.encoded_len() <= 256)
        );
        assert!(messages.len() >= 3);
    }
}
