//! GoogleSQL's lexing, as far as a script needs it: where a statement ends (a `;` outside strings,
//! backquoted identifiers and comments) and, for the client statements, their words, literals and
//! punctuation. Strings are single- or double-quoted, or tripled (`'''…'''`, `"""…"""`, which
//! alone may span lines), with an optional `r`, `b`, `rb` or `br` prefix in either case; a
//! backslash always takes the next character with it (in a raw string too, as GoogleSQL lexes).
//! Comments are `-- …` and `# …` to the end of the line and `/* … */`. Anything else is a
//! character of punctuation: the lexer never refuses SQL it does not know, only what does not end.

use super::error::{ScriptError, Unclosed, excerpt};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TokenKind {
    /// A word: `[A-Za-z_][A-Za-z0-9_]*`.
    Word,
    /// A backquoted identifier, quotes included.
    Backquoted,
    /// A string literal, prefix and quotes included.
    Str(Quoting),
    /// A number: a digit (or `.` then a digit) and the letters, digits, dots and exponent signs
    /// after it (`42`, `1.5e-3`, `0x1F`, and `50ms`, which only SLEEP takes).
    Number,
    /// Any other character.
    Punct(char),
}

/// How a string literal is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Quoting {
    /// `r`: backslashes are kept as written.
    pub raw: bool,
    /// `b`: a BYTES literal.
    pub bytes: bool,
    /// The prefix's length in bytes (0, 1 or 2).
    pub prefix: usize,
    /// The length of its opening (and closing) quotes: 1 or 3.
    pub quotes: usize,
}

/// One token: what it is, its text and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token<'a> {
    /// What it is.
    pub kind: TokenKind,
    /// Its text as written.
    pub text: &'a str,
    /// Its first byte in the text lexed.
    pub start: usize,
    /// The 1-based line it starts on.
    pub line: u32,
}

impl Token<'_> {
    /// The byte after its last.
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }

    /// Whether it is the word `word`, in any case.
    pub fn is_word(&self, word: &str) -> bool {
        self.kind == TokenKind::Word && self.text.eq_ignore_ascii_case(word)
    }
}

/// The tokens of a text, comments and white space skipped; after an error, nothing more.
pub(super) struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    line: u32,
    failed: bool,
}

impl<'a> Lexer<'a> {
    /// Lexes `text`, whose first line is line `line` of the script.
    pub fn new(text: &'a str, line: u32) -> Self {
        Lexer {
            text,
            pos: 0,
            line,
            failed: false,
        }
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.text[self.pos..].chars().nth(ahead)
    }

    fn starts_with(&self, s: &str) -> bool {
        self.text[self.pos..].starts_with(s)
    }

    /// Moves past one character, counting lines.
    fn bump(&mut self) -> Option<char> {
        let c = self.text[self.pos..].chars().next()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line = self.line.saturating_add(1);
        }
        Some(c)
    }

    fn unterminated(&mut self, what: Unclosed, start: usize, line: u32) -> ScriptError {
        self.failed = true;
        ScriptError::Unterminated {
            line,
            what,
            excerpt: excerpt(&self.text[start..]),
        }
    }

    /// Skips white space and comments.
    fn skip_blank(&mut self) -> Result<(), ScriptError> {
        loop {
            match self.peek(0) {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('#') => self.skip_line(),
                Some('-') if self.starts_with("--") => self.skip_line(),
                Some('/') if self.starts_with("/*") => {
                    let (start, line) = (self.pos, self.line);
                    self.pos += 2;
                    loop {
                        if self.starts_with("*/") {
                            self.pos += 2;
                            break;
                        }
                        if self.bump().is_none() {
                            return Err(self.unterminated(Unclosed::Comment, start, line));
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.peek(0) {
            if c == '\n' {
                return;
            }
            self.bump();
        }
    }

    /// Moves past a quoted run that opens at `self.pos` with `quotes` copies of `quote`, to its
    /// closing quotes; a backslash takes the next character with it. Only a tripled run may hold
    /// a line break.
    fn skip_quoted(
        &mut self,
        quote: char,
        quotes: usize,
        what: Unclosed,
    ) -> Result<(), ScriptError> {
        let (start, line) = (self.pos, self.line);
        self.pos += quotes;
        let closing: String = std::iter::repeat_n(quote, quotes).collect();
        loop {
            if self.starts_with(&closing) {
                self.pos += quotes;
                return Ok(());
            }
            match self.bump() {
                None => return Err(self.unterminated(what, start, line)),
                Some('\n') if quotes == 1 => return Err(self.unterminated(what, start, line)),
                Some('\\') => match self.bump() {
                    Some('\n') if quotes == 1 => {
                        return Err(self.unterminated(what, start, line));
                    }
                    None => return Err(self.unterminated(what, start, line)),
                    Some(_) => {}
                },
                Some(_) => {}
            }
        }
    }

    /// A string literal whose prefix (`prefix` bytes, already passed) ends at `self.pos`.
    fn string(&mut self, prefix: &str) -> Result<TokenKind, ScriptError> {
        let quote = self.peek(0).unwrap_or('\'');
        let quotes = if self.peek(1) == Some(quote) && self.peek(2) == Some(quote) {
            3
        } else {
            1
        };
        let lower = prefix.to_ascii_lowercase();
        self.skip_quoted(quote, quotes, Unclosed::String)?;
        Ok(TokenKind::Str(Quoting {
            raw: lower.contains('r'),
            bytes: lower.contains('b'),
            prefix: prefix.len(),
            quotes,
        }))
    }

    fn word(&mut self) -> Result<TokenKind, ScriptError> {
        let start = self.pos;
        while self
            .peek(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        let prefix = matches!(word.to_ascii_lowercase().as_str(), "r" | "b" | "rb" | "br");
        if prefix && matches!(self.peek(0), Some('\'' | '"')) {
            return self.string(word);
        }
        Ok(TokenKind::Word)
    }

    fn number(&mut self) -> TokenKind {
        let start = self.pos;
        let hex = self.starts_with("0x") || self.starts_with("0X");
        while let Some(c) = self.peek(0) {
            let after_exponent =
                !hex && matches!(c, '+' | '-') && self.text[start..self.pos].ends_with(['e', 'E']);
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || after_exponent {
                self.pos += 1;
            } else {
                break;
            }
        }
        TokenKind::Number
    }

    fn token(&mut self) -> Result<Option<Token<'a>>, ScriptError> {
        self.skip_blank()?;
        let (start, line) = (self.pos, self.line);
        let Some(c) = self.peek(0) else {
            return Ok(None);
        };
        let kind = match c {
            '\'' | '"' => self.string("")?,
            '`' => {
                self.skip_quoted('`', 1, Unclosed::Identifier)?;
                TokenKind::Backquoted
            }
            c if c.is_ascii_alphabetic() || c == '_' => self.word()?,
            c if c.is_ascii_digit() => self.number(),
            '.' if self.peek(1).is_some_and(|d| d.is_ascii_digit()) => self.number(),
            c => {
                self.bump();
                TokenKind::Punct(c)
            }
        };
        Ok(Some(Token {
            kind,
            text: &self.text[start..self.pos],
            start,
            line,
        }))
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Token<'a>, ScriptError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        self.token().transpose()
    }
}

/// The text between a string literal's (or backquoted identifier's) quotes.
pub(super) fn body<'a>(token: &Token<'a>) -> &'a str {
    let (prefix, quotes) = match token.kind {
        TokenKind::Str(q) => (q.prefix, q.quotes),
        TokenKind::Backquoted => (0, 1),
        _ => return token.text,
    };
    token
        .text
        .get(prefix + quotes..token.text.len().saturating_sub(quotes))
        .unwrap_or_default()
}
