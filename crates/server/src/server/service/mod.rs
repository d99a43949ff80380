//! The Spanner v1 gRPC service of the local instance. It only dispatches: each group of calls
//! has a file of its own (sessions, transactions, queries, streaming, partitions, statements of
//! read-write transactions in `dml.rs` and their commits in `commit.rs`; the admin services in
//! `admin.rs`), over the state kept here: the database, the knobs, open sessions, running
//! queries, held streams, and the read-write transactions with their writer.

mod admin;
mod commit;
mod dml;
mod mutations;
mod partitions;
mod queries;
mod read;
mod request;
pub mod rw_tap;
mod session_store;
mod sessions;
mod streaming;
mod transactions;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tonic::{Request, Response, Status};

pub use admin::{KEPT_OPERATION_BYTES, KEPT_OPERATIONS, LocalAdmin};
use rw_tap::{RwRpc, RwTap};
use session_store::SessionStore;

use super::control::{Slots, grpc_timeout};
use super::encoded::EncodedResultSet;
use super::encoded::stubs::google::spanner::v1::spanner_server::Spanner;
use super::knobs::Knobs;
use super::link::Link;
use super::listener::Peer;
use super::queue::Queue;
use super::sqlite::db::Database;
use super::stream::live::{self, LiveStream};
use super::stream::parked::Parked;
use super::stream::restarts::Restarts;
use super::stream::tap::Tap;
use super::stream::unread::Unread;
use super::txn;
use super::txn::batch::Batches;
use super::txn::locks::{LockBounds, LockTable};
use super::txn::store::Transactions;
use super::txn::write::Writer;
use crate::proto::google::spanner::v1 as pb;

/// The service state: the database, the knobs, open sessions, running queries and held streams.
pub struct LocalSpanner {
    db: Arc<Database>,
    knobs: Arc<Knobs>,
    sessions: Arc<SessionStore>,
    parked: Arc<Parked<LiveStream>>,
    slots: Arc<Slots>,
    /// The queue model's query threads and freezes (off unless its knobs are set).
    queue: Queue,
    shutdown: Arc<AtomicBool>,
    counter: AtomicU64,
    /// Streaming queries started so far (resumes of a held stream not counted).
    queries: AtomicU64,
    tap: Arc<Tap>,
    /// What sees the read-write transactions' calls when someone watches.
    rw_tap: Arc<RwTap>,
    restarts: Arc<Restarts>,
    unread: Arc<Unread>,
    /// The read-write transactions, open and recently ended.
    txns: Arc<Transactions>,
    /// The one read-write connection, and the model of concurrency over it.
    writer: Arc<Writer>,
    /// Commits waiting out their `max_commit_delay`.
    batches: Arc<Batches>,
    /// The model of Spanner's locking the read-write transactions run under, with its journal.
    locks: Arc<LockTable>,
}

/// What the local instance holds now: plain figures, for tests and tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Queries running (each on its own thread), held faulted streams included.
    pub queries: usize,
    /// Faulted streams held for their resume.
    pub parked_streams: usize,
    /// Open sessions (expired ones until the next sweep).
    pub sessions: usize,
    /// Streams whose query waits on a client that does not read.
    pub unread_streams: usize,
    /// Connections closed so far for a stream that went unread past `max_unread_streams`.
    pub unread_closed: u64,
    /// Read-write transactions open.
    pub read_write_transactions: u64,
}

/// The parts of the service the instance keeps a hand on: its occupancy, and its shutdown flag.
#[derive(Clone)]
pub struct Handle {
    slots: Arc<Slots>,
    parked: Arc<Parked<LiveStream>>,
    sessions: Arc<SessionStore>,
    shutdown: Arc<AtomicBool>,
    tap: Arc<Tap>,
    rw_tap: Arc<RwTap>,
    unread: Arc<Unread>,
    txns: Arc<Transactions>,
    locks: Arc<LockTable>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("occupancy", &self.occupancy())
            .finish()
    }
}

impl Handle {
    /// What the instance holds now.
    pub fn occupancy(&self) -> Occupancy {
        Occupancy {
            queries: self.slots.running(),
            parked_streams: self.parked.len(),
            sessions: self.sessions.len(),
            unread_streams: self.unread.waiting(),
            unread_closed: self.unread.closed(),
            read_write_transactions: self.txns.open(),
        }
    }

    /// Tells every running query to stop: the server is shutting down.
    pub fn shut_down(&self) {
        self.shutdown.store(true, Ordering::Relaxed);
    }

    /// What sees the queries and their streams when someone watches (`spanprof client`).
    pub fn tap(&self) -> &Arc<Tap> {
        &self.tap
    }

    /// What sees the read-write transactions' calls when someone watches (`client --read-write`).
    pub fn rw_tap(&self) -> &Arc<RwTap> {
        &self.rw_tap
    }

    /// The lock table the read-write transactions run under, and its journal.
    pub fn locks(&self) -> &Arc<LockTable> {
        &self.locks
    }
}

impl LocalSpanner {
    /// A service over `db`, streaming and bounded as `knobs` say, its streams that wait on clients
    /// counted in `unread`.
    pub fn new(db: Arc<Database>, knobs: Arc<Knobs>, unread: Arc<Unread>) -> Self {
        let locks = Arc::new(LockTable::new(LockBounds::default()));
        LocalSpanner {
            knobs,
            sessions: Arc::default(),
            parked: Arc::default(),
            slots: Arc::default(),
            queue: Queue::default(),
            shutdown: Arc::default(),
            counter: AtomicU64::new(1),
            queries: AtomicU64::new(0),
            tap: Arc::default(),
            rw_tap: Arc::default(),
            restarts: Arc::default(),
            unread,
            txns: Arc::new(Transactions::new(Arc::clone(&locks))),
            writer: Arc::new(Writer::new(Arc::clone(&db))),
            batches: Arc::default(),
            locks,
            db,
        }
    }

    /// Starts ending wounded transactions at once (`txn/locking.rs`); within a tokio runtime.
    pub fn watch_wounds(&self) {
        txn::locking::watch_wounds(Arc::clone(&self.txns), self.locks.watch_wounds());
    }

    /// The admin services, whose DDL goes through this service's writer.
    pub fn admin(&self) -> LocalAdmin {
        LocalAdmin::new(Arc::clone(&self.writer), Arc::clone(&self.knobs))
    }

    /// A handle on its occupancy and shutdown, to keep after the service is handed to the server.
    pub fn handle(&self) -> Handle {
        Handle {
            slots: Arc::clone(&self.slots),
            parked: Arc::clone(&self.parked),
            sessions: Arc::clone(&self.sessions),
            shutdown: Arc::clone(&self.shutdown),
            tap: Arc::clone(&self.tap),
            rw_tap: Arc::clone(&self.rw_tap),
            unread: Arc::clone(&self.unread),
            txns: Arc::clone(&self.txns),
            locks: Arc::clone(&self.locks),
        }
    }

    /// The tap, when it is watching.
    fn watching(&self) -> Option<Arc<Tap>> {
        self.tap.is_on().then(|| Arc::clone(&self.tap))
    }

    /// The number of the streaming query starting now, from 1.
    fn next_query_number(&self) -> u64 {
        self.queries
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1)
    }

    fn unique(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        // Mix in the start time so names from two runs of the server differ.
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        crate::fnv::of_parts(&[&n.to_le_bytes(), &t.to_le_bytes()])
    }
}

/// The connection a call came on (`None` for a call made without one).
fn caller<T>(request: &Request<T>) -> Option<Arc<Link>> {
    request
        .extensions()
        .get::<Peer>()
        .map(|peer| Arc::clone(&peer.link))
}

fn deadline_of<T>(request: &Request<T>) -> Option<Instant> {
    grpc_timeout(request.metadata()).and_then(|t| Instant::now().checked_add(t))
}

#[tonic::async_trait]
impl Spanner for LocalSpanner {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        sessions::create(self, request).await
    }

    async fn batch_create_sessions(
        &self,
        request: Request<pb::BatchCreateSessionsRequest>,
    ) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
        sessions::batch_create(self, request).await
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        sessions::get(self, request).await
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        sessions::delete(self, request).await
    }

    async fn execute_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<EncodedResultSet>, Status> {
        let r = request.get_ref();
        let seen = (
            &*r.session,
            r.transaction.as_ref(),
            r.request_options.as_ref(),
        );
        let pending = self.rw_tap.statement(RwRpc::ExecuteSql, seen, &self.txns);
        rw_tap::watched(&self.rw_tap, pending, queries::execute_sql(self, request)).await
    }

    type ExecuteStreamingSqlStream = live::Response;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Self::ExecuteStreamingSqlStream>, Status> {
        let r = request.get_ref();
        let seen = (
            &*r.session,
            r.transaction.as_ref(),
            r.request_options.as_ref(),
        );
        let pending = self
            .rw_tap
            .statement(RwRpc::ExecuteStreamingSql, seen, &self.txns);
        let call = streaming::execute_streaming_sql(self, request);
        rw_tap::watched(&self.rw_tap, pending, call).await
    }

    async fn begin_transaction(
        &self,
        request: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        let pending = self.rw_tap.begin(request.get_ref());
        rw_tap::watched(&self.rw_tap, pending, transactions::begin(self, request)).await
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        let pending = self.rw_tap.commit(request.get_ref(), &self.txns);
        rw_tap::watched(&self.rw_tap, pending, transactions::commit(self, request)).await
    }

    async fn rollback(
        &self,
        request: Request<pb::RollbackRequest>,
    ) -> Result<Response<()>, Status> {
        let pending = self.rw_tap.rollback(request.get_ref(), &self.txns);
        rw_tap::watched(&self.rw_tap, pending, transactions::rollback(self, request)).await
    }

    async fn partition_query(
        &self,
        request: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        partitions::partition_query(self, request).await
    }

    async fn execute_batch_dml(
        &self,
        request: Request<pb::ExecuteBatchDmlRequest>,
    ) -> Result<Response<pb::ExecuteBatchDmlResponse>, Status> {
        let r = request.get_ref();
        let seen = (
            &*r.session,
            r.transaction.as_ref(),
            r.request_options.as_ref(),
        );
        let pending = self
            .rw_tap
            .statement(RwRpc::ExecuteBatchDml, seen, &self.txns);
        let call = dml::execute_batch_dml(self, request);
        rw_tap::watched(&self.rw_tap, pending, call)
            .await
            .map(Response::new)
    }

    async fn read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<EncodedResultSet>, Status> {
        let r = request.get_ref();
        let seen = (
            &*r.session,
            r.transaction.as_ref(),
            r.request_options.as_ref(),
        );
        let pending = self.rw_tap.statement(RwRpc::Read, seen, &self.txns);
        rw_tap::watched(&self.rw_tap, pending, read::read(self, request)).await
    }

    type StreamingReadStream = live::Response;

    async fn streaming_read(
        &self,
        request: Request<pb::ReadRequest>,
    ) -> Result<Response<Self::StreamingReadStream>, Status> {
        let r = request.get_ref();
        let seen = (
            &*r.session,
            r.transaction.as_ref(),
            r.request_options.as_ref(),
        );
        let pending = self.rw_tap.statement(RwRpc::Read, seen, &self.txns);
        rw_tap::watched(&self.rw_tap, pending, read::streaming_read(self, request)).await
    }
}
