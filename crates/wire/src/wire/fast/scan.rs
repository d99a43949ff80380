//! The "wire decode" phase: walking a PartialResultSet's fields without touching the values' contents.

use std::ops::Range;

use bytes::Bytes;
use prost::Message as _;

use super::protobuf::{Fail, LEN, Reader, VARINT, offset_in};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::fields::partial_result_set::{
    CHUNKED_VALUE, LAST, METADATA, PRECOMMIT_TOKEN, RESUME_TOKEN, STATS, VALUES, VALUES_KEY,
};

/// A PartialResultSet whose framing has been read: metadata and stats decoded (they are small and
/// rare), each value located but not yet looked into.
#[derive(Debug, Clone)]
pub struct Scanned {
    pub(super) bytes: Bytes,
    pub(super) metadata: Option<pb::ResultSetMetadata>,
    /// Where each value's body lies in `bytes`.
    pub(super) values: Vec<Range<u32>>,
    pub(super) chunked_value: bool,
    resume_token: Range<usize>,
    pub(super) stats: Option<pb::ResultSetStats>,
    /// A read-write transaction's precommit token (a multiplexed session's), when it carried one.
    pub(super) precommit_token: Option<pb::MultiplexedSessionPrecommitToken>,
    pub(super) last: bool,
}

impl Scanned {
    /// The message's resume token (empty if it has none).
    pub fn resume_token(&self) -> &[u8] {
        self.bytes.get(self.resume_token.clone()).unwrap_or(&[])
    }

    /// The message's serialized size.
    pub fn wire_len(&self) -> usize {
        self.bytes.len()
    }

    /// The message's bytes.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The body of a value located by [`scan`].
    #[inline]
    pub(super) fn body(&self, range: &Range<u32>) -> &[u8] {
        self.bytes
            .get(range.start as usize..range.end as usize)
            .unwrap_or(&[])
    }

    /// The resume token as a slice of the message, sharing its buffer.
    pub(super) fn resume_token_bytes(&self) -> Bytes {
        self.bytes.slice(self.resume_token.clone())
    }

    /// Prost's complaint about the message, if it has one. The reference decoder decodes the whole
    /// message before it converts any value, so a protobuf error anywhere comes before any other.
    pub(super) fn values_error(&self) -> Option<String> {
        pb::PartialResultSet::decode(&self.bytes[..])
            .err()
            .map(|e| e.to_string())
    }
}

/// Decodes one value with prost exactly as prost decodes it inside a PartialResultSet (one level
/// deeper, which matters at its recursion limit).
pub(super) fn prost_value(body: &[u8]) -> Result<prost_types::Value, prost::DecodeError> {
    let mut wrapped = Vec::with_capacity(body.len() + 11);
    wrapped.push(VALUES_KEY);
    prost::encoding::encode_varint(body.len() as u64, &mut wrapped);
    wrapped.extend_from_slice(body);
    let mut msg = pb::PartialResultSet::decode(&wrapped[..])?;
    Ok(msg.values.pop().unwrap_or_default())
}

/// Reads the framing of one PartialResultSet. The error is the reason it is not one.
pub(super) fn scan(bytes: Bytes) -> Result<Scanned, String> {
    let mut scanned = Scanned {
        bytes: Bytes::new(),
        metadata: None,
        values: Vec::with_capacity(bytes.len() / 40 + 8),
        chunked_value: false,
        resume_token: 0..0,
        stats: None,
        precommit_token: None,
        last: false,
    };
    if u32::try_from(bytes.len()).is_err() {
        return Err("a PartialResultSet of 4 GiB or more".to_owned());
    }
    walk(&bytes, &mut scanned).map_err(Fail::protobuf_reason)?;
    scanned.bytes = bytes;
    Ok(scanned)
}

fn walk(whole: &[u8], out: &mut Scanned) -> Result<(), Fail> {
    // The values vector is filled through a local so its length stays in a register.
    let mut values = std::mem::take(&mut out.values);
    let walked = walk_into(whole, out, &mut values);
    out.values = values;
    walked
}

#[inline(always)]
fn walk_into(whole: &[u8], out: &mut Scanned, values: &mut Vec<Range<u32>>) -> Result<(), Fail> {
    let mut r = Reader::new(whole);
    // The message is under 4 GiB (checked by `scan`), so offsets fit in u32.
    let range = |part: &[u8]| {
        let start = offset_in(whole, part);
        start as u32..(start + part.len()) as u32
    };
    while !r.is_empty() {
        // Nearly every field is a value, read here in one step.
        if let Some(body) = r.len_field(VALUES_KEY) {
            values.push(range(body));
            continue;
        }
        match r.key()? {
            (VALUES, LEN) => {
                let body = r.bytes()?;
                values.push(range(body));
            }
            (METADATA, LEN) => merge(out.metadata.get_or_insert_default(), r.bytes()?)?,
            (CHUNKED_VALUE, VARINT) => out.chunked_value = r.varint()? != 0,
            (RESUME_TOKEN, LEN) => {
                let token = range(r.bytes()?);
                out.resume_token = token.start as usize..token.end as usize;
            }
            (STATS, LEN) => merge(out.stats.get_or_insert_default(), r.bytes()?)?,
            (PRECOMMIT_TOKEN, LEN) => {
                merge(out.precommit_token.get_or_insert_default(), r.bytes()?)?
            }
            (LAST, VARINT) => out.last = r.varint()? != 0,
            (
                METADATA | VALUES | CHUNKED_VALUE | RESUME_TOKEN | STATS | PRECOMMIT_TOKEN | LAST,
                _,
            ) => return Err(Fail::Wire("invalid wire type")),
            (field, wire_type) => r.skip(field, wire_type)?,
        }
    }
    Ok(())
}

/// Merges a message field as prost does when a message repeats it.
fn merge(into: &mut impl prost::Message, body: &[u8]) -> Result<(), Fail> {
    into.merge(body).map_err(|e| Fail::Prost(e.to_string()))
}
