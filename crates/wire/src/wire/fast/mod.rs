//! The fast decoder: PartialResultSet bytes straight into typed rows, with no tree of
//! `google.protobuf.Value`s in between and text borrowed from the received buffers.
//!
//! [`FastDecoder`] mirrors [`StreamDecoder`](super::StreamDecoder), which stays the reference: same
//! metadata rules, counters, statistics and errors, proved equal by the integration tests. The work is
//! split the way the profiler times it: [`FastDecoder::scan`] reads a message's framing ("wire
//! decode"), [`FastDecoder::feed_scanned`] merges chunks and converts the values ("row decode").
//!
//! - `protobuf.rs`: varints, keys, skipping unknown fields.
//! - `scan.rs`: [`Scanned`], the framing of one message.
//! - `value.rs`: one serialized value to a cell, by column type.
//! - `batch.rs`: [`RowBatch`] and the borrowed views [`RowRef`], [`ValueRef`], [`ListRef`].
//! - `arena.rs`: the batch's own bytes, in chunks that never move.
//! - `base64.rs`: decoding canonical base64 (anything else goes to the `base64` crate).

mod arena;
mod base64;
#[cfg(target_arch = "x86_64")]
mod base64_avx2;
mod batch;
mod protobuf;
mod scan;
mod value;

use std::ops::Range;

use bytes::Bytes;

pub use batch::{ListRef, RowBatch, RowRef, ValueRef};
pub use scan::Scanned;

use self::protobuf::Fail;
use self::value::{Plan, Source};
use super::chunk::merge;
use super::convert::decode_value;
use super::error::{DecodeError, DecodeErrorKind};
use super::metadata::Header;
use super::stream_state::StreamState;
use super::types::{Field, Type};
use super::value::Value;

/// The last resume token in one serialized PartialResultSet, its other fields skipped unread: what a
/// client that only receives the bytes needs to resume a broken stream. `Ok(None)` when it carries
/// none (or an empty one); a [`PeekError`] with protobuf's reason when the message is not one.
pub fn peek_resume_token(message: &[u8]) -> Result<Option<&[u8]>, PeekError> {
    use super::fields::partial_result_set::RESUME_TOKEN;
    let mut reader = protobuf::Reader::new(message);
    let mut token = None;
    while !reader.is_empty() {
        let (field, wire_type) = reader.key().map_err(PeekError::from)?;
        if field == RESUME_TOKEN && wire_type == protobuf::LEN {
            token = Some(reader.bytes().map_err(PeekError::from)?);
        } else {
            reader.skip(field, wire_type).map_err(PeekError::from)?;
        }
    }
    Ok(token.filter(|t| !t.is_empty()))
}

/// Why [`peek_resume_token`] could not read a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeekError {
    /// The bytes are not a protobuf message: protobuf's reason, in prost's words.
    #[error("{0}")]
    NotProtobuf(String),
}

impl From<Fail> for PeekError {
    fn from(fail: Fail) -> Self {
        PeekError::NotProtobuf(fail.protobuf_reason())
    }
}

/// Decodes one ExecuteStreamingSql answer, fed one serialized PartialResultSet at a time, into a
/// [`RowBatch`].
///
/// Each call appends the rows the message completed. A row still incomplete at the end of a message is
/// kept by the decoder (as owned values), so a batch only ever holds whole rows and can be cleared
/// between messages. After an error the decoder is spent: every later call returns
/// [`DecodeErrorKind::AlreadyFailed`].
#[derive(Debug, Default)]
pub struct FastDecoder {
    stream: StreamState,
    /// The values of a row that the previous messages began and did not complete.
    carry: Vec<Value>,
}

impl FastDecoder {
    /// A decoder waiting for the first message.
    pub fn new() -> Self {
        Self::default()
    }

    /// The "wire decode" phase: reads the message's framing (metadata, where each value lies,
    /// chunked_value, resume_token, stats) without converting any value.
    pub fn scan(&self, bytes: Bytes) -> Result<Scanned, DecodeError> {
        self.stream.check_not_failed()?;
        scan::scan(bytes)
            .map_err(|reason| self.stream.error(DecodeErrorKind::Protobuf(reason), None))
    }

    /// Scans and feeds one serialized PartialResultSet.
    pub fn feed_bytes(&mut self, bytes: Bytes, out: &mut RowBatch) -> Result<(), DecodeError> {
        match self.scan(bytes) {
            Ok(msg) => self.feed_scanned(msg, out),
            Err(e) => {
                if !self.stream.failed {
                    self.stream.counters.messages += 1;
                    self.stream.failed = true;
                }
                Err(e)
            }
        }
    }

    /// The "row decode" phase: merges chunks, converts the values by column type and appends the rows
    /// the message completes to `out`.
    pub fn feed_scanned(&mut self, msg: Scanned, out: &mut RowBatch) -> Result<(), DecodeError> {
        self.stream.check_not_failed()?;
        let before = self.stream.counters;
        let had_columns = self.stream.header.columns().is_some();
        let mark = out.mark();
        let mut result = self.take(&msg, out);
        if let Err(e) = &result
            && !matches!(e.kind, DecodeErrorKind::Protobuf(_))
            && let Some(reason) = msg.values_error()
        {
            // The reference decodes the whole message first: a protobuf error anywhere wins.
            result = Err(self.stream.error(DecodeErrorKind::Protobuf(reason), None));
        }
        match &result {
            Ok(()) => self.stream.counters.wire_bytes += msg.wire_len() as u64,
            Err(e) if matches!(e.kind, DecodeErrorKind::Protobuf(_)) => {
                // As if the message had never been decoded: no rows, no metadata, nothing counted
                // but the message.
                self.stream.counters = before;
                if !had_columns {
                    self.stream.header = Header::default();
                }
                out.truncate(mark);
            }
            Err(_) => {
                self.stream.counters.wire_bytes += msg.wire_len() as u64;
                out.drop_partial_row();
            }
        }
        self.stream.counters.messages += 1;
        if result.is_err() {
            self.stream.failed = true;
        }
        result
    }

    fn take(&mut self, msg: &Scanned, out: &mut RowBatch) -> Result<(), DecodeError> {
        let columns = self
            .stream
            .begin_message(msg.metadata.as_ref(), msg.values.len())?;
        let mut spans: &[Range<u32>] = &msg.values;
        let mut first = None;
        if let Some((piece, column)) = self.stream.pending.take() {
            match spans.split_first() {
                // A message with no values continues nothing; the piece waits for the next one.
                None => self.stream.pending = Some((piece, column)),
                Some((head, rest)) => {
                    let right = self.prost_value(msg, head)?;
                    let merged = merge(piece, right)
                        .map_err(|e| self.stream.column_error(e.into(), &columns, column))?;
                    first = Some(merged);
                    spans = rest;
                }
            }
        }
        if msg.chunked_value {
            let last = match spans.split_last() {
                Some((tail, rest)) => {
                    let last = self.prost_value(msg, tail)?;
                    spans = rest;
                    last
                }
                None => match first.take() {
                    Some(last) => last,
                    None => {
                        return Err(self
                            .stream
                            .error(DecodeErrorKind::ChunkedWithoutValues, None));
                    }
                },
            };
            self.stream.counters.chunked_values += 1;
            let queued = self.carry.len() + usize::from(first.is_some()) + spans.len();
            self.stream.pending = Some((last, queued % columns.len()));
        }
        if first.is_some() || !spans.is_empty() {
            self.convert(msg, first, spans, &columns, out)?;
        }
        if let Some(token) = &msg.precommit_token {
            self.stream.keep_precommit_token(token);
        }
        self.stream
            .end_message(msg.resume_token_bytes(), msg.stats.clone(), msg.last);
        Ok(())
    }

    /// Converts the values (after the carried partial row and a merged first value) into cells,
    /// completing rows as it goes; keeps what is left of an incomplete row.
    fn convert(
        &mut self,
        msg: &Scanned,
        first: Option<prost_types::Value>,
        spans: &[Range<u32>],
        columns: &[Field],
        out: &mut RowBatch,
    ) -> Result<(), DecodeError> {
        let buf = match u32::try_from(out.store.buffers.len()) {
            Ok(buf) if buf < batch::ARENA => buf,
            _ => {
                let kind = DecodeErrorKind::Protobuf("too many messages in one row batch".into());
                return Err(self.stream.error(kind, None));
            }
        };
        out.store.buffers.push(msg.bytes.clone());
        let src = Source {
            message: &msg.bytes,
            buf,
        };
        let width = columns.len();
        let mut in_row = 0;
        let mut row_mark = out.store.mark();
        out.reserve_cells(self.carry.len() + spans.len() + 1);
        for value in std::mem::take(&mut self.carry) {
            let cell = out
                .store
                .push_owned(&value)
                .map_err(|f| self.fail_value(f, columns, in_row))?;
            out.cells.push(cell);
            in_row += 1;
        }
        if let Some(value) = first {
            let typed = decode_value(&columns[in_row].ty, value)
                .map_err(|e| self.stream.column_error(e.into(), columns, in_row))?;
            let cell = out
                .store
                .push_owned(&typed)
                .map_err(|f| self.fail_value(f, columns, in_row))?;
            if out.push_in_row(cell, &mut in_row, width, &mut row_mark) {
                self.stream.counters.rows += 1;
            }
        }
        let plans: Vec<Plan> = columns.iter().map(|f| Plan::of(&f.ty)).collect();
        out.row_ends.reserve(spans.len() / width + 1);
        let mut next = 0;
        loop {
            let mut rows = 0;
            next += fast_rows(
                src,
                spans.get(next..).unwrap_or(&[]),
                &plans,
                out,
                &mut in_row,
                &mut row_mark,
                &mut rows,
            );
            self.stream.counters.rows += rows;
            // A value the fast path declined (or the end).
            let Some(range) = spans.get(next) else {
                break;
            };
            let data = msg.body(range);
            let cell = self.slow(src, data, columns, in_row, &mut out.store)?;
            if out.push_in_row(cell, &mut in_row, width, &mut row_mark) {
                self.stream.counters.rows += 1;
            }
            next += 1;
        }
        if in_row > 0 {
            self.carry = out.partial_row();
            out.drop_partial_row();
            out.store.truncate(row_mark);
        }
        Ok(())
    }

    /// A value the fast path declined: decoded by the general path, which gives the same cell, the
    /// error, or hands the value to prost.
    #[cold]
    #[inline(never)]
    fn slow(
        &self,
        src: Source<'_>,
        data: &[u8],
        columns: &[Field],
        in_row: usize,
        store: &mut batch::Store,
    ) -> Result<batch::Cell, DecodeError> {
        let ty = &columns[in_row].ty;
        match value::decode(store, src, data, ty, 1) {
            Ok(cell) => Ok(cell),
            Err(Fail::Fallback) => self
                .fallback(data, ty, store)
                .map_err(|f| self.fail_value(f, columns, in_row)),
            Err(f) => Err(self.fail_value(f, columns, in_row)),
        }
    }

    /// A value the fast path hands over: decoded by prost and converted by the reference.
    #[cold]
    fn fallback(
        &self,
        data: &[u8],
        ty: &Type,
        store: &mut batch::Store,
    ) -> Result<batch::Cell, Fail> {
        let wire = scan::prost_value(data).map_err(|e| Fail::Prost(e.to_string()))?;
        let typed = decode_value(ty, wire).map_err(Fail::value)?;
        store.push_owned(&typed)
    }

    /// One value of the message decoded by prost (the pieces of chunked values).
    fn prost_value(
        &self,
        msg: &Scanned,
        range: &Range<u32>,
    ) -> Result<prost_types::Value, DecodeError> {
        let body = msg.body(range);
        scan::prost_value(body).map_err(|e| {
            self.stream
                .error(DecodeErrorKind::Protobuf(e.to_string()), None)
        })
    }

    fn fail_value(&self, fail: Fail, columns: &[Field], column: usize) -> DecodeError {
        match fail {
            Fail::Value(e) => self.stream.column_error((*e).into(), columns, column),
            other => self
                .stream
                .error(DecodeErrorKind::Protobuf(other.protobuf_reason()), None),
        }
    }

    /// Checks the stream ended cleanly: no partial row, no value left chunked.
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        self.stream.finish(self.carry.len())
    }

    /// What the decoder has read of the stream besides rows: columns, counters, statistics, token.
    pub fn stream(&self) -> &StreamState {
        &self.stream
    }

    /// The same, to take the statistics out.
    pub fn stream_mut(&mut self) -> &mut StreamState {
        &mut self.stream
    }
}

/// The hot loop: decodes values by their column's plan into `out` until one the fast path declines,
/// completing rows as it goes. Returns how many of `spans` it consumed (all, or up to the declined
/// one). The batch's vectors are borrowed separately so that their lengths stay in registers.
#[inline(never)]
fn fast_rows(
    src: Source<'_>,
    spans: &[Range<u32>],
    plans: &[Plan],
    out: &mut RowBatch,
    in_row: &mut usize,
    row_mark: &mut batch::StoreMark,
    rows: &mut u64,
) -> usize {
    let RowBatch {
        cells,
        full_len,
        row_ends,
        store,
        ..
    } = out;
    fast_rows_in(
        src, spans, plans, cells, *full_len, row_ends, store, in_row, row_mark, rows,
    )
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fast_rows_in(
    src: Source<'_>,
    spans: &[Range<u32>],
    plans: &[Plan],
    cells: &mut Vec<batch::Cell>,
    base: usize,
    row_ends: &mut Vec<usize>,
    store: &mut batch::Store,
    in_row: &mut usize,
    row_mark: &mut batch::StoreMark,
    rows: &mut u64,
) -> usize {
    let (mut column, width) = (*in_row, plans.len());
    for (i, range) in spans.iter().enumerate() {
        let data = src
            .message
            .get(range.start as usize..range.end as usize)
            .unwrap_or(&[]);
        let Some(&plan) = plans.get(column) else {
            *in_row = column;
            return i;
        };
        let Some(cell) = value::fast(store, src, data, plan) else {
            *in_row = column;
            return i;
        };
        cells.push(cell);
        column += 1;
        if column == width {
            row_ends.push(base + cells.len());
            *rows += 1;
            column = 0;
            *row_mark = store.mark();
        }
    }
    *in_row = column;
    spans.len()
}
