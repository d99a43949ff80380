//! The one stand-in for the Spanner service that tests run the client against, independent of the
//! local instance: on a loopback port, plaintext or over TLS with a self-signed certificate made
//! here, it answers as a [`Behaviour`] says and keeps every call it answered (the method, the
//! headers and the request). Its rooms: `service.rs` (the service, once, and what it is told),
//! `answers.rs` (the scripts of messages a query gets, the timing headers, and what a commit gets).
//!
//! It grants every CreateSession (`<database>/sessions/s1`, then `s2`...) unless told to fail
//! them; answers PartitionQuery with two partitions; answers each query as [`Queries`] says (one
//! bare value by default, a whole row, a stall, a refusal, a resumable answer broken once, or a
//! hostile one); plays a read-write transaction's other calls (BeginTransaction gives `txn-1`,
//! `txn-2`...; Commit answers as [`Commits`] says, by default with a commit timestamp, or aborting
//! the first commit with its RetryInfo where [`RetryIn`] says; Rollback succeeds); and can stall
//! DeleteSession, send timing headers ([`Timing`]) or pad its response headers.

mod answers;
mod service;

use std::sync::Arc;

use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_server::SpannerServer;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::metadata::MetadataMap;
use tonic::transport::{Identity, ServerTlsConfig};

pub use answers::{
    ABORT_MESSAGE, AFE_MS, Commits, GFE_MS, LOST_MESSAGE, MESSAGES, Queries, RETRY_SEQ,
    RETRY_TOKEN, RetryIn, Timing,
};
pub use service::{Behaviour, Body};
use service::{Log, Service};

/// A running stand-in: where it listens and what it saw. Dropping it leaves the server running.
#[derive(Clone)]
pub struct StandIn {
    /// `http://127.0.0.1:PORT`, or `https://` over TLS.
    pub endpoint: String,
    /// The self-signed certificate a client must trust (TLS only), in PEM.
    pub certificate: Option<String>,
    /// Every call answered (read through the methods below).
    pub log: Log,
}

impl StandIn {
    /// Starts a stand-in on a loopback port that answers as `behaviour` says.
    pub async fn start(behaviour: Behaviour) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a loopback port is free");
        let port = listener.local_addr().expect("a bound address").port();
        let log = Log::default();
        let service = SpannerServer::new(Service::new(behaviour, Arc::clone(&log)))
            .max_encoding_message_size(usize::MAX);
        let (mut builder, certificate) = server(behaviour.tls);
        tokio::spawn(
            builder
                .add_service(service)
                .serve_with_incoming(TcpListenerStream::new(listener)),
        );
        let scheme = if behaviour.tls { "https" } else { "http" };
        StandIn {
            endpoint: format!("{scheme}://127.0.0.1:{port}"),
            certificate,
            log,
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn host(&self) -> &str {
        self.endpoint
            .split_once("://")
            .map_or(&self.endpoint, |(_, host)| host)
    }

    fn bodies(&self) -> Vec<Body> {
        let log = self.log.lock().expect("the stand-in's log is not poisoned");
        log.iter().map(|(body, _)| body.clone()).collect()
    }

    /// Each call's request and headers, in order (DeleteSession's without its body).
    pub fn requests(&self) -> Vec<(Body, MetadataMap)> {
        self.log
            .lock()
            .expect("the stand-in's log is not poisoned")
            .clone()
    }

    /// Each call's method and headers, in order.
    pub fn calls(&self) -> Vec<(&'static str, MetadataMap)> {
        let log = self.log.lock().expect("the stand-in's log is not poisoned");
        log.iter()
            .map(|(body, headers)| (body.method(), headers.clone()))
            .collect()
    }

    /// How many calls of `method` it answered.
    pub fn count(&self, method: &str) -> usize {
        let log = self.log.lock().expect("the stand-in's log is not poisoned");
        log.iter()
            .filter(|(body, _)| body.method() == method)
            .count()
    }

    /// The ExecuteStreamingSql requests, in order.
    pub fn executes(&self) -> Vec<pb::ExecuteSqlRequest> {
        let executes = self.bodies().into_iter().filter_map(|body| match body {
            Body::ExecuteStreamingSql(request) => Some(request),
            _ => None,
        });
        executes.collect()
    }

    /// The PartitionQuery requests, in order.
    pub fn partitions(&self) -> Vec<pb::PartitionQueryRequest> {
        let partitions = self.bodies().into_iter().filter_map(|body| match body {
            Body::PartitionQuery(request) => Some(request),
            _ => None,
        });
        partitions.collect()
    }

    /// The BeginTransaction requests, in order.
    pub fn begins(&self) -> Vec<pb::BeginTransactionRequest> {
        let begins = self.bodies().into_iter().filter_map(|body| match body {
            Body::BeginTransaction(request) => Some(request),
            _ => None,
        });
        begins.collect()
    }

    /// The Commit requests, in order.
    pub fn commits(&self) -> Vec<pb::CommitRequest> {
        let commits = self.bodies().into_iter().filter_map(|body| match body {
            Body::Commit(request) => Some(request),
            _ => None,
        });
        commits.collect()
    }

    /// The Rollback requests, in order.
    pub fn rollbacks(&self) -> Vec<pb::RollbackRequest> {
        let rollbacks = self.bodies().into_iter().filter_map(|body| match body {
            Body::Rollback(request) => Some(request),
            _ => None,
        });
        rollbacks.collect()
    }

    /// Whether each CreateSession asked for a multiplexed session.
    pub fn multiplexed_asked(&self) -> Vec<bool> {
        let asked = self.bodies().into_iter().filter_map(|body| match body {
            Body::CreateSession(request) => Some(request.session.is_some_and(|s| s.multiplexed)),
            _ => None,
        });
        asked.collect()
    }

    /// Forgets the calls seen so far.
    pub fn forget(&self) {
        self.log
            .lock()
            .expect("the stand-in's log is not poisoned")
            .clear();
    }
}

/// A server builder, over TLS with a self-signed certificate for 127.0.0.1 when `tls`; and the
/// certificate in PEM.
fn server(tls: bool) -> (tonic::transport::Server, Option<String>) {
    let builder = tonic::transport::Server::builder();
    if !tls {
        return (builder, None);
    }
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()])
        .expect("a self-signed certificate can be made");
    let (cert, key) = (made.cert.pem(), made.signing_key.serialize_pem());
    let builder = builder
        .tls_config(ServerTlsConfig::new().identity(Identity::from_pem(&cert, key)))
        .expect("the certificate is usable");
    (builder, Some(cert))
}
