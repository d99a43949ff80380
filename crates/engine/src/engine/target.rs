//! What a run talks to, and how the engine reaches it: the [`Target`] (the built-in local
//! instance, a plaintext endpoint such as the emulator, or Cloud Spanner), and [`connect`], which
//! starts the local instance once for a run (or reaches the one a [`LocalKeeper`] keeps across
//! runs) and hands the client an [`Endpoint`]. The client knows endpoints only; the server is
//! started here, beside it.

use std::sync::Arc;

use super::keeper::{Kept, LocalKeeper, StartLocalError};
use crate::client::Endpoint;
use crate::client::cloud::CloudTarget;
use crate::kind::QueryMode;
use crate::server::{LocalInstance, ServerConfig};

/// Where to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// The built-in local instance, started in-process for the run.
    Local(ServerConfig),
    /// The built-in local instance as [`Target::Local`] starts it, but kept serving across runs
    /// by the keeper's holder (the window): a run reaches the one running with this
    /// configuration, or starts it.
    Kept(LocalKeeper, ServerConfig),
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
            Target::Local(_) | Target::Kept(..) | Target::Cloud(_) => QueryMode::WithStats,
        }
    }

    /// How a report names the target: `local`, `endpoint HOST:PORT`, `cloud projects/…`.
    pub fn report_name(&self) -> String {
        match self {
            Target::Local(_) | Target::Kept(..) => "local".into(),
            Target::Endpoint(h) => format!("endpoint {h}"),
            Target::Cloud(c) => format!("cloud {}", c.database_name()),
        }
    }
}

/// A target made reachable: the endpoint the client connects to, and the local instance behind it
/// when the target is the local one (stopped when this is dropped, unless it is kept).
#[derive(Debug)]
pub struct Connected {
    /// Where sessions connect.
    pub endpoint: Endpoint,
    instance: Option<Instance>,
}

/// The local instance behind a run: its own, or a kept one it holds while it runs.
#[derive(Debug)]
enum Instance {
    Own(LocalInstance),
    Kept(Arc<Kept>),
}

impl Connected {
    /// The local instance the run talks to, if the target is the local one.
    pub fn instance(&self) -> Option<&LocalInstance> {
        match self.instance.as_ref()? {
            Instance::Own(instance) => Some(instance),
            Instance::Kept(kept) => Some(kept.instance()),
        }
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
                instance: Some(Instance::Own(instance)),
            }
        }
        Target::Kept(keeper, config) => {
            let kept = keeper.instance(config).await?;
            Connected {
                endpoint: Endpoint::local(kept.instance().host_port()),
                instance: Some(Instance::Kept(kept)),
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
        // A kept instance is the same target to a report, and asked the same way.
        let kept = Target::Kept(LocalKeeper::default(), ServerConfig::default());
        assert_eq!(kept.report_name(), "local");
        assert_eq!(kept.default_mode(), QueryMode::WithStats);
    }

    #[tokio::test]
    async fn a_kept_instance_outlives_the_run_that_started_it_and_serves_the_next() {
        let keeper = LocalKeeper::default();
        let config = ServerConfig {
            seed23_rows: 10,
            ..ServerConfig::default()
        };
        let target = Target::Kept(keeper.clone(), config);
        let first = connect(&target).await.expect("starts");
        let address = first.instance().expect("the local instance").addr();
        drop(first);
        let second = connect(&target).await.expect("kept");
        assert_eq!(second.instance().expect("the same").addr(), address);
        assert_eq!(
            second.endpoint.description(),
            format!("local instance {address}")
        );
        drop(second);
        assert_eq!(keeper.address(), Some(address));
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
