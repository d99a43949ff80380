//! What a user can change about how a query is asked, besides its SQL and parameters: the request's
//! priority and tag, the read's timestamp bound (staleness), the optimizer's version and statistics
//! package, the replicas that may serve it, and whether it is read as partitions in parallel. Plain
//! data, spelled on the command line, in workload files and in reports the same way; how each
//! becomes a field of the request is [`Session::prepare`](super::Session::prepare)'s business.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::timeouts::parse_duration;
use crate::wire::Timestamp;

/// RequestOptions.priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// PRIORITY_LOW.
    Low,
    /// PRIORITY_MEDIUM.
    Medium,
    /// PRIORITY_HIGH.
    High,
}

impl Priority {
    /// Every priority, lowest first.
    pub const ALL: [Priority; 3] = [Priority::Low, Priority::Medium, Priority::High];

    /// `low`, `medium`, `high`.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Low => "low",
            Priority::Medium => "medium",
            Priority::High => "high",
        }
    }
}

impl FromStr for Priority {
    type Err = OptionError;
    fn from_str(text: &str) -> Result<Self, OptionError> {
        Priority::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| OptionError::new("priority", text, "it is one of low, medium, high"))
    }
}

/// The timestamp bound of the read-only transaction a query reads in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Staleness {
    /// The newest data (`strong`).
    Strong,
    /// Data exactly this old (`exact:10s`).
    Exact(Duration),
    /// Data at most this old, the server's choice (`max:10s`; single-use reads only).
    Max(Duration),
    /// Data as of this time (`read:2026-12-01T10:00:00Z`).
    ReadAt(Timestamp),
    /// Data at least as new as this time (`min-read:2026-12-01T10:00:00Z`; single-use reads only).
    MinRead(Timestamp),
}

impl Staleness {
    /// Whether only a single-use read-only transaction may carry it (max staleness, min read
    /// timestamp), as the API defines.
    pub fn single_use_only(self) -> bool {
        matches!(self, Staleness::Max(_) | Staleness::MinRead(_))
    }
}

impl fmt::Display for Staleness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Staleness::Strong => write!(f, "strong"),
            Staleness::Exact(d) => write!(f, "exact:{}", spell_duration(*d)),
            Staleness::Max(d) => write!(f, "max:{}", spell_duration(*d)),
            Staleness::ReadAt(t) => write!(f, "read:{t}"),
            Staleness::MinRead(t) => write!(f, "min-read:{t}"),
        }
    }
}

/// A duration in the shortest spelling [`parse_duration`] reads back exactly.
fn spell_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    for (unit, size) in [
        ("h", 3_600_000_000_000u128),
        ("m", 60_000_000_000),
        ("s", 1_000_000_000),
        ("ms", 1_000_000),
        ("us", 1_000),
    ] {
        if nanos.is_multiple_of(size) && nanos > 0 {
            return format!("{}{unit}", nanos / size);
        }
    }
    format!("{nanos}ns")
}

impl FromStr for Staleness {
    type Err = OptionError;
    fn from_str(text: &str) -> Result<Self, OptionError> {
        let how = "it is strong, exact:DUR, max:DUR, read:RFC3339 or min-read:RFC3339 \
                   (DUR like 10s or 250ms)";
        let bad = || OptionError::new("staleness", text, how);
        let trimmed = text.trim();
        if trimmed == "strong" {
            return Ok(Staleness::Strong);
        }
        let (kind, value) = trimmed.split_once(':').ok_or_else(bad)?;
        let duration = || parse_duration(value).map_err(|_| bad());
        let timestamp = || Timestamp::parse(value).map_err(|_| bad());
        match kind {
            "exact" => Ok(Staleness::Exact(duration()?)),
            "max" => Ok(Staleness::Max(duration()?)),
            "read" => Ok(Staleness::ReadAt(timestamp()?)),
            "min-read" => Ok(Staleness::MinRead(timestamp()?)),
            _ => Err(bad()),
        }
    }
}

impl Serialize for Staleness {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Staleness {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// DirectedReadOptions.ReplicaSelection.type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplicaType {
    /// READ_WRITE.
    ReadWrite,
    /// READ_ONLY.
    ReadOnly,
}

/// One replica selection: a location (a region such as `us-east1`), and optionally its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaSelection {
    /// The location.
    pub location: String,
    /// The replica type; any when `None`.
    pub kind: Option<ReplicaType>,
}

/// Which replicas may serve the read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirectedReads {
    /// Only these, in order of preference (`--include-replicas`).
    Include(Vec<ReplicaSelection>),
    /// Any but these (`--exclude-replicas`).
    Exclude(Vec<ReplicaSelection>),
}

impl DirectedReads {
    /// `LOC[:READ_ONLY|READ_WRITE],...`, to include (`exclude` false) or exclude.
    pub fn parse(text: &str, exclude: bool) -> Result<Self, OptionError> {
        let name = if exclude {
            "exclude-replicas"
        } else {
            "include-replicas"
        };
        let how = "it is LOCATION[:READ_ONLY|READ_WRITE], comma-separated";
        let mut replicas = Vec::new();
        for part in text.split(',').map(str::trim) {
            let (location, kind) = match part.split_once(':') {
                None => (part, None),
                Some((location, "READ_ONLY")) => (location, Some(ReplicaType::ReadOnly)),
                Some((location, "READ_WRITE")) => (location, Some(ReplicaType::ReadWrite)),
                Some(_) => return Err(OptionError::new(name, text, how)),
            };
            let valid = !location.is_empty()
                && location
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !valid {
                return Err(OptionError::new(name, text, how));
            }
            replicas.push(ReplicaSelection {
                location: location.to_owned(),
                kind,
            });
        }
        Ok(if exclude {
            DirectedReads::Exclude(replicas)
        } else {
            DirectedReads::Include(replicas)
        })
    }

    fn spelled(replicas: &[ReplicaSelection]) -> String {
        replicas
            .iter()
            .map(|r| match r.kind {
                None => r.location.clone(),
                Some(ReplicaType::ReadOnly) => format!("{}:READ_ONLY", r.location),
                Some(ReplicaType::ReadWrite) => format!("{}:READ_WRITE", r.location),
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The option's name and value, as the command line spells them.
    pub fn describe(&self) -> (&'static str, String) {
        match self {
            DirectedReads::Include(r) => ("include-replicas", Self::spelled(r)),
            DirectedReads::Exclude(r) => ("exclude-replicas", Self::spelled(r)),
        }
    }
}

/// How a partitioned read is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Partitioned {
    /// Read the partitions with Data Boost (independent compute).
    pub data_boost: bool,
    /// The most partitions to ask for (a hint to the server).
    pub max_partitions: Option<u32>,
}

/// Everything about how a query is asked, besides its SQL, parameters and mode. The default is
/// what a plain request carries: nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestOptions {
    /// RequestOptions.priority.
    pub priority: Option<Priority>,
    /// RequestOptions.request_tag.
    pub request_tag: Option<String>,
    /// The timestamp bound; with none the request names no transaction (a strong single-use read).
    pub staleness: Option<Staleness>,
    /// QueryOptions.optimizer_version.
    pub optimizer_version: Option<String>,
    /// QueryOptions.optimizer_statistics_package.
    pub optimizer_statistics_package: Option<String>,
    /// DirectedReadOptions.
    pub directed_reads: Option<DirectedReads>,
    /// Read as partitions (PartitionQuery, then every partition streamed in parallel).
    pub partitioned: Option<Partitioned>,
}

/// The longest request tag the API keeps (longer ones are truncated).
pub const MAX_REQUEST_TAG: usize = 50;

impl RequestOptions {
    /// Checks the combination before anything runs: max staleness and a min read timestamp are for
    /// single-use reads only, and a partitioned read is not one; tags are bounded.
    pub fn check(&self) -> Result<(), OptionError> {
        if let (Some(staleness), Some(_)) = (self.staleness, self.partitioned)
            && staleness.single_use_only()
        {
            return Err(OptionError::new(
                "staleness",
                &staleness.to_string(),
                "max staleness and min-read are only for single-use reads; a partitioned read \
                 runs in a read-only transaction that outlives its calls (use exact or read)",
            ));
        }
        if let Some(tag) = &self.request_tag
            && (tag.len() > MAX_REQUEST_TAG
                || !tag.bytes().all(|b| (32..=126).contains(&b))
                || tag.starts_with('_'))
        {
            return Err(OptionError::new(
                "request-tag",
                &crate::report::printable(tag),
                "a tag is at most 50 printable ASCII characters, not starting with '_' \
                 (Spanner would truncate or change it, and its statistics would not match)",
            ));
        }
        if self
            .partitioned
            .is_some_and(|p| p.max_partitions == Some(0))
        {
            return Err(OptionError::new(
                "max-partitions",
                "0",
                "at least one partition",
            ));
        }
        Ok(())
    }

    /// Each option that is set, as (name, value) in the command line's spelling: what a report
    /// records and a comparison names.
    pub fn describe(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let mut push = |name: &str, value: String| out.push((name.to_owned(), value));
        if let Some(p) = self.priority {
            push("priority", p.as_str().to_owned());
        }
        if let Some(tag) = &self.request_tag {
            push("request-tag", tag.clone());
        }
        if let Some(s) = self.staleness {
            push("staleness", s.to_string());
        }
        if let Some(v) = &self.optimizer_version {
            push("optimizer-version", v.clone());
        }
        if let Some(p) = &self.optimizer_statistics_package {
            push("optimizer-statistics-package", p.clone());
        }
        if let Some(d) = &self.directed_reads {
            let (name, value) = d.describe();
            push(name, value);
        }
        if let Some(p) = self.partitioned {
            push("partitioned", "true".into());
            if p.data_boost {
                push("data-boost", "true".into());
            }
            if let Some(n) = p.max_partitions {
                push("max-partitions", n.to_string());
            }
        }
        out
    }
}

/// Why a partitioned read must run in normal mode, as Spanner (and the emulator) refuse the others.
pub const PARTITIONED_MODE: &str = "a partitioned read runs in normal mode: Spanner returns no \
    statistics or plan for partitions (use --query-mode normal)";

/// An option that cannot be used as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--{option} {value:?}: {why}")]
pub struct OptionError {
    /// The option's name, as the command line spells it.
    pub option: String,
    /// The value given.
    pub value: String,
    /// What is wrong, or how to write it.
    pub why: String,
}

impl OptionError {
    fn new(option: &str, value: &str, why: &str) -> Self {
        OptionError {
            option: option.to_owned(),
            value: value.to_owned(),
            why: why.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staleness_reads_and_prints_as_the_command_line_spells_it() {
        for text in [
            "strong",
            "exact:10s",
            "max:250ms",
            "exact:1500ms",
            "read:2026-12-01T10:00:00Z",
            "min-read:2026-12-01T10:00:00.5Z",
        ] {
            let staleness: Staleness = text.parse().expect(text);
            assert_eq!(staleness.to_string(), text);
        }
        assert_eq!(
            "exact:2m".parse::<Staleness>(),
            Ok(Staleness::Exact(Duration::from_secs(120)))
        );
        for bad in [
            "",
            "stale",
            "exact",
            "exact:10",
            "max:-1s",
            "read:yesterday",
            "in:10s",
        ] {
            let error = bad.parse::<Staleness>().expect_err(bad);
            assert!(error.to_string().contains("exact:DUR"), "{error}");
        }
    }

    #[test]
    fn replicas_read_as_locations_with_an_optional_type() {
        let include = DirectedReads::parse("us-east1:READ_ONLY,us-west1", false).expect("valid");
        assert_eq!(
            include,
            DirectedReads::Include(vec![
                ReplicaSelection {
                    location: "us-east1".into(),
                    kind: Some(ReplicaType::ReadOnly)
                },
                ReplicaSelection {
                    location: "us-west1".into(),
                    kind: None
                },
            ])
        );
        assert_eq!(
            include.describe(),
            ("include-replicas", "us-east1:READ_ONLY,us-west1".to_owned())
        );
        for bad in ["", "us-east1:READ_MOSTLY", "us east1", "a,,b"] {
            assert!(DirectedReads::parse(bad, true).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn combinations_the_api_refuses_are_refused_before_anything_runs() {
        let partitioned = Some(Partitioned::default());
        for staleness in ["max:10s", "min-read:2026-12-01T10:00:00Z"] {
            let options = RequestOptions {
                staleness: Some(staleness.parse().expect("valid")),
                partitioned,
                ..RequestOptions::default()
            };
            let error = options.check().expect_err(staleness);
            assert!(
                error.to_string().contains("only for single-use reads"),
                "{error}"
            );
        }
        for staleness in ["strong", "exact:10s", "read:2026-12-01T10:00:00Z"] {
            let options = RequestOptions {
                staleness: Some(staleness.parse().expect("valid")),
                partitioned,
                ..RequestOptions::default()
            };
            assert_eq!(options.check(), Ok(()), "{staleness}");
        }
        for tag in ["t".repeat(51), "_hidden".into(), "caf\u{e9}".into()] {
            let options = RequestOptions {
                request_tag: Some(tag.clone()),
                ..RequestOptions::default()
            };
            assert!(options.check().is_err(), "{tag:?}");
        }
        let fine = RequestOptions {
            request_tag: Some("app=profiler,step=3".into()),
            ..RequestOptions::default()
        };
        assert_eq!(fine.check(), Ok(()));
        let no_partitions = RequestOptions {
            partitioned: Some(Partitioned {
                max_partitions: Some(0),
                ..Partitioned::default()
            }),
            ..RequestOptions::default()
        };
        assert!(no_partitions.check().is_err());
    }

    #[test]
    fn a_description_names_every_option_that_is_set() {
        assert!(RequestOptions::default().describe().is_empty());
        let options = RequestOptions {
            priority: Some(Priority::Low),
            request_tag: Some("app=profiler".into()),
            staleness: Some(Staleness::Exact(Duration::from_secs(10))),
            optimizer_version: Some("5".into()),
            optimizer_statistics_package: Some("auto_20240101".into()),
            directed_reads: Some(DirectedReads::Exclude(vec![ReplicaSelection {
                location: "eu".into(),
                kind: None,
            }])),
            partitioned: Some(Partitioned {
                data_boost: true,
                max_partitions: Some(4),
            }),
        };
        let names: Vec<String> = options.describe().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "priority",
                "request-tag",
                "staleness",
                "optimizer-version",
                "optimizer-statistics-package",
                "exclude-replicas",
                "partitioned",
                "data-boost",
                "max-partitions"
            ]
        );
    }
}
