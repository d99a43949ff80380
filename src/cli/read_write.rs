//! `spanprof profile --read-write`: each iteration's statements (`--sql`, separated by `;`, or a
//! `--script FILE`) run as one read-write transaction and committed, with the transaction's options
//! and its retry policy. The script language is docs/commands/read-write-scripts.md's.

use std::path::PathBuf;

use anyhow::Context as _;

use crate::client::read_write::{BeginMode, Isolation, LockMode, ReadWriteOptions, RetryPolicy};
use crate::client::timeouts::parse_duration;
use crate::engine::{QueryMode, ReadWrite, Variant};

/// The read-write arguments of `spanprof profile`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReadWriteArgs {
    /// Run each iteration's (load: each request's) statements as one read-write transaction and
    /// commit it: --sql holds the script (statements separated by `;`), or --script FILE.
    #[arg(long)]
    pub read_write: bool,
    /// A read-write script from a file (instead of --sql): statements separated by `;`, with
    /// START BATCH DML / RUN BATCH, MUTATE and SLEEP (docs/commands/read-write-scripts.md).
    #[arg(long, value_name = "FILE", requires = "read_write")]
    pub script: Option<PathBuf>,
    /// The isolation level: serializable or repeatable-read (default: the server's, serializable).
    #[arg(long, value_enum, requires = "read_write")]
    pub isolation: Option<IsolationArg>,
    /// How reads lock: pessimistic or optimistic (default: the server's, pessimistic).
    #[arg(long, value_enum, requires = "read_write")]
    pub lock_mode: Option<LockModeArg>,
    /// How the transaction begins: inline (with its first statement, the default) or explicit
    /// (BeginTransaction first).
    #[arg(long, value_enum, requires = "read_write")]
    pub begin: Option<BeginArg>,
    /// The commit's max_commit_delay (0ms to 500ms): Spanner may hold the commit that long to
    /// batch it with others.
    #[arg(long, value_name = "DURATION", value_parser = parse_delay, requires = "read_write")]
    pub max_commit_delay: Option<std::time::Duration>,
    /// Ask the commit for its statistics (the mutation count).
    #[arg(long, requires = "read_write")]
    pub commit_stats: bool,
    /// The transaction tag every request of the transaction carries.
    #[arg(long, value_name = "TAG", requires = "read_write")]
    pub transaction_tag: Option<String>,
    /// After an abort: honour-retry-info (wait what the server asks; the default), fixed:DUR, or
    /// none (an abort ends the transaction).
    #[arg(long, value_name = "POLICY", value_parser = RetryPolicy::parse, requires = "read_write")]
    pub retry: Option<RetryPolicy>,
    /// Attempts of one transaction at most, the first included (default 10).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000), requires = "read_write")]
    pub max_attempts: Option<u32>,
    /// The whole transaction's time at most, back-offs included (default 120s): no attempt starts
    /// after it.
    #[arg(long, value_name = "DURATION", value_parser = parse_positive, requires = "read_write")]
    pub transaction_deadline: Option<std::time::Duration>,
}

/// `--isolation` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IsolationArg {
    /// Serializable.
    Serializable,
    /// Repeatable read.
    RepeatableRead,
}

/// `--lock-mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LockModeArg {
    /// Reads take locks as they run.
    Pessimistic,
    /// Reads are lock-free, validated at commit.
    Optimistic,
}

/// `--begin` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BeginArg {
    /// With the first statement.
    Inline,
    /// BeginTransaction first.
    Explicit,
}

pub(super) fn parse_delay(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text).map_err(|e| e.to_string())?;
    if d > crate::client::read_write::MAX_COMMIT_DELAY {
        return Err("a max commit delay is between 0ms and 500ms".into());
    }
    Ok(d)
}

fn parse_positive(text: &str) -> Result<std::time::Duration, String> {
    let d = parse_duration(text).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("the deadline must be more than 0".into());
    }
    Ok(d)
}

/// The most bytes of a script file read.
const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// The text of the script file `path` (at most [`MAX_SCRIPT_BYTES`], UTF-8).
pub fn read_script(path: &std::path::Path) -> anyhow::Result<String> {
    let bytes = crate::export::read_bounded(path, MAX_SCRIPT_BYTES)
        .with_context(|| format!("cannot read the script {}", path.display()))?;
    String::from_utf8(bytes)
        .with_context(|| format!("the script {} is not UTF-8 text", path.display()))
}

impl ReadWriteArgs {
    /// The script file's text, when one was given.
    pub fn script_text(&self) -> anyhow::Result<Option<String>> {
        self.script.as_deref().map(read_script).transpose()
    }

    /// The transaction options asked for, `mode` its statements' query mode.
    pub fn options(&self, mode: QueryMode) -> ReadWriteOptions {
        let defaults = ReadWriteOptions::default();
        ReadWriteOptions {
            isolation: match self.isolation {
                None => Isolation::Default,
                Some(IsolationArg::Serializable) => Isolation::Serializable,
                Some(IsolationArg::RepeatableRead) => Isolation::RepeatableRead,
            },
            lock_mode: match self.lock_mode {
                None => LockMode::Default,
                Some(LockModeArg::Pessimistic) => LockMode::Pessimistic,
                Some(LockModeArg::Optimistic) => LockMode::Optimistic,
            },
            begin: match self.begin {
                None | Some(BeginArg::Inline) => BeginMode::Inline,
                Some(BeginArg::Explicit) => BeginMode::Explicit,
            },
            max_commit_delay: self.max_commit_delay,
            commit_stats: self.commit_stats,
            tag: self.transaction_tag.clone(),
            retry: self.retry.unwrap_or_default(),
            max_attempts: self.max_attempts.unwrap_or(defaults.max_attempts),
            deadline: self.transaction_deadline.unwrap_or(defaults.deadline),
            mode: crate::client::session::wire_mode(mode),
        }
    }

    /// `variants` made read-write transactions when `--read-write` was given: each one's SQL
    /// parsed as a script.
    pub fn apply(&self, variants: Vec<Variant>) -> anyhow::Result<Vec<Variant>> {
        if !self.read_write {
            return Ok(variants);
        }
        variants
            .into_iter()
            .map(|mut v| {
                let script = crate::script::parse(&v.sql)
                    .with_context(|| format!("the read-write script of {}", v.label))?;
                let options = self.options(v.mode);
                options.check().map_err(anyhow::Error::msg)?;
                v.read_write = Some(ReadWrite { script, options });
                Ok(v)
            })
            .collect()
    }
}
