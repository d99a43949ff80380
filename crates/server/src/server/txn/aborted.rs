//! ABORTED as Spanner sends it: the status with a `google.rpc.RetryInfo` in its details (the
//! `grpc-status-details-bin` trailer, a `google.rpc.Status`) and, as older clients read it, the
//! encoded RetryInfo alone in the binary trailer `google.rpc.retryinfo-bin`.

use std::time::Duration;

use prost::Message;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};

use super::journal::AbortCause;
use crate::proto::google::rpc;
use crate::report::WoundSeen;
use crate::server::knobs::KnobSettings;
use crate::wire::result_stats::WOUNDED_BY_TRAILER;

/// The type URL of RetryInfo in a status's details.
pub const RETRY_INFO_TYPE: &str = "type.googleapis.com/google.rpc.RetryInfo";
/// The binary trailer older clients read RetryInfo from.
pub const RETRY_INFO_TRAILER: &str = "google.rpc.retryinfo-bin";

/// ABORTED with `message`, asking the client to wait `retry_delay` before it runs the
/// transaction again.
pub fn aborted(message: &str, retry_delay: Duration) -> Status {
    let info = rpc::RetryInfo {
        retry_delay: Some(prost_types::Duration {
            seconds: i64::try_from(retry_delay.as_secs()).unwrap_or(i64::MAX),
            nanos: i32::try_from(retry_delay.subsec_nanos()).unwrap_or(0),
        }),
    }
    .encode_to_vec();
    let details = rpc::Status {
        code: Code::Aborted as i32,
        message: message.to_owned(),
        details: vec![prost_types::Any {
            type_url: RETRY_INFO_TYPE.to_owned(),
            value: info.clone(),
        }],
    }
    .encode_to_vec();
    let mut trailers = MetadataMap::new();
    trailers.insert_bin(RETRY_INFO_TRAILER, MetadataValue::from_bytes(&info));
    Status::with_details_and_metadata(Code::Aborted, message, details.into(), trailers)
}

/// The retry delay an abort for `cause` asks for: a scripted or idle abort the knob's
/// `abort_retry_delay_ms`, an abort by the lock table (a conflict, over once its locks are freed)
/// `conflict_retry_delay_ms`.
pub fn retry_delay_for(cause: AbortCause, knobs: &KnobSettings) -> Duration {
    Duration::from_millis(match cause {
        AbortCause::Scripted | AbortCause::Idle => knobs.abort_retry_delay_ms,
        AbortCause::Wounded
        | AbortCause::LockWaitDeadline
        | AbortCause::Validation
        | AbortCause::SchemaChanged
        | AbortCause::Busy => knobs.conflict_retry_delay_ms,
    })
}

/// `status` with the wound that aborted it in its `spanprof-wounded-by` trailer (JSON), when
/// there is one.
pub fn with_wound(mut status: Status, wound: Option<&WoundSeen>) -> Status {
    let text = wound.and_then(|w| serde_json::to_string(w).ok());
    if let Some(value) = text.and_then(|t| MetadataValue::try_from(t).ok()) {
        status.metadata_mut().insert(WOUNDED_BY_TRAILER, value);
    }
    status
}

/// `status` with RetryInfo of `retry_delay` when it is an ABORTED without details, else as it is.
pub fn with_retry_info(status: Status, retry_delay: Duration) -> Status {
    if status.code() == Code::Aborted && status.details().is_empty() {
        aborted(status.message(), retry_delay)
    } else {
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_info_is_in_the_details_and_the_trailer() {
        let status = aborted("the knob", Duration::from_millis(20));
        assert_eq!(status.code(), Code::Aborted);
        let details = rpc::Status::decode(status.details()).expect("a google.rpc.Status");
        assert_eq!(details.details[0].type_url, RETRY_INFO_TYPE);
        let info = rpc::RetryInfo::decode(&details.details[0].value[..]).expect("RetryInfo");
        assert_eq!(info.retry_delay.map(|d| d.nanos), Some(20_000_000));
        let trailer = status
            .metadata()
            .get_bin(RETRY_INFO_TRAILER)
            .and_then(|v| v.to_bytes().ok())
            .expect("the trailer");
        assert_eq!(rpc::RetryInfo::decode(trailer).ok(), Some(info));
    }
}
