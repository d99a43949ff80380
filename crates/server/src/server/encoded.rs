//! The local server's answer as bytes: `google.protobuf.Value`s encoded straight from SQLite's cells,
//! and PartialResultSets that travel already encoded, so no tree of values is built, encoded and
//! dropped for each row.

use prost::Message as _;
use prost::bytes::{Buf, BufMut, Bytes};
use prost::encoding::{DecodeContext, WireType, encode_varint, encoded_len_varint, skip_field};

use crate::proto::google::spanner::v1 as pb;

/// A serialized `google.spanner.v1.PartialResultSet`, sent as is.
///
/// The local server's Spanner stub is generated with this type in place of the message (see
/// `build.rs`), so the bytes the message builder made are what goes on the wire.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedPartialResultSet(pub Bytes);

impl prost::Message for EncodedPartialResultSet {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        // The server only sends these; decoding one keeps nothing.
        skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0 = Bytes::new();
    }
}

/// A serialized `google.spanner.v1.ResultSet` (a unary answer), sent as is: the pieces of one
/// message, in order, so that a large answer is never copied into one buffer before tonic's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedResultSet(pub Vec<Bytes>);

impl prost::Message for EncodedResultSet {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        for piece in &self.0 {
            buf.put_slice(piece);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), prost::DecodeError> {
        // The server only sends these; decoding one keeps nothing.
        skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.iter().map(Bytes::len).sum()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// Bytes of each piece of a unary answer being built.
const PIECE_BYTES: usize = 1 << 20;

/// A unary answer built as bytes, as its rows arrive: the metadata, each row once its last value is
/// in, then the statistics. It holds the answer's encoded size and at most a piece (1 MiB) and a row
/// more, whatever its values: a NULL costs its four bytes on the wire, not a tree node.
#[derive(Debug)]
pub struct ResultSetWriter {
    pieces: Vec<Bytes>,
    current: Vec<u8>,
    row: Vec<u8>,
    width: usize,
    in_row: usize,
    rows: usize,
}

impl ResultSetWriter {
    /// An answer with this metadata, whose rows have `width` values (at least one).
    pub fn new(metadata: &pb::ResultSetMetadata, width: usize) -> Self {
        let mut head = Vec::with_capacity(metadata.encoded_len() + 8);
        prost::encoding::message::encode(result_set::METADATA, metadata, &mut head);
        ResultSetWriter {
            pieces: vec![Bytes::from(head)],
            current: Vec::new(),
            row: Vec::new(),
            width: width.max(1),
            in_row: 0,
            rows: 0,
        }
    }

    /// Appends one value (the body of a `google.protobuf.Value`) to the current row, and the row to
    /// the answer once it is whole.
    pub fn push_value(&mut self, body: &[u8]) {
        self.row.push(crate::wire::fields::list_value::VALUES_KEY);
        encode_varint(body.len() as u64, &mut self.row);
        self.row.extend_from_slice(body);
        self.in_row += 1;
        if self.in_row == self.width {
            let mut head = Vec::with_capacity(11);
            head.push(result_set::ROWS_KEY);
            encode_varint(self.row.len() as u64, &mut head);
            self.put(&head);
            let row = std::mem::take(&mut self.row);
            self.put(&row);
            self.row = row;
            self.row.clear();
            self.in_row = 0;
            self.rows += 1;
        }
    }

    /// Whole rows so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The answer, with `stats` last; values of an unfinished row are left out.
    pub fn finish(mut self, stats: Option<&pb::ResultSetStats>) -> EncodedResultSet {
        if let Some(stats) = stats {
            let mut tail = Vec::with_capacity(stats.encoded_len() + 8);
            prost::encoding::message::encode(result_set::STATS, stats, &mut tail);
            self.put(&tail);
        }
        if !self.current.is_empty() {
            self.pieces.push(Bytes::from(self.current));
        }
        EncodedResultSet(self.pieces)
    }

    /// Copies `bytes` into the pieces, filling each before starting the next.
    fn put(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.current.len() == self.current.capacity() {
                let full = std::mem::replace(&mut self.current, Vec::with_capacity(PIECE_BYTES));
                if !full.is_empty() {
                    self.pieces.push(Bytes::from(full));
                }
            }
            let room = self.current.capacity() - self.current.len();
            let (now, later) = bytes.split_at(room.min(bytes.len()));
            self.current.extend_from_slice(now);
            bytes = later;
        }
    }
}

/// `google.spanner.v1.ResultSet`'s fields.
mod result_set {
    use crate::wire::fields::{key, wire_type::LEN};

    /// `metadata` (1).
    pub const METADATA: u32 = 1;
    /// `rows` (2, repeated ListValue), with its wire type.
    pub const ROWS_KEY: u8 = key(2, LEN);
    /// `stats` (3).
    pub const STATS: u32 = 3;
}

/// The generated server side of the Spanner service, answering with [`EncodedPartialResultSet`] and
/// [`EncodedResultSet`].
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod stubs {
    include!(concat!(env!("OUT_DIR"), "/local_server/local_server.rs"));
}

/// Values encoded one after the other, each the body of a `google.protobuf.Value` message.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EncodedValues {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl EncodedValues {
    /// Room for about `values` values of `bytes` bytes in all.
    pub fn with_capacity(values: usize, bytes: usize) -> Self {
        EncodedValues {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(values),
        }
    }

    /// Appends one value's body, already encoded.
    pub fn push_encoded(&mut self, body: &[u8]) {
        self.bytes.extend_from_slice(body);
        self.ends.push(self.bytes.len());
    }

    /// Appends one value with `encode`, which writes its body to the buffer it is given.
    pub fn push_with<E>(
        &mut self,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let start = self.bytes.len();
        match encode(&mut self.bytes) {
            Ok(()) => {
                self.ends.push(self.bytes.len());
                Ok(())
            }
            Err(e) => {
                self.bytes.truncate(start);
                Err(e)
            }
        }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bodies, in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(self.ends.iter().copied())
            .map(|(start, end)| self.bytes.get(start..end).unwrap_or_default())
    }
}

/// `google.protobuf.Value` field tags (field number and wire type), as `wire::fields` names them.
pub mod tag {
    use crate::wire::fields::value;

    /// `null_value` (1, varint).
    pub const NULL: u8 = value::NULL_KEY;
    /// `number_value` (2, fixed64).
    pub const NUMBER: u8 = value::NUMBER_KEY;
    /// `string_value` (3, length-delimited).
    pub const STRING: u8 = value::STRING_KEY;
    /// `bool_value` (4, varint).
    pub const BOOL: u8 = value::BOOL_KEY;
    /// `list_value` (6, length-delimited).
    pub const LIST: u8 = value::LIST_KEY;
}

/// A NULL value's body.
pub fn put_null(out: &mut Vec<u8>) {
    out.extend_from_slice(&[tag::NULL, 0]);
}

/// A `number_value` body.
pub fn put_number(out: &mut Vec<u8>, f: f64) {
    out.push(tag::NUMBER);
    out.extend_from_slice(&f.to_le_bytes());
}

/// A `bool_value` body.
pub fn put_bool(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(&[tag::BOOL, u8::from(b)]);
}

/// A length-delimited field (`string_value` or `list_value`) holding `bytes`.
pub fn put_delimited(out: &mut Vec<u8>, tag: u8, bytes: &[u8]) {
    out.reserve(1 + encoded_len_varint(bytes.len() as u64) + bytes.len());
    out.push(tag);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// A `string_value` body holding the decimal digits of `n`.
pub fn put_int(out: &mut Vec<u8>, n: i64) {
    let mut digits = itoa::Buffer::new();
    put_delimited(out, tag::STRING, digits.format(n).as_bytes());
}

/// A `string_value` body holding `bytes` in standard base64.
pub fn put_base64(out: &mut Vec<u8>, bytes: &[u8]) {
    use base64::Engine as _;
    let len = bytes.len().div_ceil(3) * 4;
    out.reserve(1 + encoded_len_varint(len as u64) + len);
    out.push(tag::STRING);
    encode_varint(len as u64, out);
    let start = out.len();
    out.resize(start + len, 0);
    let written = out
        .get_mut(start..)
        .map(|tail| base64::engine::general_purpose::STANDARD.encode_slice(bytes, tail));
    debug_assert!(matches!(written, Some(Ok(n)) if n == len));
}

/// Whether `bytes` is a well-formed serialized `google.protobuf.ListValue` at its top level: only
/// field 1 (`values`), each length-delimited and inside the buffer.
pub fn is_list_value(mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        let Ok(key) = prost::encoding::decode_varint(&mut bytes) else {
            return false;
        };
        if key != u64::from(crate::wire::fields::list_value::VALUES_KEY) {
            return false;
        }
        let Ok(len) = prost::encoding::decode_varint(&mut bytes) else {
            return false;
        };
        match usize::try_from(len).ok().and_then(|len| bytes.get(len..)) {
            Some(rest) => bytes = rest,
            None => return false,
        }
    }
    true
}

/// What kind of value a body holds, by its first field: strings and lists can be split across
/// messages, the others cannot.
pub fn is_splittable(body: &[u8]) -> bool {
    matches!(body.first(), Some(&tag::STRING) | Some(&tag::LIST))
}

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use prost_types::value::Kind;

    use super::*;

    fn tree(kind: Kind) -> Vec<u8> {
        prost_types::Value { kind: Some(kind) }.encode_to_vec()
    }

    #[test]
    fn bodies_match_what_prost_encodes() {
        let mut out = Vec::new();
        put_null(&mut out);
        assert_eq!(out, tree(Kind::NullValue(0)));
        out.clear();
        put_number(&mut out, -1.25);
        assert_eq!(out, tree(Kind::NumberValue(-1.25)));
        out.clear();
        put_bool(&mut out, true);
        assert_eq!(out, tree(Kind::BoolValue(true)));
        out.clear();
        put_int(&mut out, i64::MIN);
        assert_eq!(out, tree(Kind::StringValue(i64::MIN.to_string())));
        out.clear();
        let long = "é".repeat(200);
        put_delimited(&mut out, tag::STRING, long.as_bytes());
        assert_eq!(out, tree(Kind::StringValue(long)));
        for n in 0..8 {
            out.clear();
            let bytes: Vec<u8> = (0..n).collect();
            put_base64(&mut out, &bytes);
            use base64::Engine as _;
            let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
            assert_eq!(out, tree(Kind::StringValue(text)), "{n} bytes");
        }
    }

    #[test]
    fn list_values_are_recognised_and_garbage_is_not() {
        let list = prost_types::ListValue {
            values: vec![
                prost_types::Value {
                    kind: Some(Kind::StringValue("a".into())),
                },
                prost_types::Value {
                    kind: Some(Kind::NullValue(0)),
                },
            ],
        }
        .encode_to_vec();
        assert!(is_list_value(&list));
        assert!(is_list_value(&[]));
        assert!(!is_list_value(&list[..list.len() - 1]));
        assert!(!is_list_value(b"\x08\x01"));
        assert!(!is_list_value(b"\x0a\xff"));
    }

    #[test]
    fn encoded_values_keep_their_boundaries() {
        let mut values = EncodedValues::default();
        values
            .push_with::<()>(|out| {
                put_bool(out, true);
                Ok(())
            })
            .expect("pushed");
        assert!(
            values
                .push_with(|out| {
                    out.push(9);
                    Err("no")
                })
                .is_err()
        );
        values
            .push_with::<()>(|out| {
                put_int(out, 42);
                Ok(())
            })
            .expect("pushed");
        let bodies: Vec<&[u8]> = values.iter().collect();
        assert_eq!(
            bodies,
            vec![&[tag::BOOL, 1][..], &[tag::STRING, 2, b'4', b'2'][..]]
        );
        assert!(is_splittable(bodies[1]) && !is_splittable(bodies[0]));
    }

    #[test]
    fn a_result_set_built_as_bytes_is_what_prost_encodes() {
        use crate::proto::google::spanner::v1 as pb;
        let metadata = pb::ResultSetMetadata {
            row_type: Some(pb::StructType::default()),
            ..Default::default()
        };
        let stats = pb::ResultSetStats {
            row_count: Some(pb::result_set_stats::RowCount::RowCountExact(7)),
            ..Default::default()
        };
        let long = "x".repeat(3 << 20);
        let values = |i: usize| {
            [
                Kind::NullValue(0),
                Kind::StringValue(if i == 2 { long.clone() } else { i.to_string() }),
            ]
        };
        let mut writer = ResultSetWriter::new(&metadata, 2);
        let mut want = pb::ResultSet {
            metadata: Some(metadata),
            stats: Some(stats.clone()),
            ..Default::default()
        };
        for i in 0..2000 {
            let row: Vec<prost_types::Value> = values(i)
                .into_iter()
                .map(|kind| prost_types::Value { kind: Some(kind) })
                .collect();
            for v in &row {
                writer.push_value(&v.encode_to_vec());
            }
            want.rows.push(prost_types::ListValue { values: row });
        }
        // Half a row more is left out.
        writer.push_value(&tree(Kind::BoolValue(true)));
        assert_eq!(writer.rows(), 2000);
        let got = writer.finish(Some(&stats));
        assert!(got.0.len() > 3, "in pieces");
        assert_eq!(got.encode_to_vec(), want.encode_to_vec());
        assert_eq!(got.encoded_len(), want.encoded_len());
    }

    #[test]
    fn an_encoded_message_goes_out_as_its_bytes() {
        let msg = crate::proto::google::spanner::v1::PartialResultSet {
            chunked_value: true,
            resume_token: b"tok".to_vec(),
            ..Default::default()
        };
        let encoded = EncodedPartialResultSet(Bytes::from(msg.encode_to_vec()));
        assert_eq!(encoded.encode_to_vec(), msg.encode_to_vec());
        assert_eq!(encoded.encoded_len(), msg.encoded_len());
    }
}
