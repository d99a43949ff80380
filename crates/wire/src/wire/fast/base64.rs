//! Standard base64 decoding for the common case: canonical, padded text. Anything else (a bad
//! character, missing padding, non-zero trailing bits) is declined and left to the `base64` crate,
//! which the reference uses, so that both decoders accept and reject exactly the same text.

const INVALID: u8 = 0xff;

/// Each byte's 6-bit value, or [`INVALID`].
static TABLE: [u8; 256] = {
    let mut table = [INVALID; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Set in a [`QUAD`] entry for a byte that is no base64 digit.
const BAD: u32 = 0xff00_0000;

/// For each position in a group of four characters, each byte's bits already shifted to where they
/// land in the group's three bytes (as a little-endian `u32`), or [`BAD`]: a group decodes as
/// `QUAD[0][a] | QUAD[1][b] | QUAD[2][c] | QUAD[3][d]`, and is valid if no [`BAD`] bit is set.
static QUAD: [[u32; 256]; 4] = {
    let mut quad = [[BAD; 256]; 4];
    let mut c = 0;
    while c < 256 {
        let v = TABLE[c];
        if v != INVALID {
            let v = v as u32;
            quad[0][c] = v << 2;
            quad[1][c] = v >> 4 | (v & 0x0f) << 12;
            quad[2][c] = (v >> 2) << 8 | (v & 0x03) << 22;
            quad[3][c] = v << 16;
        }
        c += 1;
    }
    quad
};

/// The three bytes of four characters (in the low 24 bits), with [`BAD`] bits if one is no digit.
#[inline(always)]
fn quad(s: &[u8; 4]) -> u32 {
    QUAD[0][s[0] as usize]
        | QUAD[1][s[1] as usize]
        | QUAD[2][s[2] as usize]
        | QUAD[3][s[3] as usize]
}

/// Characters of `body` (no padding in it) decoded 32 at a time into `dst` where the CPU can, and the
/// bytes written: whole blocks up to the first character outside the alphabet.
#[inline]
fn long_blocks(body: &[u8], dst: &mut [u8]) -> (usize, usize) {
    #[cfg(target_arch = "x86_64")]
    if body.len() >= 32 {
        return super::base64_avx2::blocks(body, dst);
    }
    let _ = (body, dst);
    (0, 0)
}

/// Appends the bytes of canonical padded base64 `text` to `out` and returns true; returns false
/// (with `out` possibly extended) when the text is not canonical base64 this function decodes.
#[inline]
pub(super) fn decode_canonical(text: &[u8], out: &mut Vec<u8>) -> bool {
    if !text.len().is_multiple_of(4) {
        return false;
    }
    let Some((body, last)) = text.split_last_chunk::<4>() else {
        return true;
    };
    let start = out.len();
    let n = body.len() / 4 * 3;
    // Eight spare bytes: an AVX2 block writes 32 bytes of which 24 are kept, a step below eight of
    // which six are.
    out.resize(start + n + 8, 0);
    let Some(dst) = out.get_mut(start..) else {
        return false;
    };
    let (read, mut o) = long_blocks(body, dst);
    let Some(body) = body.get(read..) else {
        return false;
    };
    // Eight characters (two groups) into six bytes per step, then a last group of four if any.
    let (eights, rest) = body.as_chunks::<8>();
    for s in eights {
        let (a, b) = s.split_at(4);
        let (Ok(a), Ok(b)) = (<&[u8; 4]>::try_from(a), <&[u8; 4]>::try_from(b)) else {
            return false;
        };
        let (x, y) = (quad(a), quad(b));
        if (x | y) & BAD != 0 {
            return false;
        }
        let word = u64::from(x) | u64::from(y) << 24;
        let Some(d) = dst.get_mut(o..o + 8) else {
            return false;
        };
        d.copy_from_slice(&word.to_le_bytes());
        o += 6;
    }
    if let Ok(s) = <&[u8; 4]>::try_from(rest) {
        let x = quad(s);
        let Some(d) = dst.get_mut(o..o + 4) else {
            return false;
        };
        if x & BAD != 0 {
            return false;
        }
        d.copy_from_slice(&x.to_le_bytes());
    }
    out.truncate(start + n);
    let [a, b, c, d] = last.map(|x| TABLE[x as usize]);
    if (a | b) & 0xc0 != 0 {
        return false;
    }
    match (last[2], last[3]) {
        (b'=', b'=') if b & 0x0f == 0 => out.push(a << 2 | b >> 4),
        (_, b'=') if c & 0xc0 == 0 && c & 0x03 == 0 => {
            out.extend_from_slice(&[a << 2 | b >> 4, b << 4 | c >> 2]);
        }
        _ if (c | d) & 0xc0 == 0 => {
            let n = u32::from(a) << 18 | u32::from(b) << 12 | u32::from(c) << 6 | u32::from(d);
            out.extend_from_slice(&n.to_be_bytes()[1..]);
        }
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    use super::*;

    /// Whenever the fast path accepts, the crate accepts with the same bytes.
    fn agrees(text: &[u8]) {
        let mut out = Vec::new();
        if decode_canonical(text, &mut out) {
            assert_eq!(STANDARD.decode(text).ok(), Some(out), "{text:?}");
        }
    }

    #[test]
    fn accepts_only_what_the_crate_accepts_with_the_same_bytes() {
        for len in 0..40usize {
            let data: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
            let text = STANDARD.encode(&data);
            let mut out = Vec::new();
            assert!(decode_canonical(text.as_bytes(), &mut out), "{text}");
            assert_eq!(out, data);
        }
        for text in [
            "QQ==",
            "QR==",
            "QUI=",
            "QUJ=",
            "QUJD",
            "Q===",
            "====",
            "QQ=A",
            "QQ",
            "Q!==",
            "QUJD QQ==",
            "=QUJ",
            "QU=D",
        ] {
            agrees(text.as_bytes());
        }
        // A stray character at every position of a text long enough for the eight-character steps.
        let text = STANDARD.encode((0..60u8).collect::<Vec<_>>());
        for i in 0..text.len() {
            for bad in [b'=', b'!', b'-', b'_', 0x80, 0xff, b' '] {
                let mut t = text.clone().into_bytes();
                t[i] = bad;
                agrees(&t);
                let mut out = Vec::new();
                if i + 2 < text.len() {
                    assert!(!decode_canonical(&t, &mut out), "{i} {bad}");
                }
            }
        }
        let mut out = Vec::new();
        assert!(!decode_canonical(b"QR==", &mut out), "trailing bits");
        assert!(!decode_canonical(b"QQ", &mut out), "no padding");
    }
}
