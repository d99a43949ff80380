//! Text for people: labels and names from the command line, report files and the network,
//! written so that they print as what they are; and figures in units a person reads at a glance
//! (`45.6 ms`, `1.23 s`, `1.0 MiB`, `10,000`), the one way every view and the command line scale
//! them. CSV and JSON keep fixed units in their key names instead.

/// `text` with its control characters (escape sequences, bells, line breaks) written as `\u{..}`
/// escapes, so a label from the command line or a report file prints as what it is and cannot
/// move a terminal's cursor or recolour its text.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// [`printable`] text cut to its first `max_chars` characters, saying how long the whole was: for
/// errors that echo what they were given, which may be megabytes.
pub fn excerpt(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => printable(text).into_owned(),
        Some((end, _)) => format!("{}... ({} bytes)", printable(&text[..end]), text.len()),
    }
}

/// `text` with its first letter a capital (a finding made a sentence).
pub fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// `1234567` as `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A duration given in milliseconds, scaled to the unit a person reads it in, with three
/// significant digits: `850 ns`, `12.3 µs`, `0.45 ms`... (`456 µs`), `45.6 ms`, `1.23 s`,
/// `2 min 03 s`; not-a-number as `–`.
pub fn ms(ms: f64) -> String {
    if !ms.is_finite() {
        return "–".to_owned();
    }
    let sign = if ms < 0.0 { "\u{2212}" } else { "" };
    let a = ms.abs();
    let body = if a == 0.0 {
        "0 ms".to_owned()
    } else if a < 0.001 {
        format!("{:.0} ns", a * 1e6)
    } else if a < 1.0 {
        significant(a * 1e3, "µs")
    } else if a < 1_000.0 {
        significant(a, "ms")
    } else if a < 60_000.0 {
        significant(a / 1e3, "s")
    } else {
        let seconds = (a / 1e3).round() as u64;
        format!("{} min {:02} s", count(seconds / 60), seconds % 60)
    };
    format!("{sign}{body}")
}

/// A duration in milliseconds that may be missing, as [`ms`] writes it; `–` when it is.
pub fn maybe_ms(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), ms)
}

/// A duration given in whole microseconds (a timeline's unit), as [`ms`] writes it.
pub fn micros(us: u64) -> String {
    ms(us as f64 / 1000.0)
}

/// `x` with three significant digits (at least none after the point) and `unit`: `1.23 ms`,
/// `12.3 ms`, `123 ms`.
fn significant(x: f64, unit: &str) -> String {
    // Rounding may carry into the next decade (999.6 -> 1000): that is still three digits.
    if x < 9.995 {
        format!("{x:.2} {unit}")
    } else if x < 99.95 {
        format!("{x:.1} {unit}")
    } else {
        format!("{x:.0} {unit}")
    }
}

/// A change in milliseconds with its sign (`+12.3 ms`, `−0.45 ms`, `±0 ms` under 5 µs).
pub fn signed_ms(change: f64) -> String {
    if change.is_finite() && change.abs() < 0.005 {
        "±0 ms".to_owned()
    } else if change > 0.0 {
        format!("+{}", ms(change))
    } else {
        ms(change)
    }
}

/// A number as written, with at most `decimals` decimals and no trailing zeros: `50`, `0.5`,
/// `12.25`.
pub fn trimmed(x: f64, decimals: usize) -> String {
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// A size in bytes, in binary units: `512 B`, `64.0 KiB`, `1.00 MiB`, `3.21 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut x = n as f64;
    let mut unit = "B";
    for u in UNITS {
        if x < 1024.0 {
            break;
        }
        x /= 1024.0;
        unit = u;
    }
    significant(x, unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_trimmed_of_trailing_zeros_and_microseconds_scaled() {
        assert_eq!(trimmed(50.0, 3), "50");
        assert_eq!(trimmed(0.5, 3), "0.5");
        assert_eq!(trimmed(12.2504, 3), "12.25");
        assert_eq!(trimmed(95.0, 2), "95");
        assert_eq!(trimmed(99.9, 2), "99.9");
        assert_eq!(trimmed(1e20, 0), "100000000000000000000");
        assert_eq!(micros(456), "456 µs");
        assert_eq!(micros(1234), "1.23 ms");
        assert_eq!(maybe_ms(None), "–");
        assert_eq!(maybe_ms(Some(45.6)), "45.6 ms");
    }

    #[test]
    fn counts_group_their_digits() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_234_567), "1,234,567");
    }

    #[test]
    fn durations_are_scaled_to_three_significant_digits() {
        assert_eq!(ms(0.0), "0 ms");
        assert_eq!(ms(0.000_85), "850 ns");
        assert_eq!(ms(0.0123), "12.3 µs");
        assert_eq!(ms(0.456), "456 µs");
        assert_eq!(ms(1.234), "1.23 ms");
        assert_eq!(ms(45.55), "45.5 ms");
        assert_eq!(ms(152.4), "152 ms");
        assert_eq!(ms(23_961.632), "24.0 s");
        assert_eq!(ms(123_456.0), "2 min 03 s");
        assert_eq!(ms(-2.5), "\u{2212}2.50 ms");
        assert_eq!(ms(f64::NAN), "–");
    }

    #[test]
    fn changes_carry_their_sign() {
        assert_eq!(signed_ms(12.34), "+12.3 ms");
        assert_eq!(signed_ms(-0.5), "\u{2212}500 µs");
        assert_eq!(signed_ms(0.001), "±0 ms");
    }

    #[test]
    fn sizes_are_in_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(65_536), "64.0 KiB");
        assert_eq!(bytes(1_048_576), "1.00 MiB");
        assert_eq!(bytes(5_700_000), "5.44 MiB");
    }
}
