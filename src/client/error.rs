//! `ClientError`: why a session could not be opened, a query prepared, or a call made. Each variant
//! says what failed and where; the ones that carry an error that cannot be cloned hold it in an
//! `Arc`, so the engine can hand the same error to every listener.

use std::sync::Arc;
use std::time::Duration;

use super::auth::AuthError;
use super::cloud::CloudError;
use super::params::ParamError;
use crate::server::StartError;

/// Why talking to an instance failed before or around a query (the query's own failures are
/// [`IterationError`](super::iteration::IterationError)s).
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClientError {
    /// The built-in local instance could not start.
    #[error("cannot start the local instance: {0}")]
    StartLocal(Arc<StartError>),
    /// Nothing answered the connection attempt in time.
    #[error("cannot reach {endpoint}: no answer within {} s", .after.as_secs())]
    NoAnswer {
        /// The endpoint as given.
        endpoint: String,
        /// How long it was waited for.
        after: Duration,
    },
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
    #[error("cannot create a session in {database}: {}", .status.message())]
    CreateSession {
        /// The database's full name.
        database: String,
        /// What the server answered.
        status: tonic::Status,
    },
    /// DeleteSession was refused.
    #[error("cannot delete the session {session}: {}", .status.message())]
    DeleteSession {
        /// The session's name.
        session: String,
        /// What the server answered.
        status: tonic::Status,
    },
    /// A query parameter cannot be sent.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// A runtime for the calls could not be started.
    #[error("cannot start a runtime: {0}")]
    Runtime(Arc<std::io::Error>),
}

impl From<AuthError> for ClientError {
    fn from(e: AuthError) -> Self {
        ClientError::Auth(Arc::new(e))
    }
}

impl From<CloudError> for ClientError {
    fn from(e: CloudError) -> Self {
        ClientError::Cloud(Arc::new(e))
    }
}

impl From<StartError> for ClientError {
    fn from(e: StartError) -> Self {
        ClientError::StartLocal(Arc::new(e))
    }
}
