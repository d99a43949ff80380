//! What kind of run a report holds, typed: its query mode, the session kind asked for and granted,
//! and what read the answer (one of spanprof's decoders, the wire floor, or another program). It
//! names only `text`: the record, the engine, the client and every view use these types and
//! their spellings; reports keep writing the spellings they always wrote, and read back older ones
//! whatever their case.

use serde::{Deserialize, Serialize};

/// The query modes a profile can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum QueryMode {
    /// Rows only: no server statistics.
    Normal,
    /// Rows and statistics (server elapsed and CPU time, rows returned).
    #[default]
    WithStats,
    /// Rows, statistics and the executed plan.
    Profile,
}

impl QueryMode {
    /// The command line's and the report's spelling: `normal`, `with-stats`, `profile`.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryMode::Normal => "normal",
            QueryMode::WithStats => "with-stats",
            QueryMode::Profile => "profile",
        }
    }

    /// A spelling of a mode, any case, `-` or `_` alike (`WITH_STATS` as the API names it).
    pub fn parse(text: &str) -> Option<QueryMode> {
        match text.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "normal" => Some(QueryMode::Normal),
            "with-stats" => Some(QueryMode::WithStats),
            "profile" => Some(QueryMode::Profile),
            _ => None,
        }
    }

    /// Whether the server returns query statistics in this mode.
    pub fn asks_for_statistics(self) -> bool {
        self != QueryMode::Normal
    }
}

impl std::fmt::Display for QueryMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A session's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SessionKind {
    /// A regular session.
    Regular,
    /// A multiplexed session: read-only profiles ask for one unless told otherwise.
    #[default]
    Multiplexed,
}

impl SessionKind {
    /// The command line's and the report's spelling: `regular` or `multiplexed`.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Regular => "regular",
            SessionKind::Multiplexed => "multiplexed",
        }
    }

    /// `regular` or `multiplexed`; anything else is `None`.
    pub fn parse(text: &str) -> Option<SessionKind> {
        match text {
            "regular" => Some(SessionKind::Regular),
            "multiplexed" => Some(SessionKind::Multiplexed),
            _ => None,
        }
    }
}

impl std::fmt::Display for SessionKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What read a run's answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum Reader {
    /// spanprof's zero-copy decoder.
    #[default]
    Fast,
    /// spanprof's reference decoder (prost, then rows).
    Reference,
    /// A client that only received the answer's bytes: the wire floor of a client profile.
    BytesOnly,
    /// Another program, profiled at the local instance (`spanprof client`).
    Program,
    /// A name a report from an earlier release wrote, kept as it was.
    Named(String),
}

impl Reader {
    /// The report's spelling: `fast`, `reference`, `bytes only`, `the command`, or the name kept.
    pub fn as_str(&self) -> &str {
        match self {
            Reader::Fast => "fast",
            Reader::Reference => "reference",
            Reader::BytesOnly => "bytes only",
            Reader::Program => "the command",
            Reader::Named(name) => name,
        }
    }

    /// The reader a report's spelling names.
    pub fn parse(text: &str) -> Reader {
        match text {
            "fast" => Reader::Fast,
            "reference" => Reader::Reference,
            "bytes only" => Reader::BytesOnly,
            "the command" => Reader::Program,
            other => Reader::Named(other.to_owned()),
        }
    }
}

impl std::fmt::Display for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Reader {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Reader {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(Reader::parse(&text))
    }
}

/// A query mode in a report: its spelling (`with-stats`), read back in any case.
pub mod mode_text {
    use super::QueryMode;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the mode's spelling.
    pub fn serialize<S: Serializer>(mode: &QueryMode, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(mode.as_str())
    }

    /// Reads a mode's spelling, any case; anything else is an error naming it.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<QueryMode, D::Error> {
        let text = String::deserialize(deserializer)?;
        QueryMode::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{:?} is not a query mode (normal, with-stats or profile)",
                crate::text::excerpt(&text, 40)
            ))
        })
    }
}

/// A session kind in a report: its spelling, or nothing (an empty string in older reports).
pub mod session_text {
    use super::SessionKind;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the kind's spelling (the field is left out when there is none).
    pub fn serialize<S: Serializer>(
        kind: &Option<SessionKind>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(kind.map_or("", SessionKind::as_str))
    }

    /// Reads a kind's spelling; empty is none, anything else an error naming it.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SessionKind>, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() {
            return Ok(None);
        }
        SessionKind::parse(&text).map(Some).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "{:?} is not a session kind (regular or multiplexed)",
                crate::text::excerpt(&text, 40)
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_read_back_in_any_case_and_write_one_spelling() {
        for mode in [QueryMode::Normal, QueryMode::WithStats, QueryMode::Profile] {
            assert_eq!(QueryMode::parse(mode.as_str()), Some(mode));
            assert_eq!(QueryMode::parse(&mode.as_str().to_uppercase()), Some(mode));
        }
        assert_eq!(QueryMode::parse("WITH_STATS"), Some(QueryMode::WithStats));
        assert_eq!(QueryMode::parse("plan"), None);
        assert!(!QueryMode::Normal.asks_for_statistics());
        assert!(QueryMode::Profile.asks_for_statistics());
    }

    #[test]
    fn readers_keep_an_older_release_s_names() {
        for reader in [
            Reader::Fast,
            Reader::Reference,
            Reader::BytesOnly,
            Reader::Program,
        ] {
            assert_eq!(Reader::parse(reader.as_str()), reader);
        }
        assert_eq!(
            Reader::parse("spanprof"),
            Reader::Named("spanprof".to_owned())
        );
        assert_eq!(Reader::parse("spanprof").as_str(), "spanprof");
    }
}
