//! The first query taken apart (`profile --cold`): each cold iteration opens a new connection
//! ([`Dialer`], every step timed), makes a new token source and fetches its first token (Cloud
//! Spanner only), and creates a new session, before its query runs. Nothing is shared with the
//! run's other iterations but the TLS configuration (its trust roots are read once per run).

use std::time::{Duration, Instant};

use super::cloud::CloudTarget;
use super::connect::Dialer;
use super::endpoint::{DatabasePath, Endpoint};
use super::error::ClientError;
use super::headers::HeaderOptions;
use super::session::{CallHeaders, Opened, Session, first_token};
use super::session_kind::SessionKind;
use super::timeouts::Timeouts;
use crate::report::{ColdStep, ColdSteps};

/// Where cold iterations connect, made once per run.
#[derive(Debug, Clone)]
pub struct ColdStart {
    dialer: Dialer,
    cloud: Option<CloudTarget>,
    /// The optional headers every call of a cold session carries, as a warm one's do.
    options: HeaderOptions,
}

impl ColdStart {
    /// Cold starts against `endpoint` (for the local instance, the one the run started: a cold
    /// start is a new connection, not a new instance).
    /// Its sessions' calls carry the optional headers `options` asks for.
    pub fn new(endpoint: &Endpoint, options: HeaderOptions) -> Result<ColdStart, ClientError> {
        let (address, cloud, ca) = match endpoint {
            Endpoint::Plaintext { host_port, .. } => (host_port.clone(), None, None),
            Endpoint::Cloud(c) => {
                c.check_endpoint()?;
                (c.endpoint.clone(), Some(c.clone()), c.ca_file.clone())
            }
        };
        Ok(ColdStart {
            dialer: Dialer::new(&address, ca.as_deref())?,
            cloud,
            options,
        })
    }

    /// A new connection, token source and session of `kind` in `database`, each step timed and held
    /// to its limit (`timeouts.connect` for the connection, `timeouts.call` for the token and for
    /// CreateSession); an error names the step.
    pub async fn open(
        &self,
        database: &DatabasePath,
        timeouts: Timeouts,
        kind: SessionKind,
    ) -> Result<(Session, ColdSteps), ClientError> {
        let endpoint = self.dialer.endpoint().to_owned();
        let (channel, mut steps) = self.dialer.connect(timeouts.connect).await?;
        let started = Instant::now();
        let (headers, description) = match &self.cloud {
            Some(target) => {
                let tokens = first_token(target, timeouts.call).await?;
                (
                    CallHeaders::cloud(target, tokens)?,
                    format!("Cloud Spanner {endpoint}"),
                )
            }
            None => (
                CallHeaders::plain(database)?,
                format!("endpoint {endpoint}"),
            ),
        };
        let token = if self.cloud.is_some() {
            started.elapsed()
        } else {
            Duration::ZERO
        };
        let creating = Instant::now();
        let opened = Opened {
            channel,
            headers,
            endpoint,
            description,
            plaintext: !self.dialer.is_tls(),
        };
        let session = Session::create(opened, database, timeouts, kind, self.options).await?;
        steps.set(ColdStep::Token, token.as_secs_f64() * 1e3);
        steps.set(ColdStep::Session, creating.elapsed().as_secs_f64() * 1e3);
        Ok((session, steps))
    }
}
