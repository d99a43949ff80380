//! What every admin and data call outside a profiled query shares: the resource-prefix header,
//! the bound on its answers, and its errors in words.

use std::time::Duration;

/// The header that names the resource a call is about.
const RESOURCE_PREFIX: &str = "google-cloud-resource-prefix";
/// Responses these calls may receive (a large query result, say).
pub(super) const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// What went wrong while setting up or loading a database.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// A call failed: the call, the resource it was about and the server's status.
    #[error("{call} {resource}: {message} ({code:?})")]
    Rpc {
        /// The RPC, e.g. `CreateDatabase`.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The status code.
        code: tonic::Code,
        /// The server's message.
        message: String,
    },
    /// The endpoint did not answer a call within the channel's limit (see
    /// [`connect_plaintext_answering_within`](super::connect_plaintext_answering_within)).
    #[error("{call} {resource}: the endpoint did not answer in time (the call limit)")]
    Unanswered {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
    },
    /// The connection broke before the call was answered.
    #[error("{call} {resource}: the connection broke: {reason}")]
    Transport {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The transport's error and its sources.
        reason: String,
    },
    /// The endpoint is not a gRPC server.
    #[error("{call} {resource}: the endpoint does not speak gRPC: {what}")]
    NotGrpc {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// What it did instead.
        what: String,
    },
    /// A long-running operation finished with an error.
    #[error("{call} {resource}: the operation failed: {message} (code {code})")]
    Operation {
        /// The RPC that started the operation.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The `google.rpc.Code` of the operation's error.
        code: i32,
        /// The server's message.
        message: String,
    },
    /// A long-running operation was not done in time.
    #[error("{call} {resource}: the operation {operation} was not done after {} s", timeout.as_secs())]
    Timeout {
        /// The RPC that started the operation.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// The operation's name.
        operation: String,
        /// How long it was waited for.
        timeout: Duration,
    },
    /// A resource name that cannot travel in a header (not visible ASCII).
    #[error("{resource:?} is not a valid resource name")]
    BadName {
        /// The offending name.
        resource: String,
    },
    /// A row whose width is not the table's.
    #[error("table {table}: a row has {found} values, the table has {expected} columns")]
    RowWidth {
        /// The table name.
        table: String,
        /// The number of columns of the table.
        expected: usize,
        /// The number of values in the row.
        found: usize,
    },
    /// The server answered with something unexpected.
    #[error("{call} {resource}: unexpected response: {detail}")]
    Unexpected {
        /// The RPC.
        call: &'static str,
        /// The full resource name.
        resource: String,
        /// What was unexpected.
        detail: String,
    },
}

/// `message` with the resource-prefix header naming `resource`.
pub(super) fn request<T>(message: T, resource: &str) -> Result<tonic::Request<T>, AdminError> {
    let value = resource.parse().map_err(|_| AdminError::BadName {
        resource: resource.to_owned(),
    })?;
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(RESOURCE_PREFIX, value);
    Ok(request)
}

/// The error of call `call` about `resource` that ended in `status`.
pub(super) fn rpc_error(call: &'static str, resource: &str, status: &tonic::Status) -> AdminError {
    let resource = resource.to_owned();
    if let Some(what) = super::not_grpc(status) {
        return AdminError::NotGrpc {
            call,
            resource,
            what,
        };
    }
    if status.code() == tonic::Code::Cancelled && status.message() == "Timeout expired" {
        return AdminError::Unanswered { call, resource };
    }
    if super::broke_in_transport(status) {
        return AdminError::Transport {
            call,
            resource,
            reason: super::error_chain(status),
        };
    }
    AdminError::Rpc {
        call,
        resource,
        code: status.code(),
        message: status.message().to_owned(),
    }
}
