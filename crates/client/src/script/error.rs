//! Why a script cannot run: each error names the line it is on and shows the statement, shortened.

use super::{MAX_SCRIPT_BYTES, MAX_STATEMENTS};
use crate::text;

/// The longest excerpt of a statement an error shows, in characters.
const EXCERPT_CHARS: usize = 60;

/// What a script left open at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unclosed {
    /// A quoted string (`'…`, `"…`, `'''…`, `"""…`).
    String,
    /// A backquoted identifier (`` `… ``).
    Identifier,
    /// A block comment (`/* …`).
    Comment,
    /// A statement hint (`@{…`).
    Hint,
}

impl std::fmt::Display for Unclosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unclosed::String => {
                "string literal (a quoted string ends on its line; use ''' or \"\"\" for several)"
            }
            Unclosed::Identifier => "backquoted identifier",
            Unclosed::Comment => "comment (/* without */)",
            Unclosed::Hint => "statement hint (@{ without })",
        })
    }
}

/// Why a script cannot run. Every error but the first two names the 1-based line it is on
/// ([`ScriptError::line`]) and shows the statement, shortened to one line of at most 60
/// characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// Nothing but spaces, comments and semicolons.
    #[error("the script has no statement")]
    Empty,
    /// More than [`MAX_SCRIPT_BYTES`].
    #[error("the script is {bytes} bytes: a script may be at most {} bytes (1 MiB)", text::count(MAX_SCRIPT_BYTES as u64))]
    TooLong {
        /// Its length.
        bytes: usize,
    },
    /// More than [`MAX_STATEMENTS`] statements.
    #[error("line {line}: the script has more than {} statements, the most a script may have", text::count(MAX_STATEMENTS as u64))]
    TooManyStatements {
        /// Where the first statement past the bound starts.
        line: u32,
    },
    /// A string, backquoted identifier, comment or hint that does not end.
    #[error("line {line}: unterminated {what}: {excerpt}")]
    Unterminated {
        /// Where it starts.
        line: u32,
        /// What it is.
        what: Unclosed,
        /// The text from where it starts.
        excerpt: String,
    },
    /// A statement that cannot run in a read-write transaction (DDL, GRAPH, BEGIN...).
    #[error("line {line}: {excerpt}: {reason}")]
    NotAllowed {
        /// Where the statement starts.
        line: u32,
        /// The statement.
        excerpt: String,
        /// Why, and what is allowed.
        reason: String,
    },
    /// `START`, `RUN` or `ABORT` followed by something the script language does not know.
    #[error(
        "line {line}: unknown client statement {excerpt}: the client statements are \
         START BATCH DML, RUN BATCH, ABORT BATCH, SLEEP <duration>, MUTATE and READ"
    )]
    UnknownClientStatement {
        /// Where the statement starts.
        line: u32,
        /// The statement.
        excerpt: String,
    },
    /// A batch used out of order: a query or client statement inside one, `RUN BATCH` without
    /// one, an empty one, one left open.
    #[error("line {line}: {excerpt}: {problem}")]
    Batch {
        /// Where the statement starts (for a batch left open, where the batch starts).
        line: u32,
        /// The statement.
        excerpt: String,
        /// What is wrong.
        problem: String,
    },
    /// `SLEEP` without a duration it can take.
    #[error("line {line}: {excerpt}: {problem}")]
    Sleep {
        /// Where the statement starts.
        line: u32,
        /// The statement.
        excerpt: String,
        /// What is wrong, and how to write one.
        problem: String,
    },
    /// A `MUTATE` statement that does not follow its grammar.
    #[error("line {line}: {excerpt}: {problem}")]
    Mutate {
        /// Where the problem is (the token, not the statement's start).
        line: u32,
        /// The statement.
        excerpt: String,
        /// What was expected and what was found, or what does not add up.
        problem: String,
    },
    /// A `READ` statement that does not follow its grammar.
    #[error("line {line}: {excerpt}: {problem}")]
    Read {
        /// Where the problem is (the token, not the statement's start).
        line: u32,
        /// The statement.
        excerpt: String,
        /// What was expected and what was found, or what does not add up.
        problem: String,
    },
}

impl ScriptError {
    /// The 1-based line the error is on, where it has one (an editor can point at it).
    pub fn line(&self) -> Option<u32> {
        match self {
            ScriptError::Empty | ScriptError::TooLong { .. } => None,
            ScriptError::TooManyStatements { line }
            | ScriptError::Unterminated { line, .. }
            | ScriptError::NotAllowed { line, .. }
            | ScriptError::UnknownClientStatement { line, .. }
            | ScriptError::Batch { line, .. }
            | ScriptError::Sleep { line, .. }
            | ScriptError::Mutate { line, .. }
            | ScriptError::Read { line, .. } => Some(*line),
        }
    }
}

/// `statement` as an error shows it: its runs of white space made one space, backquoted, cut to
/// 60 characters, control characters escaped.
pub(super) fn excerpt(statement: &str) -> String {
    let mut flat = String::new();
    for word in statement.split_whitespace() {
        if !flat.is_empty() {
            flat.push(' ');
        }
        flat.push_str(word);
        if flat.len() > EXCERPT_CHARS * 4 {
            break;
        }
    }
    match flat.char_indices().nth(EXCERPT_CHARS) {
        None => format!("`{}`", text::printable(&flat)),
        Some((end, _)) => format!("`{}…`", text::printable(&flat[..end])),
    }
}
