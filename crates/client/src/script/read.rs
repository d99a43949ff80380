//! The READ statement: rows read by key inside the transaction, sent as a StreamingRead (as the
//! official clients' `transaction.read(...)` reads), with Read's lock hint. Its grammar:
//!
//! ```text
//! READ table (column, ...) KEY (value, ...)[, (value, ...)]... [LOCK {SHARED | EXCLUSIVE}]
//! ```
//!
//! Words in any case, `KEYS` for `KEY` alike; names as MUTATE's (`mutate.rs`); a value is a
//! literal (`literal.rs`) or a parameter `@name`, bound when the transaction runs as on SQL
//! statements. At most [`MAX_READ_KEYS`] keys, each as wide as the first.

use super::error::ScriptError;
use super::lex::{Token, TokenKind};
use super::literal::{self, EXPECTED};
use super::mutate::Parser;
use crate::wire::encode_value;

/// The most keys one READ names (the built-in instance takes 10,000 in a read; a script reads
/// a few).
pub const MAX_READ_KEYS: usize = 1_000;

/// A READ statement: what it reads, and how it asks its rows to be locked.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRead {
    /// The table, as written.
    pub table: String,
    /// The columns, as written, in order.
    pub columns: Vec<String>,
    /// The keys, each a value per key column (at least one key).
    pub keys: Vec<Vec<KeyValue>>,
    /// Its `LOCK` clause.
    pub lock: ReadLock,
    /// The 1-based line of the script it starts on.
    pub line: u32,
}

/// One value of a key.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyValue {
    /// A literal, as it travels.
    Literal(prost_types::Value),
    /// `@name`: the transaction's bound parameter of that name (without `@`).
    Param(String),
}

/// Read's lock hint, as a READ asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadLock {
    /// No `LOCK` clause: the server's default (shared).
    #[default]
    Default,
    /// `LOCK SHARED`.
    Shared,
    /// `LOCK EXCLUSIVE`: exclusive locks on the rows read (in a pessimistic read-write
    /// transaction).
    Exclusive,
}

/// The read a READ statement makes: `tokens` are the statement's (`READ` first), `text` the
/// statement, starting on line `line`.
pub(super) fn read(text: &str, line: u32, tokens: Vec<Token<'_>>) -> Result<KeyRead, ScriptError> {
    let mut parser = Parser::new(text, tokens, |line, excerpt, problem| ScriptError::Read {
        line,
        excerpt,
        problem,
    });
    parser.tokens.next(); // READ
    let table = parser.name("a table name", true)?;
    let columns = parser.columns()?;
    parser.keyword(&["KEY", "KEYS"], "KEY and the keys")?;
    let keys = keys(&mut parser)?;
    let lock = if parser.tokens.peek().is_some() {
        parser.keyword(
            &["LOCK"],
            "`,` and another key, LOCK, or the end of the statement",
        )?;
        match parser.keyword(&["SHARED", "EXCLUSIVE"], "SHARED or EXCLUSIVE")? {
            "SHARED" => ReadLock::Shared,
            _ => ReadLock::Exclusive,
        }
    } else {
        ReadLock::Default
    };
    parser.end("the end of the statement")?;
    Ok(KeyRead {
        table,
        columns,
        keys,
        lock,
        line,
    })
}

/// `(value, ...)[, (value, ...)]...`: one key or more, as wide as the first, at most
/// [`MAX_READ_KEYS`].
fn keys(parser: &mut Parser<'_, '_>) -> Result<Vec<Vec<KeyValue>>, ScriptError> {
    let mut keys: Vec<Vec<KeyValue>> = Vec::new();
    loop {
        let open = parser.punct('(', "`(` and a key's values")?;
        if keys.len() == MAX_READ_KEYS {
            let problem = format!("a READ names at most {MAX_READ_KEYS} keys");
            return Err(parser.fail(Some(&open), problem));
        }
        let mut key = Vec::new();
        loop {
            key.push(value(parser)?);
            if parser
                .tokens
                .next_if(|t| t.kind == TokenKind::Punct(','))
                .is_none()
            {
                break;
            }
        }
        parser.punct(')', &format!("`,` and {EXPECTED} or @param, or `)`"))?;
        if let Some(first) = keys.first()
            && first.len() != key.len()
        {
            let problem = format!(
                "key {} has {} values where key 1 has {}",
                keys.len() + 1,
                key.len(),
                first.len()
            );
            return Err(parser.fail(Some(&open), problem));
        }
        keys.push(key);
        if parser
            .tokens
            .next_if(|t| t.kind == TokenKind::Punct(','))
            .is_none()
        {
            return Ok(keys);
        }
    }
}

/// A key's value: `@name` or a literal.
fn value(parser: &mut Parser<'_, '_>) -> Result<KeyValue, ScriptError> {
    if parser
        .tokens
        .next_if(|t| t.kind == TokenKind::Punct('@'))
        .is_some()
    {
        let name = parser.name("a parameter's name after `@`", false)?;
        return Ok(KeyValue::Param(name));
    }
    let value = literal::literal(&mut parser.tokens);
    let value = value.map_err(|e| parser.fail(e.at.as_ref(), e.problem))?;
    Ok(KeyValue::Literal(encode_value(&value)))
}
