//! `spanprof decode FILE [--repeat N] [--decoder fast|reference]`: decode a recorded stream file offline.

use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use bytes::Bytes;

use crate::stats::median;
use crate::wire::stream_file::{
    FrameReader, decode_frames, decode_frames_fast, frames, shared_frames,
};
use crate::wire::{AnyDecoder, DecoderKind, Row, RowsView};

/// `--decoder` of `decode`, `profile` and `record`: which decoder turns the messages into rows. The
/// command line's own spelling of [`DecoderKind`], which it converts to, so `wire` knows no clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DecoderChoice {
    /// The zero-copy decoder (`wire::fast`): straight from the bytes into rows that borrow them.
    #[default]
    Fast,
    /// The prost-based reference decoder (`wire::StreamDecoder`): prost, then typed rows.
    Reference,
}

impl From<DecoderChoice> for DecoderKind {
    fn from(choice: DecoderChoice) -> DecoderKind {
        match choice {
            DecoderChoice::Fast => DecoderKind::Fast,
            DecoderChoice::Reference => DecoderKind::Reference,
        }
    }
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
    if args.repeat == 1 {
        return decode_streaming(args, out);
    }
    let metadata = std::fs::metadata(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    anyhow::ensure!(
        metadata.is_file(),
        "--repeat needs a regular file: it reads {} into memory once and decodes it again and again",
        args.file.display()
    );
    let file = Bytes::from(
        std::fs::read(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?,
    );
    let mut timings_ms = Vec::with_capacity(args.repeat as usize);
    let mut first = None;
    for _ in 0..args.repeat {
        let start = Instant::now();
        let rows = decode_once(&file, args.decoder.into())
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

/// Decodes the file as it is read, one frame at a time, printing each message's rows as they come:
/// memory holds one frame, and a pipe or a file still being written is decoded as it grows.
fn decode_streaming(args: &DecodeArgs, out: impl Write) -> anyhow::Result<()> {
    // A FIFO (or pipe) is read as it comes; one without a writer is an empty stream, never a
    // wait for one (`crate::files`).
    let file = crate::files::open_stream(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let mut frames = FrameReader::new(std::io::BufReader::with_capacity(1 << 16, file));
    let mut decoder = AnyDecoder::new(args.decoder.into());
    let mut out = BufWriter::new(out);
    let context = || format!("cannot decode {}", args.file.display());
    let printed = (|| -> anyhow::Result<()> {
        while let Some(frame) = frames.next_frame().with_context(context)? {
            let length = frame.len();
            let message = decoder.parse(frame).with_context(context)?;
            let rows = decoder.feed(message, length).with_context(context)?;
            let written = match rows {
                RowsView::Owned(rows) => rows.iter().try_for_each(|r| print_row(&mut out, r)),
                RowsView::Batch(batch) => batch
                    .iter()
                    .try_for_each(|r| print_row(&mut out, &r.to_row())),
            };
            written.map_err(anyhow::Error::from)?;
        }
        decoder.finish().with_context(context)?;
        out.flush()?;
        Ok(())
    })();
    match printed {
        // A reader that stops early (`| head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == ErrorKind::BrokenPipe) =>
        {
            Ok(())
        }
        other => other,
    }
}

fn print_row(out: &mut impl Write, row: &Row) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &row.to_canonical_json())?;
    out.write_all(b"\n")
}

/// Splits and decodes the whole file (the part `--repeat` times), giving the rows as owned values.
/// Only the first run's rows are printed, so converting the fast decoder's rows is not timed: that
/// run keeps its batch and converts after the clock stops.
fn decode_once(file: &Bytes, decoder: DecoderKind) -> anyhow::Result<Decoded> {
    Ok(match decoder {
        DecoderKind::Reference => Decoded::Owned(decode_frames(&frames(file)?)?.rows),
        DecoderKind::Fast => Decoded::Batch(decode_frames_fast(&shared_frames(file)?)?.rows),
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

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::super::{Cli, Command};
    use crate::wire::DecoderKind;

    /// The decoder `argv` chose, whichever subcommand it is.
    fn chosen(argv: &[&str]) -> DecoderKind {
        let cli = Cli::try_parse_from(argv).expect("parses");
        match cli.command {
            Some(Command::Decode(args)) => args.decoder.into(),
            Some(Command::Profile(args)) => args.query.decoder.into(),
            Some(Command::Record(args)) => args.query.decoder.into(),
            other => panic!("not a decoding subcommand: {other:?}"),
        }
    }

    #[test]
    fn decode_profile_and_record_spell_the_decoders_alike() {
        let runs: [&[&str]; 3] = [
            &["spanprof", "decode", "f.bin"],
            &["spanprof", "profile", "--sql", "SELECT 1"],
            &["spanprof", "record", "--sql", "SELECT 1", "--out", "f.bin"],
        ];
        for argv in runs {
            assert_eq!(chosen(argv), DecoderKind::Fast, "{argv:?}");
            for (spelling, kind) in [
                ("fast", DecoderKind::Fast),
                ("reference", DecoderKind::Reference),
            ] {
                let with: Vec<&str> = argv
                    .iter()
                    .copied()
                    .chain(["--decoder", spelling])
                    .collect();
                assert_eq!(chosen(&with), kind, "{with:?}");
            }
            let wrong: Vec<&str> = argv.iter().copied().chain(["--decoder", "prost"]).collect();
            assert!(Cli::try_parse_from(&wrong).is_err(), "{wrong:?}");
        }
    }
}
