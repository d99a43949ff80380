//! FNV-1a, 64 bits (Fowler, Noll and Vo; the offset basis and prime of the published
//! specification), written out once so that hashes stored in reports, plan fingerprints and the
//! local instance's request fingerprints stay the same across Rust releases (the standard
//! library's hasher makes no such promise). A leaf: it names nothing else in the crate.

/// The offset basis: the hash of nothing.
pub const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// The prime each byte's step multiplies by.
pub const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a over `bytes`, continuing from `hash`.
pub fn continued(mut hash: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(PRIME);
    }
    hash
}

/// FNV-1a over some byte strings, each followed by a `0xff` byte (which ends a part, so that
/// `["ab", "c"]` and `["a", "bc"]` differ): a stable fingerprint of a list of parts.
pub fn of_parts(parts: &[&[u8]]) -> u64 {
    let mut hash = OFFSET_BASIS;
    for part in parts {
        hash = continued(hash, part);
        hash = continued(hash, &[0xff]);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        // From the FNV reference test suite: "" and "a" and "foobar" under 64-bit FNV-1a.
        assert_eq!(continued(OFFSET_BASIS, b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(continued(OFFSET_BASIS, b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(continued(OFFSET_BASIS, b"foobar"), 0x8594_4171_f739_67e8);
    }
}
