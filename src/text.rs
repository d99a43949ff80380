//! Text that reaches a terminal: labels and names from the command line, report files and the
//! network, written so that they print as what they are.

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
