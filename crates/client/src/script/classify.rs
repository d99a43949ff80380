//! What one statement of a script is: SQL, by its first keyword (after an optional `@{…}`
//! statement hint), or one of the client statements the runner carries out itself.

use std::time::Duration;

use super::error::{ScriptError, Unclosed, excerpt};
use super::lex::{Lexer, Token, TokenKind};
use super::mutate;
use super::read::{self, KeyRead};
use super::split::Piece;
use crate::proto::google::spanner::v1 as pb;
use crate::units;

/// The longest SLEEP a script may hold its transaction open for.
pub const MAX_SLEEP: Duration = Duration::from_secs(60);

/// What a statement is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// SELECT, WITH or `(`.
    Query,
    /// INSERT, UPDATE or DELETE.
    Dml,
    /// `START BATCH DML`.
    StartBatch,
    /// `RUN BATCH`.
    RunBatch,
    /// `ABORT BATCH`.
    AbortBatch,
    /// `SLEEP <duration>`.
    Sleep(Duration),
    /// `MUTATE …`.
    Mutate(pb::Mutation),
    /// `READ …`.
    Read(KeyRead),
}

/// What a script may hold, for the errors that refuse a statement.
const ALLOWED: &str = "a script holds queries (SELECT, WITH), DML (INSERT, UPDATE, DELETE) and the \
     client statements START BATCH DML, RUN BATCH, ABORT BATCH, SLEEP, MUTATE and READ";

/// The first words of DDL statements.
const DDL: &[&str] = &[
    "CREATE", "ALTER", "DROP", "RENAME", "GRANT", "REVOKE", "ANALYZE",
];

/// What `piece` is. Only a client statement is lexed to its end; SQL, to its first keyword.
pub(super) fn classify(piece: &Piece<'_>) -> Result<Kind, ScriptError> {
    let mut lexer = Lexer::new(piece.text, piece.line);
    let not_allowed = |reason: String| ScriptError::NotAllowed {
        line: piece.line,
        excerpt: excerpt(piece.text),
        reason,
    };
    let mut keyword = lexer.next().transpose()?;
    let hinted = keyword.is_some_and(|t| t.kind == TokenKind::Punct('@'));
    if hinted {
        skip_hint(piece, &mut lexer)?;
        keyword = lexer.next().transpose()?;
    }
    let Some(keyword) = keyword else {
        return Err(not_allowed(format!(
            "a hint without a statement: {ALLOWED}"
        )));
    };
    if keyword.kind == TokenKind::Punct('(') {
        return Ok(Kind::Query);
    }
    let word = if keyword.kind == TokenKind::Word {
        keyword.text.to_ascii_uppercase()
    } else {
        String::new()
    };
    match word.as_str() {
        "SELECT" | "WITH" => Ok(Kind::Query),
        "INSERT" | "UPDATE" | "DELETE" => Ok(Kind::Dml),
        "START" | "RUN" | "ABORT" | "SLEEP" | "MUTATE" | "READ" if !hinted => {
            let tokens = std::iter::once(Ok(keyword)).chain(lexer);
            client_statement(piece, tokens.collect::<Result<_, _>>()?)
        }
        w if DDL.contains(&w) => Err(not_allowed("DDL cannot run inside a transaction".into())),
        "BEGIN" | "COMMIT" | "ROLLBACK" => Err(not_allowed(
            "spanprof begins and commits the transaction itself: a script holds only the \
             statements inside it"
                .into(),
        )),
        _ => Err(not_allowed(format!(
            "not a statement a script can run: {ALLOWED}"
        ))),
    }
}

/// Moves `lexer` past a statement hint `@{…}` whose `@` it has read.
fn skip_hint(piece: &Piece<'_>, lexer: &mut Lexer<'_>) -> Result<(), ScriptError> {
    let unterminated = || ScriptError::Unterminated {
        line: piece.line,
        what: Unclosed::Hint,
        excerpt: excerpt(piece.text),
    };
    if lexer.next().transpose()?.map(|t| t.kind) != Some(TokenKind::Punct('{')) {
        return Err(unterminated());
    }
    for token in lexer {
        if token?.kind == TokenKind::Punct('}') {
            return Ok(());
        }
    }
    Err(unterminated())
}

/// START BATCH DML, RUN BATCH, ABORT BATCH, SLEEP, MUTATE or READ.
fn client_statement(piece: &Piece<'_>, tokens: Vec<Token<'_>>) -> Result<Kind, ScriptError> {
    let words = |expected: &[&str]| {
        tokens.len() == expected.len() && tokens.iter().zip(expected).all(|(t, w)| t.is_word(w))
    };
    let first = tokens.first().map(|t| t.text.to_ascii_uppercase());
    let kind = match first.as_deref() {
        Some("SLEEP") => return sleep(piece, &tokens),
        Some("MUTATE") => return mutate::mutation(piece.text, tokens).map(Kind::Mutate),
        Some("READ") => return read::read(piece.text, piece.line, tokens).map(Kind::Read),
        _ if words(&["START", "BATCH", "DML"]) => Kind::StartBatch,
        _ if words(&["RUN", "BATCH"]) => Kind::RunBatch,
        _ if words(&["ABORT", "BATCH"]) => Kind::AbortBatch,
        _ if words(&["START", "BATCH", "DDL"]) => {
            return Err(ScriptError::NotAllowed {
                line: piece.line,
                excerpt: excerpt(piece.text),
                reason: "DDL cannot run inside a transaction".into(),
            });
        }
        _ => {
            return Err(ScriptError::UnknownClientStatement {
                line: piece.line,
                excerpt: excerpt(piece.text),
            });
        }
    };
    Ok(kind)
}

/// `SLEEP <duration>`: more than nothing, at most [`MAX_SLEEP`].
fn sleep(piece: &Piece<'_>, tokens: &[Token<'_>]) -> Result<Kind, ScriptError> {
    let problem = |problem: String| ScriptError::Sleep {
        line: piece.line,
        excerpt: excerpt(piece.text),
        problem,
    };
    let (Some(first), Some(last)) = (tokens.get(1), tokens.last()) else {
        return Err(problem(
            "SLEEP takes a duration, like 50ms, 1.5s or 250us".into(),
        ));
    };
    let text = &piece.text[first.start..last.end()];
    let duration = duration(text).map_err(|reason| {
        problem(format!(
            "`{text}` is not a duration: {reason} (write it like 50ms, 1.5s or 250us)"
        ))
    })?;
    if duration.is_zero() {
        return Err(problem("a SLEEP lasts more than 0".into()));
    }
    if duration > MAX_SLEEP {
        return Err(problem(format!(
            "a SLEEP lasts at most {} s (Spanner may abort a transaction idle for longer than 10 s)",
            MAX_SLEEP.as_secs()
        )));
    }
    Ok(Kind::Sleep(duration))
}

/// A decimal number and a unit of time (`units::TIME_UNITS`' spellings, and `m` for minutes):
/// `50ms`, `1.5 s`; anything past [`MAX_SLEEP`] is kept just past it, never overflowing.
fn duration(text: &str) -> Result<Duration, &'static str> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or("it has no unit")?;
    let (number, unit) = text.split_at(split);
    let nanos_per = match unit.trim() {
        "m" => units::nanos_per("min"),
        unit => units::nanos_per(unit),
    }
    .ok_or("the unit is not one of us, ms, s, m")?;
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return Err("it does not start with a number");
    }
    let value: f64 = number
        .parse()
        .map_err(|_| "it does not start with a number")?;
    let nanos = (value * nanos_per as f64).round();
    let longest = (MAX_SLEEP.as_nanos() + 1) as f64;
    Ok(Duration::from_nanos(nanos.min(longest) as u64))
}
