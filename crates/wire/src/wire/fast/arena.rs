//! Bytes the batch owns (base64-decoded BYTES/PROTO, the text of values merged from chunks), in chunks
//! that never move: a chunk is never grown past its capacity, so filling the arena copies nothing.

/// Chunks are at least this big; a bigger value gets a chunk of its own size.
const CHUNK: usize = 256 << 10;

/// Growable storage whose bytes never move once written.
#[derive(Debug, Default)]
pub(super) struct Arena {
    chunks: Vec<Vec<u8>>,
    /// The chunk being filled; the ones after it are empty (kept for their capacity).
    active: usize,
}

/// A position in the arena, to truncate back to.
#[derive(Debug, Clone, Copy)]
pub(super) struct ArenaMark {
    active: usize,
    len: usize,
}

impl Arena {
    /// A chunk with room for `n` more bytes, and its index.
    #[inline]
    pub(super) fn room(&mut self, n: usize) -> (usize, &mut Vec<u8>) {
        let fits = self
            .chunks
            .get(self.active)
            .is_some_and(|c| c.capacity() - c.len() >= n);
        if !fits {
            self.next_chunk(n);
        }
        let active = self.active;
        (active, &mut self.chunks[active])
    }

    #[cold]
    fn next_chunk(&mut self, n: usize) {
        if !self.chunks.is_empty() {
            self.active += 1;
        }
        let need = n.max(CHUNK);
        match self.chunks.get_mut(self.active) {
            Some(chunk) if chunk.capacity() >= need => {}
            Some(chunk) => *chunk = Vec::with_capacity(need),
            None => self.chunks.push(Vec::with_capacity(need)),
        }
    }

    /// The bytes `start..start + len` of chunk `chunk` (empty if out of range).
    #[inline]
    pub(super) fn get(&self, chunk: usize, start: usize, len: usize) -> &[u8] {
        self.chunks
            .get(chunk)
            .and_then(|c| c.get(start..start + len))
            .unwrap_or(&[])
    }

    pub(super) fn mark(&self) -> ArenaMark {
        ArenaMark {
            active: self.active,
            len: self.chunks.get(self.active).map_or(0, Vec::len),
        }
    }

    pub(super) fn truncate(&mut self, mark: ArenaMark) {
        for chunk in self.chunks.iter_mut().skip(mark.active + 1) {
            chunk.clear();
        }
        if let Some(chunk) = self.chunks.get_mut(mark.active) {
            chunk.truncate(mark.len);
        }
        self.active = mark.active;
    }

    /// Empties every chunk, keeping them for reuse.
    pub(super) fn clear(&mut self) {
        self.chunks.iter_mut().for_each(Vec::clear);
        self.active = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_never_move_and_truncation_undoes() {
        let mut arena = Arena::default();
        let (c, chunk) = arena.room(3);
        chunk.extend_from_slice(b"abc");
        let first = arena.get(c, 0, 3).as_ptr();
        let mark = arena.mark();
        for _ in 0..100 {
            let (_, chunk) = arena.room(10_000);
            chunk.extend_from_slice(&[7; 10_000]);
        }
        assert_eq!(arena.get(c, 0, 3).as_ptr(), first);
        assert_eq!(arena.get(c, 0, 3), b"abc");
        arena.truncate(mark);
        let (c2, chunk) = arena.room(1);
        assert_eq!((c2, chunk.len()), (c, 3));
        arena.clear();
        assert_eq!(arena.room(1).1.len(), 0);
        assert_eq!(arena.get(99, 0, 1), b"");
    }
}
