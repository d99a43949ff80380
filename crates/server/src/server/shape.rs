//! How the local instance cuts an answer into PartialResultSets: the way production Spanner does, the
//! way the Cloud Spanner emulator does (which differs), or every legal way at once, so a client can be
//! checked against each (SPANNER_WIRE.md says what each side does).
//!
//! - **production**: messages up to the maximum size, values cut mid-string and mid-array where a
//!   message fills up, a resume token on every message, `metadata` on the first message only (absent,
//!   not empty, on every later one: the official Rust client fails a stream on any later one), the
//!   statistics with the last message.
//! - **emulator**: the same cuts, but no resume tokens, the statistics with the *first* message (the
//!   answer is held until it is complete, as the emulator materialises it), and where a message ends
//!   on a whole string or list, `chunked_value` set anyway and the next message continuing it with
//!   an empty `""`, or a list exactly at its boundary with an empty last element (`[""]`, `[[]]`).
//! - **edge**: everything the API allows, deterministically: values of every splittable kind cut
//!   although they fit (strings, which carry INT64, NUMERIC, TIMESTAMP, DATE, BYTES and JSON too,
//!   lists mid-element and between elements), messages that end exactly at a row boundary, messages
//!   with no values at all (never between the pieces of a chunked value), `""`, `[]`, `[""]` and
//!   `[[]]` continuations, a resume token on every message, and the statistics alone in a last message of
//!   their own. It does so in bursts of [`EDGE_BURST_ROWS`] rows, one every [`EDGE_PERIOD_ROWS`]
//!   rows (the first burst from the first row), and streams as production does in between, so
//!   that a large answer (with faults on top) is not a message per value.
//!
//! Faults (`fail_every`) apply on top of any shape.

use serde::{Deserialize, Serialize};

/// The shape of the local instance's streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// As production Spanner streams (the default).
    #[default]
    Production,
    /// As the Cloud Spanner emulator streams.
    Emulator,
    /// Every legal shape the API allows.
    Edge,
}

impl Shape {
    /// Every shape, in the order the documentation lists them.
    pub const ALL: [Shape; 3] = [Shape::Production, Shape::Emulator, Shape::Edge];

    /// `production`, `emulator` or `edge`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Production => "production",
            Shape::Emulator => "emulator",
            Shape::Edge => "edge",
        }
    }

    /// The shape named `text` (`production`, `emulator`, `edge`).
    pub fn parse(text: &str) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// Whether its messages carry resume tokens.
    pub fn resume_tokens(self) -> bool {
        self != Shape::Emulator
    }

    /// Whether the statistics travel with the first message (else with the last).
    pub fn stats_first(self) -> bool {
        self == Shape::Emulator
    }

    /// Whether a message that ends on a whole string or list is marked chunked and continued with
    /// `""` or `[]`.
    pub fn continues_at_boundaries(self) -> bool {
        self != Shape::Production
    }

    /// Its number in a resume token.
    pub(super) fn code(self) -> u8 {
        match self {
            Shape::Production => 0,
            Shape::Emulator => 1,
            Shape::Edge => 2,
        }
    }

    /// The shape a resume token's number names.
    pub(super) fn from_code(code: u8) -> Option<Shape> {
        Shape::ALL.into_iter().find(|s| s.code() == code)
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Rows in each burst of the edge shape's cases: enough for every column of a 23-column result to
/// meet every kind of cut.
pub const EDGE_BURST_ROWS: u64 = 30;
/// A burst of the edge shape's cases starts every this many rows.
pub const EDGE_PERIOD_ROWS: u64 = 1000;

/// What the edge shape does at one value or row: a deterministic walk through the cases, so every
/// column of a wide enough result meets each of them within a few rows.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct EdgeWalk {
    values: u64,
    rows: u64,
}

/// Where the edge shape cuts a value it cuts although it fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum EdgeCut {
    /// In the middle of its weight.
    Middle,
    /// After its first byte or element.
    Early,
    /// At its very end: the next message continues it with `""` (or a list with `[]`/`""`).
    End,
}

impl EdgeWalk {
    /// How to cut the next value, if at all: one value in three is cut, the cut point walking
    /// through middle, early and end. Three and five are prime to any row width but their own
    /// multiples, so with 23 columns every column is cut, at every kind of point.
    pub(super) fn next_value(&mut self) -> Option<EdgeCut> {
        if !self.in_burst() {
            return None;
        }
        let n = self.values;
        self.values += 1;
        if !n.is_multiple_of(3) {
            return None;
        }
        Some(match (n / 3) % 5 {
            0 | 3 => EdgeCut::Middle,
            1 | 4 => EdgeCut::Early,
            _ => EdgeCut::End,
        })
    }

    /// What to do at the end of a row: whether to close the message there (every third row), and
    /// whether to add a message with no values after it (every seventh row).
    pub(super) fn end_row(&mut self) -> (bool, bool) {
        let burst = self.in_burst();
        let n = self.rows;
        self.rows += 1;
        (burst && n % 3 == 2, burst && n % 7 == 6)
    }

    /// Whether the row being cut is in a burst of cases.
    fn in_burst(&self) -> bool {
        self.rows % EDGE_PERIOD_ROWS < EDGE_BURST_ROWS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_token_codes_round_trip() {
        for shape in Shape::ALL {
            assert_eq!(Shape::parse(shape.as_str()), Some(shape));
            assert_eq!(Shape::from_code(shape.code()), Some(shape));
        }
        assert_eq!(Shape::parse("Production"), None);
        assert_eq!(Shape::from_code(9), None);
    }

    #[test]
    fn the_edge_plan_cuts_every_column_at_every_kind_of_point() {
        let width = 23u64;
        let mut plan = EdgeWalk::default();
        let mut seen = std::collections::HashSet::new();
        let mut cuts = 0;
        for row in 0..2 * EDGE_PERIOD_ROWS {
            for column in 0..width {
                if let Some(cut) = plan.next_value() {
                    cuts += 1;
                    if row < EDGE_BURST_ROWS {
                        seen.insert((column, cut));
                    }
                }
            }
            plan.end_row();
        }
        assert_eq!(
            cuts,
            2 * EDGE_BURST_ROWS * width / 3,
            "cuts only in the bursts, one value in three"
        );
        for column in 0..width {
            for cut in [EdgeCut::Middle, EdgeCut::Early, EdgeCut::End] {
                assert!(seen.contains(&(column, cut)), "column {column}, {cut:?}");
            }
        }
    }
}
