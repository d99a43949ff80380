//! Where a command runs (`--endpoint`, `--local`, `--cloud` and their details) and how long it
//! waits (`--timeout` and the other limits): the arguments `profile`, `record` and `client` share.

use std::path::PathBuf;
use std::time::Duration;

use super::serve::QueueArgs;
use crate::client::auth::Credentials;
use crate::client::cloud::CloudTarget;
use crate::client::{EndpointError, Timeouts, check_host_port, parse_duration};
use crate::engine::{DatabasePath, Target};
use crate::server::{DEFAULT_SEED23_ROWS, KnobSettings, ServerConfig};

/// Where to run: the built-in local instance (default), a plaintext endpoint, or Cloud Spanner.
#[derive(Debug, Clone, clap::Args)]
pub struct TargetArgs {
    /// A plaintext endpoint such as the emulator (host:port); defaults to $SPANNER_EMULATOR_HOST when
    /// set. Without it, the built-in local instance runs in-process.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_endpoint)]
    pub endpoint: Option<String>,
    /// Use the built-in local instance even if SPANNER_EMULATOR_HOST is set.
    #[arg(long, conflicts_with_all = ["endpoint", "cloud"])]
    pub local: bool,
    /// Cloud Spanner (TLS to spanner.googleapis.com, OAuth): needs --project, --instance, --database.
    #[arg(long, conflicts_with = "endpoint")]
    pub cloud: bool,
    /// A service-account key file for --cloud (a regular file of at most 1 MiB); without it,
    /// application default credentials (the GOOGLE_APPLICATION_CREDENTIALS file, gcloud's user
    /// login, or the metadata server).
    #[arg(long, requires = "cloud")]
    pub credentials: Option<PathBuf>,
    /// The Cloud Spanner API endpoint for --cloud: https://, or http:// to a loopback host only
    /// (127.0.0.1, ::1 or localhost: a local test server), since every call carries a token.
    #[arg(long, requires = "cloud", default_value = crate::client::cloud::DEFAULT_ENDPOINT)]
    pub cloud_endpoint: String,
    /// A PEM file of certificates to trust for an https --cloud-endpoint, besides the system's
    /// and Mozilla's roots (a local TLS stand-in's self-signed certificate, a proxy's CA).
    #[arg(long, value_name = "PEM", requires = "cloud")]
    pub cloud_ca: Option<PathBuf>,
    /// Project id.
    #[arg(long, default_value = "test-project")]
    pub project: String,
    /// Instance id.
    #[arg(long, default_value = "test-instance")]
    pub instance: String,
    /// Database id.
    #[arg(long, default_value = "test-db")]
    pub database: String,
    /// Rows in the local instance's Seed23.
    #[arg(long, default_value_t = DEFAULT_SEED23_ROWS)]
    pub rows: u64,
    /// How long to wait, and for what.
    #[command(flatten)]
    pub timeouts: TimeoutArgs,
    /// The built-in local instance as a known queue (ignored by other targets).
    #[command(flatten)]
    pub queue: QueueArgs,
}

/// How long the client waits: durations such as `10s`, `250ms`, `5m`.
#[derive(Debug, Clone, clap::Args)]
pub struct TimeoutArgs {
    /// The limit of one iteration, resumes included (sent to the server as the call's deadline).
    #[arg(long, value_name = "DUR", default_value = "10m", value_parser = parse_limit)]
    pub timeout: Duration,
    /// How long a query may take to send its first message.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = parse_limit)]
    pub first_response_timeout: Duration,
    /// How long connecting may take (TCP, TLS, HTTP/2).
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = parse_limit)]
    pub connect_timeout: Duration,
    /// How long a call such as CreateSession may take to be answered, and fetching or renewing an
    /// access token for --cloud.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = parse_limit)]
    pub call_timeout: Duration,
}

impl TimeoutArgs {
    /// The limits as the client takes them.
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: self.connect_timeout,
            call: self.call_timeout,
            first_response: self.first_response_timeout,
            iteration: self.timeout,
        }
    }
}

/// A positive duration (`10s`, `250ms`, `5m`).
pub fn parse_limit(text: &str) -> Result<Duration, String> {
    match parse_duration(text) {
        Ok(d) if d.is_zero() => Err("a limit must be longer than zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

impl TargetArgs {
    /// The target these arguments name.
    pub fn target(&self) -> Target {
        if self.cloud {
            return Target::Cloud(CloudTarget {
                project: self.project.clone(),
                instance: self.instance.clone(),
                database: self.database.clone(),
                endpoint: self.cloud_endpoint.clone(),
                credentials: match &self.credentials {
                    Some(path) => Credentials::ServiceAccountFile(path.clone()),
                    None => Credentials::ApplicationDefault,
                },
                ca_file: self.cloud_ca.clone(),
            });
        }
        let endpoint = if self.local {
            None
        } else {
            self.endpoint.clone().or_else(|| {
                std::env::var("SPANNER_EMULATOR_HOST")
                    .ok()
                    .filter(|h| !h.is_empty())
            })
        };
        match endpoint {
            Some(host_port) => Target::Endpoint(host_port),
            None => Target::Local(ServerConfig {
                port: 0,
                seed23_rows: self.rows,
                knobs: self.queue.apply(KnobSettings::default()),
                connections: Default::default(),
            }),
        }
    }

    /// The database these arguments name.
    pub fn database(&self) -> DatabasePath {
        DatabasePath {
            project: self.project.clone(),
            instance: self.instance.clone(),
            database: self.database.clone(),
        }
    }
}

/// `host:port` with the port in range.
pub fn parse_endpoint(text: &str) -> Result<String, EndpointError> {
    check_host_port(text).map(|()| text.to_owned())
}
