//! HTML text that cannot become markup: every string from a report goes through [`esc`] (and is
//! cut by [`clipped`] first), every number through [`num`] (never `NaN` or `inf` in a picture).

use std::fmt::Write as _;

/// The most characters of one string from a report (a label, SQL, an error) the page shows; the
/// embedded report keeps all of it.
pub const MAX_SHOWN_CHARS: usize = 4_000;

/// `text` with `&`, `<`, `>`, `"` and `'` written as character references: inert in element
/// content and in quoted attribute values alike.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than line breaks and tabs are shown, not obeyed.
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// [`esc`] of `text` cut to [`MAX_SHOWN_CHARS`], saying how much was left out.
pub fn clipped(text: &str) -> String {
    match text.char_indices().nth(MAX_SHOWN_CHARS) {
        None => esc(text),
        Some((end, _)) => format!(
            "{}<span class=\"cut\">… ({} more bytes, kept in the embedded report)</span>",
            esc(&text[..end]),
            text.len() - end
        ),
    }
}

/// A coordinate or size for SVG: finite, within ±10⁶, two decimals at most.
pub fn num(x: f64) -> String {
    let x = if x.is_finite() {
        x.clamp(-1e6, 1e6)
    } else {
        0.0
    };
    let rounded = (x * 100.0).round() / 100.0;
    if rounded == rounded.trunc() {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded}")
    }
}

/// `#rrggbb` of a colour.
pub fn hex(rgb: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2])
}

/// A table: a header row, then rows of cells already escaped. Cells of numbers carry their value
/// in `data-v` (the page's script sorts a `sortable` table by it).
pub struct Table {
    html: String,
}

/// One cell: its markup and, for a number, its value to sort by.
pub struct Cell {
    html: String,
    value: Option<f64>,
}

impl Cell {
    /// Text, escaped and clipped.
    pub fn text(text: &str) -> Cell {
        Cell {
            html: clipped(text),
            value: None,
        }
    }

    /// Markup made here (already escaped).
    pub fn markup(html: String) -> Cell {
        Cell { html, value: None }
    }

    /// A figure shown as `shown`, sorted by `value`.
    pub fn figure(shown: &str, value: f64) -> Cell {
        Cell {
            html: esc(shown),
            value: value.is_finite().then_some(value),
        }
    }

    /// A duration in milliseconds, scaled ([`crate::text::ms`]).
    pub fn ms(value: f64) -> Cell {
        Cell::figure(&crate::text::ms(value), value)
    }

    /// An optional duration: `–` without one.
    pub fn opt_ms(value: Option<f64>) -> Cell {
        value.map_or_else(|| Cell::text("–"), Cell::ms)
    }
}

impl Table {
    /// A table with these column headings; `sortable` lets a click on a heading sort it.
    pub fn new(class: &str, headings: &[&str]) -> Table {
        let mut html = format!("<table class=\"{}\"><thead><tr>", esc(class));
        for h in headings {
            let _ = write!(html, "<th>{}</th>", esc(h));
        }
        html.push_str("</tr></thead><tbody>");
        Table { html }
    }

    /// A row of cells; `class` marks it (`total`, `failed`).
    pub fn row(&mut self, class: &str, cells: Vec<Cell>) {
        if class.is_empty() {
            self.html.push_str("<tr>");
        } else {
            let _ = write!(self.html, "<tr class=\"{}\">", esc(class));
        }
        for cell in cells {
            match cell.value {
                Some(v) => {
                    let _ = write!(
                        self.html,
                        "<td class=\"n\" data-v=\"{v}\">{}</td>",
                        cell.html
                    );
                }
                None => {
                    let _ = write!(self.html, "<td>{}</td>", cell.html);
                }
            }
        }
        self.html.push_str("</tr>");
    }

    /// The table's markup.
    pub fn finish(mut self) -> String {
        self.html.push_str("</tbody></table>");
        self.html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped_and_long_text_is_cut() {
        assert_eq!(
            esc("</script><img src=x onerror='a()'>&\"\u{1b}"),
            "&lt;/script&gt;&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;&quot;\\u{1b}"
        );
        let long = "x".repeat(MAX_SHOWN_CHARS + 10);
        let shown = clipped(&long);
        assert!(shown.starts_with(&"x".repeat(MAX_SHOWN_CHARS)));
        assert!(shown.contains("10 more bytes"), "{shown}");
    }

    #[test]
    fn numbers_in_pictures_are_always_finite() {
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(f64::INFINITY), "0");
        assert_eq!(num(1e300), "1000000");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(-3.0), "-3");
    }
}
