//! GoogleSQL's `THEN RETURN` as SQLite's `RETURNING`, found among the bare words of the SQL.

/// GoogleSQL's `THEN RETURN` as SQLite's `RETURNING`: the two words, outside quotes and comments,
/// become one. Everything else is left as written.
pub fn then_return(sql: &str) -> std::borrow::Cow<'_, str> {
    let words = words_outside_quotes(sql);
    let at = words.windows(2).find(|w| {
        sql[w[0].0..w[0].1].eq_ignore_ascii_case("then")
            && sql[w[1].0..w[1].1].eq_ignore_ascii_case("return")
            && sql[w[0].1..w[1].0].chars().all(char::is_whitespace)
    });
    match at {
        Some(w) => format!("{}RETURNING{}", &sql[..w[0].0], &sql[w[1].1..]).into(),
        None => sql.into(),
    }
}

/// The byte ranges of the bare words of `sql` (letters, digits, `_`), skipping quoted strings and
/// names and comments.
fn words_outside_quotes(sql: &str) -> Vec<(usize, usize)> {
    let bytes = sql.as_bytes();
    let mut words = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' | b'"' | b'`' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                words.push((start, i));
            }
            _ => i += 1,
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn then_return_becomes_returning_outside_quotes_only() {
        assert_eq!(
            then_return("UPDATE Accounts SET Balance = 1 WHERE AccountId = 1 THEN  RETURN Balance"),
            "UPDATE Accounts SET Balance = 1 WHERE AccountId = 1 RETURNING Balance"
        );
        let quoted = "SELECT 'then return' AS x -- then return\n";
        assert_eq!(then_return(quoted), quoted);
        assert_eq!(
            then_return("DELETE FROM Accounts WHERE AccountId = 3 then return *"),
            "DELETE FROM Accounts WHERE AccountId = 3 RETURNING *"
        );
    }
}
