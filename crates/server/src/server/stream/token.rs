//! Resume tokens that cannot be forged: what a token says (the message it follows, how the stream
//! was cut, which query and stream it belongs to) travels in clear, followed by an HMAC-SHA256 tag
//! under a key drawn at random once per process, truncated to 128 bits.
//!
//! A token is checked before anything is done with it: its length first (one fixed size), then its
//! tag, then the values it carries (a message size the builder accepts). A token that fails any check
//! is refused whole; nothing in it is trusted before its tag is.

use std::sync::OnceLock;

use ring::hmac;
use ring::rand::SystemRandom;

use crate::server::knobs::{MAX_MESSAGE_BYTES, MIN_MESSAGE_BYTES};
use crate::server::shape::Shape;

/// What every resume token of a stream carries besides the message number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenStamp {
    /// The maximum message size the stream was cut with (a resumed stream must be cut the same way).
    pub max_bytes: u32,
    /// A key of the request (SQL, parameters, mode), so a token cannot resume another query.
    pub request_key: u64,
    /// Which stream of the server issued it, to find the stream's cursor if the server kept it.
    pub stream: u64,
    /// The shape the stream was cut in (a resumed stream is cut the same way).
    pub shape: Shape,
}

/// A decoded resume token: the stream continues after message `seq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePoint {
    /// The number of the last message the client received.
    pub seq: u64,
    /// The stream's stamp.
    pub stamp: TokenStamp,
}

/// Why a token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not the size of any token this server issues.
    #[error("the resume token is not one this instance issued (wrong length)")]
    Length,
    /// The tag does not match: altered, or issued by another process.
    #[error("the resume token is not one this instance issued")]
    Forged,
    /// Authentic but unusable (a message size outside the allowed range).
    #[error("the resume token holds a message size this instance does not cut")]
    Invalid,
}

/// Why no token key could be made.
#[derive(Debug, thiserror::Error)]
#[error("the system has no source of randomness for the resume-token key")]
pub struct NoRandomness;

const MAGIC: &[u8; 4] = b"SPT3";
/// Bytes of the fields: magic, seq, max_bytes, request_key, stream, shape.
const BODY_BYTES: usize = 4 + 8 + 4 + 8 + 8 + 1;
/// Bytes of the tag kept (HMAC-SHA256 truncated to 128 bits).
const TAG_BYTES: usize = 16;
/// The length of every token.
pub const TOKEN_BYTES: usize = BODY_BYTES + TAG_BYTES;

/// The process's key and whether it came from the system's randomness.
static KEY: OnceLock<(hmac::Key, bool)> = OnceLock::new();

/// Draws the process's token key if none was drawn yet; fails when the system has no randomness.
/// Servers call this before they serve, so they never sign with anything but a random key.
pub fn init_key() -> Result<(), NoRandomness> {
    if key_is_random() {
        Ok(())
    } else {
        Err(NoRandomness)
    }
}

fn key_is_random() -> bool {
    KEY.get_or_init(draw_key).1
}

/// The process's key (drawn on first use).
pub(crate) fn key() -> &'static hmac::Key {
    &KEY.get_or_init(draw_key).0
}

/// A random key; without randomness (never on Linux), a fixed one, flagged so no server starts on it
/// (tokens made then only feed decoders in tests and benchmarks).
fn draw_key() -> (hmac::Key, bool) {
    match hmac::Key::generate(hmac::HMAC_SHA256, &SystemRandom::new()) {
        Ok(key) => (key, true),
        Err(_) => (
            hmac::Key::new(hmac::HMAC_SHA256, b"spanprof: no randomness"),
            false,
        ),
    }
}

impl ResumePoint {
    /// The token bytes: the fields, then their tag.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TOKEN_BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.stamp.max_bytes.to_be_bytes());
        out.extend_from_slice(&self.stamp.request_key.to_be_bytes());
        out.extend_from_slice(&self.stamp.stream.to_be_bytes());
        out.push(self.stamp.shape.code());
        let tag = hmac::sign(key(), &out);
        out.extend_from_slice(&tag.as_ref()[..TAG_BYTES]);
        out
    }

    /// Reads a token this process issued: length, then tag, then values.
    pub fn decode(token: &[u8]) -> Result<Self, TokenError> {
        let token: &[u8; TOKEN_BYTES] = token.try_into().map_err(|_| TokenError::Length)?;
        let (body, tag) = token.split_at(BODY_BYTES);
        let want = hmac::sign(key(), body);
        if !same_bytes(&want.as_ref()[..TAG_BYTES], tag) {
            return Err(TokenError::Forged);
        }
        let rest = body.strip_prefix(MAGIC).ok_or(TokenError::Forged)?;
        let (seq, rest) = rest.split_first_chunk::<8>().ok_or(TokenError::Length)?;
        let (max_bytes, rest) = rest.split_first_chunk::<4>().ok_or(TokenError::Length)?;
        let (request_key, rest) = rest.split_first_chunk::<8>().ok_or(TokenError::Length)?;
        let (stream, rest) = rest.split_first_chunk::<8>().ok_or(TokenError::Length)?;
        let &[shape] = rest else {
            return Err(TokenError::Length);
        };
        let max_bytes = u32::from_be_bytes(*max_bytes);
        if !(MIN_MESSAGE_BYTES..=MAX_MESSAGE_BYTES).contains(&u64::from(max_bytes)) {
            return Err(TokenError::Invalid);
        }
        let shape = Shape::from_code(shape).ok_or(TokenError::Invalid)?;
        Ok(ResumePoint {
            seq: u64::from_be_bytes(*seq),
            stamp: TokenStamp {
                max_bytes,
                request_key: u64::from_be_bytes(*request_key),
                stream: u64::from_be_bytes(*stream),
                shape,
            },
        })
    }
}

/// Compares two tags without stopping at the first difference.
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(max_bytes: u32) -> ResumePoint {
        ResumePoint {
            seq: 7,
            stamp: TokenStamp {
                max_bytes,
                request_key: 42,
                stream: 9,
                shape: Shape::Edge,
            },
        }
    }

    #[test]
    fn tokens_round_trip_at_one_fixed_length() {
        let p = point(1024);
        let token = p.encode();
        assert_eq!(token.len(), TOKEN_BYTES);
        assert_eq!(ResumePoint::decode(&token), Ok(p));
        assert!(init_key().is_ok(), "Linux has randomness");
    }

    #[test]
    fn every_single_bit_flip_is_refused() {
        let token = point(4096).encode();
        for bit in 0..token.len() * 8 {
            let mut bad = token.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(
                ResumePoint::decode(&bad),
                Err(TokenError::Forged),
                "bit {bit}"
            );
        }
    }

    #[test]
    fn wrong_lengths_and_unsigned_tokens_are_refused() {
        let token = point(4096).encode();
        assert_eq!(ResumePoint::decode(&[]), Err(TokenError::Length));
        assert_eq!(
            ResumePoint::decode(&token[..TOKEN_BYTES - 1]),
            Err(TokenError::Length)
        );
        let mut long = token.clone();
        long.push(0);
        assert_eq!(ResumePoint::decode(&long), Err(TokenError::Length));
        // The old, unsigned format (the same fields with a zero tag) names a tiny message size.
        let mut unsigned = point(10).encode();
        unsigned[BODY_BYTES..].fill(0);
        assert_eq!(ResumePoint::decode(&unsigned), Err(TokenError::Forged));
    }

    #[test]
    fn an_authentic_token_with_an_impossible_size_is_refused() {
        for max_bytes in [0, 64, MIN_MESSAGE_BYTES as u32 - 1, u32::MAX] {
            assert_eq!(
                ResumePoint::decode(&point(max_bytes).encode()),
                Err(TokenError::Invalid),
                "{max_bytes}"
            );
        }
        assert!(ResumePoint::decode(&point(MIN_MESSAGE_BYTES as u32).encode()).is_ok());
    }
}
