//! Base64 decoding 32 characters at a time with AVX2, for the long BYTES values (Seed23's avatars are
//! 100 to 200 bytes) where the table-driven loop in `base64.rs` spends most of its time.
//!
//! The technique is the published one (Muła and Lemire, "Faster Base64 Encoding and Decoding Using AVX2
//! Instructions"): two 16-entry lookups by each character's high and low nibble tell whether it is in the
//! alphabet, a third by the high nibble gives the offset that turns it into its 6-bit value, and two
//! multiply-adds and two shuffles pack 32 values into 24 bytes. Only whole blocks of alphabet characters
//! are decoded here; padding, a block with any other character and the last few characters are left to
//! the scalar code, which makes every decision about what is canonical.
//!
//! Unsafe: the intrinsics' loads and stores, and calling [`decode_blocks`] from code compiled without
//! AVX2, which [`blocks`] only does after [`available`] said the CPU has it. Everything else is a safe
//! `#[target_feature]` function: the compiler lets only AVX2 code call it without `unsafe`.
#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m256i, _mm256_add_epi8, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256,
    _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_permutevar8x32_epi32, _mm256_set1_epi8,
    _mm256_set1_epi32, _mm256_setr_epi8, _mm256_setr_epi32, _mm256_shuffle_epi8, _mm256_srli_epi32,
    _mm256_storeu_si256, _mm256_testz_si256,
};

/// Whether this CPU can run [`decode_blocks`].
#[inline]
pub(super) fn available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// [`decode_blocks`] where the CPU has AVX2; nothing decoded (`(0, 0)`) where it has not.
#[inline]
pub(super) fn blocks(text: &[u8], out: &mut [u8]) -> (usize, usize) {
    if !available() {
        return (0, 0);
    }
    // SAFETY: `decode_blocks` needs nothing but AVX2, and `available` just found it on this CPU.
    unsafe { decode_blocks(text, out) }
}

/// The same 16 bytes in both 128-bit halves (AVX2 shuffles look up within each half). AVX2 code
/// only: the attribute makes any other caller say `unsafe`.
#[inline]
#[target_feature(enable = "avx2")]
fn both_halves(t: [i8; 16]) -> __m256i {
    _mm256_setr_epi8(
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13],
        t[14], t[15], t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11],
        t[12], t[13], t[14], t[15],
    )
}

/// Decodes whole 32-character blocks from the start of `text` into `out`, 24 bytes each, while `text`
/// has a block left and `out` has 32 writable bytes for it (the last 8 are scratch). Stops before the
/// first block holding a character outside the standard alphabet (`=` included). Returns the characters
/// read and the bytes written.
///
/// Safe to call from AVX2 code; code without it must call it in `unsafe`, having checked
/// [`available`] (as [`blocks`] does).
#[target_feature(enable = "avx2")]
pub(super) fn decode_blocks(text: &[u8], out: &mut [u8]) -> (usize, usize) {
    // A character is in the alphabet when LOW[its low nibble] & HIGH[its high nibble] is zero. Bit 0:
    // high nibbles 0-1 and 8-F (nothing valid); bit 1: high nibble 2, where only '+' (B) and '/' (F)
    // are; bit 2: digits (3), low nibble 0-9 only; bit 3: 4 and 6, low nibble 0 ('@', '`') excluded;
    // bit 4: 5 and 7, low nibbles B-F excluded.
    let low = both_halves([
        0x0b, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x03, 0x07, 0x15, 0x17, 0x17, 0x17,
        0x15,
    ]);
    let high = both_halves([
        0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x08, 0x10, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
        0x01,
    ]);
    // What to add to a character to get its value, by high nibble; '/' looks up one entry lower than
    // '+' (1: +16, 2: +19), digits +4, capitals -65, small letters -71.
    let offsets = both_halves([0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Each 32-bit lane ends up holding three bytes, most significant first in the output: gather bytes
    // 2, 1, 0 of each lane into the first 12 bytes of each half, then the two halves' 12 together.
    let gather = both_halves([2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1]);
    let halves = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    let nibble = _mm256_set1_epi8(0x0f);
    let slash = _mm256_set1_epi8(b'/' as i8);
    let (mut read, mut written) = (0, 0);
    while read + 32 <= text.len() && written + 32 <= out.len() {
        // SAFETY: `read + 32 <= text.len()`: the 32 bytes are in `text`.
        let chars = unsafe { _mm256_loadu_si256(text.as_ptr().add(read).cast()) };
        let hi = _mm256_and_si256(_mm256_srli_epi32(chars, 4), nibble);
        let lo = _mm256_and_si256(chars, nibble);
        let bad = _mm256_and_si256(_mm256_shuffle_epi8(low, lo), _mm256_shuffle_epi8(high, hi));
        if _mm256_testz_si256(bad, bad) == 0 {
            break;
        }
        // 0xff (-1) where the character is '/'.
        let index = _mm256_add_epi8(hi, _mm256_cmpeq_epi8(chars, slash));
        let values = _mm256_add_epi8(chars, _mm256_shuffle_epi8(offsets, index));
        // Pairs of 6-bit values into 12 bits (first * 64 + second), pairs of those into 24.
        let twelve = _mm256_maddubs_epi16(values, _mm256_set1_epi32(0x0140_0140));
        let lanes = _mm256_madd_epi16(twelve, _mm256_set1_epi32(0x0001_1000));
        let bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(lanes, gather), halves);
        // SAFETY: `written + 32 <= out.len()`: the 32 bytes are in `out`.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(written).cast(), bytes) };
        read += 32;
        written += 24;
    }
    (read, written)
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;

    use super::*;

    fn decoded(text: &[u8]) -> Option<(usize, Vec<u8>)> {
        if !available() {
            return None;
        }
        let mut out = vec![0; text.len() + 32];
        let (read, written) = blocks(text, &mut out);
        out.truncate(written);
        Some((read, out))
    }

    #[test]
    fn whole_blocks_decode_as_the_crate_decodes_them() {
        if !available() {
            // Nothing to test on this CPU; the scalar path's own tests cover it.
            eprintln!("no AVX2 here");
            return;
        }
        for len in [0usize, 23, 24, 47, 48, 72, 96, 150, 200, 383] {
            let data: Vec<u8> = (0..len).map(|i| (i * 151 + 7) as u8).collect();
            let text = STANDARD.encode(&data);
            let (read, out) = decoded(text.as_bytes()).expect("available");
            // Every whole block that holds no padding is decoded.
            let unpadded = text.trim_end_matches('=').len();
            assert_eq!(read, unpadded / 32 * 32, "{len}");
            assert_eq!(out, STANDARD.decode(&text[..read]).expect("valid"), "{len}");
        }
    }

    #[test]
    fn every_byte_outside_the_alphabet_stops_the_block() {
        if !available() {
            eprintln!("no AVX2 here");
            return;
        }
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let base: Vec<u8> = (0..64).map(|i| alphabet[(i * 7) % 64]).collect();
        for byte in 0..=255u8 {
            for position in [0, 5, 15, 16, 31, 33, 63] {
                let mut text = base.clone();
                text[position] = byte;
                let (read, out) = decoded(&text).expect("available");
                let valid = alphabet.contains(&byte);
                let want = if valid { 64 } else { position / 32 * 32 };
                assert_eq!(read, want, "byte {byte:#04x} at {position}");
                assert_eq!(out, STANDARD.decode(&text[..read]).expect("valid"));
            }
        }
    }
}
