//! `spanprof decode FILE [--repeat N]`: decode a recorded stream file offline.

use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;

use crate::stats::median;
use crate::wire::stream_file::{decode_frames, frames};

/// Arguments of `spanprof decode`.
#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// A stream file: repeated [u32 big-endian length][serialized PartialResultSet].
    pub file: PathBuf,
    /// Decode the whole file this many times (reading it once) and report the median time on stderr.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
}

/// Decodes `args.file`, prints its rows to `out` (one canonical JSON array per line) and, with
/// `--repeat`, a last line of timings to `err`.
pub fn run_decode(args: &DecodeArgs, out: impl Write, mut err: impl Write) -> anyhow::Result<()> {
    let file = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let frames = frames(&file).with_context(|| format!("{}", args.file.display()))?;

    let mut timings_ms = Vec::with_capacity(args.repeat as usize);
    let mut first = None;
    for _ in 0..args.repeat {
        let start = Instant::now();
        let decoded = decode_frames(&frames)
            .with_context(|| format!("cannot decode {}", args.file.display()))?;
        timings_ms.push(start.elapsed().as_secs_f64() * 1e3);
        first.get_or_insert(decoded);
    }
    let Some(decoded) = first else {
        return Ok(());
    };

    if let Err(e) = print_rows(&decoded.rows, out) {
        // A reader that stops early (`| head`) is not an error.
        if e.kind() != ErrorKind::BrokenPipe {
            return Err(e).context("cannot write the rows");
        }
    }
    if args.repeat > 1 {
        let median_ms = median(&mut timings_ms).unwrap_or(0.0);
        let seconds = median_ms / 1e3;
        writeln!(
            err,
            "decode: {} runs, median {:.3} ms, {:.1} MB/s, {:.0} rows/s",
            args.repeat,
            median_ms,
            file.len() as f64 / 1e6 / seconds,
            decoded.rows.len() as f64 / seconds
        )?;
    }
    Ok(())
}

fn print_rows(rows: &[crate::wire::Row], out: impl Write) -> std::io::Result<()> {
    let mut out = BufWriter::new(out);
    for row in rows {
        serde_json::to_writer(&mut out, &row.to_canonical_json())?;
        out.write_all(b"\n")?;
    }
    out.flush()
}
