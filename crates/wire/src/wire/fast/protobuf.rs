//! Walking protobuf framing by hand: varints, keys, length-delimited fields, and skipping unknown
//! fields (groups included) with the same checks prost applies, so that both decoders reject the same
//! bytes.

/// Why bytes are not valid protobuf framing (or, for [`Fail::Fallback`], why the fast path hands a
/// value to prost).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Fail {
    /// Not valid protobuf: the reason, in prost's words where it has them.
    Wire(&'static str),
    /// Not valid protobuf, in prost's words (from a part prost decoded).
    Prost(String),
    /// Valid framing that the fast path does not handle itself (a repeated oneof field, a struct
    /// value, deep nesting): decode this value with prost instead.
    Fallback,
    /// A value that does not fit its column type (boxed: keeps `Result<Cell, Fail>` small on the
    /// hot path).
    Value(Box<super::super::ValueError>),
}

impl Fail {
    /// A value that does not fit its column type.
    #[cold]
    pub(super) fn value(e: super::super::ValueError) -> Self {
        Fail::Value(Box::new(e))
    }

    /// The reason, for a protobuf error ([`DecodeErrorKind::Protobuf`](crate::wire::DecodeErrorKind)).
    pub(super) fn protobuf_reason(self) -> String {
        match self {
            Fail::Wire(reason) => format!("failed to decode Protobuf message: {reason}"),
            Fail::Prost(reason) => reason,
            Fail::Value(e) => e.to_string(),
            Fail::Fallback => "failed to decode Protobuf message".to_owned(),
        }
    }
}

/// How deep groups may nest inside skipped fields; prost's recursion limit.
const GROUP_DEPTH_LIMIT: u32 = 100;

// The protobuf wire types this reader knows.
use crate::wire::fields::wire_type::{END_GROUP, FIXED32, START_GROUP};
pub(super) use crate::wire::fields::wire_type::{FIXED64, LEN, VARINT};

/// A cursor over the bytes of one message.
pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over the fields of a message whose body is `buf`.
    #[inline]
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Whether every field has been read.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// What is left to read.
    #[inline]
    pub(super) fn rest(&self) -> &'a [u8] {
        self.buf
    }

    /// The body of the next field if its key is the one byte `key`, it is length-delimited with a
    /// length of one or two bytes, and it fits: the common case read directly. `None` (having read
    /// nothing) for anything else, which [`Reader::key`] and [`Reader::bytes`] then sort out.
    #[inline(always)]
    pub(super) fn len_field(&mut self, key: u8) -> Option<&'a [u8]> {
        let (len, rest) = match self.buf {
            [k, l0, rest @ ..] if *k == key && *l0 < 0x80 => (usize::from(*l0), rest),
            [k, l0, l1, rest @ ..] if *k == key && *l1 < 0x80 => {
                (usize::from(*l0 & 0x7f) | usize::from(*l1) << 7, rest)
            }
            _ => return None,
        };
        if len > rest.len() {
            return None;
        }
        let (body, tail) = rest.split_at(len);
        self.buf = tail;
        Some(body)
    }

    /// The next varint.
    #[inline]
    pub(super) fn varint(&mut self) -> Result<u64, Fail> {
        match self.buf.first() {
            Some(&b) if b < 0x80 => {
                self.buf = &self.buf[1..];
                Ok(u64::from(b))
            }
            _ => self.varint_slow(),
        }
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Result<u64, Fail> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(i) else {
                return Err(Fail::Wire("buffer underflow"));
            };
            if i == 9 && b > 1 {
                return Err(Fail::Wire("invalid varint"));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        Err(Fail::Wire("invalid varint"))
    }

    /// The next field's key: field number and wire type.
    #[inline]
    pub(super) fn key(&mut self) -> Result<(u32, u8), Fail> {
        let key = self.varint()?;
        let Ok(key) = u32::try_from(key) else {
            return Err(Fail::Wire("invalid key value"));
        };
        let wire_type = (key & 7) as u8;
        if wire_type > FIXED32 {
            return Err(Fail::Wire("invalid wire type value"));
        }
        let field = key >> 3;
        if field == 0 {
            return Err(Fail::Wire("invalid tag value: 0"));
        }
        Ok((field, wire_type))
    }

    /// The body of a length-delimited field.
    #[inline]
    pub(super) fn bytes(&mut self) -> Result<&'a [u8], Fail> {
        let len = self.varint()?;
        match usize::try_from(len) {
            Ok(len) if len <= self.buf.len() => {
                let (body, rest) = self.buf.split_at(len);
                self.buf = rest;
                Ok(body)
            }
            _ => Err(Fail::Wire("buffer underflow")),
        }
    }

    /// A fixed 64-bit field.
    #[inline]
    pub(super) fn fixed64(&mut self) -> Result<[u8; 8], Fail> {
        let Some((head, rest)) = self.buf.split_first_chunk::<8>() else {
            return Err(Fail::Wire("buffer underflow"));
        };
        self.buf = rest;
        Ok(*head)
    }

    fn advance(&mut self, n: usize) -> Result<(), Fail> {
        match self.buf.get(n..) {
            Some(rest) => {
                self.buf = rest;
                Ok(())
            }
            None => Err(Fail::Wire("buffer underflow")),
        }
    }

    /// Skips the body of a field this reader does not want, whose key has just been read.
    pub(super) fn skip(&mut self, field: u32, wire_type: u8) -> Result<(), Fail> {
        self.skip_nested(field, wire_type, 0)
    }

    fn skip_nested(&mut self, field: u32, wire_type: u8, depth: u32) -> Result<(), Fail> {
        match wire_type {
            VARINT => self.varint().map(drop),
            FIXED64 => self.advance(8),
            LEN => self.bytes().map(drop),
            FIXED32 => self.advance(4),
            START_GROUP => {
                if depth >= GROUP_DEPTH_LIMIT {
                    return Err(Fail::Wire("recursion limit reached"));
                }
                loop {
                    let (inner, inner_type) = self.key()?;
                    if inner_type == END_GROUP {
                        if inner != field {
                            return Err(Fail::Wire("unexpected end group tag"));
                        }
                        return Ok(());
                    }
                    self.skip_nested(inner, inner_type, depth + 1)?;
                }
            }
            _ => Err(Fail::Wire("unexpected end group tag")),
        }
    }
}

/// Where `part` (a subslice of `whole`) starts in `whole`.
#[inline]
pub(super) fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(bytes: &[u8]) -> Result<Vec<(u32, u8)>, Fail> {
        let mut r = Reader::new(bytes);
        let mut out = Vec::new();
        while !r.is_empty() {
            let (field, wire_type) = r.key()?;
            r.skip(field, wire_type)?;
            out.push((field, wire_type));
        }
        Ok(out)
    }

    #[test]
    fn varints_of_every_length_and_overlong_ones() {
        for value in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut buf = Vec::new();
            prost::encoding::encode_varint(value, &mut buf);
            assert_eq!(Reader::new(&buf).varint(), Ok(value));
        }
        let eleven = [0xffu8; 11];
        assert!(Reader::new(&eleven).varint().is_err());
        let tenth_too_big = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert!(Reader::new(&tenth_too_big).varint().is_err());
        assert!(Reader::new(&[0x80]).varint().is_err());
    }

    #[test]
    fn skips_every_wire_type_and_checks_groups() {
        // field 1 varint, field 2 fixed64, field 3 bytes, field 4 group holding field 1 varint, field 5 fixed32
        let ok = [
            0x08, 0x96, 0x01, 0x11, 1, 2, 3, 4, 5, 6, 7, 8, 0x1a, 2, b'h', b'i', 0x23, 0x08, 0x01,
            0x24, 0x2d, 1, 2, 3, 4,
        ];
        assert_eq!(
            read_all(&ok),
            Ok(vec![(1, 0), (2, 1), (3, 2), (4, 3), (5, 5)])
        );
        assert!(
            read_all(&[0x23, 0x2c]).is_err(),
            "group closed by another field"
        );
        assert!(read_all(&[0x24]).is_err(), "a lone end group");
        assert!(read_all(&[0x0e]).is_err(), "wire type 6");
        assert!(read_all(&[0x00]).is_err(), "field 0");
        assert!(read_all(&[0x1a, 5, 1]).is_err(), "length past the end");
        assert!(read_all(&[0x2d, 1]).is_err(), "truncated fixed32");
    }
}
