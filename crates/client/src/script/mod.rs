//! The script a read-write transaction runs (`spanprof profile --read-write`, its `--sql` or
//! `--script FILE`): statements separated by `;`, SQL and the client statements users know from
//! spanner-cli and spanner-mycli, parsed into the steps the runner takes inside one transaction.
//! A pure module: text in, [`Script`] or [`ScriptError`] out, never a panic. The language is
//! documented for users in `docs/commands/read-write-scripts.md`.
//!
//! - `lex.rs`: GoogleSQL's tokens as far as a script needs them (strings, comments, words).
//! - `split.rs`: the script cut at each `;` outside strings and comments.
//! - `classify.rs`: what a statement is (query, DML, a client statement; DDL and others refused).
//! - `mutate.rs` and `literal.rs`: a MUTATE statement and its literals, into a `Mutation`.
//! - `read.rs`: a READ statement, into a [`KeyRead`] (a StreamingRead by key, its lock hint).
//! - `error.rs`: [`ScriptError`], naming the line.
//!
//! Here: the steps, and the batches (`START BATCH DML` … `RUN BATCH`) put together from them.

mod classify;
mod error;
mod lex;
mod literal;
mod mutate;
mod read;
mod split;
#[cfg(test)]
mod tests;

use std::time::Duration;

use classify::Kind;
use split::Piece;

pub use classify::MAX_SLEEP;
pub use error::{ScriptError, Unclosed};
pub use read::{KeyRead, KeyValue, MAX_READ_KEYS, ReadLock};

use crate::proto::google::spanner::v1::Mutation;

/// The longest script, in bytes: 1 MiB.
pub const MAX_SCRIPT_BYTES: usize = 1 << 20;
/// The most statements a script holds, client statements included (so the most steps too).
pub const MAX_STATEMENTS: usize = 1_000;

/// A parsed script: the steps one read-write transaction takes, in order, before its commit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    /// The steps, in the order they run.
    pub steps: Vec<Step>,
}

/// One step of a script.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A query (SELECT, WITH, or a parenthesised one), read inside the transaction.
    Query(Statement),
    /// An INSERT, UPDATE or DELETE, run as it comes (ExecuteSql).
    Dml(Statement),
    /// The DML statements between `START BATCH DML` and `RUN BATCH`, sent at once
    /// (ExecuteBatchDml); never empty.
    BatchDml(Vec<Statement>),
    /// A `MUTATE` statement's mutations: buffered by the client, sent with the commit.
    Mutate(Vec<Mutation>),
    /// `SLEEP <duration>`: think time, the transaction held open; more than 0, at most
    /// [`MAX_SLEEP`].
    Sleep(Duration),
    /// `READ table (columns) KEY (…)`: rows read by key (StreamingRead), with a lock hint.
    Read(KeyRead),
}

impl Step {
    /// Whether it is a request to the server before the commit (a statement, a batch or a read:
    /// what can begin the transaction inline).
    pub fn sends(&self) -> bool {
        matches!(
            self,
            Step::Query(_) | Step::Dml(_) | Step::BatchDml(_) | Step::Read(_)
        )
    }
}

/// One SQL statement of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// Its text, from its first token to its last (the comments around it left out).
    pub sql: String,
    /// The 1-based line of the script it starts on.
    pub line: u32,
}

impl Script {
    /// The SQL statements it sends: its queries, its DML and each statement of its batches
    /// (mutations, sleeps and reads are not statements).
    pub fn statements(&self) -> usize {
        self.steps
            .iter()
            .map(|step| match step {
                Step::Query(_) | Step::Dml(_) => 1,
                Step::BatchDml(batch) => batch.len(),
                Step::Mutate(_) | Step::Sleep(_) | Step::Read(_) => 0,
            })
            .sum()
    }

    /// Whether it writes: DML, a batch or a mutation. A read-write transaction that only reads
    /// is legal (its reads lock what they read); a caller may still want to say so.
    pub fn has_writes(&self) -> bool {
        self.steps
            .iter()
            .any(|step| matches!(step, Step::Dml(_) | Step::BatchDml(_) | Step::Mutate(_)))
    }

    /// What it holds, on one line for a report: `2 DML, 1 query, 1 sleep`,
    /// `1 batch of 3 DML, 2 mutations`, `1 read, 1 DML`.
    pub fn summary(&self) -> String {
        let (mut dml, mut batches, mut batched, mut queries, mut mutations, mut sleeps) =
            (0, 0, 0, 0, 0, 0);
        let mut reads = 0;
        for step in &self.steps {
            match step {
                Step::Query(_) => queries += 1,
                Step::Dml(_) => dml += 1,
                Step::BatchDml(batch) => {
                    batches += 1;
                    batched += batch.len();
                }
                Step::Mutate(m) => mutations += m.len(),
                Step::Sleep(_) => sleeps += 1,
                Step::Read(_) => reads += 1,
            }
        }
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let parts = [
            (reads > 0).then(|| plural(reads, "read", "reads")),
            (dml > 0).then(|| format!("{dml} DML")),
            (batches > 0)
                .then(|| format!("{} of {batched} DML", plural(batches, "batch", "batches"))),
            (queries > 0).then(|| plural(queries, "query", "queries")),
            (mutations > 0).then(|| plural(mutations, "mutation", "mutations")),
            (sleeps > 0).then(|| plural(sleeps, "sleep", "sleeps")),
        ];
        let parts: Vec<String> = parts.into_iter().flatten().collect();
        if parts.is_empty() {
            "nothing".to_owned()
        } else {
            parts.join(", ")
        }
    }
}

/// Reads a script: its statements separated by `;`, each SQL (a query or DML) or a client
/// statement (`START BATCH DML`, `RUN BATCH`, `ABORT BATCH`, `SLEEP <duration>`, `MUTATE …`,
/// `READ …`).
/// At most [`MAX_SCRIPT_BYTES`] and [`MAX_STATEMENTS`]; a script without a statement, with DDL,
/// or with a batch misused is an error naming the line.
pub fn parse(text: &str) -> Result<Script, ScriptError> {
    if text.len() > MAX_SCRIPT_BYTES {
        return Err(ScriptError::TooLong { bytes: text.len() });
    }
    let mut steps = Vec::new();
    let mut batch: Option<Batch> = None;
    for piece in split::split(text)? {
        let kind = classify::classify(&piece)?;
        take(kind, &piece, &mut steps, &mut batch)?;
    }
    if let Some(open) = batch {
        return Err(ScriptError::Batch {
            line: open.line,
            excerpt: open.excerpt,
            problem: "the batch is never run: RUN BATCH (or ABORT BATCH) ends it".to_owned(),
        });
    }
    if steps.is_empty() {
        return Err(ScriptError::Empty);
    }
    Ok(Script { steps })
}

/// Takes one statement of kind `kind` into `steps`, or into the open batch.
fn take(
    kind: Kind,
    piece: &Piece<'_>,
    steps: &mut Vec<Step>,
    batch: &mut Option<Batch>,
) -> Result<(), ScriptError> {
    let statement = || Statement {
        sql: piece.text.to_owned(),
        line: piece.line,
    };
    let no_batch = || {
        batch_error(
            piece,
            "no batch is open (START BATCH DML opens one)".to_owned(),
        )
    };
    match kind {
        Kind::Dml => match batch {
            Some(open) => open.statements.push(statement()),
            None => steps.push(Step::Dml(statement())),
        },
        Kind::StartBatch => match batch {
            Some(open) => {
                let problem = format!(
                    "the batch opened on line {} is still open (RUN BATCH or ABORT BATCH ends it)",
                    open.line
                );
                return Err(batch_error(piece, problem));
            }
            None => *batch = Some(Batch::new(piece)),
        },
        Kind::RunBatch => {
            let done = batch.take().ok_or_else(no_batch)?;
            if done.statements.is_empty() {
                let problem = format!(
                    "the batch opened on line {} is empty: a batch holds DML (ABORT BATCH drops \
                     one)",
                    done.line
                );
                return Err(batch_error(piece, problem));
            }
            steps.push(Step::BatchDml(done.statements));
        }
        Kind::AbortBatch => {
            batch.take().ok_or_else(no_batch)?;
        }
        Kind::Query | Kind::Sleep(_) | Kind::Mutate(_) | Kind::Read(_) if batch.is_some() => {
            let line = batch.as_ref().map_or(0, |open| open.line);
            let problem = format!(
                "only DML can be batched, and the batch opened on line {line} is open (RUN BATCH \
                 or ABORT BATCH ends it)"
            );
            return Err(batch_error(piece, problem));
        }
        Kind::Query => steps.push(Step::Query(statement())),
        Kind::Sleep(duration) => steps.push(Step::Sleep(duration)),
        Kind::Mutate(mutation) => steps.push(Step::Mutate(vec![mutation])),
        Kind::Read(read) => steps.push(Step::Read(read)),
    }
    Ok(())
}

/// A batch being read: where it opened and its statements so far.
struct Batch {
    line: u32,
    excerpt: String,
    statements: Vec<Statement>,
}

impl Batch {
    fn new(start: &Piece<'_>) -> Self {
        Batch {
            line: start.line,
            excerpt: error::excerpt(start.text),
            statements: Vec::new(),
        }
    }
}

fn batch_error(piece: &Piece<'_>, problem: String) -> ScriptError {
    ScriptError::Batch {
        line: piece.line,
        excerpt: error::excerpt(piece.text),
        problem,
    }
}
