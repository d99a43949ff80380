//! The Spanner v1 gRPC service of the local instance: sessions, read-only transactions, and queries
//! streamed as production streams them, within the bounds the knobs set.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tonic::{Request, Response, Status};

use super::columns::Param;
use super::control::{GoneOnDrop, Interrupt, Slots, grpc_timeout};
use super::db::Database;
use super::encoded::stubs::google::spanner::v1::spanner_server::Spanner;
use super::knobs::{KnobSettings, Knobs};
use super::live::{self, Ended, LiveStream, Resumption};
use super::parked::Parked;
use super::partition::{self, PartitionToken};
use super::plan::Report;
use super::query::{self, Output, QueryEvent, QuerySpec};
use super::restarts::Restarts;
use super::sessions::Sessions;
use super::stream::{self, ResumePoint, TokenStamp};
use super::tap::Tap;
use crate::proto::google::spanner::v1 as pb;
use crate::wire::{Field, Type};

/// The service state: the database, the knobs, open sessions, running queries and held streams.
pub struct LocalSpanner {
    db: Arc<Database>,
    knobs: Arc<Knobs>,
    sessions: Arc<Sessions>,
    parked: Arc<Parked<LiveStream>>,
    slots: Arc<Slots>,
    shutdown: Arc<AtomicBool>,
    counter: AtomicU64,
    tap: Arc<Tap>,
    restarts: Arc<Restarts>,
}

/// What the local instance holds now: plain figures, for tests and tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Load {
    /// Queries running (each on its own thread), held faulted streams included.
    pub queries: usize,
    /// Faulted streams held for their resume.
    pub parked_streams: usize,
    /// Open sessions (expired ones until the next sweep).
    pub sessions: usize,
}

/// The parts of the service the instance keeps a hand on: its load, and its shutdown flag.
#[derive(Clone)]
pub struct Handle {
    slots: Arc<Slots>,
    parked: Arc<Parked<LiveStream>>,
    sessions: Arc<Sessions>,
    shutdown: Arc<AtomicBool>,
    tap: Arc<Tap>,
}

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handle")
            .field("load", &self.load())
            .finish()
    }
}

impl Handle {
    /// What the instance holds now.
    pub fn load(&self) -> Load {
        Load {
            queries: self.slots.running(),
            parked_streams: self.parked.len(),
            sessions: self.sessions.len(),
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
}

impl LocalSpanner {
    /// A service over `db`, streaming and bounded as `knobs` say.
    pub fn new(db: Arc<Database>, knobs: Arc<Knobs>) -> Self {
        LocalSpanner {
            db,
            knobs,
            sessions: Arc::default(),
            parked: Arc::default(),
            slots: Arc::default(),
            shutdown: Arc::default(),
            counter: AtomicU64::new(1),
            tap: Arc::default(),
            restarts: Arc::default(),
        }
    }

    /// A handle on its load and shutdown, to keep after the service is handed to the server.
    pub fn handle(&self) -> Handle {
        Handle {
            slots: Arc::clone(&self.slots),
            parked: Arc::clone(&self.parked),
            sessions: Arc::clone(&self.sessions),
            shutdown: Arc::clone(&self.shutdown),
            tap: Arc::clone(&self.tap),
        }
    }

    /// The tap, when it is watching.
    fn watching(&self) -> Option<Arc<Tap>> {
        self.tap.is_on().then(|| Arc::clone(&self.tap))
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

    fn begin_read_only(
        &self,
        session: &str,
        options: &pb::TransactionOptions,
        knobs: &KnobSettings,
    ) -> Result<pb::Transaction, Status> {
        read_only_mode(options)?;
        let read_timestamp = read_timestamp(options, false)?;
        let id = self.unique().to_be_bytes().to_vec();
        self.sessions.add_transaction(session, id.clone(), knobs)?;
        Ok(pb::Transaction {
            id,
            read_timestamp: Some(read_timestamp),
            precommit_token: None,
        })
    }

    /// Checks the transaction selector and returns the transaction to report in the metadata, if any.
    fn transaction_for_query(
        &self,
        request: &pb::ExecuteSqlRequest,
        knobs: &KnobSettings,
    ) -> Result<Option<pb::Transaction>, Status> {
        use pb::transaction_options::Mode;
        use pb::transaction_selector::Selector;
        let selector = request.transaction.as_ref();
        match selector.and_then(|s| s.selector.as_ref()) {
            None => Ok(None),
            Some(Selector::SingleUse(options)) => {
                read_only_mode(options)?;
                let read_timestamp = read_timestamp(options, true)?;
                Ok(match &options.mode {
                    Some(Mode::ReadOnly(ro)) if ro.return_read_timestamp => Some(pb::Transaction {
                        read_timestamp: Some(read_timestamp),
                        ..Default::default()
                    }),
                    _ => None,
                })
            }
            Some(Selector::Begin(options)) => self
                .begin_read_only(&request.session, options, knobs)
                .map(Some),
            // No transaction has an empty id. The official Node client (8.13) sends one when it
            // resumes or restarts a single-use read: it echoes the first message's
            // `metadata.transaction` (a read timestamp, no id) back as the transaction's id. The
            // request stands for the single-use read it continues, and is served as one.
            Some(Selector::Id(id)) if id.is_empty() => Ok(None),
            Some(Selector::Id(id)) => {
                if self
                    .sessions
                    .has_transaction(&request.session, id, false, knobs)?
                {
                    Ok(None)
                } else {
                    Err(Status::not_found("Transaction not found"))
                }
            }
        }
    }

    /// Everything a query request needs checked before it runs, cheapest and most hostile first:
    /// the SQL's size, the session, the resume token, then the parameters.
    fn prepare(
        &self,
        request: &pb::ExecuteSqlRequest,
        knobs: &KnobSettings,
    ) -> Result<Prepared, Status> {
        use pb::execute_sql_request::QueryMode;
        if request.sql.len() as u64 > knobs.max_sql_bytes {
            return Err(Status::invalid_argument(format!(
                "the SQL text is {} bytes, more than the {} allowed (max_sql_bytes)",
                request.sql.len(),
                knobs.max_sql_bytes
            )));
        }
        self.sessions.touch(&request.session, knobs)?;
        let resume = if request.resume_token.is_empty() {
            None
        } else {
            let point = ResumePoint::decode(&request.resume_token)
                .map_err(|e| Status::invalid_argument(e.to_string()))?;
            Some(point)
        };
        let transaction = self.transaction_for_query(request, knobs)?;
        let mode = QueryMode::try_from(request.query_mode).map_err(|_| {
            Status::invalid_argument(format!("unknown query mode {}", request.query_mode))
        })?;
        let fingerprint = request_fingerprint(request);
        if resume.is_some_and(|point| point.stamp.fingerprint != fingerprint) {
            return Err(Status::invalid_argument(
                "the resume token belongs to another query",
            ));
        }
        let partition = self.partition_of(request)?;
        if partition.is_some() && mode != QueryMode::Normal {
            return Err(Status::invalid_argument(
                "Query modes returning query plan and profile information cannot be used with \
                 partitioned queries.",
            ));
        }
        let optimizer = Optimizer::of(request.query_options.as_ref())?;
        let spec = QuerySpec {
            sql: request.sql.clone(),
            params: params(request.params.as_ref(), &request.param_types)?,
            limits: knobs.sql_limits(),
            execute: mode != QueryMode::Plan,
            explain: matches!(
                mode,
                QueryMode::Plan | QueryMode::Profile | QueryMode::WithPlanAndStats
            ),
            profile: mode == QueryMode::Profile,
            plain_scans: true,
            output: Output::Values,
            partition,
        };
        let stamp = TokenStamp {
            max_bytes: resume.map_or_else(
                || u32::try_from(knobs.max_message_bytes).unwrap_or(u32::MAX),
                |r| r.stamp.max_bytes,
            ),
            fingerprint,
            stream: self.unique(),
            shape: resume.map_or(knobs.shape, |r| r.stamp.shape),
        };
        let report = Report {
            sql: spec.sql.clone(),
            with_stats: mode != QueryMode::Normal,
            explain: spec.explain,
            // Operator-level statistics are PROFILE's alone; WITH_PLAN_AND_STATS returns the plan
            // and the overall statistics, as production does.
            profile: mode == QueryMode::Profile,
            optimizer,
            data_boost: request.data_boost_enabled && !request.partition_token.is_empty(),
        };
        Ok(Prepared {
            spec,
            transaction,
            report,
            resume,
            stamp,
        })
    }

    /// The key range a request for one partition reads: its token checked (authentic, issued for
    /// this query and this transaction) before anything in it is used.
    fn partition_of(
        &self,
        request: &pb::ExecuteSqlRequest,
    ) -> Result<Option<partition::KeyRange>, Status> {
        use pb::transaction_selector::Selector;
        if request.partition_token.is_empty() {
            return Ok(None);
        }
        let token = PartitionToken::decode(&request.partition_token)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let selected = request
            .transaction
            .as_ref()
            .and_then(|t| t.selector.as_ref());
        if !matches!(selected, Some(Selector::Id(id)) if id.as_slice() == token.transaction) {
            return Err(Status::invalid_argument(
                "a partition is read in the transaction its PartitionQuery began: name it by id",
            ));
        }
        let fingerprint =
            query_fingerprint(&request.sql, request.params.as_ref(), &request.param_types);
        if token.fingerprint != fingerprint {
            return Err(Status::invalid_argument(
                "the partition token was issued for another query (its SQL or parameters differ)",
            ));
        }
        Ok(Some(token.range))
    }

    /// Splits a query into partitions: off the runtime, holding a query's slot while SQLite plans.
    async fn partitions(
        &self,
        request: &pb::PartitionQueryRequest,
        knobs: &KnobSettings,
    ) -> Result<Vec<partition::KeyRange>, Status> {
        let max = match request.partition_options.as_ref().map(|o| o.max_partitions) {
            None | Some(0) => None,
            Some(n) if n < 0 => {
                return Err(Status::invalid_argument(format!(
                    "max_partitions must not be negative: {n}"
                )));
            }
            Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        };
        let slot = self
            .slots
            .take(knobs.max_concurrent_queries)
            .ok_or_else(|| {
                Status::resource_exhausted("the local instance is running its limit of queries")
            })?;
        let db = Arc::clone(&self.db);
        let sql = request.sql.clone();
        let params = params(request.params.as_ref(), &request.param_types)?;
        let limits = knobs.sql_limits();
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            partition::plan(&db, &sql, &params, max, limits)
        })
        .await
        .map_err(|e| Status::internal(format!("the partition planner failed: {e}")))?
    }

    /// Starts the query, if a slot is free, and waits for its columns (or its error, which is then
    /// the call's status). Dropping what it returns, or this future, tells the query its client left.
    async fn start_query(
        &self,
        spec: QuerySpec,
        knobs: &KnobSettings,
        deadline: Option<Instant>,
    ) -> Result<Started, Status> {
        let slot = self
            .slots
            .take(knobs.max_concurrent_queries)
            .ok_or_else(|| {
                Status::resource_exhausted(format!(
                    "the local instance is running {} queries, its limit (max_concurrent_queries): \
                 try again when one has finished",
                    self.slots.running()
                ))
            })?;
        let interrupt = Interrupt::new(deadline, Arc::clone(&self.shutdown));
        let gone = GoneOnDrop(Arc::clone(&interrupt));
        let (tx, mut events) = mpsc::channel(8);
        query::spawn(Arc::clone(&self.db), spec, tx, interrupt, Some(slot))
            .map_err(|e| Status::resource_exhausted(format!("cannot start a query thread: {e}")))?;
        match events.recv().await {
            Some(Ok(QueryEvent::Columns(columns))) => Ok(Started {
                columns,
                events,
                gone,
            }),
            Some(Err(status)) => Err(status),
            Some(Ok(_)) | None => Err(Status::internal(
                "the query ended before naming its columns",
            )),
        }
    }

    /// Collects a unary answer, refusing it past the unary size limit.
    async fn collect(
        &self,
        started: Started,
        prepared: &Prepared,
        max_bytes: u64,
        begun: Instant,
    ) -> Result<pb::ResultSet, Status> {
        let Started {
            columns,
            mut events,
            gone: _gone,
        } = started;
        let width = columns.len().max(1);
        let mut rows = Vec::new();
        let mut current = Vec::with_capacity(width);
        let mut bytes = 0u64;
        loop {
            match events.recv().await {
                Some(Ok(QueryEvent::Rows(values))) => {
                    for body in values.iter() {
                        bytes += body.len() as u64;
                        if bytes > max_bytes {
                            return Err(too_large(max_bytes));
                        }
                        let v =
                            <prost_types::Value as prost::Message>::decode(body).map_err(|e| {
                                Status::internal(format!(
                                    "the query produced a malformed value: {e}"
                                ))
                            })?;
                        current.push(v);
                        if current.len() == width {
                            rows.push(prost_types::ListValue {
                                values: std::mem::replace(&mut current, Vec::with_capacity(width)),
                            });
                        }
                    }
                }
                Some(Ok(QueryEvent::Done(totals))) => {
                    return Ok(pb::ResultSet {
                        metadata: Some(prepared.metadata(&columns)),
                        rows,
                        stats: prepared.report.stats(&totals, begun, bytes),
                        precommit_token: None,
                    });
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
}

/// A query that has named its columns.
struct Started {
    columns: Vec<Field>,
    events: live::Events,
    gone: GoneOnDrop,
}

/// A checked query request.
struct Prepared {
    spec: QuerySpec,
    transaction: Option<pb::Transaction>,
    report: Report,
    resume: Option<ResumePoint>,
    stamp: TokenStamp,
}

impl Prepared {
    fn metadata(&self, columns: &[Field]) -> pb::ResultSetMetadata {
        stream::metadata(columns, self.transaction.clone())
    }
}

fn too_large(max_bytes: u64) -> Status {
    Status::failed_precondition(format!(
        "Result set too large. Result sets larger than {max_bytes} bytes can only be yielded \
         through the streaming API (ExecuteStreamingSql); see max_unary_result_bytes"
    ))
}

fn read_only_mode(options: &pb::TransactionOptions) -> Result<(), Status> {
    use pb::transaction_options::Mode;
    match &options.mode {
        Some(Mode::ReadOnly(_)) | None => Ok(()),
        Some(_) => Err(read_only_instance()),
    }
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

/// Parameters converted by their declared types.
fn params(
    params: Option<&prost_types::Struct>,
    types: &HashMap<String, pb::Type>,
) -> Result<HashMap<String, Param>, Status> {
    let Some(params) = params else {
        return Ok(HashMap::new());
    };
    params
        .fields
        .iter()
        .map(|(name, value)| {
            let ty = match types.get(name) {
                Some(t) => Some(
                    Type::try_from(t)
                        .map_err(|e| Status::invalid_argument(format!("parameter {name}: {e}")))?,
                ),
                None => None,
            };
            let param = Param::from_wire(ty.as_ref(), value.clone())
                .map_err(|e| Status::invalid_argument(format!("parameter {name}: {e}")))?;
            Ok((name.clone(), param))
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
    fingerprint(
        &request.sql,
        request.params.as_ref(),
        &request.param_types,
        &request.query_mode.to_le_bytes(),
    )
}

/// What makes two requests ask the same rows: SQL, parameters and their types (a partition token
/// is issued by PartitionQuery, which has no mode).
fn query_fingerprint(
    sql: &str,
    params: Option<&prost_types::Struct>,
    types: &HashMap<String, pb::Type>,
) -> u64 {
    fingerprint(sql, params, types, b"rows")
}

fn fingerprint(
    sql: &str,
    params: Option<&prost_types::Struct>,
    types: &HashMap<String, pb::Type>,
    extra: &[u8],
) -> u64 {
    use prost::Message as _;
    let mut params: Vec<(&String, Vec<u8>)> = params
        .iter()
        .flat_map(|p| p.fields.iter())
        .map(|(k, v)| (k, v.encode_to_vec()))
        .collect();
    params.sort();
    let mut types: Vec<(&String, Vec<u8>)> =
        types.iter().map(|(k, v)| (k, v.encode_to_vec())).collect();
    types.sort();
    let mut parts: Vec<&[u8]> = vec![sql.as_bytes(), extra];
    for (k, v) in params.iter().chain(&types) {
        parts.push(k.as_bytes());
        parts.push(v);
    }
    fnv1a(&parts)
}

/// The read timestamp a read-only transaction's bound implies: now for a strong read (and for max
/// staleness, which the server may serve as fresh as it likes), now less the staleness for exact
/// staleness, the timestamp itself for a read timestamp, and the later of it and now for a minimum
/// read timestamp. Max staleness and a minimum read timestamp are refused outside a single-use read,
/// as production refuses them.
fn read_timestamp(
    options: &pb::TransactionOptions,
    single_use: bool,
) -> Result<prost_types::Timestamp, Status> {
    use pb::transaction_options::Mode;
    use pb::transaction_options::read_only::TimestampBound;
    let Some(Mode::ReadOnly(read_only)) = &options.mode else {
        return Ok(now());
    };
    let now_nanos = timestamp_nanos(&now());
    let nanos = match &read_only.timestamp_bound {
        None | Some(TimestampBound::Strong(_)) => now_nanos,
        Some(TimestampBound::ExactStaleness(d)) => now_nanos - duration_nanos(d)?,
        Some(TimestampBound::MaxStaleness(d)) if single_use => {
            duration_nanos(d)?;
            now_nanos
        }
        Some(TimestampBound::ReadTimestamp(t)) => timestamp_nanos(t),
        Some(TimestampBound::MinReadTimestamp(t)) if single_use => {
            timestamp_nanos(t).max(now_nanos)
        }
        Some(_) => {
            return Err(Status::invalid_argument(
                "max_staleness and min_read_timestamp are only for single-use read-only transactions",
            ));
        }
    };
    Ok(prost_types::Timestamp {
        seconds: nanos.div_euclid(1_000_000_000) as i64,
        nanos: nanos.rem_euclid(1_000_000_000) as i32,
    })
}

fn timestamp_nanos(t: &prost_types::Timestamp) -> i128 {
    i128::from(t.seconds) * 1_000_000_000 + i128::from(t.nanos)
}

fn duration_nanos(d: &prost_types::Duration) -> Result<i128, Status> {
    let nanos = i128::from(d.seconds) * 1_000_000_000 + i128::from(d.nanos);
    if nanos < 0 {
        return Err(Status::invalid_argument("a staleness must not be negative"));
    }
    Ok(nanos)
}

/// The optimizer a query asked for, as its statistics name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Optimizer {
    /// `optimizer_version`: the version asked for, or the latest.
    pub version: String,
    /// `optimizer_statistics_package`, when one was asked for.
    pub statistics_package: Option<String>,
}

impl Optimizer {
    /// The newest optimizer version the local instance answers to (production's are 1 and up).
    pub const LATEST: u32 = 7;

    /// The optimizer `options` ask for: empty or `latest` for the latest version, else a version
    /// from 1 to [`Optimizer::LATEST`]; a statistics package name of letters, digits and `_`.
    pub fn of(
        options: Option<&pb::execute_sql_request::QueryOptions>,
    ) -> Result<Optimizer, Status> {
        let version = options.map_or("", |o| o.optimizer_version.as_str());
        let version = match version {
            "" | "latest" => Self::LATEST,
            v => match v.parse::<u32>() {
                Ok(n) if (1..=Self::LATEST).contains(&n) => n,
                _ => {
                    return Err(Status::invalid_argument(format!(
                        "Query optimizer version: {} is not supported (1 to {} or latest)",
                        crate::report::printable(&v.chars().take(32).collect::<String>()),
                        Self::LATEST
                    )));
                }
            },
        };
        let package = options
            .map(|o| o.optimizer_statistics_package.as_str())
            .filter(|p| !p.is_empty());
        if let Some(p) = package
            && (p.len() > 128 || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(Status::invalid_argument(
                "an optimizer statistics package is a name of letters, digits and '_'",
            ));
        }
        Ok(Optimizer {
            version: version.to_string(),
            statistics_package: package.map(str::to_owned),
        })
    }
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
        let r = request.into_inner();
        let knobs = self.knobs.get();
        self.sessions
            .create(&r.database, r.session.as_ref(), self.unique(), &knobs)
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
        let knobs = self.knobs.get();
        let template = r.session_template.as_ref();
        let session = (0..r.session_count.min(100))
            .map(|_| {
                self.sessions
                    .create(&r.database, template, self.unique(), &knobs)
            })
            .collect::<Result<_, _>>()?;
        Ok(Response::new(pb::BatchCreateSessionsResponse { session }))
    }

    async fn get_session(
        &self,
        request: Request<pb::GetSessionRequest>,
    ) -> Result<Response<pb::Session>, Status> {
        let name = request.into_inner().name;
        self.sessions
            .touch(&name, &self.knobs.get())
            .map(Response::new)
    }

    async fn delete_session(
        &self,
        request: Request<pb::DeleteSessionRequest>,
    ) -> Result<Response<()>, Status> {
        let name = request.into_inner().name;
        self.sessions.delete(&name).map(Response::new)
    }

    async fn execute_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<pb::ResultSet>, Status> {
        let begun = Instant::now();
        if let Some(tap) = self.watching() {
            tap.request(begun, false);
        }
        let knobs = self.knobs.get();
        let deadline = deadline_of(&request);
        let prepared = self.prepare(request.get_ref(), &knobs)?;
        let started = self
            .start_query(prepared.spec.clone(), &knobs, deadline)
            .await?;
        self.collect(started, &prepared, knobs.max_unary_result_bytes, begun)
            .await
            .map(Response::new)
    }

    type ExecuteStreamingSqlStream = live::Response;

    async fn execute_streaming_sql(
        &self,
        request: Request<pb::ExecuteSqlRequest>,
    ) -> Result<Response<Self::ExecuteStreamingSqlStream>, Status> {
        let begun = Instant::now();
        let tap = self.watching();
        if let Some(tap) = &tap {
            tap.request(begun, !request.get_ref().resume_token.is_empty());
        }
        let knobs = self.knobs.get();
        let deadline = deadline_of(&request);
        let prepared = self.prepare(request.get_ref(), &knobs)?;
        let resume = prepared.resume;
        let restart_key = fnv1a(&[
            request.get_ref().session.as_bytes(),
            &prepared.stamp.fingerprint.to_le_bytes(),
        ]);
        let resumption = match resume {
            Some(point) => Resumption {
                after: Some(point.seq),
                faults_after: Some(point.seq),
            },
            // Run again from the start after its stream broke: no fault where it failed before,
            // and none at all in a shape without resume tokens, whose one resume point, the
            // start, has failed once.
            None => Resumption {
                after: None,
                faults_after: self.restarts.recall(restart_key).map(|seq| {
                    if prepared.stamp.shape.resume_tokens() {
                        seq
                    } else {
                        u64::MAX
                    }
                }),
            },
        };
        let held = resume.and_then(|point| {
            self.parked
                .take(point.stamp.stream, |live| live.next_seq == point.seq + 1)
        });
        let live = match held {
            Some(live) => {
                live.interrupt().set_deadline(deadline);
                live
            }
            None => {
                let spec = QuerySpec {
                    output: Output::Messages {
                        transaction: prepared.transaction.clone(),
                        stamp: prepared.stamp,
                    },
                    ..prepared.spec.clone()
                };
                let started = self.start_query(spec, &knobs, deadline).await?;
                LiveStream::new(
                    prepared.stamp.stream,
                    started.events,
                    started.gone,
                    begun,
                    prepared.report.clone(),
                    prepared.stamp.shape,
                )
            }
        };
        if let Some(tap) = &tap {
            tap.stream(live.id, resume.map(|point| point.stamp.stream));
        }
        let (tx, rx) = mpsc::channel(4);
        let live_knobs = Arc::clone(&self.knobs);
        let parked = Arc::clone(&self.parked);
        let restarts = Arc::clone(&self.restarts);
        let task_tap = tap.clone();
        tokio::spawn(async move {
            match live
                .run(&tx, &live_knobs, resumption, task_tap.as_deref())
                .await
            {
                Ended::Faulted(live, fault) => {
                    let knobs = live_knobs.get();
                    let hold = std::time::Duration::from_millis(knobs.park_timeout_ms);
                    let (id, seq) = (live.id, live.next_seq);
                    restarts.remember(restart_key, seq.saturating_sub(1), hold);
                    if !live.shape().resume_tokens() {
                        // No token can name it: the client can only run the query again.
                        drop(live);
                        let _ = tx.send(Err(fault)).await;
                        return;
                    }
                    // Held before the client hears of the fault, so its resume always finds it.
                    parked.park(id, *live, knobs.max_parked_streams, hold);
                    if tx.send(Err(fault)).await.is_err() {
                        // The client left without hearing of it: nobody will resume this stream.
                        drop(parked.take(id, |live| live.next_seq == seq));
                    }
                }
                Ended::Done => restarts.forget(restart_key),
                Ended::Stopped => {}
            }
        });
        Ok(Response::new(live::Response::new(rx, deadline, tap)))
    }

    async fn begin_transaction(
        &self,
        request: Request<pb::BeginTransactionRequest>,
    ) -> Result<Response<pb::Transaction>, Status> {
        let r = request.into_inner();
        let knobs = self.knobs.get();
        self.sessions.touch(&r.session, &knobs)?;
        self.begin_read_only(&r.session, &r.options.unwrap_or_default(), &knobs)
            .map(Response::new)
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::CommitResponse>, Status> {
        use pb::commit_request::Transaction;
        let r = request.into_inner();
        let knobs = self.knobs.get();
        self.sessions.touch(&r.session, &knobs)?;
        if !r.mutations.is_empty() {
            return Err(read_only_instance());
        }
        match r.transaction {
            Some(Transaction::TransactionId(id)) => {
                if !self
                    .sessions
                    .has_transaction(&r.session, &id, true, &knobs)?
                {
                    return Err(Status::not_found("Transaction not found"));
                }
            }
            Some(Transaction::SingleUseTransaction(options)) => read_only_mode(&options)?,
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
        let knobs = self.knobs.get();
        self.sessions
            .has_transaction(&r.session, &r.transaction_id, true, &knobs)?;
        Ok(Response::new(()))
    }

    async fn partition_query(
        &self,
        request: Request<pb::PartitionQueryRequest>,
    ) -> Result<Response<pb::PartitionResponse>, Status> {
        use pb::transaction_selector::Selector;
        let r = request.into_inner();
        let knobs = self.knobs.get();
        if r.sql.len() as u64 > knobs.max_sql_bytes {
            return Err(Status::invalid_argument(format!(
                "the SQL text is {} bytes, more than the {} allowed (max_sql_bytes)",
                r.sql.len(),
                knobs.max_sql_bytes
            )));
        }
        self.sessions.touch(&r.session, &knobs)?;
        let transaction = match r.transaction.as_ref().and_then(|t| t.selector.as_ref()) {
            Some(Selector::Begin(options)) => {
                if !matches!(
                    options.mode,
                    Some(pb::transaction_options::Mode::ReadOnly(_))
                ) {
                    return Err(Status::invalid_argument(
                        "PartitionQuery reads in a read-only transaction",
                    ));
                }
                self.begin_read_only(&r.session, options, &knobs)?
            }
            Some(Selector::Id(id)) => {
                if !self
                    .sessions
                    .has_transaction(&r.session, id, false, &knobs)?
                {
                    return Err(Status::not_found("Transaction not found"));
                }
                pb::Transaction {
                    id: id.clone(),
                    ..Default::default()
                }
            }
            Some(Selector::SingleUse(_)) | None => {
                return Err(Status::invalid_argument(
                    "PartitionQuery needs a read-only transaction that outlives the call: begin one \
                     (TransactionSelector.begin) or name it (id), not a single-use one",
                ));
            }
        };
        let id: [u8; 8] = transaction
            .id
            .as_slice()
            .try_into()
            .map_err(|_| Status::not_found("Transaction not found"))?;
        let ranges = self.partitions(&r, &knobs).await?;
        let fingerprint = query_fingerprint(&r.sql, r.params.as_ref(), &r.param_types);
        let partitions = ranges
            .into_iter()
            .map(|range| pb::Partition {
                partition_token: PartitionToken {
                    fingerprint,
                    transaction: id,
                    range,
                }
                .encode(),
            })
            .collect();
        Ok(Response::new(pb::PartitionResponse {
            partitions,
            transaction: Some(transaction),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
