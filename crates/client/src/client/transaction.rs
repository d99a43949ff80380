//! Read-only transactions as the request spells them: a `Staleness` made into the transaction
//! options of a single-use read (the session) or of the transaction a partitioned read begins.

use std::time::Duration;

use super::options::Staleness;
use crate::proto::google::spanner::v1 as pb;

/// Read-only transaction options with `staleness` as the bound, returning the read timestamp.
pub fn read_only(staleness: Staleness) -> pb::TransactionOptions {
    use pb::transaction_options::read_only::TimestampBound;
    let duration = |d: Duration| prost_types::Duration {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: d.subsec_nanos() as i32,
    };
    let timestamp = |t: crate::wire::Timestamp| prost_types::Timestamp {
        seconds: t.seconds(),
        nanos: t.nanos() as i32,
    };
    let bound = match staleness {
        Staleness::Strong => TimestampBound::Strong(true),
        Staleness::Exact(d) => TimestampBound::ExactStaleness(duration(d)),
        Staleness::Max(d) => TimestampBound::MaxStaleness(duration(d)),
        Staleness::ReadAt(t) => TimestampBound::ReadTimestamp(timestamp(t)),
        Staleness::MinRead(t) => TimestampBound::MinReadTimestamp(timestamp(t)),
    };
    pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadOnly(
            pb::transaction_options::ReadOnly {
                timestamp_bound: Some(bound),
                return_read_timestamp: true,
            },
        )),
        ..Default::default()
    }
}
