//! The Spanner v1 gRPC service of the local instance: sessions, read-only transactions, and queries
//! streamed as production streams them.

use std::collections::{HashMap, HashSet, VecDeque};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use prost::bytes::Bytes;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::db::Database;
use super::encoded::EncodedPartialResultSet;
use super::encoded::stubs::google::spanner::v1::spanner_server::Spanner;
use super::knobs::Knobs;
use super::plan::{plan_nodes, query_stats};
use super::query::{self, Output, QueryEvent, QuerySpec, QueryTotals};
use super::sql_value::param_to_sql;
use super::stream::{self, MessageBuilder, ResumePoint, TokenStamp};
use crate::proto::google::spanner::v1 as pb;
use crate::wire::{Field, Type};

/// The service state: the database, the knobs, open sessions and read-only transactions.
pub struct LocalSpanner {
    db: Arc<Database>,
    knobs: Arc<Knobs>,
    sessions: Mutex<HashMap<String, pb::Session>>,
    transactions: Mutex<HashSet<Vec<u8>>>,
    parked: Arc<Mutex<Parked>>,
    counter: AtomicU64,
}

impl LocalSpanner {
    /// A service over `db`, streaming as `knobs` say.
    pub fn new(db: Arc<Database>, knobs: Arc<Knobs>) -> Self {
        LocalSpanner {
            db,
            knobs,
            sessions: Mutex::default(),
            transactions: Mutex::default(),
            parked: Arc::default(),
            counter: AtomicU64::new(1),
        }
    }

    fn unique(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        // Mix in the start time so names from two runs of the server differ.
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        fnv1a(&[&n.to_le_bytes(), &t.to_le_bytes()])
    }

    fn new_session(
        &self,
        database: &str,
        template: Option<&pb::Session>,
    ) -> Result<pb::Session, Status> {
        check_database_name(database)?;
        let name = format!("{database}/sessions/{:016x}", self.unique());
        let session = pb::Session {
            name: name.clone(),
            labels: template.map(|t| t.labels.clone()).unwrap_or_default(),
            create_time: Some(now()),
            approximate_last_use_time: Some(now()),
            creator_role: template.map(|t| t.creator_role.clone()).unwrap_or_default(),
            multiplexed: template.is_some_and(|t| t.multiplexed),
        };
        lock(&self.sessions).insert(name, session.clone());
        Ok(session)
    }

    fn check_session(&self, name: &str) -> Result<(), Status> {
        if lock(&self.sessions).contains_key(name) {
            Ok(())
        } else {
            Err(Status::not_found(format!("Session not found: {name}")))
        }
    }

    fn begin_read_only(&self, options: &pb::TransactionOptions) -> Result<pb::Transaction, Status> {
        use pb::transaction_options::Mode;
        match &options.mode {
            Some(Mode::ReadOnly(_)) | None => {
                let id = self.unique().to_be_bytes().to_vec();
                lock(&self.transactions).insert(id.clone());
                Ok(pb::Transaction {
                    id,
                    read_timestamp: Some(now()),
                    precommit_token: None,
                })
            }
            Some(_) => Err(read_only_instance()),
        }
    }

    /// Checks the transaction selector and returns the transaction to report in the metadata, if any.
    fn transaction_for_query(
        &self,
        selector: Option<&pb::TransactionSelector>,
    ) -> Result<Option<pb::Transaction>, Status> {
        use pb::transaction_options::Mode;
        use pb::transaction_selector::Selector;
        match selector.and_then(|s| s.selector.as_ref()) {
            None => Ok(None),
            Some(Selector::SingleUse(options)) => match &options.mode {
                Some(Mode::ReadOnly(ro)) if ro.return_read_timestamp => Ok(Some(pb::Transaction {
                    read_timestamp: Some(now()),
                    ..Default::default()
                })),
                Some(Mode::ReadOnly(_)) | None => Ok(None),
                Some(_) => Err(read_only_instance()),
            },
            Some(Selector::Begin(options)) => self.begin_read_only(options).map(Some),
            Some(Selector::Id(id)) => {
                if lock(&self.transactions).contains(id) {
                    Ok(None)
                } else {
                    Err(Status::not_found("Transaction not found"))
                }
            }
        }
    }

    /// Everything a query request needs checked before it runs.
    fn prepare(&self, request: &pb::ExecuteSqlRequest) -> Result<Prepared, Status> {
        use pb::execute_sql_request::QueryMode;
        self.check_session(&request.session)?;
        let transaction = self.transaction_for_query(request.transaction.as_ref())?;
        let mode = QueryMode::try_from(request.query_mode).map_err(|_| {
            Status::invalid_argument(format!("unknown query mode {}", request.query_mode))
        })?;
        let spec = QuerySpec {
            sql: request.sql.clone(),
            params: params(request)?,
            execute: mode != QueryMode::Plan,
            explain: matches!(
                mode,
                QueryMode::Plan | QueryMode::Profile | QueryMode::WithPlanAndStats
            ),
            plain_scans: true,
            output: Output::Values,
        };
        let with_stats = mode != QueryMode::Normal;
        let profile = matches!(mode, QueryMode::Profile | QueryMode::WithPlanAndStats);
        let fingerprint = request_fingerprint(request);
        let resume = if request.resume_token.is_empty() {
            None
        } else {
            let point = ResumePoint::decode(&request.resume_token).ok_or_else(|| {
                Status::invalid_argument("the resume token is not one this instance issued")
            })?;
            if point.stamp.fingerprint != fingerprint {
                return Err(Status::invalid_argument(
                    "the resume token belongs to another query",
                ));
            }
            Some(point)
        };
        let stamp = TokenStamp {
            max_bytes: resume.map_or_else(
                || u32::try_from(self.knobs.get().max_message_bytes).unwrap_or(u32::MAX),
                |r| r.stamp.max_bytes,
            ),
            fingerprint,
            stream: self.unique(),
        };
        Ok(Prepared {
            spec,
            transaction,
            with_stats,
            profile,
            resume,
            stamp,
        })
    }

    /// Starts the query and waits for its columns (or its error, which is then the call's status).
    async fn start_query(
        &self,
        spec: QuerySpec,
    ) -> Result<(Vec<Field>, mpsc::Receiver<Result<QueryEvent, Status>>), Status> {
        let (tx, mut rx) = mpsc::channel(8);
        query::spawn(Arc::clone(&self.db), spec, tx)
            .map_err(|e| Status::resource_exhausted(format!("cannot start a query thread: {e}")))?;
        match rx.recv().await {
            Some(Ok(QueryEvent::Columns(columns))) => Ok((columns, rx)),
            Some(Err(status)) => Err(status),
            Some(Ok(_)) | None => Err(Status::internal(
                "the query ended before naming its columns",
            )),
        }
    }
}

/// A checked query request.
struct Prepared {
    spec: QuerySpec,
    transaction: Option<pb::Transaction>,
    with_stats: bool,
    profile: bool,
    resume: Option<ResumePoint>,
    stamp: TokenStamp,
}

impl Prepared {
    fn metadata(&self, columns: &[Field]) -> pb::ResultSetMetadata {
        stream::metadata(columns, self.transaction.clone())
    }

    fn stats(
        &self,
        totals: &QueryTotals,
        started: Instant,
        bytes: u64,
    ) -> Option<pb::ResultSetStats> {
        if !self.with_stats && !self.spec.explain {
            return None;
        }
        let elapsed = started.elapsed();
        Some(pb::ResultSetStats {
            query_plan: totals
                .plan
                .as_ref()
                .map(|steps| plan_nodes(steps, self.profile.then_some((totals, elapsed)))),
            query_stats: self
                .with_stats
                .then(|| query_stats(&self.spec.sql, totals, elapsed, bytes)),
            row_count: None,
        })
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave a map half-updated: every update is one call.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn read_only_instance() -> Status {
    Status::failed_precondition(
        "the built-in local instance serves read-only transactions only; use a read-only transaction",
    )
}

fn now() -> prost_types::Timestamp {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: d.as_secs() as i64,
        nanos: d.subsec_nanos() as i32,
    }
}

fn check_database_name(name: &str) -> Result<(), Status> {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        ["projects", p, "instances", i, "databases", d]
            if ![p, i, d].iter().any(|s| s.is_empty()) =>
        {
            Ok(())
        }
        _ => Err(Status::invalid_argument(format!(
            "Invalid database name: {name:?}; expected projects/P/instances/I/databases/D"
        ))),
    }
}

/// Parameters converted by their declared types.
fn params(
    request: &pb::ExecuteSqlRequest,
) -> Result<HashMap<String, rusqlite::types::Value>, Status> {
    let Some(params) = &request.params else {
        return Ok(HashMap::new());
    };
    params
        .fields
        .iter()
        .map(|(name, value)| {
            let ty = match request.param_types.get(name) {
                Some(t) => Some(
                    Type::try_from(t)
                        .map_err(|e| Status::invalid_argument(format!("parameter {name}: {e}")))?,
                ),
                None => None,
            };
            let value = param_to_sql(ty.as_ref(), value.clone())
                .map_err(|e| Status::invalid_argument(format!("parameter {name}: {e}")))?;
            Ok((name.clone(), value))
        })
        .collect()
}

/// FNV-1a over some byte strings: a stable fingerprint (the same across runs and builds).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for part in parts {
        for &b in *part {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        hash = (hash ^ 0xff).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// What makes two requests the same query: SQL, parameters and their types, and the mode.
fn request_fingerprint(request: &pb::ExecuteSqlRequest) -> u64 {
    use prost::Message as _;
    let mut params: Vec<(&String, Vec<u8>)> = request
        .params
        .iter()
        .flat_map(|p| p.fields.iter())
        .map(|(k, v)| (k, v.encode_to_vec()))
        .collect();
    params.sort();
    let mut types: Vec<(&String, Vec<u8>)> = request
        .param_types
        .iter()
        .map(|(k, v)| (k, v.encode_to_vec()))
        .collect();
    types.sort();
    let mode = request.query_mode.to_le_bytes();
    let mut parts: Vec<&[u8]> = vec![request.sql.as_bytes(), &mode];
    for (k, v) in params.iter().chain(&types) {
        parts.push(k.as_bytes());
        parts.push(v);
    }
    fnv1a(&parts)
}

type Messages = Pin<Box<dyn Stream<Item = Result<EncodedPartialResultSet, Status>> + Send>>;
type Events = mpsc::Receiver<Result<QueryEvent, Status>>;

/// One query's stream in progress: its cursor (the query's events), the message builder, and the
/// messages built but not yet sent. It outlives a response when a fault is injected, so that the resume
/// continues from the cursor instead of running the query again. The query thread cuts the messages
/// and hands its builder over at the end, to close the stream with the statistics.
struct LiveStream {
    prepared: Prepared,
    builder: Option<MessageBuilder>,
    /// Whether the last message is built.
    finished: bool,
    unsent: VecDeque<Bytes>,
    events: Events,
    started: Instant,
    next_seq: u64,
}

/// How a response ended.
enum Ended {
    /// Every message was sent.
    Done,
    /// A fault was injected after message `seq`; the stream can be resumed from there.
    Faulted(Box<LiveStream>),
    /// The client went away or the query failed (the error was sent).
    Stopped,
}

impl LiveStream {
    /// Sends messages as the query produces them, pacing and failing as the knobs say. Messages a
    /// resumed client already has (up to `resumed_after`) are built but not sent.
    async fn run(mut self, out: &Out, knobs: &Knobs, resumed_after: Option<u64>) -> Ended {
        let mut first = true;
        loop {
            while let Some(msg) = self.unsent.pop_front() {
                let seq = self.next_seq;
                self.next_seq += 1;
                if resumed_after.is_some_and(|r| seq <= r) {
                    continue;
                }
                let is_final = self.finished && self.unsent.is_empty();
                let settings = knobs.get();
                if std::mem::take(&mut first) {
                    tokio::time::sleep(settings.first_byte_delay()).await;
                }
                let pace = settings.pace(msg.len());
                if !pace.is_zero() {
                    tokio::time::sleep(pace).await;
                }
                if out.send(Ok(EncodedPartialResultSet(msg))).await.is_err() {
                    return Ended::Stopped;
                }
                if settings.fails_after(seq, resumed_after, is_final) {
                    let fault = Status::unavailable(format!(
                        "injected fault after message {seq} (fail every {}); resume from the last token",
                        settings.fail_every
                    ));
                    return match out.send(Err(fault)).await {
                        Ok(()) => Ended::Faulted(Box::new(self)),
                        Err(_) => Ended::Stopped,
                    };
                }
            }
            if self.finished {
                return Ended::Done;
            }
            match self.events.recv().await {
                Some(Ok(QueryEvent::Messages(messages))) => self.unsent.extend(messages),
                Some(Ok(QueryEvent::Built(builder))) => self.builder = Some(*builder),
                Some(Ok(QueryEvent::Done(totals))) => {
                    let Some(builder) = self.builder.take() else {
                        let _ = out
                            .send(Err(Status::internal(
                                "the query ended without its last message",
                            )))
                            .await;
                        return Ended::Stopped;
                    };
                    let stats = self
                        .prepared
                        .stats(&totals, self.started, builder.value_bytes());
                    self.unsent.extend(builder.finish(stats));
                    self.finished = true;
                }
                Some(Ok(QueryEvent::Columns(_) | QueryEvent::Rows(_))) => {}
                Some(Err(status)) => {
                    let _ = out.send(Err(status)).await;
                    return Ended::Stopped;
                }
                None => {
                    let _ = out
                        .send(Err(Status::internal("the query stopped without finishing")))
                        .await;
                    return Ended::Stopped;
                }
            }
        }
    }
}

type Out = mpsc::Sender<Result<EncodedPartialResultSet, Status>>;

/// Streams that stopped at an injected fault, by stream id, waiting for their client to resume.
#[derive(Default)]
struct Parked {
    streams: HashMap<u64, (Instant, LiveStream)>,
}

/// How long a faulted stream waits for its resume before its query is dropped.
const PARK_FOR: std::time::Duration = std::time::Duration::from_secs(60);
/// At most this many streams wait at once; the oldest is dropped first.
const MAX_PARKED: usize = 64;

impl Parked {
    fn park(&mut self, id: u64, stream: LiveStream) {
        let now = Instant::now();
        self.streams
            .retain(|_, (at, _)| now.duration_since(*at) < PARK_FOR);
        if self.streams.len() >= MAX_PARKED
            && let Some(oldest) = self
                .streams
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(id, _)| *id)
        {
            self.streams.remove(&oldest);
        }
        self.streams.insert(id, (now, stream));
    }

    /// The stream a token came from, if it is parked exactly at the token's message.
    fn take(&mut self, point: &ResumePoint) -> Option<LiveStream> {
        let parked_at = self
            .streams
            .get(&point.stamp.stream)
            .map(|(_, s)| s.next_seq);
        if parked_at == Some(point.seq + 1) {
            self.streams.remove(&point.stamp.stream).map(|(_, s)| s)
        } else {
            None
        }
    }
}

#[tonic::async_trait]
impl Spanner for LocalSpanner {
    async fn create_session(
        &self,
        request: Request<pb::CreateSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        let r = request.into_inner();
        self.new_session(&r.database, r.session.as_ref())
            .map(Response::new)
    }

    async fn batch_create_sessions(
        &self,
        request: Request<pb::BatchCreateSessionsRequest>,
    ) -> Result<Response<pb::BatchCreateSessionsResponse>, Status> {
        let r = request.into_inner();
        if r.session_count <= 0 {
            return Err(Status::invalid_argument("session_count must be positive"));
        }
        let session = (0..r.session_count.min(100))
            .map(|_| self.new_session(&r.database, r.session_template.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(Response::new(pb::BatchCreateSessionsResponse { session }))
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        let name = request.into_inner().name;
        lock(&self.sessions)
            .get(&name)
            .cloned()
            .map(Response::new)
            .ok_or_else(|| Status::not_found(format!("Session not found: {name}")))
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        let name = request.into_inner().name;
        match lock(&self.sessions).remove(&name) {
            Some(_) => Ok(Response::new(())),
            None => Err(Status::not_found(format!("Session not found: {name}"))),
        }
    }

    async fn execute_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        let started = Instant::now();
        let prepared = self.prepare(request.get_ref())?;
        let (columns, mut events) = self.start_query(prepared.spec.clone()).await?;
        let width = columns.len().max(1);
        let mut rows = Vec::new();
        let mut current = Vec::with_capacity(width);
        let mut bytes = 0u64;
        loop {
            match events.recv().await {
                Some(Ok(QueryEvent::Rows(values))) => {
                    for body in values.iter() {
                        let v =
                            <prost_types::Value as prost::Message>::decode(body).map_err(|e| {
                                Status::internal(format!(
                                    "the query produced a malformed value: {e}"
                                ))
                            })?;
                        bytes += prost::Message::encoded_len(&v) as u64;
                        current.push(v);
                        if current.len() == width {
                            rows.push(prost_types::ListValue {
                                values: std::mem::replace(&mut current, Vec::with_capacity(width)),
                            });
                        }
                    }
                }
                Some(Ok(QueryEvent::Done(totals))) => {
                    return Ok(Response::new(pb::ResultSet {
                        metadata: Some(prepared.metadata(&columns)),
                        rows,
                        stats: prepared.stats(&totals, started, bytes),
                        precommit_token: None,
                    }));
                }
                // Values were asked for: nothing else comes.
                Some(Ok(
                    QueryEvent::Columns(_) | QueryEvent::Messages(_) | QueryEvent::Built(_),
                )) => {}
                Some(Err(status)) => return Err(status),
                None => return Err(Status::internal("the query stopped without finishing")),
            }
        }
    }

    type ExecuteStreamingSqlStream = Messages;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Self::ExecuteStreamingSqlStream>, Status> {
        let started = Instant::now();
        let prepared = self.prepare(request.get_ref())?;
        let resume = prepared.resume;
        let parked = resume.and_then(|point| lock(&self.parked).take(&point));
        let live = match parked {
            Some(live) => live,
            None => {
                let spec = QuerySpec {
                    output: Output::Messages {
                        transaction: prepared.transaction.clone(),
                        stamp: prepared.stamp,
                    },
                    ..prepared.spec.clone()
                };
                let (_, events) = self.start_query(spec).await?;
                LiveStream {
                    builder: None,
                    finished: false,
                    prepared,
                    unsent: VecDeque::new(),
                    events,
                    started,
                    next_seq: 0,
                }
            }
        };
        let (tx, rx) = mpsc::channel(4);
        let knobs = Arc::clone(&self.knobs);
        let parked = Arc::clone(&self.parked);
        let resumed_after = resume.map(|r| r.seq);
        tokio::spawn(async move {
            if let Ended::Faulted(live) = live.run(&tx, &knobs, resumed_after).await {
                let id = live.prepared.stamp.stream;
                lock(&parked).park(id, *live);
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn begin_transaction(
        &self,
        request: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        let r = request.into_inner();
        self.check_session(&r.session)?;
        self.begin_read_only(&r.options.unwrap_or_default())
            .map(Response::new)
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        use pb::commit_request::Transaction;
        let r = request.into_inner();
        self.check_session(&r.session)?;
        if !r.mutations.is_empty() {
            return Err(read_only_instance());
        }
        match r.transaction {
            Some(Transaction::TransactionId(id)) => {
                if !lock(&self.transactions).remove(&id) {
                    return Err(Status::not_found("Transaction not found"));
                }
            }
            Some(Transaction::SingleUseTransaction(options)) => {
                self.begin_read_only(&options)?;
            }
            None => return Err(Status::invalid_argument("Commit needs a transaction")),
        }
        Ok(Response::new(pb::CommitResponse {
            commit_timestamp: Some(now()),
            ..Default::default()
        }))
    }

    async fn rollback(
        &self,
        request: Request<pb::RollbackRequest>,
    ) -> Result<Response<()>, Status> {
        let r = request.into_inner();
        self.check_session(&r.session)?;
        lock(&self.transactions).remove(&r.transaction_id);
        Ok(Response::new(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_checked() {
        assert!(check_database_name("projects/p/instances/i/databases/d").is_ok());
        for bad in [
            "",
            "projects/p",
            "projects//instances/i/databases/d",
            "x/p/instances/i/databases/d",
        ] {
            assert!(check_database_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fingerprints_depend_on_sql_params_and_mode() {
        let base = pb::ExecuteSqlRequest {
            sql: "SELECT 1".into(),
            ..Default::default()
        };
        let other_sql = pb::ExecuteSqlRequest {
            sql: "SELECT 2".into(),
            ..base.clone()
        };
        let other_mode = pb::ExecuteSqlRequest {
            query_mode: 3,
            ..base.clone()
        };
        let resumed = pb::ExecuteSqlRequest {
            resume_token: vec![1, 2, 3],
            seqno: 9,
            ..base.clone()
        };
        let f = request_fingerprint;
        assert_ne!(f(&base), f(&other_sql));
        assert_ne!(f(&base), f(&other_mode));
        assert_eq!(
            f(&base),
            f(&resumed),
            "the token and seqno are not part of the query"
        );
    }
}
