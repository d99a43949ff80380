//! `spanprof record`: one execution of a query, its stream written to a file as the decoder
//! consumed it (a recording, which `spanprof decode` and `spanprof plan` read back).

use std::io::Write;
use std::path::PathBuf;

use super::headers::HeaderArgs;
use super::options::RequestOptionArgs;
use super::profile::QueryArgs;
use super::target::TargetArgs;
use crate::engine::{Order, ProfileSpec, Variant};
use crate::export::write_atomically;

/// Arguments of `spanprof record`.
#[derive(Debug, Clone, clap::Args)]
pub struct RecordArgs {
    /// Where to run.
    #[command(flatten)]
    pub target: TargetArgs,
    /// What to run (one --sql).
    #[command(flatten)]
    pub query: QueryArgs,
    /// How the query is asked.
    #[command(flatten)]
    pub options: RequestOptionArgs,
    /// What every call says besides the query.
    #[command(flatten)]
    pub headers: HeaderArgs,
    /// The stream file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// Records one execution's stream to `--out`; prints what it wrote.
pub fn run_record(args: &RecordArgs, mut out: impl Write) -> anyhow::Result<()> {
    let [sql] = args.query.sql.as_slice() else {
        anyhow::bail!("record writes one query's stream: give one --sql");
    };
    let options = args.options.options()?;
    anyhow::ensure!(
        options.partitioned.is_none(),
        "record writes one stream; a partitioned read is several: record the plain query"
    );
    let spec = ProfileSpec {
        database: args.target.database(),
        variants: vec![Variant {
            params: args.query.params.clone(),
            mode: args.query.mode(&args.target),
            options,
            ..Variant::new("record", sql.clone())
        }],
        iterations: 1,
        warmup: 0,
        decoder: args.query.decoder.into(),
        timeouts: args.target.timeouts.timeouts(),
        order: Order::default(),
        headers: args.headers.options(),
    };
    let recording = crate::engine::record(args.target.target(), &spec)?;
    write_atomically(&args.out, &recording.file)?;
    let t = &recording.timing;
    writeln!(
        out,
        "recorded {} rows in {} messages ({} bytes, {} resumes) to {}; `spanprof decode {}` replays them",
        t.rows,
        t.counters.messages,
        recording.file.len(),
        t.resumes,
        args.out.display(),
        args.out.display()
    )?;
    Ok(())
}
