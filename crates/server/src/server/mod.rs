//! The built-in local instance: a Spanner-compatible gRPC server over an embedded SQLite database.
//!
//! [`LocalInstance::start`] serves it on a loopback port (port 0 picks a free one); the app, the tests
//! and `spanprof serve` all start it this way. Any project, instance and database name maps to the one
//! demo database.

pub mod control;
pub mod encoded;
pub mod intake;
pub mod knobs;
pub mod link;
pub mod listener;
pub mod query;
pub mod queue;
pub mod result_stats;
pub mod service;
pub mod shape;
pub mod sqlite;
pub mod stream;
pub mod txn;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::proto::google::longrunning::operations_server::OperationsServer;
use crate::proto::google::spanner::admin::database::v1::database_admin_server::DatabaseAdminServer;
use crate::proto::google::spanner::admin::instance::v1::instance_admin_server::InstanceAdminServer;
use encoded::stubs::google::spanner::v1::spanner_server::SpannerServer;

pub use knobs::{KnobSettings, Knobs};
pub use listener::ConnectionLimits;
pub use service::Occupancy;
pub use service::rw_tap;
pub use shape::Shape;
pub use stream::tap;

/// How to start the local instance.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServerConfig {
    /// Loopback port; 0 picks a free one.
    pub port: u16,
    /// Rows in Seed23.
    pub seed23_rows: u64,
    /// How it streams.
    pub knobs: KnobSettings,
    /// How many connections it keeps, and how long a silent one.
    #[serde(default)]
    pub connections: ConnectionLimits,
}

/// Rows in Seed23 unless told otherwise.
pub const DEFAULT_SEED23_ROWS: u64 = 100_000;

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            port: 0,
            seed23_rows: DEFAULT_SEED23_ROWS,
            knobs: KnobSettings::default(),
            connections: ConnectionLimits::default(),
        }
    }
}

/// Why the local instance could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The port could not be bound.
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for.
        port: u16,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The database could not be built.
    #[error(transparent)]
    Database(#[from] sqlite::db::SetupError),
    /// The setup task died.
    #[error("the database setup task failed: {0}")]
    Setup(#[from] tokio::task::JoinError),
    /// No key for the resume tokens could be drawn.
    #[error(transparent)]
    Random(#[from] stream::token::NoRandomness),
    /// The threads it would serve on could not be started.
    #[error("cannot start its threads: {0}")]
    Threads(std::io::Error),
}

/// A running local instance. Dropping it stops the server.
#[derive(Debug)]
pub struct LocalInstance {
    addr: SocketAddr,
    knobs: Arc<Knobs>,
    handle: service::Handle,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(), tonic::transport::Error>>>,
}

/// The largest request the service decodes: room for a parameter of the largest value (10 MiB, as
/// base64) and the SQL text, nothing like the 64 MiB a client could once make it hold per call.
const MAX_REQUEST_BYTES: usize = 16 << 20;

/// HTTP/2 flow-control windows large enough that loopback streaming is not throttled by them.
const STREAM_WINDOW: u32 = 8 << 20;
const CONNECTION_WINDOW: u32 = 16 << 20;

/// How often the server pings a connection, and how long it waits for the answer before closing it.
const KEEPALIVE: Duration = Duration::from_secs(20);
/// Streams one connection may have open at once (gRPC's usual limit).
const MAX_STREAMS_PER_CONNECTION: u32 = 100;

impl LocalInstance {
    /// Builds the database and serves it on 127.0.0.1. Must be called within a tokio runtime.
    pub async fn start(config: ServerConfig) -> Result<Self, StartError> {
        // Before any connection: SQLite's allocator can only be bounded before it starts.
        sqlite::memory::install();
        stream::token::init_key()?;
        let listener = TcpListener::bind(("127.0.0.1", config.port))
            .await
            .map_err(|source| StartError::Bind {
                port: config.port,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| StartError::Bind {
            port: config.port,
            source,
        })?;
        let rows = config.seed23_rows;
        let db =
            Arc::new(tokio::task::spawn_blocking(move || sqlite::db::Database::open(rows)).await??);
        let knobs = Arc::new(Knobs::new(config.knobs));
        let unread = Arc::new(stream::unread::Unread::new(
            config.connections.max_unread_streams,
            stream::unread::GRACE,
        ));
        let spanner = service::LocalSpanner::new(db, Arc::clone(&knobs), unread);
        spanner.watch_wounds();
        let handle = spanner.handle();
        let admin = spanner.admin();
        let (shutdown, stop) = oneshot::channel::<()>();
        let server = tonic::transport::Server::builder()
            .initial_stream_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .tcp_nodelay(true)
            .http2_keepalive_interval(Some(KEEPALIVE))
            .http2_keepalive_timeout(Some(KEEPALIVE))
            .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION)
            // Request bodies still arriving: bytes server-wide, time each, and each message held
            // back until whole, so no claimed length is reserved before its bytes (`intake/`).
            .layer(intake::BoundRequests::new(
                Arc::clone(&knobs),
                MAX_REQUEST_BYTES as u64,
            ))
            // Responses leave in pieces, each taken only once the client granted window for the
            // one before: the sign of a reading client that the unread cap spares.
            .layer(stream::drain::Draining)
            .add_service(
                SpannerServer::new(spanner)
                    .max_decoding_message_size(MAX_REQUEST_BYTES)
                    .max_encoding_message_size(usize::MAX),
            )
            .add_service(InstanceAdminServer::new(admin.clone()))
            .add_service(DatabaseAdminServer::new(admin.clone()))
            .add_service(OperationsServer::new(admin))
            // Server::tcp_nodelay applies only to listeners tonic binds itself: `Incoming` sets
            // it, or a stream's last small frames waited out the client's delayed ACK (40 ms).
            .serve_with_incoming_shutdown(
                listener::Incoming::new(listener, config.connections),
                async {
                    let _ = stop.await;
                },
            );
        let task = tokio::spawn(server);
        Ok(LocalInstance {
            addr,
            knobs,
            handle,
            shutdown: Some(shutdown),
            task: Some(task),
        })
    }

    /// The address it serves on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `host:port`, as `SPANNER_EMULATOR_HOST` wants it.
    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }

    /// The live knobs: changes apply to the next response (message size) or message (the rest).
    pub fn knobs(&self) -> &Arc<Knobs> {
        &self.knobs
    }

    /// What it holds now: running queries, held faulted streams, sessions.
    pub fn occupancy(&self) -> Occupancy {
        self.handle.occupancy()
    }

    /// What sees its clients' queries when someone watches (`spanprof client`).
    pub fn tap(&self) -> &Arc<stream::tap::Tap> {
        self.handle.tap()
    }

    /// What sees its clients' read-write transactions when someone watches
    /// (`spanprof client --read-write`).
    pub fn rw_tap(&self) -> &Arc<rw_tap::RwTap> {
        self.handle.rw_tap()
    }

    /// The lock table its read-write transactions run under, and its journal (a model of
    /// Spanner's locking: tests hold reports against the journal).
    pub fn locks(&self) -> &Arc<txn::locks::LockTable> {
        self.handle.locks()
    }

    /// Stops accepting calls, interrupts the running queries, and waits up to `grace` for the server
    /// to finish.
    pub async fn stop(mut self, grace: Duration) {
        self.handle.shut_down();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(grace, task).await;
        }
    }
}

impl Drop for LocalInstance {
    fn drop(&mut self) {
        self.handle.shut_down();
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
