//! A request body's gRPC messages held back until each has arrived whole.
//!
//! A gRPC message is a 5-byte prefix (a compression flag and a big-endian `u32` length) and that
//! many bytes. tonic reads the prefix and reserves the whole claimed length at once, before any of
//! it has come: streams that sent a prefix claiming 16 MiB and one byte made the server reserve
//! 16 MiB each (1,000 such streams, 0.2 MB sent, took it to 2.1 GB). [`Messages`] holds every byte
//! of a message, its prefix first, until the last one has arrived, so the decoder only ever
//! reserves what is already here (and counted against the pending budget by the intake layer).
//! A claim above the largest message the decoder takes is passed on at once: tonic refuses it from
//! the prefix alone, before reserving anything.

use std::collections::VecDeque;

use tonic::codegen::Bytes;

/// The length of a gRPC message's prefix: a compression flag and a `u32` length.
pub const PREFIX_BYTES: usize = 5;

/// The messages of one request body as its bytes arrive: pieces of whole messages ready to pass
/// on, and the pieces of the message still arriving, held.
#[derive(Debug)]
pub struct Messages {
    /// The prefix of the message in progress, as far as it has come.
    prefix: [u8; PREFIX_BYTES],
    /// How many bytes of that prefix have come (0 between messages).
    prefix_seen: usize,
    /// Bytes of the message in progress still to come, once its prefix is whole.
    missing: u64,
    /// The message in progress claims more than `pass_above`: its bytes pass as they come.
    passing: bool,
    /// The pieces of the message in progress, held until it is whole.
    held: Vec<Bytes>,
    /// Pieces to pass on, in order.
    ready: VecDeque<Bytes>,
    /// Claims above this are passed on at once (the decoder refuses them unread).
    pass_above: u64,
}

impl Messages {
    /// No message yet; claims above `pass_above` bytes pass at once.
    pub fn new(pass_above: u64) -> Self {
        Messages {
            prefix: [0; PREFIX_BYTES],
            prefix_seen: 0,
            missing: 0,
            passing: false,
            held: Vec::new(),
            ready: VecDeque::new(),
            pass_above,
        }
    }

    /// Takes `data` in: what completes a message (or belongs to one passed at once) becomes ready,
    /// after what was held of it, in one piece; the rest is held.
    pub fn push(&mut self, mut data: Bytes) {
        if data.is_empty() {
            return;
        }
        let releasable = self.walk(&data);
        if releasable == 0 {
            self.held.push(data);
            return;
        }
        let rest = data.split_off(releasable);
        self.ready.extend(self.held.drain(..));
        self.ready.push_back(data);
        if !rest.is_empty() {
            self.held.push(rest);
        }
    }

    /// Follows the framing through `data`: how many of its first bytes may pass (they end a
    /// message, or belong to one passed at once).
    fn walk(&mut self, data: &[u8]) -> usize {
        let (mut at, mut releasable) = (0, 0);
        while at < data.len() {
            if self.prefix_seen < PREFIX_BYTES {
                let n = (PREFIX_BYTES - self.prefix_seen).min(data.len() - at);
                self.prefix[self.prefix_seen..self.prefix_seen + n]
                    .copy_from_slice(&data[at..at + n]);
                self.prefix_seen += n;
                at += n;
                if self.prefix_seen == PREFIX_BYTES {
                    self.missing = u64::from(claimed_length(&self.prefix));
                    self.passing = self.missing > self.pass_above;
                }
            } else {
                let left = data.len() - at;
                let n = usize::try_from(self.missing).map_or(left, |m| m.min(left));
                self.missing -= n as u64;
                at += n;
            }
            if self.prefix_seen == PREFIX_BYTES && (self.missing == 0 || self.passing) {
                releasable = at;
                if self.missing == 0 {
                    self.prefix_seen = 0;
                    self.passing = false;
                }
            }
        }
        releasable
    }

    /// Drops everything held or ready: the body ends here.
    pub fn clear(&mut self) {
        *self = Messages::new(self.pass_above);
    }

    /// The next piece to pass on, if any.
    pub fn pop(&mut self) -> Option<Bytes> {
        self.ready.pop_front()
    }

    /// Whether part of a message is held back: a body that ended now would end inside it. (A
    /// message passed as it comes is the decoder's to judge.)
    pub fn holding(&self) -> bool {
        self.prefix_seen > 0 && !self.passing
    }

    /// Whether nothing is held or ready.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.held.is_empty()
    }

    /// Bytes held or ready, not yet passed on.
    pub fn buffered(&self) -> u64 {
        self.ready
            .iter()
            .chain(&self.held)
            .map(|piece| piece.len() as u64)
            .sum()
    }

    /// What the message in progress claims and how much of it has come, when its prefix is whole.
    pub fn progress(&self) -> Option<(u64, u64)> {
        (self.prefix_seen == PREFIX_BYTES).then(|| {
            let claimed = u64::from(claimed_length(&self.prefix));
            (claimed, claimed - self.missing)
        })
    }
}

/// The length a whole prefix claims.
fn claimed_length(prefix: &[u8; PREFIX_BYTES]) -> u32 {
    u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(payload: &[u8]) -> Vec<u8> {
        let mut out = vec![0];
        out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    fn drain(messages: &mut Messages) -> Vec<u8> {
        std::iter::from_fn(|| messages.pop())
            .flat_map(|piece| piece.to_vec())
            .collect()
    }

    #[test]
    fn a_claim_is_held_until_its_last_byte_arrives_in_any_cut() {
        let whole = [message(b"hello, spanner"), message(b""), message(b"x")].concat();
        for cut in 0..=whole.len() {
            for second in cut..=whole.len() {
                let mut messages = Messages::new(1 << 20);
                let mut passed = Vec::new();
                for part in [&whole[..cut], &whole[cut..second], &whole[second..]] {
                    messages.push(Bytes::copy_from_slice(part));
                    passed.extend(drain(&mut messages));
                    // Only whole messages ever pass.
                    assert!(
                        [0, 19, 24, 30].contains(&passed.len()),
                        "{cut}/{second}: {}",
                        passed.len()
                    );
                }
                assert_eq!(passed, whole, "{cut}/{second}");
                assert!(!messages.holding() && messages.is_empty());
            }
        }
    }

    #[test]
    fn a_large_claim_with_one_byte_passes_nothing_and_says_how_far_it_came() {
        let mut messages = Messages::new(16 << 20);
        let mut start = vec![0];
        start.extend_from_slice(&(16u32 << 20).to_be_bytes());
        start.push(b'x');
        messages.push(Bytes::from(start));
        assert!(messages.pop().is_none());
        assert!(messages.holding());
        assert_eq!(messages.buffered(), 6);
        assert_eq!(messages.progress(), Some((16 << 20, 1)));
    }

    #[test]
    fn a_claim_past_the_decoder_s_limit_passes_at_once_for_the_decoder_to_refuse() {
        let mut messages = Messages::new(1024);
        let mut start = vec![0];
        start.extend_from_slice(&2048u32.to_be_bytes());
        start.extend_from_slice(b"abc");
        messages.push(Bytes::from(start.clone()));
        assert_eq!(drain(&mut messages), start);
        messages.push(Bytes::from_static(b"def"));
        assert_eq!(drain(&mut messages), b"def");
    }
}
