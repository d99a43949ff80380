//! The fast decoder's output: rows as flat cells that borrow their text from the received messages.
//!
//! A [`RowBatch`] keeps the `Bytes` of every message its rows came from, a flat vector of top-level
//! cells (row after row), a second flat vector for array elements and struct fields (an array is a
//! range of it), and an arena for what had to be decoded (base64) or copied (the rare value that
//! arrived in pieces).

use bytes::Bytes;

use super::arena::{Arena, ArenaMark};
use super::protobuf::{Fail, offset_in};

use crate::wire::decoder::Row;
use crate::wire::value::{Date, Interval, Numeric, Timestamp, Uuid, Value};

/// `Span::buf` at or above this is a chunk of the arena (`buf - ARENA`), below it a received message.
pub(super) const ARENA: u32 = 1 << 31;

/// A byte range of a received message (`buf` indexes [`Store::buffers`]) or of an arena chunk.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub(super) buf: u32,
    pub(super) len: u32,
    pub(super) start: u32,
}

/// A span of text: bytes that were UTF-8 when it was made, in a buffer that never changes while a
/// cell holds it. Its field is private to this module and it is made only from a `&str` that lies
/// where the span says ([`TextSpan::within`], [`Store::push_text`]), so the type is the proof that
/// [`Store::text`] relies on.
#[derive(Debug, Clone, Copy)]
pub(super) struct TextSpan(Span);

impl TextSpan {
    /// The span of `text`, which lies in `message`, the store's buffer `buf`; `None` if it does not
    /// lie there or is 4 GiB or more.
    #[inline(always)]
    pub(super) fn within(buf: u32, message: &[u8], text: &str) -> Option<TextSpan> {
        let start = offset_in(message, text.as_bytes());
        let end = start.wrapping_add(text.len());
        // `text` lies in `message` (its start is no later than its end, which wrapping would make
        // it, and its end is no later than the message's), so the span covers `text`'s own bytes and
        // no others; and both numbers fit a `u32`.
        if start > end || end > message.len().min(u32::MAX as usize) {
            return None;
        }
        Some(TextSpan(Span {
            buf,
            len: (end - start) as u32,
            start: start as u32,
        }))
    }
}

/// A range of [`Store::nested`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Slots {
    pub(super) start: u32,
    pub(super) len: u32,
}

/// One decoded cell, 16 bytes. Text variants hold [`TextSpan`]s.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cell {
    Null,
    Bool(bool),
    Int64(i64),
    Float32(f32),
    Float64(f64),
    Numeric(TextSpan),
    String(TextSpan),
    Json(TextSpan),
    Bytes(Span),
    Proto(Span),
    Date(Date),
    /// Seconds (low and high halves) and nanoseconds: a [`Timestamp`] without its 8-byte alignment.
    Timestamp([u32; 3]),
    Enum(i64),
    /// An index into [`Store::intervals`] (an interval is too big to keep every cell small).
    Interval(u32),
    /// An index into [`Store::uuids`].
    Uuid(u32),
    Array(Slots),
    Struct(Slots),
}

/// Everything cells point into.
#[derive(Debug, Default)]
pub(super) struct Store {
    pub(super) buffers: Vec<Bytes>,
    pub(super) nested: Vec<Cell>,
    pub(super) arena: Arena,
    pub(super) intervals: Vec<Interval>,
    pub(super) uuids: Vec<Uuid>,
}

// Rows of cells are most of a batch's memory: keep them small.
const _: () = assert!(std::mem::size_of::<Cell>() == 16);

/// Lengths of a [`Store`] (and the cells), to undo what a failed value or message added.
#[derive(Debug, Clone, Copy)]
pub(super) struct StoreMark {
    nested: usize,
    arena: ArenaMark,
    intervals: usize,
    uuids: usize,
}

impl Store {
    pub(super) fn mark(&self) -> StoreMark {
        StoreMark {
            nested: self.nested.len(),
            arena: self.arena.mark(),
            intervals: self.intervals.len(),
            uuids: self.uuids.len(),
        }
    }

    pub(super) fn truncate(&mut self, mark: StoreMark) {
        self.nested.truncate(mark.nested);
        self.arena.truncate(mark.arena);
        self.intervals.truncate(mark.intervals);
        self.uuids.truncate(mark.uuids);
    }

    /// The bytes a span covers (empty if it points nowhere, which the decoder never builds).
    #[inline]
    fn span(&self, span: Span) -> &[u8] {
        let (start, len) = (span.start as usize, span.len as usize);
        if span.buf >= ARENA {
            return self.arena.get((span.buf - ARENA) as usize, start, len);
        }
        self.buffers
            .get(span.buf as usize)
            .and_then(|b| b.get(start..start + len))
            .unwrap_or(&[])
    }

    /// The text a text cell holds, without checking it again.
    #[allow(unsafe_code)]
    #[inline]
    fn text(&self, text: TextSpan) -> &str {
        let bytes = self.span(text.0);
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: `bytes` are UTF-8.
        // - A `TextSpan` is made only from a `&str` (UTF-8), covering that text's own bytes: in a
        //   received message (`TextSpan::within` checks the text lies in it) or copied into the arena
        //   (`push_text`); the cell's `buf` is that message's index in `buffers`, or that chunk's.
        // - Those bytes never change while a cell holds the span: `Bytes` are immutable and kept
        //   until `clear` drops the cells with them; arena chunks never move, are only appended to,
        //   and are truncated (`truncate`) together with the cells that point past the cut.
        // - A span that points nowhere yields `&[]`, which is UTF-8 too.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Copies `bytes` into the arena.
    pub(super) fn push_arena(&mut self, bytes: &[u8]) -> Result<Span, Fail> {
        let (chunk, room) = self.arena.room(bytes.len());
        let start = room.len();
        room.extend_from_slice(bytes);
        arena_span(chunk, start, bytes.len())
    }

    /// Copies `text` into the arena.
    pub(super) fn push_text(&mut self, text: &str) -> Result<TextSpan, Fail> {
        self.push_arena(text.as_bytes()).map(TextSpan)
    }

    /// Cells for an owned value (the carried partial row, or a value merged from chunks).
    pub(super) fn push_owned(&mut self, value: &Value) -> Result<Cell, Fail> {
        Ok(match value {
            Value::Null => Cell::Null,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Int64(n) => Cell::Int64(*n),
            Value::Float32(f) => Cell::Float32(*f),
            Value::Float64(f) => Cell::Float64(*f),
            Value::Numeric(n) => Cell::Numeric(self.push_text(n.as_str())?),
            Value::String(s) => Cell::String(self.push_text(s)?),
            Value::Json(s) => Cell::Json(self.push_text(s)?),
            Value::Bytes(b) => Cell::Bytes(self.push_arena(b)?),
            Value::Proto(b) => Cell::Proto(self.push_arena(b)?),
            Value::Date(d) => Cell::Date(*d),
            Value::Timestamp(t) => Cell::Timestamp(pack_timestamp(*t)),
            Value::Enum(n) => Cell::Enum(*n),
            Value::Interval(i) => self.push_interval(*i),
            Value::Uuid(u) => self.push_uuid(*u),
            Value::Array(items) => Cell::Array(self.push_owned_list(items)?),
            Value::Struct(items) => Cell::Struct(self.push_owned_list(items)?),
        })
    }

    fn push_owned_list(&mut self, items: &[Value]) -> Result<Slots, Fail> {
        let (start, slots) = self.reserve_slots(items.len())?;
        for (i, item) in items.iter().enumerate() {
            let cell = self.push_owned(item)?;
            self.nested[start + i] = cell;
        }
        Ok(slots)
    }

    /// Appends `n` cells to fill in, returning the first's index and the range.
    #[inline]
    pub(super) fn reserve_slots(&mut self, n: usize) -> Result<(usize, Slots), Fail> {
        let start = self.nested.len();
        let (Ok(first), Ok(len)) = (u32::try_from(start), u32::try_from(n)) else {
            return Err(TOO_LARGE);
        };
        self.nested.resize(start + n, Cell::Null);
        Ok((start, Slots { start: first, len }))
    }

    pub(super) fn push_interval(&mut self, interval: Interval) -> Cell {
        self.intervals.push(interval);
        Cell::Interval((self.intervals.len() - 1) as u32)
    }

    pub(super) fn push_uuid(&mut self, uuid: Uuid) -> Cell {
        self.uuids.push(uuid);
        Cell::Uuid((self.uuids.len() - 1) as u32)
    }

    fn value_ref(&self, cell: &Cell) -> ValueRef<'_> {
        match *cell {
            Cell::Null => ValueRef::Null,
            Cell::Bool(b) => ValueRef::Bool(b),
            Cell::Int64(n) => ValueRef::Int64(n),
            Cell::Float32(f) => ValueRef::Float32(f),
            Cell::Float64(f) => ValueRef::Float64(f),
            Cell::Numeric(s) => ValueRef::Numeric(self.text(s)),
            Cell::String(s) => ValueRef::String(self.text(s)),
            Cell::Json(s) => ValueRef::Json(self.text(s)),
            Cell::Bytes(s) => ValueRef::Bytes(self.span(s)),
            Cell::Proto(s) => ValueRef::Proto(self.span(s)),
            Cell::Date(d) => ValueRef::Date(d),
            Cell::Timestamp(t) => unpack_timestamp(t).map_or(ValueRef::Null, ValueRef::Timestamp),
            Cell::Enum(n) => ValueRef::Enum(n),
            Cell::Interval(i) => self
                .intervals
                .get(i as usize)
                .map_or(ValueRef::Null, |i| ValueRef::Interval(*i)),
            Cell::Uuid(i) => self
                .uuids
                .get(i as usize)
                .map_or(ValueRef::Null, |u| ValueRef::Uuid(*u)),
            Cell::Array(s) => ValueRef::Array(self.list(s)),
            Cell::Struct(s) => ValueRef::Struct(self.list(s)),
        }
    }

    fn list(&self, s: Slots) -> ListRef<'_> {
        let start = s.start as usize;
        let cells = self
            .nested
            .get(start..start + s.len as usize)
            .unwrap_or(&[]);
        ListRef { store: self, cells }
    }
}

/// What a batch cannot hold: a value of 4 GiB or more, or more than 4 billion array elements.
pub(super) const TOO_LARGE: Fail = Fail::Wire("a value too large for a row batch");

/// A span of buffer `buf` (or the arena, for [`ARENA`]).
#[inline]
fn span(buf: u32, start: usize, len: usize) -> Result<Span, Fail> {
    match (u32::try_from(start), u32::try_from(len)) {
        (Ok(start), Ok(len)) => Ok(Span { buf, len, start }),
        _ => Err(TOO_LARGE),
    }
}

/// A span of arena chunk `chunk`.
#[inline]
pub(super) fn arena_span(chunk: usize, start: usize, len: usize) -> Result<Span, Fail> {
    match u32::try_from(chunk) {
        Ok(chunk) if chunk < ARENA => span(ARENA + chunk, start, len),
        _ => Err(TOO_LARGE),
    }
}

/// A timestamp as a cell keeps it.
#[inline]
pub(super) fn pack_timestamp(t: Timestamp) -> [u32; 3] {
    let seconds = t.seconds() as u64;
    [seconds as u32, (seconds >> 32) as u32, t.nanos()]
}

/// The timestamp a cell keeps (always valid: it was a `Timestamp`).
#[inline]
fn unpack_timestamp([lo, hi, nanos]: [u32; 3]) -> Option<Timestamp> {
    Timestamp::new((u64::from(hi) << 32 | u64::from(lo)) as i64, nanos)
}

/// Rows decoded by a [`FastDecoder`](super::FastDecoder): each complete, in stream order.
///
/// Text borrows from the received messages (the batch keeps their `Bytes` alive); [`RowBatch::clear`]
/// drops them and keeps the capacity for the next messages.
#[derive(Debug, Default)]
pub struct RowBatch {
    /// The chunk of cells being filled. A chunk never grows past the capacity it was given (a message
    /// that would not fit starts a new one), so keeping many rows never copies them into a bigger
    /// vector, and chunks come from the allocator's reusable sizes, not fresh pages from the system.
    pub(super) cells: Vec<Cell>,
    /// Earlier chunks, each ending with a complete row, with the index of its first cell; and the
    /// number of cells they hold.
    full: Vec<(usize, Vec<Cell>)>,
    pub(super) full_len: usize,
    /// Where each row's cells end, counting across the chunks.
    pub(super) row_ends: Vec<usize>,
    pub(super) store: Store,
}

/// Cells in a chunk, at least: 256 KiB.
const CHUNK_CELLS: usize = 16 * 1024;

/// Lengths of a batch, to undo what a failed message added.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchMark {
    cells: usize,
    rows: usize,
    buffers: usize,
    store: StoreMark,
}

impl RowBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of complete rows.
    pub fn len(&self) -> usize {
        self.row_ends.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.row_ends.is_empty()
    }

    /// Forgets every row (and the messages they borrow from), keeping the capacity.
    pub fn clear(&mut self) {
        if let Some((_, first)) = self.full.drain(..).next()
            && first.capacity() > self.cells.capacity()
        {
            self.cells = first;
        }
        self.full_len = 0;
        self.cells.clear();
        self.row_ends.clear();
        self.store.buffers.clear();
        self.store.nested.clear();
        self.store.arena.clear();
        self.store.intervals.clear();
        self.store.uuids.clear();
    }

    /// Row `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<RowRef<'_>> {
        let end = *self.row_ends.get(i)?;
        let start = if i == 0 { 0 } else { self.row_ends[i - 1] };
        Some(RowRef {
            store: &self.store,
            cells: self.cells_in(start, end),
        })
    }

    /// Cells `start..end`, counting across the chunks (a row never spans two).
    fn cells_in(&self, start: usize, end: usize) -> &[Cell] {
        if start >= self.full_len {
            let base = self.full_len;
            return self.cells.get(start - base..end - base).unwrap_or(&[]);
        }
        // The last chunk starting at or before `start`: a binary search, so reading every row of a
        // large batch stays linear.
        let k = self.full.partition_point(|(first, _)| *first <= start);
        match k.checked_sub(1).and_then(|k| self.full.get(k)) {
            Some((base, chunk)) => chunk.get(start - base..end - base).unwrap_or(&[]),
            None => &[],
        }
    }

    /// Makes room for `n` more cells in the chunk being filled, starting a new chunk when they would
    /// not fit (the cells of a row still being filled move along, so no row spans two chunks).
    pub(super) fn reserve_cells(&mut self, n: usize) {
        if self.cells.capacity() - self.cells.len() >= n {
            return;
        }
        let last_end = self
            .row_ends
            .last()
            .map_or(0, |&e| e.saturating_sub(self.full_len));
        if last_end == 0 {
            // No complete row here yet: growing moves only the cells of one unfinished row.
            self.cells.reserve(n.max(CHUNK_CELLS));
            return;
        }
        let partial = self.cells.split_off(last_end.min(self.cells.len()));
        let mut next = Vec::with_capacity((n + partial.len()).max(CHUNK_CELLS));
        next.extend(partial);
        let done = std::mem::replace(&mut self.cells, next);
        let cells = done.len();
        self.full.push((self.full_len, done));
        self.full_len += cells;
    }

    /// The number of cells, counting across the chunks.
    fn cell_count(&self) -> usize {
        self.full_len + self.cells.len()
    }

    /// Keeps the first `len` cells, counting across the chunks.
    fn truncate_cells(&mut self, len: usize) {
        while len < self.full_len {
            // Only a mark taken before a chunk started can reach back into the full chunks.
            let Some((_, chunk)) = self.full.pop() else {
                break;
            };
            self.full_len -= chunk.len();
            self.cells = chunk;
        }
        self.cells.truncate(len.saturating_sub(self.full_len));
    }

    /// Row `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`, like slice indexing.
    pub fn row(&self, i: usize) -> RowRef<'_> {
        match self.get(i) {
            Some(row) => row,
            None => panic!("row {i} of a batch of {} rows", self.len()),
        }
    }

    /// The rows, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RowRef<'_>> + '_ {
        (0..self.len()).map(|i| self.row(i))
    }

    /// Every row as the reference decoder's owned [`Row`].
    pub fn to_rows(&self) -> Vec<Row> {
        self.iter().map(|r| r.to_row()).collect()
    }

    pub(super) fn mark(&self) -> BatchMark {
        BatchMark {
            cells: self.cell_count(),
            rows: self.row_ends.len(),
            buffers: self.store.buffers.len(),
            store: self.store.mark(),
        }
    }

    pub(super) fn truncate(&mut self, mark: BatchMark) {
        self.truncate_cells(mark.cells);
        self.row_ends.truncate(mark.rows);
        self.store.buffers.truncate(mark.buffers);
        self.store.truncate(mark.store);
    }

    /// Appends `cell` as column `*in_row` of the row being filled; if that completes the row (`width`
    /// columns), closes it and marks the store where the next row starts. Returns whether it did.
    /// (The decoder's hot loop does the same with the vectors borrowed apart.)
    pub(super) fn push_in_row(
        &mut self,
        cell: Cell,
        in_row: &mut usize,
        width: usize,
        row_mark: &mut StoreMark,
    ) -> bool {
        self.cells.push(cell);
        *in_row += 1;
        if *in_row < width {
            return false;
        }
        self.row_ends.push(self.cell_count());
        *in_row = 0;
        *row_mark = self.store.mark();
        true
    }

    /// Forgets the cells after the last complete row.
    pub(super) fn drop_partial_row(&mut self) {
        let end = self.row_ends.last().copied().unwrap_or(0);
        self.truncate_cells(end);
    }

    /// The cells after the last complete row (a row still being filled), as owned values.
    pub(super) fn partial_row(&self) -> Vec<Value> {
        let end = self.row_ends.last().copied().unwrap_or(0);
        self.cells
            .get(end.saturating_sub(self.full_len)..)
            .unwrap_or(&[])
            .iter()
            .map(|c| self.store.value_ref(c).to_value())
            .collect()
    }
}

/// One row of a [`RowBatch`].
#[derive(Debug, Clone, Copy)]
pub struct RowRef<'a> {
    store: &'a Store,
    cells: &'a [Cell],
}

impl<'a> RowRef<'a> {
    /// The number of columns.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether the row has no columns (never, for a decoded row).
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The value of column `col` (`Null` past the last column).
    #[inline]
    pub fn get(&self, col: usize) -> ValueRef<'a> {
        self.cells
            .get(col)
            .map_or(ValueRef::Null, |c| self.store.value_ref(c))
    }

    /// The values, in column order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ValueRef<'a>> + 'a {
        let store = self.store;
        self.cells.iter().map(move |c| store.value_ref(c))
    }

    /// The row as the reference decoder's owned [`Row`].
    pub fn to_row(&self) -> Row {
        Row(self.iter().map(|v| v.to_value()).collect())
    }
}

/// The elements of an ARRAY or the fields of a STRUCT.
#[derive(Debug, Clone, Copy)]
pub struct ListRef<'a> {
    store: &'a Store,
    cells: &'a [Cell],
}

impl<'a> ListRef<'a> {
    /// The number of elements or fields.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Element or field `i` (`Null` past the end).
    pub fn get(&self, i: usize) -> ValueRef<'a> {
        self.cells
            .get(i)
            .map_or(ValueRef::Null, |c| self.store.value_ref(c))
    }

    /// The elements or fields, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = ValueRef<'a>> + 'a {
        let store = self.store;
        self.cells.iter().map(move |c| store.value_ref(c))
    }

    fn to_values(self) -> Vec<Value> {
        self.iter().map(|v| v.to_value()).collect()
    }
}

/// One cell of a [`RowRef`], borrowing its text and bytes from the batch.
#[derive(Debug, Clone, Copy)]
pub enum ValueRef<'a> {
    /// SQL NULL, of any type.
    Null,
    /// `BOOL`.
    Bool(bool),
    /// `INT64`.
    Int64(i64),
    /// `FLOAT32`.
    Float32(f32),
    /// `FLOAT64`.
    Float64(f64),
    /// `NUMERIC`, its checked decimal text.
    Numeric(&'a str),
    /// `STRING`.
    String(&'a str),
    /// `BYTES`, base64-decoded.
    Bytes(&'a [u8]),
    /// `JSON` text.
    Json(&'a str),
    /// `DATE`.
    Date(Date),
    /// `TIMESTAMP`.
    Timestamp(Timestamp),
    /// `ARRAY`.
    Array(ListRef<'a>),
    /// `STRUCT`.
    Struct(ListRef<'a>),
    /// `PROTO`, base64-decoded.
    Proto(&'a [u8]),
    /// `ENUM`.
    Enum(i64),
    /// `INTERVAL`.
    Interval(Interval),
    /// `UUID`.
    Uuid(Uuid),
}

impl ValueRef<'_> {
    /// The owned [`Value`] the reference decoder gives for this cell.
    pub fn to_value(&self) -> Value {
        match *self {
            ValueRef::Null => Value::Null,
            ValueRef::Bool(b) => Value::Bool(b),
            ValueRef::Int64(n) => Value::Int64(n),
            ValueRef::Float32(f) => Value::Float32(f),
            ValueRef::Float64(f) => Value::Float64(f),
            ValueRef::Numeric(s) => Value::Numeric(Numeric::from_checked(s.to_owned())),
            ValueRef::String(s) => Value::String(s.to_owned()),
            ValueRef::Bytes(b) => Value::Bytes(b.to_vec()),
            ValueRef::Json(s) => Value::Json(s.to_owned()),
            ValueRef::Date(d) => Value::Date(d),
            ValueRef::Timestamp(t) => Value::Timestamp(t),
            ValueRef::Array(l) => Value::Array(l.to_values()),
            ValueRef::Struct(l) => Value::Struct(l.to_values()),
            ValueRef::Proto(b) => Value::Proto(b.to_vec()),
            ValueRef::Enum(n) => Value::Enum(n),
            ValueRef::Interval(i) => Value::Interval(i),
            ValueRef::Uuid(u) => Value::Uuid(u),
        }
    }
}
