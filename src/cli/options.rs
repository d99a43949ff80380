//! The request options on the command line (`--priority`, `--staleness`, `--partitioned`...), read
//! into the client's plain [`RequestOptions`]. Combinations clap can see are refused by clap; the
//! rest by [`RequestOptions::check`] before anything runs.

use crate::client::{DirectedReads, OptionError, Partitioned, Priority, RequestOptions, Staleness};

/// How the query is asked: priority, tag, staleness, optimizer, replicas, partitions.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RequestOptionArgs {
    /// RequestOptions.priority: low, medium or high.
    #[arg(long, value_name = "PRIORITY", value_parser = parse_priority)]
    pub priority: Option<Priority>,
    /// RequestOptions.request_tag (at most 50 printable ASCII characters).
    #[arg(long, value_name = "TAG")]
    pub request_tag: Option<String>,
    /// The read's timestamp bound: strong, exact:DUR, max:DUR, read:RFC3339 or min-read:RFC3339
    /// (DUR like 10s or 250ms; max and min-read only for single-use reads).
    #[arg(long, value_name = "BOUND", value_parser = parse_staleness)]
    pub staleness: Option<Staleness>,
    /// QueryOptions.optimizer_version (a number, or latest).
    #[arg(long, value_name = "V")]
    pub optimizer_version: Option<String>,
    /// QueryOptions.optimizer_statistics_package.
    #[arg(long, value_name = "P")]
    pub optimizer_statistics_package: Option<String>,
    /// Directed reads: only these replicas, LOC[:READ_ONLY|READ_WRITE],...
    #[arg(
        long,
        value_name = "LOC[:TYPE],...",
        conflicts_with = "exclude_replicas"
    )]
    pub include_replicas: Option<String>,
    /// Directed reads: any replica but these, LOC[:READ_ONLY|READ_WRITE],...
    #[arg(long, value_name = "LOC[:TYPE],...")]
    pub exclude_replicas: Option<String>,
    /// Read as partitions: PartitionQuery, then every partition streamed at once; the iteration
    /// takes the wall time of them all.
    #[arg(long)]
    pub partitioned: bool,
    /// Read the partitions with Data Boost (needs --partitioned).
    #[arg(long, requires = "partitioned")]
    pub data_boost: bool,
    /// The most partitions to ask for (a hint; needs --partitioned).
    #[arg(long, value_name = "N", requires = "partitioned")]
    pub max_partitions: Option<u32>,
}

fn parse_priority(text: &str) -> Result<Priority, String> {
    text.parse().map_err(|e: OptionError| e.why)
}

fn parse_staleness(text: &str) -> Result<Staleness, String> {
    text.parse().map_err(|e: OptionError| e.why)
}

impl RequestOptionArgs {
    /// The options these arguments name, checked.
    pub fn options(&self) -> Result<RequestOptions, OptionError> {
        let directed_reads = match (&self.include_replicas, &self.exclude_replicas) {
            (Some(include), _) => Some(DirectedReads::parse(include, false)?),
            (None, Some(exclude)) => Some(DirectedReads::parse(exclude, true)?),
            (None, None) => None,
        };
        let options = RequestOptions {
            priority: self.priority,
            request_tag: self.request_tag.clone(),
            staleness: self.staleness,
            optimizer_version: self.optimizer_version.clone(),
            optimizer_statistics_package: self.optimizer_statistics_package.clone(),
            directed_reads,
            partitioned: self.partitioned.then_some(Partitioned {
                data_boost: self.data_boost,
                max_partitions: self.max_partitions,
            }),
        };
        options.check()?;
        Ok(options)
    }
}
