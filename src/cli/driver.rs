//! `spanprof driver`: spanprof's own client as a program for `spanprof client` to run. Reads
//! `SPANPROF_SQL` from the instance in `SPANNER_EMULATOR_HOST` (and `SPANPROF_PROJECT`,
//! `SPANPROF_INSTANCE`, `SPANPROF_DATABASE`) and prints each row as a canonical JSON line.
//!
//! Its hidden faults exist to prove the row check and the blocked-time measure: it can drop every
//! row after the first message (the historical bug), read the query again from the start after a
//! broken stream without forgetting the rows it printed (duplicates), or sleep after each message
//! (a slow decoder).

use std::io::Write;
use std::time::Duration;

use anyhow::Context as _;

use crate::client::{
    DatabasePath, Decoding, Endpoint, IterationError, Query, QueryMode, ResumePolicy, Session,
    Timeouts,
};
use crate::wire::{DecoderKind, RowsView};

/// How many times the duplicating fault reads the query again before it gives up.
const MAX_REREADS: u32 = 100;

/// Arguments of `spanprof driver`.
#[derive(Debug, Clone, clap::Args)]
pub struct DriverArgs {
    /// Print only the rows of the first message (a deliberate bug, for tests of the row check).
    #[arg(long, hide = true)]
    pub drop_after_first: bool,
    /// On a broken stream, read the query again from the start, keeping the rows already printed
    /// (a deliberate bug, for tests of the row check).
    #[arg(long, hide = true)]
    pub duplicate_after_resume: bool,
    /// Sleep this many milliseconds after each message's rows (a slow decoder).
    #[arg(long, value_name = "MS", hide = true)]
    pub sleep_per_message_ms: Option<u64>,
    /// Print only a final `rows N` line instead of the rows.
    #[arg(long)]
    pub count: bool,
}

fn env(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set (spanprof client sets it)"))
}

/// Reads the query and prints its rows (or their count) on `out`.
pub fn run_driver(args: &DriverArgs, out: impl Write + Send) -> anyhow::Result<()> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("spanprof-driver")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?
        .block_on(read(args, out))
}

async fn read(args: &DriverArgs, out: impl Write + Send) -> anyhow::Result<()> {
    let database = DatabasePath {
        project: env("SPANPROF_PROJECT")?,
        instance: env("SPANPROF_INSTANCE")?,
        database: env("SPANPROF_DATABASE")?,
    };
    let endpoint = Endpoint::plaintext(env("SPANNER_EMULATOR_HOST")?);
    let session = Session::open(&endpoint, &database, Timeouts::DEFAULT).await?;
    let query = session.prepare(&Query {
        sql: env("SPANPROF_SQL")?,
        params: Vec::new(),
        mode: QueryMode::Normal,
        options: Default::default(),
    })?;
    let policy = if args.duplicate_after_resume {
        // Never resumes: a broken stream ends the read, and the query is read again.
        ResumePolicy {
            max_resumes: 0,
            ..ResumePolicy::default()
        }
    } else {
        ResumePolicy::default()
    };
    let mut out = std::io::BufWriter::new(out);
    let (mut messages, mut rows) = (0u64, 0u64);
    let pause = args.sleep_per_message_ms.map(Duration::from_millis);
    let mut failed = None;
    for _ in 0..MAX_REREADS {
        let mut on_rows = |batch: RowsView<'_>, _bytes: usize| {
            messages += 1;
            if !(args.drop_after_first && messages > 1) {
                rows += batch.len() as u64;
                if !args.count {
                    print(&mut out, batch);
                }
            }
            if let Some(pause) = pause {
                // Blocks the reading thread, as a slow decoder does.
                std::thread::sleep(pause);
            }
        };
        let decoding = Decoding::new(DecoderKind::Reference, &mut on_rows);
        match session.execute(&query, policy, decoding).await {
            Ok(_) => {
                failed = None;
                break;
            }
            Err(e @ (IterationError::CannotResume(_) | IterationError::Status(_)))
                if args.duplicate_after_resume =>
            {
                failed = Some(e);
            }
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if args.count {
        writeln!(out, "rows {rows}")?;
    }
    out.flush()?;
    let _ = session.close(Duration::from_secs(2)).await;
    match failed {
        Some(e) => Err(e.into()),
        None => Ok(()),
    }
}

fn print(out: &mut impl Write, batch: RowsView<'_>) {
    for row in batch.to_rows(usize::MAX) {
        // A closed stdout ends the output; the check then names what is missing.
        let _ = writeln!(out, "{}", row.to_canonical_json());
    }
}
