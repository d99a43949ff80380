//! Deliberately broken or slow Spanner clients, for the tests of `spanprof client`: each reads
//! `SPANPROF_SQL` from the instance in `SPANNER_EMULATOR_HOST` (spanprof's own client library
//! underneath) and prints rows as canonical JSON lines, wrongly on purpose.
//!
//! usage: broken_client MODE
//!   drop-after-first        prints only the rows of the first message (the historical bug: an
//!                           empty `metadata` on later messages taken for "no columns")
//!   duplicate-after-resume  on a broken stream, reads the query again from the start without
//!                           forgetting the rows it already printed
//!   slow MS                 correct, but sleeps MS milliseconds after each message (a slow decoder)

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use spanprof::client::{
    DatabasePath, Decoding, IterationError, Query, QueryMode, ResumePolicy, Session, Target,
    Timeouts,
};
use spanprof::wire::{DecoderKind, RowsView};

#[derive(Clone, Copy)]
enum Mode {
    DropAfterFirst,
    DuplicateAfterResume,
    Slow(Duration),
}

fn mode(args: &[String]) -> Result<Mode, String> {
    match args {
        [m] if m == "drop-after-first" => Ok(Mode::DropAfterFirst),
        [m] if m == "duplicate-after-resume" => Ok(Mode::DuplicateAfterResume),
        [m, ms] if m == "slow" => ms
            .parse()
            .map(|ms| Mode::Slow(Duration::from_millis(ms)))
            .map_err(|_| format!("`slow` takes milliseconds, not {ms:?}")),
        _ => Err("usage: broken_client drop-after-first | duplicate-after-resume | slow MS".into()),
    }
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}

fn print(out: &mut impl Write, rows: RowsView<'_>) {
    for row in rows.to_rows(usize::MAX) {
        // A closed stdout ends the output; the check then names what is missing.
        let _ = writeln!(out, "{}", row.to_canonical_json());
    }
}

async fn read(mode: Mode) -> Result<(), String> {
    let host = env("SPANNER_EMULATOR_HOST")?;
    let database = DatabasePath {
        project: env("SPANPROF_PROJECT")?,
        instance: env("SPANPROF_INSTANCE")?,
        database: env("SPANPROF_DATABASE")?,
    };
    let session = Session::open(&Target::Endpoint(host), &database, Timeouts::DEFAULT)
        .await
        .map_err(|e| e.to_string())?;
    let query = session
        .prepare(&Query {
            sql: env("SPANPROF_SQL")?,
            params: Vec::new(),
            mode: QueryMode::Normal,
            options: Default::default(),
        })
        .map_err(|e| e.to_string())?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut messages = 0u64;
    let policy = match mode {
        // Never resumes: a broken stream ends the call, and the query is read again.
        Mode::DuplicateAfterResume => ResumePolicy {
            max_resumes: 0,
            ..ResumePolicy::default()
        },
        _ => ResumePolicy::default(),
    };
    for attempt in 1.. {
        let mut on_rows = |rows: RowsView<'_>, _bytes: usize| {
            messages += 1;
            match mode {
                Mode::DropAfterFirst if messages > 1 => {}
                Mode::Slow(pause) => {
                    print(&mut out, rows);
                    // Blocks this reader's thread, as a slow decoder does.
                    std::thread::sleep(pause);
                }
                _ => print(&mut out, rows),
            }
        };
        let read = session
            .execute(&query, policy, Decoding::new(DecoderKind::Reference, &mut on_rows))
            .await;
        match read {
            Ok(_) => break,
            Err(IterationError::CannotResume(_) | IterationError::Status(_))
                if matches!(mode, Mode::DuplicateAfterResume) && attempt < 20 =>
            {
                continue;
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    let _ = session.close(Duration::from_secs(2)).await;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = mode(&args).and_then(|mode| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(read(mode))
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("broken_client: {e}");
            ExitCode::FAILURE
        }
    }
}
