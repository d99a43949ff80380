//! Stream files: a recorded ExecuteStreamingSql answer, stored as repeated
//! `[u32 big-endian length][serialized PartialResultSet]` and nothing else.

use bytes::Bytes;

use super::decoder::{Row, StreamDecoder};
use super::error::DecodeError;
use super::fast::{FastDecoder, RowBatch};
use super::result_stats::ResultStats;
use super::stream_state::StreamCounters;
use super::stream_state::StreamState;
use super::types::Field;

/// A stream file that is not a sequence of length-prefixed frames.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Fewer than 4 bytes remain where a length should be.
    #[error("truncated length prefix at byte {offset}: {remaining} bytes left, 4 needed")]
    TruncatedLength {
        /// Where the frame starts.
        offset: usize,
        /// Bytes left in the file.
        remaining: usize,
    },
    /// A frame says it is longer than what remains.
    #[error("frame {index} at byte {offset} says {length} bytes but only {remaining} remain")]
    TruncatedFrame {
        /// The frame's index from 0.
        index: usize,
        /// Where its length prefix starts.
        offset: usize,
        /// The length it claims.
        length: usize,
        /// Bytes left after the prefix.
        remaining: usize,
    },
}

/// The frames of a stream file, each the bytes of one PartialResultSet.
pub fn frames(file: &[u8]) -> Result<Vec<&[u8]>, FrameError> {
    let mut out = Vec::new();
    let mut offset = 0;
    while offset < file.len() {
        let rest = &file[offset..];
        let Some((prefix, body)) = rest.split_first_chunk::<4>() else {
            return Err(FrameError::TruncatedLength {
                offset,
                remaining: rest.len(),
            });
        };
        let length = u32::from_be_bytes(*prefix) as usize;
        if length > body.len() {
            return Err(FrameError::TruncatedFrame {
                index: out.len(),
                offset,
                length,
                remaining: body.len(),
            });
        }
        out.push(&body[..length]);
        offset += 4 + length;
    }
    Ok(out)
}

/// Reads a stream file one frame at a time, so decoding starts with the first frame and memory
/// holds one frame, whatever the file's size (a pipe, a device, a file still being written). A
/// frame's buffer grows with the bytes that actually arrive: a length prefix alone allocates nothing.
#[derive(Debug)]
pub struct FrameReader<R> {
    source: R,
    index: usize,
    offset: usize,
}

/// Why the next frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadFrameError {
    /// The framing is broken.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// Reading failed.
    #[error("cannot read the stream file")]
    Io(#[from] std::io::Error),
}

impl<R: std::io::Read> FrameReader<R> {
    /// Frames from `source` (buffer it: frames are read in small pieces).
    pub fn new(source: R) -> Self {
        FrameReader {
            source,
            index: 0,
            offset: 0,
        }
    }

    /// The next frame; `None` at the end of the file.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, ReadFrameError> {
        use std::io::Read as _;
        let mut prefix = [0u8; 4];
        let mut have = 0;
        while have < 4 {
            match self.source.read(&mut prefix[have..]) {
                Ok(0) => break,
                Ok(n) => have += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        match have {
            0 => return Ok(None),
            1..=3 => {
                return Err(FrameError::TruncatedLength {
                    offset: self.offset,
                    remaining: have,
                }
                .into());
            }
            _ => {}
        }
        let length = u32::from_be_bytes(prefix) as usize;
        let mut body = Vec::new();
        (&mut self.source)
            .take(length as u64)
            .read_to_end(&mut body)?;
        if body.len() < length {
            return Err(FrameError::TruncatedFrame {
                index: self.index,
                offset: self.offset,
                length,
                remaining: body.len(),
            }
            .into());
        }
        self.index += 1;
        self.offset += 4 + length;
        Ok(Some(Bytes::from(body)))
    }
}

/// The frames of a stream file held in one shared buffer, each a slice of it (no copy).
pub fn shared_frames(file: &Bytes) -> Result<Vec<Bytes>, FrameError> {
    Ok(frames(file)?
        .into_iter()
        .map(|frame| file.slice_ref(frame))
        .collect())
}

/// Appends one frame to a stream file being written.
///
/// # Panics
/// If `message` is 4 GiB or more, which no PartialResultSet is (gRPC refuses far smaller ones).
pub fn push_frame(file: &mut Vec<u8>, message: &[u8]) {
    let length = u32::try_from(message.len()).expect("a PartialResultSet is smaller than 4 GiB");
    file.extend_from_slice(&length.to_be_bytes());
    file.extend_from_slice(message);
}

/// Everything decoded from a whole stream.
#[derive(Debug, Clone)]
pub struct DecodedStream {
    /// The columns from the metadata.
    pub columns: Vec<Field>,
    /// Every row, in order.
    pub rows: Vec<Row>,
    /// The statistics, if the stream carried them.
    pub stats: Option<ResultStats>,
    /// What the decoder counted.
    pub counters: StreamCounters,
}

/// Why a stream file could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamFileError {
    /// The framing is broken. (Its text is in the message, so it is no `source`: an error chain
    /// would print it twice.)
    #[error("bad stream file: {0}")]
    Frame(FrameError),
    /// A message could not be decoded.
    #[error(transparent)]
    Decode(#[from] DecodeError),
}

impl From<FrameError> for StreamFileError {
    fn from(e: FrameError) -> Self {
        StreamFileError::Frame(e)
    }
}

/// Decodes every message of already-split frames, checking the stream ends cleanly.
pub fn decode_frames(frames: &[&[u8]]) -> Result<DecodedStream, DecodeError> {
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    for frame in frames {
        decoder.feed_bytes(frame, &mut rows)?;
    }
    decoder.finish()?;
    let (columns, stats, counters) = ending(decoder.stream_mut());
    Ok(DecodedStream {
        columns,
        rows,
        stats,
        counters,
    })
}

/// Everything the fast decoder decoded from a whole stream.
#[derive(Debug)]
pub struct FastDecodedStream {
    /// The columns from the metadata.
    pub columns: Vec<Field>,
    /// Every row, in order, borrowing from the frames.
    pub rows: RowBatch,
    /// The statistics, if the stream carried them.
    pub stats: Option<ResultStats>,
    /// What the decoder counted.
    pub counters: StreamCounters,
}

/// [`decode_frames`] with the fast decoder.
pub fn decode_frames_fast(frames: &[Bytes]) -> Result<FastDecodedStream, DecodeError> {
    let mut decoder = FastDecoder::new();
    let mut rows = RowBatch::new();
    for frame in frames {
        decoder.feed_bytes(frame.clone(), &mut rows)?;
    }
    decoder.finish()?;
    let (columns, stats, counters) = ending(decoder.stream_mut());
    Ok(FastDecodedStream {
        columns,
        rows,
        stats,
        counters,
    })
}

/// What a whole decoded stream reports besides its rows: columns, statistics, counters.
fn ending(stream: &mut StreamState) -> (Vec<Field>, Option<ResultStats>, StreamCounters) {
    let columns = stream.columns().map(<[Field]>::to_vec).unwrap_or_default();
    (columns, stream.take_stats(), *stream.counters())
}

/// Decodes a whole stream file.
pub fn decode_stream_file(file: &[u8]) -> Result<DecodedStream, StreamFileError> {
    Ok(decode_frames(&frames(file)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frame_reader_reads_what_frames_splits_and_reports_the_same_truncations() {
        let mut file = Vec::new();
        push_frame(&mut file, b"abc");
        push_frame(&mut file, b"");
        push_frame(&mut file, b"de");
        let mut reader = FrameReader::new(&file[..]);
        let mut read = Vec::new();
        while let Some(frame) = reader.next_frame().expect("whole frames") {
            read.push(frame);
        }
        assert_eq!(read, [&b"abc"[..], b"", b"de"]);
        for (cut, want) in [
            (
                file.len() - 1,
                "frame 2 at byte 11 says 2 bytes but only 1 remain",
            ),
            (
                9,
                "truncated length prefix at byte 7: 2 bytes left, 4 needed",
            ),
        ] {
            let mut reader = FrameReader::new(&file[..cut]);
            let error = loop {
                match reader.next_frame() {
                    Ok(Some(_)) => {}
                    Ok(None) => panic!("a cut at {cut} is truncated"),
                    Err(e) => break e,
                }
            };
            assert_eq!(error.to_string(), want);
        }
    }

    #[test]
    fn a_huge_length_prefix_allocates_only_what_arrives() {
        let mut file = u32::MAX.to_be_bytes().to_vec();
        file.extend_from_slice(b"tiny");
        let error = FrameReader::new(&file[..])
            .next_frame()
            .expect_err("truncated");
        assert!(error.to_string().contains("only 4 remain"), "{error}");
    }

    #[test]
    fn frames_round_trip_and_truncation_is_reported() {
        let mut file = Vec::new();
        push_frame(&mut file, b"abc");
        push_frame(&mut file, b"");
        push_frame(&mut file, b"de");
        assert_eq!(frames(&file), Ok(vec![&b"abc"[..], b"", b"de"]));
        assert_eq!(
            frames(&file[..file.len() - 1]),
            Err(FrameError::TruncatedFrame {
                index: 2,
                offset: 11,
                length: 2,
                remaining: 1
            })
        );
        assert_eq!(
            frames(&file[..9]),
            Err(FrameError::TruncatedLength {
                offset: 7,
                remaining: 2
            })
        );
    }
}
