//! How long an ABORTED asks the client to wait: google.rpc.RetryInfo, read from the status details
//! (`grpc-status-details-bin`, a google.rpc.Status whose details hold a
//! `type.googleapis.com/google.rpc.RetryInfo`) or, as older clients read it, from the binary trailer
//! `google.rpc.retryinfo-bin`. The details are read first; either alone is honoured.

use std::time::Duration;

use prost::Message;

use crate::proto::google::rpc;

/// The type URL of a RetryInfo in a status's details.
pub const RETRY_INFO_TYPE: &str = "type.googleapis.com/google.rpc.RetryInfo";

/// The binary trailer some servers (and older clients) carry RetryInfo in.
pub const RETRY_INFO_TRAILER: &str = "google.rpc.retryinfo-bin";

/// Where a RetryInfo was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetrySource {
    /// The status details.
    Details,
    /// The `google.rpc.retryinfo-bin` trailer.
    Trailer,
}

impl RetrySource {
    /// Its name in reports: `details` or `trailer`.
    pub fn as_str(self) -> &'static str {
        match self {
            RetrySource::Details => "details",
            RetrySource::Trailer => "trailer",
        }
    }
}

/// The longest delay honoured as asked: a hostile or broken server asking for hours is capped.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// The retry delay `status` asks for, and where it was found; `None` when it carries none (or one
/// that cannot be read: a negative or malformed duration).
pub fn retry_delay(status: &tonic::Status) -> Option<(Duration, RetrySource)> {
    from_details(status.details())
        .map(|d| (d, RetrySource::Details))
        .or_else(|| {
            let bytes = status
                .metadata()
                .get_bin(RETRY_INFO_TRAILER)?
                .to_bytes()
                .ok()?;
            from_retry_info(&bytes).map(|d| (d, RetrySource::Trailer))
        })
}

fn from_details(details: &[u8]) -> Option<Duration> {
    if details.is_empty() {
        return None;
    }
    let status = rpc::Status::decode(details).ok()?;
    status
        .details
        .iter()
        .filter(|any| any.type_url == RETRY_INFO_TYPE)
        .find_map(|any| from_retry_info(&any.value))
}

fn from_retry_info(bytes: &[u8]) -> Option<Duration> {
    let delay = rpc::RetryInfo::decode(bytes).ok()?.retry_delay?;
    let seconds = u64::try_from(delay.seconds).ok()?;
    let nanos = u32::try_from(delay.nanos)
        .ok()
        .filter(|n| *n < 1_000_000_000)?;
    Some(Duration::new(seconds, nanos).min(MAX_RETRY_DELAY))
}

/// The encoded google.rpc.Status for an ABORTED that asks for `delay` (the details a server sends,
/// and that tests and the local instance build).
pub fn aborted_details(message: &str, delay: Duration) -> Vec<u8> {
    rpc::Status {
        code: tonic::Code::Aborted as i32,
        message: message.to_owned(),
        details: vec![prost_types::Any {
            type_url: RETRY_INFO_TYPE.to_owned(),
            value: retry_info(delay),
        }],
    }
    .encode_to_vec()
}

/// An encoded RetryInfo asking for `delay`.
pub fn retry_info(delay: Duration) -> Vec<u8> {
    rpc::RetryInfo {
        retry_delay: Some(prost_types::Duration {
            seconds: i64::try_from(delay.as_secs()).unwrap_or(i64::MAX),
            nanos: delay.subsec_nanos() as i32,
        }),
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::metadata::{MetadataMap, MetadataValue};

    #[test]
    fn a_retry_delay_is_read_from_the_details() {
        let details = aborted_details("aborted", Duration::from_millis(20));
        let status = tonic::Status::with_details(tonic::Code::Aborted, "aborted", details.into());
        assert_eq!(
            retry_delay(&status),
            Some((Duration::from_millis(20), RetrySource::Details))
        );
    }

    #[test]
    fn a_retry_delay_only_in_the_trailer_is_read_there() {
        let mut trailers = MetadataMap::new();
        trailers.insert_bin(
            RETRY_INFO_TRAILER,
            MetadataValue::from_bytes(&retry_info(Duration::from_millis(35))),
        );
        let status = tonic::Status::with_metadata(tonic::Code::Aborted, "aborted", trailers);
        assert_eq!(
            retry_delay(&status),
            Some((Duration::from_millis(35), RetrySource::Trailer))
        );
    }

    #[test]
    fn the_details_win_over_the_trailer_and_nothing_readable_is_none() {
        let mut trailers = MetadataMap::new();
        trailers.insert_bin(
            RETRY_INFO_TRAILER,
            MetadataValue::from_bytes(&retry_info(Duration::from_millis(35))),
        );
        let details = aborted_details("aborted", Duration::from_millis(5));
        let both = tonic::Status::with_details_and_metadata(
            tonic::Code::Aborted,
            "aborted",
            details.into(),
            trailers,
        );
        assert_eq!(
            retry_delay(&both),
            Some((Duration::from_millis(5), RetrySource::Details))
        );
        let garbage = tonic::Status::with_details(
            tonic::Code::Aborted,
            "aborted",
            vec![0xff, 0xff, 0xff].into(),
        );
        assert_eq!(retry_delay(&garbage), None);
        assert_eq!(retry_delay(&tonic::Status::aborted("plain")), None);
    }

    #[test]
    fn a_delay_of_hours_is_capped_and_a_negative_one_ignored() {
        let long = rpc::RetryInfo {
            retry_delay: Some(prost_types::Duration {
                seconds: 36_000,
                nanos: 0,
            }),
        }
        .encode_to_vec();
        assert_eq!(from_retry_info(&long), Some(MAX_RETRY_DELAY));
        let negative = rpc::RetryInfo {
            retry_delay: Some(prost_types::Duration {
                seconds: -1,
                nanos: 0,
            }),
        }
        .encode_to_vec();
        assert_eq!(from_retry_info(&negative), None);
    }
}
