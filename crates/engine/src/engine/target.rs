//! What a run talks to, and how the engine reaches it: the [`Target`] (the built-in local
//! instance, a plaintext endpoint such as the emulator, or Cloud Spanner), and [`connect`], which
//! starts the local instance once for a run and hands the client an [`Endpoint`]. The client
//! knows endpoints only; the server is started here, beside it.

use std::sync::Arc;

use crate::client::Endpoint;
use crate::client::cloud::CloudTarget;
use crate::kind::QueryMode;
use crate::server::{LocalInstance, ServerConfig, StartError};

/// Where to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// The built-in local instance, started in-process for the run.
    Local(ServerConfig),
    /// A plaintext gRPC endpoint (`host:port`), such as the Cloud Spanner emulator.
    Endpoint(String),
    /// Cloud Spanner: TLS, OAuth tokens, resource and routing headers.
    Cloud(CloudTarget),
}

impl Target {
    /// The query mode a profile of this target uses unless told otherwise: one that returns the
    /// query statistics (the server's time and row count, the lost-row check). PROFILE on a
    /// plaintext endpoint, because the Cloud Spanner emulator returns no statistics in
    /// WITH_STATS; WITH_STATS elsewhere.
    pub fn default_mode(&self) -> QueryMode {
        match self {
            Target::Endpoint(_) => QueryMode::Profile,
            Target::Local(_) | Target::Cloud(_) => QueryMode::WithStats,
        }
    }

    /// How a report names the target: `local`, `endpoint HOST:PORT`, `cloud projects/…`.
    pub fn report_name(&self) -> String {
        match self {
            Target::Local(_) => "local".into(),
            Target::Endpoint(h) => format!("endpoint {h}"),
            Target::Cloud(c) => format!("cloud {}", c.database_name()),
        }
    }
}

/// The built-in local instance could not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot start the local instance: {0}")]
pub struct StartLocalError(pub Arc<StartError>);

impl From<StartError> for StartLocalError {
    fn from(e: StartError) -> Self {
        StartLocalError(Arc::new(e))
    }
}

/// A target made reachable: the endpoint the client connects to, and the local instance behind it
/// when the target is the local one (stopped when this is dropped).
#[derive(Debug)]
pub struct Connected {
    /// Where sessions connect.
    pub endpoint: Endpoint,
    instance: Option<LocalInstance>,
}

impl Connected {
    /// The local instance the run started, if the target is the local one.
    pub fn instance(&self) -> Option<&LocalInstance> {
        self.instance.as_ref()
    }
}

/// Makes `target` reachable: starts the local instance (once; hold the answer for as long as the
/// run needs it), or names the endpoint as given.
pub async fn connect(target: &Target) -> Result<Connected, StartLocalError> {
    Ok(match target {
        Target::Local(config) => {
            let instance = LocalInstance::start(config.clone()).await?;
            Connected {
                endpoint: Endpoint::local(instance.host_port()),
                instance: Some(instance),
            }
        }
        Target::Endpoint(host_port) => Connected {
            endpoint: Endpoint::plaintext(host_port.clone()),
            instance: None,
        },
        Target::Cloud(c) => Connected {
            endpoint: Endpoint::Cloud(c.clone()),
            instance: None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_names_the_target_by_kind() {
        assert_eq!(
            Target::Endpoint("127.0.0.1:9010".into()).report_name(),
            "endpoint 127.0.0.1:9010"
        );
        assert_eq!(
            Target::Local(ServerConfig::default()).report_name(),
            "local"
        );
    }

    #[tokio::test]
    async fn an_endpoint_is_named_as_given_and_starts_nothing() {
        let connected = connect(&Target::Endpoint("127.0.0.1:9010".into()))
            .await
            .expect("nothing to start");
        assert_eq!(connected.endpoint.description(), "endpoint 127.0.0.1:9010");
        assert!(connected.instance().is_none());
    }
}
