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
    out.resize(start + body.len() / 4 * 3, 0);
    let Some(dst) = out.get_mut(start..) else {
        return false;
    };
    // Eight characters at a time into six bytes, then the rest four at a time.
    let mut src8 = body.chunks_exact(8);
    let mut dst6 = dst.chunks_exact_mut(6);
    for (s, d) in (&mut src8).zip(&mut dst6) {
        let mut n = 0u64;
        let mut bad = 0u8;
        for &c in s {
            let v = TABLE[c as usize];
            bad |= v;
            n = n << 6 | u64::from(v);
        }
        if bad & 0xc0 != 0 {
            return false;
        }
        d.copy_from_slice(&n.to_be_bytes()[2..]);
    }
    for (s, d) in src8
        .remainder()
        .chunks_exact(4)
        .zip(dst6.into_remainder().chunks_exact_mut(3))
    {
        let [a, b, c, e] = [s[0], s[1], s[2], s[3]].map(|x| TABLE[x as usize]);
        if (a | b | c | e) & 0xc0 != 0 {
            return false;
        }
        let n = u32::from(a) << 18 | u32::from(b) << 12 | u32::from(c) << 6 | u32::from(e);
        d.copy_from_slice(&n.to_be_bytes()[1..]);
    }
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
        let mut out = Vec::new();
        assert!(!decode_canonical(b"QR==", &mut out), "trailing bits");
        assert!(!decode_canonical(b"QQ", &mut out), "no padding");
    }
}
