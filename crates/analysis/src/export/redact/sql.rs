//! The SQL read as GoogleSQL tokens for redaction: string and bytes literals (quoted,
//! triple-quoted, raw) and numbers become `?`, comments are left out, identifiers, keywords and
//! `@parameters` stay. Each literal and comment is returned as the texts a server could echo of
//! it: as written, with its escapes decoded (`'\x45'` comes back as `E`), and a hex number in
//! decimal (`int64 overflow: 9223372036854775792 + ...`).

/// The SQL with its literals as `?` (strings `'?'`, bytes `b'?'`, numbers `?`) and its comments
/// left out, and the texts taken out.
pub(super) fn redact(sql: &str) -> (String, Vec<String>) {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut secrets = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // Comments: -- and # to the line's end, /* */. A comment says what its writer meant,
        // which can be as secret as a literal: an error quoting the query's line shows it.
        if (c == '-' && next == Some('-')) || c == '#' {
            let start = i + if c == '#' { 1 } else { 2 };
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            comment(&chars[start.min(i)..i], &mut secrets);
            continue;
        }
        if c == '/' && next == Some('*') {
            let start = i + 2;
            i = start;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            comment(&chars[start.min(i)..i], &mut secrets);
            i = (i + 2).min(chars.len());
            out.push(' ');
            continue;
        }
        // Quoted identifiers stay as written.
        if c == '`' {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == '`')
                .unwrap_or(chars.len() - 1);
            out.extend(&chars[i..=end]);
            i = end + 1;
            continue;
        }
        // Identifiers and keywords, with the string prefixes r, b, rb, br.
        if c.is_alphabetic() || c == '_' || c == '@' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let prefix = word.to_ascii_lowercase();
            let quoted = chars.get(i).is_some_and(|&q| q == '\'' || q == '"');
            if quoted && matches!(prefix.as_str(), "r" | "b" | "rb" | "br") {
                let literal = string_literal(&chars, i);
                literal.secrets(prefix.contains('r'), &mut secrets);
                out.push_str(&word);
                out.push_str("'?'");
                i = literal.end;
            } else {
                out.push_str(&word);
            }
            continue;
        }
        if c == '\'' || c == '"' {
            let literal = string_literal(&chars, i);
            literal.secrets(false, &mut secrets);
            out.push_str("'?'");
            i = literal.end;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '+' || chars[i] == '-') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            if let Some(decimal) = hex_in_decimal(&text) {
                secrets.push(decimal);
            }
            secrets.push(text);
            out.push('?');
            continue;
        }
        out.push(c);
        i += 1;
    }
    (out, secrets)
}

/// A comment's text, whole and line by line (an error quotes one line of the query).
fn comment(body: &[char], secrets: &mut Vec<String>) {
    let body: String = body.iter().collect();
    secrets.extend(body.lines().map(|line| line.trim().to_owned()));
    secrets.push(body.trim().to_owned());
}

/// A string literal found in the SQL.
struct Literal {
    /// Where it ends (past its closing quotes).
    end: usize,
    /// Its contents as written, between the quotes.
    written: String,
}

impl Literal {
    /// The texts a server could echo of it: as written, and (unless raw) with its escapes decoded,
    /// whole and in the pieces between the characters a server might escape again.
    fn secrets(&self, raw: bool, secrets: &mut Vec<String>) {
        secrets.push(self.written.clone());
        if raw {
            return;
        }
        let decoded = decode_escapes(&self.written);
        secrets.extend(
            decoded
                .split(|c: char| c.is_control() || matches!(c, '\\' | '\'' | '"' | '`'))
                .filter(|piece| piece.chars().count() >= 3)
                .map(str::to_owned),
        );
        secrets.push(decoded);
    }
}

/// The string literal opening at `start` (a quote, or three).
fn string_literal(chars: &[char], start: usize) -> Literal {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let open = if triple { 3 } else { 1 };
    let mut i = start + open;
    while i < chars.len() {
        let c = chars[i];
        // In a raw string too, a backslash keeps the quote after it from closing the literal.
        if c == '\\' {
            i += 2;
            continue;
        }
        let closes = if triple {
            c == quote && chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)
        } else {
            c == quote
        };
        if closes {
            return Literal {
                end: i + open,
                written: chars[start + open..i].iter().collect(),
            };
        }
        i += 1;
    }
    let from = (start + open).min(chars.len());
    Literal {
        end: chars.len(),
        written: chars[from..].iter().collect(),
    }
}

/// A literal's contents with GoogleSQL's escapes decoded: `\a \b \f \n \r \t \v \\ \? \" \' \``,
/// `\xhh`, `\ooo` (octal), `\uhhhh`, `\Uhhhhhhhh`. An escape that is not one is kept as written.
pub(super) fn decode_escapes(written: &str) -> String {
    let chars: Vec<char> = written.chars().collect();
    let mut out = String::with_capacity(written.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' || i + 1 == chars.len() {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let e = chars[i + 1];
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '?' | '"' | '\'' | '`' => Some(e),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            i += 2;
            continue;
        }
        let (digits, radix, skip) = match e {
            'x' | 'X' => (2, 16, 2),
            'u' => (4, 16, 2),
            'U' => (8, 16, 2),
            '0'..='7' => (3, 8, 1),
            _ => (0, 16, 0),
        };
        let from = i + skip;
        let code: Option<char> = chars
            .get(from..from + digits)
            .filter(|d| digits > 0 && d.iter().all(|c| c.is_digit(radix)))
            .map(|d| d.iter().collect::<String>())
            .and_then(|d| u32::from_str_radix(&d, radix).ok())
            .and_then(char::from_u32);
        match code {
            Some(c) => {
                out.push(c);
                i = from + digits;
            }
            None => {
                out.push('\\');
                i += 1;
            }
        }
    }
    out
}

/// A hex integer literal's value in decimal, as a server prints it (`0x1F`: `31`); `None` for
/// any other number, or one too long for any integer a server holds (it echoes those as written).
fn hex_in_decimal(text: &str) -> Option<String> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))?;
    u128::from_str_radix(digits, 16).ok().map(|v| v.to_string())
}
