//! How the app writes text where space is short: flattened onto one line and cut (a leaf:
//! panels, views and the status file use it; figures are written by `crate::text`).

/// `text` on one line (every run of whitespace one space), cut to `max` characters with `…`.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > max {
        format!("{}…", flat.chars().take(max).collect::<String>())
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_flattens_and_cuts() {
        assert_eq!(one_line("SELECT *\n  FROM t", 80), "SELECT * FROM t");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
