//! `ClientError`: why a session could not be opened, a query prepared, or a call made. Each variant
//! says what failed and where; the ones that carry an error that cannot be cloned hold it in an
//! `Arc`, so the engine can hand the same error to every listener.

use std::sync::Arc;
use std::time::Duration;

use super::auth::AuthError;
use super::cloud::CloudError;
use super::params::ParamError;
use super::timeouts::Readable;

/// How long [`ClientError::diagnose`] waits for an endpoint's first bytes.
const PROBE_WAIT: Duration = Duration::from_secs(2);

/// Why talking to an instance failed before or around a query (the query's own failures are
/// [`IterationError`](super::iteration::IterationError)s).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    /// Nothing answered the connection attempt in time.
    #[error("cannot reach {endpoint}: no connection within {}", Readable(*.after))]
    NoAnswer {
        /// The endpoint as given.
        endpoint: String,
        /// How long it was waited for.
        after: Duration,
    },
    /// The endpoint took the connection but did not answer a call in time.
    #[error("{endpoint} accepted the connection but did not answer {call} within {}", Readable(*.after))]
    Unanswered {
        /// The endpoint as given.
        endpoint: String,
        /// The call it did not answer, e.g. `CreateSession`.
        call: &'static str,
        /// How long it was waited for.
        after: Duration,
    },
    /// The endpoint answered, but not as a gRPC server.
    #[error("{endpoint} does not speak gRPC ({what}): is it the right host and port?")]
    NotGrpc {
        /// The endpoint as given.
        endpoint: String,
        /// What it did instead.
        what: String,
    },
    /// The endpoint is not a `host:port` that can be connected to.
    #[error("{0}")]
    BadEndpoint(super::endpoint::EndpointError),
    /// The connection attempt failed.
    #[error("cannot reach {endpoint}: {reason}")]
    Unreachable {
        /// The endpoint as given.
        endpoint: String,
        /// The transport's error and its sources, on one line.
        reason: String,
    },
    /// The Cloud Spanner channel could not be set up.
    #[error(transparent)]
    Cloud(Arc<CloudError>),
    /// No token could be had for a call.
    #[error(transparent)]
    Auth(Arc<AuthError>),
    /// The database name cannot travel as a header (not visible ASCII).
    #[error("the database name {name:?} cannot be sent as a header")]
    BadName {
        /// The database's full name.
        name: String,
    },
    /// CreateSession was refused.
    #[error("cannot create a session in {database}: {}", super::status_words(.status))]
    CreateSession {
        /// The database's full name.
        database: String,
        /// What the server answered.
        status: tonic::Status,
    },
    /// DeleteSession was refused.
    #[error("cannot delete the session {session}: {}", super::status_words(.status))]
    DeleteSession {
        /// The session's name.
        session: String,
        /// What the server answered.
        status: tonic::Status,
    },
    /// A query parameter cannot be sent.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A request option cannot be used as given.
    #[error(transparent)]
    Option(#[from] super::options::OptionError),
    /// The server answered a call with something the API does not allow.
    #[error("{call}: unexpected answer: {detail}")]
    Unexpected {
        /// The call.
        call: &'static str,
        /// What was wrong with the answer.
        detail: String,
    },
    /// A step of a cold start failed or ran out of time (the error names the step).
    #[error(transparent)]
    Connect(#[from] super::connect::ConnectError),
    /// A runtime for the calls could not be started.
    #[error("cannot start a runtime: {0}")]
    Runtime(Arc<std::io::Error>),
}

impl ClientError {
    /// The error for `status` from `endpoint`, as [`ClientError::from_status`] makes it; when the
    /// call broke in the transport of a `plaintext` endpoint, the endpoint is asked what it speaks
    /// (see [`probe`](super::probe)) and one that does not speak HTTP/2 is [`ClientError::NotGrpc`].
    pub async fn diagnose(
        endpoint: &str,
        status: tonic::Status,
        plaintext: bool,
        otherwise: impl FnOnce(tonic::Status) -> ClientError,
    ) -> ClientError {
        if plaintext
            && super::broke_in_transport(&status)
            && let Some(what) = super::probe(endpoint, PROBE_WAIT).await
        {
            return ClientError::NotGrpc {
                endpoint: endpoint.to_owned(),
                what,
            };
        }
        Self::from_status(endpoint, status, otherwise)
    }

    /// The error for `status` from `endpoint`: [`ClientError::NotGrpc`] when the status says the
    /// endpoint is no gRPC server, else what `otherwise` makes of it.
    pub fn from_status(
        endpoint: &str,
        status: tonic::Status,
        otherwise: impl FnOnce(tonic::Status) -> ClientError,
    ) -> ClientError {
        match super::not_grpc(&status) {
            Some(what) => ClientError::NotGrpc {
                endpoint: endpoint.to_owned(),
                what,
            },
            None => otherwise(status),
        }
    }
}

impl ClientError {
    /// Whether no access token could be had (refused, unreachable, malformed, or not in time):
    /// the call was never made. A run stops after a few of these in a row.
    pub fn is_token_failure(&self) -> bool {
        use super::ConnectError;
        use crate::report::ColdStep;
        match self {
            ClientError::Auth(_) => true,
            ClientError::Connect(
                ConnectError::TimedOut { step, .. } | ConnectError::Failed { step, .. },
            ) => *step == ColdStep::Token,
            _ => false,
        }
    }
}

impl From<AuthError> for ClientError {
    /// A token that did not come in time is the connection's token step that outlived its limit
    /// (a cold start's timeline names it); any other is an auth error.
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::TimedOut { endpoint, after } => {
                ClientError::Connect(super::ConnectError::TimedOut {
                    endpoint,
                    step: crate::report::ColdStep::Token,
                    after,
                })
            }
            other => ClientError::Auth(Arc::new(other)),
        }
    }
}

impl From<CloudError> for ClientError {
    fn from(e: CloudError) -> Self {
        ClientError::Cloud(Arc::new(e))
    }
}
