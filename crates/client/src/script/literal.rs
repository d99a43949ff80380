//! The literals a MUTATE statement writes, read as GoogleSQL reads them and turned into the
//! values Spanner's mutations carry (through `wire::encode_value`, the one place that knows how
//! each type travels): integers as INT64 (a string on the wire), other numbers as FLOAT64 (a
//! number), quoted strings as STRING, `b'…'` as BYTES (base64), TRUE/FALSE, NULL, `DATE '…'`,
//! `TIMESTAMP '…'`, `NUMERIC '…'` and `JSON '…'` as their text, and `[…]` as an ARRAY.

use super::lex::{Quoting, Token, TokenKind, body};
use crate::wire::Value;

/// The types whose literal is the type's name and a string, sent as that string.
const TYPED_STRINGS: &[&str] = &["DATE", "TIMESTAMP", "NUMERIC", "JSON"];

/// What a literal may be, for the errors that expected one.
pub(super) const EXPECTED: &str = "a literal (a number, a quoted string, b'bytes', TRUE, FALSE, NULL, \
     DATE/TIMESTAMP/NUMERIC/JSON 'text' or [an array])";

/// Why a literal cannot be read: the problem, and the token it is at.
pub(super) struct LiteralError<'a> {
    /// What is wrong.
    pub problem: String,
    /// The token it is at (`None`: the statement ended).
    pub at: Option<Token<'a>>,
}

impl<'a> LiteralError<'a> {
    fn at(token: Token<'a>, problem: impl Into<String>) -> Self {
        LiteralError {
            problem: problem.into(),
            at: Some(token),
        }
    }
}

/// Reads one literal from `tokens`, an array's elements with it.
pub(super) fn literal<'a>(
    tokens: &mut std::iter::Peekable<impl Iterator<Item = Token<'a>>>,
) -> Result<Value, LiteralError<'a>> {
    scalar_or_array(tokens, true)
}

fn scalar_or_array<'a>(
    tokens: &mut std::iter::Peekable<impl Iterator<Item = Token<'a>>>,
    array_allowed: bool,
) -> Result<Value, LiteralError<'a>> {
    let Some(token) = tokens.next() else {
        return Err(LiteralError {
            problem: format!("expected {EXPECTED}, found the end of the statement"),
            at: None,
        });
    };
    match token.kind {
        TokenKind::Punct('[') if array_allowed => array(token, tokens),
        TokenKind::Punct('[') => Err(LiteralError::at(token, "an array cannot hold an array")),
        TokenKind::Punct('-') => match tokens.next() {
            Some(number) if number.kind == TokenKind::Number => self::number(number, true),
            _ => Err(LiteralError::at(token, "expected a number after `-`")),
        },
        TokenKind::Number => number(token, false),
        TokenKind::Str(quoting) => string(token, quoting),
        TokenKind::Word => word(token, tokens),
        _ => Err(LiteralError::at(
            token,
            format!("expected {EXPECTED}, found `{}`", token.text),
        )),
    }
}

fn array<'a>(
    open: Token<'a>,
    tokens: &mut std::iter::Peekable<impl Iterator<Item = Token<'a>>>,
) -> Result<Value, LiteralError<'a>> {
    let mut items = Vec::new();
    if tokens
        .next_if(|t| t.kind == TokenKind::Punct(']'))
        .is_some()
    {
        return Ok(Value::Array(items));
    }
    loop {
        items.push(scalar_or_array(tokens, false)?);
        match tokens.next() {
            Some(t) if t.kind == TokenKind::Punct(',') => {}
            Some(t) if t.kind == TokenKind::Punct(']') => return Ok(Value::Array(items)),
            Some(t) => {
                return Err(LiteralError::at(
                    t,
                    format!("expected `,` or `]`, found `{}`", t.text),
                ));
            }
            None => {
                return Err(LiteralError::at(
                    open,
                    "the array is not closed: expected `]`",
                ));
            }
        }
    }
}

fn word<'a>(
    token: Token<'a>,
    tokens: &mut std::iter::Peekable<impl Iterator<Item = Token<'a>>>,
) -> Result<Value, LiteralError<'a>> {
    let upper = token.text.to_ascii_uppercase();
    match upper.as_str() {
        "TRUE" => return Ok(Value::Bool(true)),
        "FALSE" => return Ok(Value::Bool(false)),
        "NULL" => return Ok(Value::Null),
        _ => {}
    }
    if TYPED_STRINGS.contains(&upper.as_str()) {
        return match tokens.next() {
            Some(
                text @ Token {
                    kind: TokenKind::Str(quoting),
                    ..
                },
            ) if !quoting.bytes => string(text, quoting),
            _ => Err(LiteralError::at(
                token,
                format!("expected a quoted string after {upper}"),
            )),
        };
    }
    Err(LiteralError::at(
        token,
        format!("expected {EXPECTED}, found `{}`", token.text),
    ))
}

/// An integer (decimal or `0x` hex) as INT64, any other number as FLOAT64.
fn number(token: Token<'_>, negative: bool) -> Result<Value, LiteralError<'_>> {
    let text = token.text;
    let sign = if negative { "-" } else { "" };
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    if let Some(digits) = hex {
        return i64::from_str_radix(&format!("{sign}{digits}"), 16)
            .map(Value::Int64)
            .map_err(|_| LiteralError::at(token, format!("`{sign}{text}` is not an INT64")));
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return format!("{sign}{text}")
            .parse::<i64>()
            .map(Value::Int64)
            .map_err(|_| {
                LiteralError::at(token, format!("`{sign}{text}` is out of INT64's range"))
            });
    }
    let well_formed = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
    match format!("{sign}{text}").parse::<f64>() {
        Ok(f) if well_formed && f.is_finite() => Ok(Value::Float64(f)),
        _ => Err(LiteralError::at(
            token,
            format!("`{sign}{text}` is not a number"),
        )),
    }
}

fn string(token: Token<'_>, quoting: Quoting) -> Result<Value, LiteralError<'_>> {
    let content = body(&token);
    let decoded = if quoting.raw {
        content.as_bytes().to_vec()
    } else {
        unescape(content, quoting.bytes).map_err(|problem| LiteralError::at(token, problem))?
    };
    if quoting.bytes {
        return Ok(Value::Bytes(decoded));
    }
    String::from_utf8(decoded)
        .map(Value::String)
        .map_err(|_| LiteralError::at(token, "the string is not valid UTF-8"))
}

/// The text of a quoted string or bytes literal with its escapes read, as GoogleSQL reads them:
/// `\a \b \f \n \r \t \v \\ \? \" \' \``, `\ooo` (three octal digits), `\xhh` (two hex digits),
/// and in a string `\uhhhh` and `\Uhhhhhhhh`. In a string an octal or hex escape is a character
/// (`\xe9` is é); in bytes, a byte.
pub(super) fn unescape(content: &str, bytes: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(content.len());
    let mut chars = content.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let escape = chars.next().ok_or("a backslash ends the string")?;
        let simple = match escape {
            'a' => Some(0x07),
            'b' => Some(0x08),
            'f' => Some(0x0c),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(0x0b),
            '\\' | '?' | '"' | '\'' | '`' => Some(escape as u8),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        let (digits, radix) = match escape {
            '0'..='7' => (3, 8),
            'x' | 'X' => (2, 16),
            'u' if !bytes => (4, 16),
            'U' if !bytes => (8, 16),
            _ => return Err(format!("unknown escape `\\{escape}`")),
        };
        let mut text: String = if radix == 8 {
            escape.to_string()
        } else {
            String::new()
        };
        while text.len() < digits {
            match chars.next() {
                Some(d) if d.is_digit(radix) => text.push(d),
                _ => {
                    return Err(format!(
                        "the escape `\\{escape}` takes {} digits",
                        if radix == 8 { 3 } else { digits }
                    ));
                }
            }
        }
        let code = u32::from_str_radix(&text, radix).map_err(|e| e.to_string())?;
        if bytes {
            out.push(u8::try_from(code).map_err(|_| format!("`\\{text}` is not a byte"))?);
        } else {
            let c = char::from_u32(code)
                .ok_or_else(|| format!("U+{code:X} is not a Unicode character"))?;
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Ok(out)
}
