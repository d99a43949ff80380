//! The fast value decoder's tests: each type and error against the reference parser, and the
//! UTF-8 check at every length.

use super::*;

#[test]
fn timestamps_read_directly_agree_with_the_reference_parser() {
    for s in [
        "2024-02-29T23:59:59Z",
        "2023-02-29T00:00:00Z",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999999Z",
        "1970-01-01T00:00:00.5Z",
        "1970-01-01T00:00:00.Z",
        "1970-01-01T00:00:00.1234567890Z",
        "1970-01-01T24:00:00Z",
        "1970-01-01T00:60:00Z",
        "1970-13-01T00:00:00Z",
        "1970-01-01t00:00:00z",
        "1970-01-01T00:00:00+01:00",
        "1970-01-01T00:00:00",
        "0000-01-01T00:00:00Z",
        "19a0-01-01T00:00:00Z",
        "1970-01-01T00:00:00.1a3Z",
        "1970-01-01T00:00:00.000000001Z",
        "1970-01-01T00:00:00.100000000Z",
        "1970-01-01 00:00:00Z",
        "1970-01-01T00:00:0:Z",
        "1970-01-01T00:00:/0Z",
        "1970-01-01T00:0\u{7f}:00Z",
        "1970-01-0\u{e9}00:00:00Z",
        "1970-01-01T00-00:00Z",
        "1970:01-01T00:00:00Z",
        "1970-01-01T00:00-00Z",
        "1970-01-01T00:00:00.Z",
        "2024-06-15T12:34:56.789Z",
    ] {
        assert_eq!(timestamp(s), Timestamp::parse(s), "{s:?}");
        if let Some(t) = utc_timestamp(s.as_bytes()) {
            assert_eq!(Ok(t), Timestamp::parse(s), "{s:?}");
        }
    }
}

#[test]
fn int64_agrees_with_the_reference_parser() {
    for s in [
        "0",
        "-0",
        "7",
        "-42",
        "123456789012345678",
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "",
        "-",
        "+1",
        "1a",
        "٣",
        "00012",
    ] {
        assert_eq!(int64(s), parse_i64(s), "{s:?}");
        if let Some(n) = int64_ascii(s.as_bytes()) {
            assert_eq!(Ok(n), parse_i64(s), "{s:?}");
        }
    }
    for s in [
        "9223372036854775807",
        "-9223372036854775808",
        "1234567890123456789",
    ] {
        assert_eq!(
            int64_ascii(s.as_bytes()).ok_or(()),
            parse_i64(s).map_err(drop)
        );
    }
    for s in [
        "9223372036854775808",
        "-9223372036854775809",
        "9999999999999999999",
    ] {
        assert_eq!(int64_ascii(s.as_bytes()), None, "{s:?}");
    }
}

#[test]
fn decimals_read_directly_agree_with_the_reference_check() {
    for s in [
        "0",
        "-0",
        "+1",
        "1.",
        ".5",
        "-.5",
        "1.5",
        "12345678901234567890.123456789",
        "",
        "-",
        "+",
        ".",
        "-.",
        "1..2",
        "1.2.3",
        "--1",
        "+-1",
        "1e5",
        " 1",
        "1 ",
        "NaN",
        "nan",
        "١",
        "1,5",
    ] {
        let text = decimal(s.as_bytes());
        assert!(text.is_none_or(|t| t == s), "{s:?}: the text is the input");
        let fast = text.is_some();
        if s == "NaN" {
            assert!(!fast);
        } else {
            assert_eq!(fast, Numeric::check(s).is_ok(), "{s:?}");
        }
    }
}

#[test]
fn dates_read_directly_agree_with_the_reference_parser() {
    for s in [
        "2024-02-29",
        "2023-02-29",
        "0001-01-01",
        "9999-12-31",
        "0000-01-01",
        "2024-13-01",
        "2024-00-10",
        "2024-01-32",
        "2024/01/01",
        "2024-1-01",
        "20240-1-01",
        "2a24-01-01",
        "2024-01-01 ",
    ] {
        assert_eq!(
            date(s.as_bytes()).ok_or(()),
            Date::parse(s).map_err(drop),
            "{s:?}"
        );
    }
}

#[test]
fn utf8_agrees_with_std_at_every_length() {
    for n in 0..80usize {
        for bad in [None, Some(0), Some(n / 2), Some(n.saturating_sub(1))] {
            let mut b: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            if let Some(i) = bad.filter(|&i| i < n) {
                b[i] = 0xc3;
            }
            assert_eq!(utf8(&b), std::str::from_utf8(&b).ok(), "{n} {bad:?}");
            if n >= 2 {
                b[n - 2..].copy_from_slice("é".as_bytes());
                assert_eq!(utf8(&b), std::str::from_utf8(&b).ok(), "{n} {bad:?} é");
            }
        }
    }
}
