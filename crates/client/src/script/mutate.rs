//! The MUTATE statement: a mutation written as a statement, buffered by the client and sent with
//! the commit (as spanner-cli's and spanner-mycli's users write writes without DML). Its grammar:
//!
//! ```text
//! MUTATE {INSERT | UPDATE | INSERT_OR_UPDATE | REPLACE} table (column, ...) VALUES (literal, ...)[, (literal, ...)]...
//! MUTATE DELETE table KEYS (literal, ...)[, (literal, ...)]...
//! MUTATE DELETE table ALL
//! ```
//!
//! Words in any case; a table or column is a name or a backquoted one, a table's parts joined by
//! `.` (a named schema's table); the literals are `literal.rs`'s.

use std::iter::Peekable;

use super::error::{ScriptError, excerpt};
use super::lex::{Token, TokenKind, body};
use super::literal::{self, EXPECTED};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::{Value, encode_value};

/// The mutation a MUTATE statement writes: `tokens` are the statement's (`MUTATE` first),
/// `text` the statement.
pub(super) fn mutation(text: &str, tokens: Vec<Token<'_>>) -> Result<pb::Mutation, ScriptError> {
    let mut parser = Parser::new(text, tokens, |line, excerpt, problem| ScriptError::Mutate {
        line,
        excerpt,
        problem,
    });
    parser.tokens.next(); // MUTATE
    let operation = parser.operation()?;
    Ok(pb::Mutation {
        operation: Some(operation),
    })
}

/// How a client statement's parser names a problem: the line, the statement's excerpt, what.
pub(super) type Problem = fn(u32, String, String) -> ScriptError;

/// A client statement's tokens read one by one (MUTATE's here, READ's in `read.rs`), each
/// problem made an error by the statement's [`Problem`].
pub(super) struct Parser<'a, 't> {
    pub(super) tokens: Peekable<std::vec::IntoIter<Token<'t>>>,
    text: &'a str,
    last_line: u32,
    problem: Problem,
}

/// A parenthesised list's values and the `(` it opens with.
struct Row<'t> {
    open: Token<'t>,
    values: Vec<Value>,
}

impl<'a, 't> Parser<'a, 't> {
    /// The parser of statement `text`, whose tokens are `tokens`.
    pub(super) fn new(text: &'a str, tokens: Vec<Token<'t>>, problem: Problem) -> Self {
        let last_line = tokens.last().map_or(1, |t| t.line);
        Parser {
            tokens: tokens.into_iter().peekable(),
            text,
            last_line,
            problem,
        }
    }

    /// The error `problem` at token `at` (`None`: at the statement's end).
    pub(super) fn fail(&self, at: Option<&Token<'_>>, problem: String) -> ScriptError {
        let line = at.map_or(self.last_line, |t| t.line);
        (self.problem)(line, excerpt(self.text), problem)
    }

    /// The error for the next token, which is not `what`.
    pub(super) fn expected(&mut self, what: &str) -> ScriptError {
        let next = self.tokens.peek().copied();
        let found = next.map_or_else(
            || "the end of the statement".to_owned(),
            |t| format!("`{}`", t.text),
        );
        self.fail(next.as_ref(), format!("expected {what}, found {found}"))
    }

    /// The punctuation `c`, or the error that `what` was expected.
    pub(super) fn punct(&mut self, c: char, what: &str) -> Result<Token<'t>, ScriptError> {
        match self.tokens.next_if(|t| t.kind == TokenKind::Punct(c)) {
            Some(token) => Ok(token),
            None => Err(self.expected(what)),
        }
    }

    /// One of `words` (in any case), or the error that `what` was expected.
    pub(super) fn keyword(
        &mut self,
        words: &[&'static str],
        what: &str,
    ) -> Result<&'static str, ScriptError> {
        let found = self
            .tokens
            .peek()
            .and_then(|t| words.iter().find(|w| t.is_word(w)).copied());
        match found {
            Some(word) => {
                self.tokens.next();
                Ok(word)
            }
            None => Err(self.expected(what)),
        }
    }

    fn operation(&mut self) -> Result<pb::mutation::Operation, ScriptError> {
        use pb::mutation::Operation;
        let kinds = ["INSERT", "UPDATE", "INSERT_OR_UPDATE", "REPLACE", "DELETE"];
        let kind = self.keyword(
            &kinds,
            "INSERT, UPDATE, INSERT_OR_UPDATE, REPLACE or DELETE",
        )?;
        let table = self.name("a table name", true)?;
        if kind == "DELETE" {
            return Ok(Operation::Delete(self.delete(table)?));
        }
        let write = self.write(table)?;
        self.end("`,` and another row, or the end of the statement")?;
        Ok(match kind {
            "INSERT" => Operation::Insert(write),
            "UPDATE" => Operation::Update(write),
            "INSERT_OR_UPDATE" => Operation::InsertOrUpdate(write),
            _ => Operation::Replace(write),
        })
    }

    /// A name, or a backquoted one; a table's may be several joined by `.`.
    pub(super) fn name(&mut self, what: &str, dotted: bool) -> Result<String, ScriptError> {
        let mut name = String::new();
        loop {
            let part = match self.tokens.peek().copied() {
                Some(t) if t.kind == TokenKind::Word => t.text.to_owned(),
                Some(t) if t.kind == TokenKind::Backquoted => {
                    let bytes = literal::unescape(body(&t), false)
                        .map_err(|problem| self.fail(Some(&t), problem))?;
                    String::from_utf8(bytes).map_err(|_| {
                        self.fail(Some(&t), "the name is not valid UTF-8".to_owned())
                    })?
                }
                _ => return Err(self.expected(what)),
            };
            self.tokens.next();
            name.push_str(&part);
            if !dotted
                || self
                    .tokens
                    .next_if(|t| t.kind == TokenKind::Punct('.'))
                    .is_none()
            {
                return Ok(name);
            }
            name.push('.');
        }
    }

    /// `(column, ...)`: one column or more, none named twice.
    pub(super) fn columns(&mut self) -> Result<Vec<String>, ScriptError> {
        self.punct('(', "`(` and the columns")?;
        let mut columns: Vec<String> = Vec::new();
        loop {
            let at = self.tokens.peek().copied();
            let column = self.name("a column name", false)?;
            if columns.iter().any(|c| c.eq_ignore_ascii_case(&column)) {
                return Err(self.fail(at.as_ref(), format!("the column {column} is named twice")));
            }
            columns.push(column);
            if self
                .tokens
                .next_if(|t| t.kind == TokenKind::Punct(','))
                .is_none()
            {
                break;
            }
        }
        self.punct(')', "`,` or `)`")?;
        Ok(columns)
    }

    fn write(&mut self, table: String) -> Result<pb::mutation::Write, ScriptError> {
        let columns = self.columns()?;
        self.keyword(&["VALUES"], "VALUES")?;
        let rows = self.rows("row")?;
        for (at, row) in rows.iter().enumerate() {
            if row.values.len() != columns.len() {
                return Err(self.fail(
                    Some(&row.open),
                    format!(
                        "row {} has {} values for {} columns",
                        at + 1,
                        row.values.len(),
                        columns.len()
                    ),
                ));
            }
        }
        Ok(pb::mutation::Write {
            table,
            columns,
            values: rows.into_iter().map(|r| list(r.values)).collect(),
        })
    }

    fn delete(&mut self, table: String) -> Result<pb::mutation::Delete, ScriptError> {
        let mut key_set = pb::KeySet::default();
        if self.keyword(&["KEYS", "ALL"], "KEYS or ALL")? == "ALL" {
            key_set.all = true;
            self.end("the end of the statement")?;
        } else {
            let keys = self.rows("key")?;
            let width = keys.first().map_or(0, |k| k.values.len());
            if let Some((at, key)) = keys
                .iter()
                .enumerate()
                .find(|(_, k)| k.values.len() != width)
            {
                return Err(self.fail(
                    Some(&key.open),
                    format!(
                        "key {} has {} values where key 1 has {width}",
                        at + 1,
                        key.values.len()
                    ),
                ));
            }
            key_set.keys = keys.into_iter().map(|k| list(k.values)).collect();
            self.end("`,` and another key, or the end of the statement")?;
        }
        Ok(pb::mutation::Delete {
            table,
            key_set: Some(key_set),
        })
    }

    /// `(literal, ...)[, (literal, ...)]...`: one row or key or more.
    fn rows(&mut self, what: &str) -> Result<Vec<Row<'t>>, ScriptError> {
        let mut rows = Vec::new();
        loop {
            let open = self.punct('(', &format!("`(` and a {what}'s values"))?;
            let mut values = Vec::new();
            loop {
                let value = literal::literal(&mut self.tokens)
                    .map_err(|e| self.fail(e.at.as_ref(), e.problem))?;
                values.push(value);
                if self
                    .tokens
                    .next_if(|t| t.kind == TokenKind::Punct(','))
                    .is_none()
                {
                    break;
                }
            }
            self.punct(')', &format!("`,` and {EXPECTED}, or `)`"))?;
            rows.push(Row { open, values });
            if self
                .tokens
                .next_if(|t| t.kind == TokenKind::Punct(','))
                .is_none()
            {
                return Ok(rows);
            }
        }
    }

    /// The statement's end, or the error that `what` was expected.
    pub(super) fn end(&mut self, what: &str) -> Result<(), ScriptError> {
        match self.tokens.peek() {
            None => Ok(()),
            Some(_) => Err(self.expected(what)),
        }
    }
}

fn list(values: Vec<Value>) -> prost_types::ListValue {
    prost_types::ListValue {
        values: values.iter().map(encode_value).collect(),
    }
}
