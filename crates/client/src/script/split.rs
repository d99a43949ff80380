//! A script cut into its statements at each `;` the lexer sees (never one inside a string, a
//! backquoted identifier or a comment). A statement runs from its first token to its last: the
//! comments and white space around it are left out, so statements joined again with `;` cut the
//! same way. Empty statements (`;;`, a trailing `;`, a comment alone) are skipped.

use super::MAX_STATEMENTS;
use super::error::ScriptError;
use super::lex::{Lexer, TokenKind};

/// One statement of a script, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Piece<'a> {
    /// Its text, from its first token to its last.
    pub text: &'a str,
    /// The 1-based line its first token is on.
    pub line: u32,
}

/// The statements of `script`, at most [`MAX_STATEMENTS`] of them.
pub(super) fn split(script: &str) -> Result<Vec<Piece<'_>>, ScriptError> {
    let mut pieces = Vec::new();
    // The first token's start and line, and the last token's end, of the statement being read.
    let mut open: Option<(usize, u32, usize)> = None;
    let mut close = |open: &mut Option<(usize, u32, usize)>| -> Result<(), ScriptError> {
        if let Some((start, line, end)) = open.take() {
            if pieces.len() == MAX_STATEMENTS {
                return Err(ScriptError::TooManyStatements { line });
            }
            pieces.push(Piece {
                text: &script[start..end],
                line,
            });
        }
        Ok(())
    };
    for token in Lexer::new(script, 1) {
        let token = token?;
        if token.kind == TokenKind::Punct(';') {
            close(&mut open)?;
        } else {
            let (start, line) = open.map_or((token.start, token.line), |(s, l, _)| (s, l));
            open = Some((start, line, token.end()));
        }
    }
    close(&mut open)?;
    Ok(pieces)
}
