//! Either decoder behind one face, for callers that let the user choose: the profiler times the same
//! two phases (wire decode, row decode) whichever decoder does the work, so the two can be compared.

use std::sync::Arc;

use bytes::Bytes;

use super::decoder::{Row, StreamDecoder};
use super::error::DecodeError;
use super::fast::{FastDecoder, RowBatch, Scanned};
use super::result_stats::ResultStats;
use super::stream_state::StreamCounters;
use super::types::Field;
use crate::proto::google::spanner::v1 as pb;

/// Which decoder turns the stream into rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecoderKind {
    /// [`FastDecoder`]: reads the bytes straight into rows that borrow from them.
    #[default]
    Fast,
    /// [`StreamDecoder`]: prost builds each message, then typed rows are built from it.
    Reference,
}

impl DecoderKind {
    /// The name the command line, the reports and the app use.
    pub fn as_str(self) -> &'static str {
        match self {
            DecoderKind::Fast => "fast",
            DecoderKind::Reference => "reference",
        }
    }
}

impl From<DecoderKind> for crate::kind::Reader {
    fn from(kind: DecoderKind) -> Self {
        match kind {
            DecoderKind::Fast => crate::kind::Reader::Fast,
            DecoderKind::Reference => crate::kind::Reader::Reference,
        }
    }
}

/// A message after the wire-decode phase, ready for the row-decode phase.
#[derive(Debug)]
pub enum Parsed {
    /// Decoded by prost.
    Reference(pb::PartialResultSet),
    /// Framing read by the fast decoder.
    Fast(Scanned),
}

impl Parsed {
    /// The message's resume token (empty if none).
    pub fn resume_token(&self) -> &[u8] {
        match self {
            Parsed::Reference(msg) => &msg.resume_token,
            Parsed::Fast(msg) => msg.resume_token(),
        }
    }
}

/// The rows one message completed, in whichever form the decoder builds them.
#[derive(Debug, Clone, Copy)]
pub enum RowsView<'a> {
    /// Owned rows (the reference decoder).
    Owned(&'a [Row]),
    /// Rows borrowing from the received messages (the fast decoder).
    Batch(&'a RowBatch),
}

impl RowsView<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            RowsView::Owned(rows) => rows.len(),
            RowsView::Batch(batch) => batch.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first `limit` rows as owned rows.
    pub fn to_rows(&self, limit: usize) -> Vec<Row> {
        match self {
            RowsView::Owned(rows) => rows.iter().take(limit).cloned().collect(),
            RowsView::Batch(batch) => batch.iter().take(limit).map(|r| r.to_row()).collect(),
        }
    }
}

/// One stream's decoder, of either kind, with the rows of the last message it fed.
#[derive(Debug)]
pub struct AnyDecoder {
    inner: Inner,
    rows: Vec<Row>,
    batch: RowBatch,
}

#[derive(Debug)]
enum Inner {
    Reference(StreamDecoder),
    Fast(FastDecoder),
}

impl AnyDecoder {
    /// A decoder of `kind` waiting for the first message.
    pub fn new(kind: DecoderKind) -> Self {
        let inner = match kind {
            DecoderKind::Fast => Inner::Fast(FastDecoder::new()),
            DecoderKind::Reference => Inner::Reference(StreamDecoder::new()),
        };
        AnyDecoder {
            inner,
            rows: Vec::new(),
            batch: RowBatch::new(),
        }
    }

    /// Which decoder this is.
    pub fn kind(&self) -> DecoderKind {
        match self.inner {
            Inner::Reference(_) => DecoderKind::Reference,
            Inner::Fast(_) => DecoderKind::Fast,
        }
    }

    /// The wire-decode phase of one serialized PartialResultSet.
    pub fn parse(&self, bytes: Bytes) -> Result<Parsed, DecodeError> {
        match &self.inner {
            Inner::Reference(d) => d.parse(&bytes).map(Parsed::Reference),
            Inner::Fast(d) => d.scan(bytes).map(Parsed::Fast),
        }
    }

    /// The row-decode phase: drops the previous message's rows, then hands out the rows this one
    /// completes. `wire_len` is the message's serialized size.
    pub fn feed(&mut self, msg: Parsed, wire_len: usize) -> Result<RowsView<'_>, DecodeError> {
        match (&mut self.inner, msg) {
            (Inner::Reference(d), Parsed::Reference(msg)) => {
                self.rows.clear();
                d.feed_decoded(msg, wire_len, &mut self.rows)?;
                Ok(RowsView::Owned(&self.rows))
            }
            (Inner::Fast(d), Parsed::Fast(msg)) => {
                self.batch.clear();
                d.feed_scanned(msg, &mut self.batch)?;
                Ok(RowsView::Batch(&self.batch))
            }
            // A message parsed by the other kind of decoder: decode its bytes again.
            (Inner::Reference(d), Parsed::Fast(msg)) => {
                self.rows.clear();
                d.feed_bytes(msg.bytes(), &mut self.rows)?;
                Ok(RowsView::Owned(&self.rows))
            }
            (Inner::Fast(d), Parsed::Reference(msg)) => {
                self.batch.clear();
                let bytes = Bytes::from(prost::Message::encode_to_vec(&msg));
                d.feed_bytes(bytes, &mut self.batch)?;
                Ok(RowsView::Batch(&self.batch))
            }
        }
    }

    /// Checks the stream ended cleanly (no partial row, no value left chunked).
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        match &mut self.inner {
            Inner::Reference(d) => d.finish(),
            Inner::Fast(d) => d.finish(),
        }
    }

    /// What the decoder counted.
    pub fn counters(&self) -> &StreamCounters {
        match &self.inner {
            Inner::Reference(d) => d.stream().counters(),
            Inner::Fast(d) => d.stream().counters(),
        }
    }

    /// Takes the statistics of the stream, if it sent them.
    pub fn take_stats(&mut self) -> Option<ResultStats> {
        match &mut self.inner {
            Inner::Reference(d) => d.stream_mut().take_stats(),
            Inner::Fast(d) => d.stream_mut().take_stats(),
        }
    }

    /// The result's columns, once the first message arrived.
    pub fn columns(&self) -> Option<Arc<[Field]>> {
        let columns = match &self.inner {
            Inner::Reference(d) => d.stream().columns(),
            Inner::Fast(d) => d.stream().columns(),
        };
        columns.map(Arc::from)
    }

    /// The precommit token with the highest sequence number the stream carried (a multiplexed
    /// session's read-write transaction).
    pub fn precommit_token(
        &self,
    ) -> Option<crate::proto::google::spanner::v1::MultiplexedSessionPrecommitToken> {
        let token = match &self.inner {
            Inner::Reference(d) => d.stream().precommit_token(),
            Inner::Fast(d) => d.stream().precommit_token(),
        };
        token.cloned()
    }

    /// The id of the transaction the request began (an inline begin), once the first message
    /// named it.
    pub fn transaction_id(&self) -> Option<Vec<u8>> {
        let id = match &self.inner {
            Inner::Reference(d) => d.stream().transaction_id(),
            Inner::Fast(d) => d.stream().transaction_id(),
        };
        id.map(<[u8]>::to_vec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::stream_file::frames;

    const VECTOR: &[u8] = include_bytes!("../../../../tests/vectors/seed23_100_16k.bin");

    fn decode(kind: DecoderKind) -> (Vec<Row>, StreamCounters) {
        let mut decoder = AnyDecoder::new(kind);
        let mut rows = Vec::new();
        for frame in frames(VECTOR).expect("frames") {
            let parsed = decoder
                .parse(Bytes::copy_from_slice(frame))
                .expect("parses");
            let view = decoder.feed(parsed, frame.len()).expect("feeds");
            rows.extend(view.to_rows(usize::MAX));
        }
        decoder.finish().expect("ends cleanly");
        assert_eq!(decoder.kind(), kind);
        (rows, *decoder.counters())
    }

    #[test]
    fn both_kinds_give_the_same_rows_and_counts() {
        let (fast, fast_counters) = decode(DecoderKind::Fast);
        let (reference, reference_counters) = decode(DecoderKind::Reference);
        assert_eq!(fast.len(), 100);
        assert_eq!(fast, reference);
        assert_eq!(fast_counters, reference_counters);
    }

    #[test]
    fn a_message_parsed_by_the_other_kind_still_decodes() {
        let frames = frames(VECTOR).expect("frames");
        let reference = AnyDecoder::new(DecoderKind::Reference);
        let fast = AnyDecoder::new(DecoderKind::Fast);
        let mut a = AnyDecoder::new(DecoderKind::Fast);
        let mut b = AnyDecoder::new(DecoderKind::Reference);
        let (mut from_a, mut from_b) = (0, 0);
        for frame in frames {
            let bytes = Bytes::copy_from_slice(frame);
            let crossed = reference.parse(bytes.clone()).expect("parses");
            from_a += a.feed(crossed, frame.len()).expect("feeds").len();
            let crossed = fast.parse(bytes).expect("parses");
            from_b += b.feed(crossed, frame.len()).expect("feeds").len();
        }
        assert_eq!((from_a, from_b), (100, 100));
        assert_eq!(DecoderKind::Reference.as_str(), "reference");
    }
}
