//! `spanprof decode FILE [--repeat N] [--decoder fast|reference]`: decode a recorded stream file offline.

use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use bytes::Bytes;

use crate::stats::median;
use crate::wire::Row;
use crate::wire::stream_file::{decode_frames, decode_frames_fast, frames, shared_frames};

/// Which decoder turns the messages into rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DecoderChoice {
    /// The zero-copy decoder (`wire::fast`).
    #[default]
    Fast,
    /// The prost-based reference decoder (`wire::StreamDecoder`).
    Reference,
}

/// Arguments of `spanprof decode`.
#[derive(Debug, clap::Args)]
pub struct DecodeArgs {
    /// A stream file: repeated [u32 big-endian length][serialized PartialResultSet].
    pub file: PathBuf,
    /// Decode the whole file this many times (reading it once) and report the median time on stderr.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// The decoder to use; both print the same rows.
    #[arg(long, value_enum, default_value_t = DecoderChoice::Fast)]
    pub decoder: DecoderChoice,
}

/// Decodes `args.file`, prints its rows to `out` (one canonical JSON array per line) and, with
/// `--repeat`, a last line of timings to `err`.
pub fn run_decode(args: &DecodeArgs, out: impl Write, mut err: impl Write) -> anyhow::Result<()> {
    let file = Bytes::from(
        std::fs::read(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?,
    );
    let mut timings_ms = Vec::with_capacity(args.repeat as usize);
    let mut first = None;
    for _ in 0..args.repeat {
        let start = Instant::now();
        let rows = decode_once(&file, args.decoder)
            .with_context(|| format!("cannot decode {}", args.file.display()))?;
        timings_ms.push(start.elapsed().as_secs_f64() * 1e3);
        first.get_or_insert(rows);
    }
    let Some(rows) = first else {
        return Ok(());
    };

    if let Err(e) = print_rows(&rows, out) {
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
            rows.len() as f64 / seconds
        )?;
    }
    Ok(())
}

/// Splits and decodes the whole file (the part `--repeat` times), giving the rows as owned values.
/// Only the first run's rows are printed, so converting the fast decoder's rows is not timed: that
/// run keeps its batch and converts after the clock stops.
fn decode_once(file: &Bytes, decoder: DecoderChoice) -> anyhow::Result<Decoded> {
    Ok(match decoder {
        DecoderChoice::Reference => Decoded::Owned(decode_frames(&frames(file)?)?.rows),
        DecoderChoice::Fast => Decoded::Batch(decode_frames_fast(&shared_frames(file)?)?.rows),
    })
}

/// The rows of one run, as the decoder produced them.
enum Decoded {
    Owned(Vec<Row>),
    Batch(crate::wire::RowBatch),
}

impl Decoded {
    fn len(&self) -> usize {
        match self {
            Decoded::Owned(rows) => rows.len(),
            Decoded::Batch(batch) => batch.len(),
        }
    }
}

fn print_rows(rows: &Decoded, out: impl Write) -> std::io::Result<()> {
    let mut out = BufWriter::new(out);
    let mut line = |row: &Row| -> std::io::Result<()> {
        serde_json::to_writer(&mut out, &row.to_canonical_json())?;
        out.write_all(b"\n")
    };
    match rows {
        Decoded::Owned(rows) => rows.iter().try_for_each(&mut line)?,
        Decoded::Batch(batch) => batch.iter().try_for_each(|r| line(&r.to_row()))?,
    }
    out.flush()
}
