//! Where in the SQL a server's refusal points: the span of the query text an error names, so the
//! window can mark it in the editor and the command line underline it.
//!
//! Servers say where in several ways: Cloud Spanner and the emulator `[at LINE:COLUMN]` (both from
//! 1, the column in characters), the local instance `at offset N` (bytes from 0, as SQLite counts),
//! and a name that was not found (`Unrecognized name: Nme`, `Table not found: Nope`), which is
//! found in the text. The span runs over the word that starts there.

use std::ops::Range;

/// The byte range of `sql` that `message` points at, when it points anywhere inside `sql`.
pub fn sql_span(message: &str, sql: &str) -> Option<Range<usize>> {
    let start = line_and_column(message, sql)
        .or_else(|| offset(message, sql))
        .or_else(|| named(message, sql))?;
    Some(start..word_end(sql, start))
}

/// `[at L:C]`: line and column from 1, the column in characters.
fn line_and_column(message: &str, sql: &str) -> Option<usize> {
    let at = message.find("[at ")? + 4;
    let rest = &message[at..];
    let (line, rest) = rest.split_once(':')?;
    let column: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let (line, column) = (
        line.trim().parse::<usize>().ok()?,
        column.parse::<usize>().ok()?,
    );
    let line_start = if line <= 1 {
        0
    } else {
        sql.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let text = sql.get(line_start..)?;
    let within = text
        .char_indices()
        .nth(column.checked_sub(1)?)
        .map(|(i, _)| i)?;
    Some(line_start + within)
}

/// `at offset N`: bytes from 0.
fn offset(message: &str, sql: &str) -> Option<usize> {
    let at = message.find("at offset ")? + "at offset ".len();
    let digits: String = message[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let n = digits.parse::<usize>().ok()?;
    (n < sql.len() && sql.is_char_boundary(n)).then_some(n)
}

/// A name the message says was not found, found in the text as a whole word (any case).
fn named(message: &str, sql: &str) -> Option<usize> {
    let after = ["Unrecognized name: ", "Table not found: ", "not found: "]
        .iter()
        .find_map(|p| message.find(p).map(|i| i + p.len()))?;
    let name: String = message[after..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    if name.is_empty() {
        return None;
    }
    let lower = sql.to_lowercase();
    let wanted = name.to_lowercase();
    // Lowercasing can change byte lengths outside ASCII: only then is a match not an index of sql.
    if lower.len() != sql.len() {
        return None;
    }
    lower.match_indices(&wanted).map(|(i, _)| i).find(|&i| {
        let before = sql[..i].chars().next_back();
        let after = sql[i + wanted.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Where the word starting at `start` ends (at least one character on).
fn word_end(sql: &str, start: usize) -> usize {
    let rest = &sql[start..];
    let word: usize = rest
        .chars()
        .take_while(|c| is_word(*c))
        .map(char::len_utf8)
        .sum();
    let one = rest.chars().next().map_or(0, char::len_utf8);
    start + word.max(one)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQL: &str = "SELECT * FROM Seed23 WHERE Nme = 'x'";

    #[test]
    fn the_local_instance_s_offset_marks_the_word_there() {
        let message = "Client specified an invalid argument: Unrecognized name: Nme in SELECT * \
                       FROM Seed23 WHERE Nme = 'x' at offset 27";
        assert_eq!(sql_span(message, SQL), Some(27..30));
        assert_eq!(&SQL[27..30], "Nme");
        assert_eq!(sql_span("syntax error at offset 0", "SELEC *"), Some(0..5));
    }

    #[test]
    fn spanner_s_line_and_column_count_from_one_in_characters() {
        let sql = "SELECT *\nFROM Seed23\nWHERE Nme = 'é'";
        assert_eq!(
            sql_span("Unrecognized name: Nme [at 3:7]", sql),
            Some(27..30)
        );
        let cjk = "SELECT '東京', Nme FROM t";
        let span = sql_span("Unrecognized name: Nme [at 1:14]", cjk).expect("a span");
        assert_eq!(&cjk[span], "Nme");
    }

    #[test]
    fn a_name_not_found_is_found_as_a_whole_word() {
        let sql = "SELECT * FROM Nopes, Nope";
        let span = sql_span("Table not found: Nope (no such table: Nope)", sql).expect("span");
        assert_eq!(span, 21..25);
    }

    #[test]
    fn positions_outside_the_text_or_absent_mark_nothing() {
        assert_eq!(sql_span("at offset 999", SQL), None);
        assert_eq!(sql_span("[at 9:1]", SQL), None);
        assert_eq!(sql_span("deadline exceeded", SQL), None);
        // Inside a multi-byte character: not a boundary.
        assert_eq!(sql_span("at offset 9", "SELECT '東京'"), None);
    }
}
