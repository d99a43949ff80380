//! HdrHistogram's V2 encoding, checked before the `hdrhistogram` crate reads it. The crate trusts
//! what a header claims: it allocates the payload's length before reading a byte of it (a 40-byte
//! header claiming 4 GiB allocates 4 GiB), inflates a compressed histogram whole (a few MB can
//! inflate to gigabytes of zero counts), and negates a zero run without checking it (a run of
//! `i64::MIN` overflows). Here a claimed length is held to the bytes that are there and to what a
//! histogram of the header's own bounds can take, a compressed histogram is inflated up to that
//! bound and no further, and the payload's counts are walked once, so what reaches the crate is
//! read in memory and time bounded by the input.
//!
//! The format (HdrHistogram's, as its implementations write it): a 40-byte header, all big-endian
//! (cookie, payload length, normalising index offset, significant digits, lowest discernible
//! value, highest trackable value, integer-to-double ratio), then the counts as zig-zag LEB128
//! varints of at most 9 bytes, a negative one standing for that many zero counts. The compressed
//! form is its own cookie, the deflated length, then the zlib stream of the plain form.

use std::io::Read as _;

use hdrhistogram::Histogram;

use super::{HIGHEST_US, HistogramError, SIGFIG};

/// The plain V2 encoding's cookie.
const COOKIE: u32 = 0x1c84_9313;
/// The compressed V2 encoding's cookie.
const COMPRESSED_COOKIE: u32 = 0x1c84_9314;
/// The plain form's header.
const HEADER: usize = 40;
/// The most bytes one count takes in the payload.
const MAX_VARINT: usize = 9;
/// The most a compressed histogram inflates to: the header and a payload of the most counts any
/// histogram of spanprof's lowest value and digits has (its highest value at `u64::MAX`), each
/// at its longest. About 500 KB; spanprof's own inflate to at most about 200 KB.
const MAX_INFLATED: usize = HEADER + MAX_VARINT * 56_320;

/// The plain V2 encoding of `bytes` (inflated when compressed), every length and count in it
/// checked: bytes the `hdrhistogram` crate reads within bounds.
pub(super) fn checked(bytes: &[u8]) -> Result<Vec<u8>, HistogramError> {
    match be_u32(bytes, 0)? {
        COOKIE => {
            check_plain(bytes)?;
            Ok(bytes.to_vec())
        }
        COMPRESSED_COOKIE => {
            let claimed = be_u32(bytes, 4)? as usize;
            let held = bytes.len() - 8;
            if claimed > held {
                return Err(HistogramError::Claims {
                    claimed: claimed as u64,
                    held,
                });
            }
            let plain = inflate(&bytes[8..8 + claimed])?;
            if be_u32(&plain, 0)? != COOKIE {
                return Err(HistogramError::Decode(
                    "the compressed histogram does not hold a plain V2 one".into(),
                ));
            }
            check_plain(&plain)?;
            Ok(plain)
        }
        other => Err(HistogramError::Decode(format!(
            "not HdrHistogram's V2 encoding (cookie {other:#010x})"
        ))),
    }
}

/// `deflated` inflated, refused once it passes [`MAX_INFLATED`].
fn inflate(deflated: &[u8]) -> Result<Vec<u8>, HistogramError> {
    let mut plain = Vec::new();
    flate2::read::ZlibDecoder::new(deflated)
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|e| HistogramError::Decode(format!("the compressed histogram: {e}")))?;
    if plain.len() > MAX_INFLATED {
        return Err(HistogramError::Inflates(MAX_INFLATED));
    }
    Ok(plain)
}

/// Checks a plain V2 encoding: spanprof's bounds, a payload that is there and no longer than the
/// header's bounds allow, and counts that stay inside the histogram and add up without overflow.
fn check_plain(bytes: &[u8]) -> Result<(), HistogramError> {
    if bytes.len() < HEADER {
        return Err(HistogramError::Decode(format!(
            "{} bytes, shorter than the histogram's {HEADER}-byte header",
            bytes.len()
        )));
    }
    let claimed = be_u32(bytes, 4)? as usize;
    let digits = be_u32(bytes, 12)?;
    let low = be_u64(bytes, 16)?;
    let high = be_u64(bytes, 24)?;
    if low != 1 || high < HIGHEST_US || digits != u32::from(SIGFIG) {
        return Err(HistogramError::Bounds(
            low,
            high,
            u8::try_from(digits).unwrap_or(u8::MAX),
        ));
    }
    let held = bytes.len() - HEADER;
    if claimed > held {
        return Err(HistogramError::Claims {
            claimed: claimed as u64,
            held,
        });
    }
    // The counts array of these bounds: tens of thousands of entries, a byte each here.
    let slots = Histogram::<u8>::new_with_bounds(low, high, SIGFIG)
        .map_err(|e| HistogramError::Decode(format!("{e:?}")))?
        .distinct_values();
    if claimed > slots * MAX_VARINT {
        return Err(HistogramError::Claims {
            claimed: claimed as u64,
            held: slots * MAX_VARINT,
        });
    }
    check_counts(&bytes[HEADER..HEADER + claimed], slots)
}

/// Walks the payload's counts: each varint whole, zero runs that stay inside `slots`, counts at
/// an index below `slots` whose sum fits a `u64`.
fn check_counts(payload: &[u8], slots: usize) -> Result<(), HistogramError> {
    let bad = |why: String| HistogramError::Decode(format!("the histogram's counts: {why}"));
    let (mut at, mut index, mut total) = (0usize, 0usize, 0u64);
    while at < payload.len() {
        let (zigzag, used) = varint(&payload[at..]).ok_or_else(|| bad("a count is cut".into()))?;
        at += used;
        let value = ((zigzag >> 1) as i64) ^ -((zigzag & 1) as i64);
        if value < 0 {
            let run = usize::try_from(value.unsigned_abs()).unwrap_or(usize::MAX);
            index = index
                .checked_add(run)
                .filter(|&i| i <= slots)
                .ok_or_else(|| bad(format!("a run of {run} zeros past the {slots} counts")))?;
        } else {
            if index >= slots {
                return Err(bad(format!("more than the {slots} counts")));
            }
            total = total
                .checked_add(value as u64)
                .ok_or_else(|| bad("they add up past 2^64".into()))?;
            index += 1;
        }
    }
    Ok(())
}

/// One LEB128 varint as HdrHistogram writes it (the ninth byte whole), and the bytes it took;
/// `None` when `bytes` ends inside it.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(MAX_VARINT) {
        if i == MAX_VARINT - 1 {
            return Some((value | u64::from(b) << 56, MAX_VARINT));
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

fn be_u32(bytes: &[u8], at: usize) -> Result<u32, HistogramError> {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| HistogramError::Decode(format!("{} bytes: cut in its header", bytes.len())))
}

fn be_u64(bytes: &[u8], at: usize) -> Result<u64, HistogramError> {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
        .ok_or_else(|| HistogramError::Decode(format!("{} bytes: cut in its header", bytes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain V2 header of spanprof's bounds claiming `payload` bytes.
    fn header(payload: u32) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend(COOKIE.to_be_bytes());
        h.extend(payload.to_be_bytes());
        h.extend(0u32.to_be_bytes());
        h.extend(u32::from(SIGFIG).to_be_bytes());
        h.extend(1u64.to_be_bytes());
        h.extend(HIGHEST_US.to_be_bytes());
        h.extend(1f64.to_be_bytes());
        h
    }

    fn deflated(plain: &[u8]) -> Vec<u8> {
        use std::io::Write as _;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(plain).expect("into a Vec");
        let body = z.finish().expect("into a Vec");
        let mut out = COMPRESSED_COOKIE.to_be_bytes().to_vec();
        out.extend((body.len() as u32).to_be_bytes());
        out.extend(body);
        out
    }

    #[test]
    fn a_header_claiming_more_than_it_holds_is_refused_before_anything_is_allocated() {
        let claim = header(u32::MAX - 15);
        assert_eq!(claim.len(), HEADER);
        assert_eq!(
            checked(&claim),
            Err(HistogramError::Claims {
                claimed: u64::from(u32::MAX - 15),
                held: 0
            })
        );
        // Compressed, the same claim inside, and a compressed length past the bytes.
        assert!(matches!(
            checked(&deflated(&claim)),
            Err(HistogramError::Claims { held: 0, .. })
        ));
        let mut long = deflated(&header(0));
        long[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            checked(&long),
            Err(HistogramError::Claims {
                claimed: 4_294_967_295,
                ..
            })
        ));
    }

    #[test]
    fn a_payload_longer_than_its_bounds_take_or_a_bomb_is_refused() {
        // Zero counts, each one byte (zig-zag 0), past what the header's bounds hold.
        let slots = Histogram::<u8>::new_with_bounds(1, HIGHEST_US, SIGFIG)
            .expect("bounds")
            .distinct_values();
        let n = slots * MAX_VARINT + 1;
        let mut plain = header(n as u32);
        plain.resize(HEADER + n, 0);
        assert!(matches!(
            checked(&plain),
            Err(HistogramError::Claims { .. })
        ));
        // Megabytes of zeros deflate to a few KB and are refused at the bound, not inflated.
        let mut bomb = header(64 << 20);
        bomb.resize(HEADER + (64 << 20), 0);
        let small = deflated(&bomb);
        assert!(small.len() < 200_000, "{}", small.len());
        assert_eq!(checked(&small), Err(HistogramError::Inflates(MAX_INFLATED)));
    }

    #[test]
    fn counts_that_leave_the_histogram_or_overflow_are_refused() {
        let with = |payload: &[u8]| {
            let mut b = header(payload.len() as u32);
            b.extend_from_slice(payload);
            checked(&b)
        };
        // zig-zag of i64::MIN is u64::MAX: nine bytes, the last whole.
        let min = [0xff; 9];
        assert!(matches!(with(&min), Err(HistogramError::Decode(_))));
        // A run of zeros past the counts, then a count.
        let past = [0xff, 0xff, 0x7f, 0x02];
        assert!(matches!(with(&past), Err(HistogramError::Decode(_))));
        // Two counts of i64::MAX (zig-zag u64::MAX - 1) and a third: past 2^64.
        let mut big = Vec::new();
        for _ in 0..3 {
            big.extend([0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
        }
        assert!(matches!(with(&big), Err(HistogramError::Decode(_))));
        // Cut inside a varint.
        assert!(matches!(with(&[0x80]), Err(HistogramError::Decode(_))));
        // What is well formed passes: a count of 3 after two zeros.
        assert_eq!(with(&[0x03, 0x06]).map(|b| b.len()), Ok(HEADER + 2));
    }
}
