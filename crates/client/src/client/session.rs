//! A session on an endpoint: the channel, the Spanner session, and the headers every call of the run
//! carries, attached the same way to CreateSession, ExecuteStreamingSql (and its resumes) and
//! DeleteSession. Queries are prepared here from plain settings into the request the API defines;
//! nothing above this module sees a generated type.

use std::time::{Duration, Instant};

use tonic::metadata::{Ascii, MetadataMap, MetadataValue};
use tonic::transport::Channel;

use super::auth::TokenSource;
use super::cloud::{CloudTarget, REQUEST_PARAMS_HEADER, RESOURCE_PREFIX_HEADER, url_encode};
use super::endpoint::{DatabasePath, Endpoint, QueryMode};
use super::error::ClientError;
use super::headers::{self, CallMetadata, HeaderOptions, IterationHeaders, RequestId, RequestIds};
use super::iteration::{Decoding, run_iteration};
use super::options::{
    DirectedReads, Partitioned, Priority, ReplicaSelection, ReplicaType, RequestOptions, Staleness,
};
use super::params::{self, Param};
use super::partitioned::{self, PartitionCall};
use super::resume::ResumePolicy;
use super::session_kind::{self, SessionKind};
use super::timeouts::Timeouts;
use super::timing::{IterationError, IterationTiming};
use super::transaction::read_only;
use super::{answered, connect_plaintext, error_chain};
use crate::proto::google::spanner::v1 as pb;
use crate::proto::google::spanner::v1::spanner_client::SpannerClient;

/// The headers of every call of one session: the resource prefix (and for Cloud Spanner the
/// routing header), the official clients' own ([`headers`]: the AFE opt-in, the API client, a
/// request id per call), plus a current bearer token when the target needs one.
#[derive(Debug)]
pub struct CallHeaders {
    fixed: MetadataMap,
    tokens: Option<TokenSource>,
    options: HeaderOptions,
    ids: RequestIds,
}

impl CallHeaders {
    /// `google-cloud-resource-prefix` naming `database`; no token.
    pub fn plain(database: &DatabasePath) -> Result<Self, ClientError> {
        let mut fixed = MetadataMap::new();
        fixed.insert(RESOURCE_PREFIX_HEADER, header_value(&database.name())?);
        Ok(CallHeaders::new(fixed, None))
    }

    /// The resource prefix and `x-goog-request-params` of `target`'s database, and a token from
    /// `tokens` on every call.
    pub fn cloud(target: &CloudTarget, tokens: TokenSource) -> Result<Self, ClientError> {
        let name = target.database_name();
        let mut fixed = MetadataMap::new();
        fixed.insert(RESOURCE_PREFIX_HEADER, header_value(&name)?);
        let routing = format!("database={}", url_encode(&name));
        fixed.insert(
            REQUEST_PARAMS_HEADER,
            MetadataValue::try_from(routing).map_err(|_| ClientError::BadName { name })?,
        );
        Ok(CallHeaders::new(fixed, Some(tokens)))
    }

    fn new(mut fixed: MetadataMap, tokens: Option<TokenSource>) -> Self {
        let options = HeaderOptions::default();
        headers::add_fixed(&mut fixed, options);
        CallHeaders {
            fixed,
            tokens,
            options,
            ids: RequestIds::new(),
        }
    }

    /// These headers with the optional ones as `options` says.
    pub fn with_options(mut self, options: HeaderOptions) -> Self {
        headers::add_fixed(&mut self.fixed, options);
        self.options = options;
        self
    }

    /// The headers every call carries, with a current token (renewed before it expires); a call's
    /// request id is added by [`CallHeaders::request`] or [`IterationHeaders::next_call`].
    pub async fn current(&self) -> Result<MetadataMap, ClientError> {
        let mut headers = self.fixed.clone();
        if let Some(tokens) = &self.tokens {
            headers.insert("authorization", tokens.authorization().await?);
        }
        Ok(headers)
    }

    /// `message` as a request carrying the current headers and the next request id.
    pub async fn request<T>(&self, message: T) -> Result<tonic::Request<T>, ClientError> {
        let mut request = tonic::Request::new(message);
        *request.metadata_mut() =
            CallMetadata::new(self.current().await?, self.ids.next()).attempt(1);
        Ok(request)
    }

    /// The headers of one iteration's calls: the current ones, a trace of its own when end-to-end
    /// tracing is on, and a request id per call.
    pub async fn iteration(&self) -> Result<IterationHeaders<'_>, ClientError> {
        let base = self.current().await?;
        Ok(IterationHeaders::new(
            base,
            &self.ids,
            self.options.end_to_end_tracing,
        ))
    }
}

fn header_value(name: &str) -> Result<MetadataValue<Ascii>, ClientError> {
    MetadataValue::try_from(name).map_err(|_| ClientError::BadName {
        name: name.to_owned(),
    })
}

/// The ids the calls of one iteration carried: its first call's first attempt's request id, and
/// its trace id when end-to-end tracing is on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallIds {
    /// The first call's request id (attempt 1).
    pub request_id: Option<RequestId>,
    /// The W3C trace id.
    pub trace_id: Option<String>,
}

/// A query as a user states it: SQL, parameters, the query mode and how it is asked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// One SQL statement.
    pub sql: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The query mode.
    pub mode: QueryMode,
    /// Priority, tag, staleness, optimizer, replicas, partitions.
    pub options: RequestOptions,
}

/// A query made into the request a session sends (its parameters checked and typed, its options
/// in their fields).
#[derive(Debug, Clone)]
pub struct PreparedQuery {
    request: pb::ExecuteSqlRequest,
    /// How to partition it, when it is read as partitions.
    partitioned: Option<Partitioned>,
    /// The staleness of a partitioned read's transaction (a plain read has it in its request).
    staleness: Option<Staleness>,
}

impl PreparedQuery {
    /// The request as it goes on the wire (for a partitioned query, the template each partition's
    /// request is made from).
    pub fn request(&self) -> &pb::ExecuteSqlRequest {
        &self.request
    }

    /// The same query carrying the parameters of `bound` its SQL mentions (a load run's draws
    /// for one request).
    pub fn with_bound(&self, bound: &[super::params::Bound]) -> PreparedQuery {
        let mut query = self.clone();
        super::params::bind(bound, &mut query.request);
        query
    }

    /// The same query in the session `name` (a cold iteration's own session).
    pub fn in_session(&self, name: &str) -> PreparedQuery {
        let mut query = self.clone();
        query.request.session = name.to_owned();
        query
    }
}

/// Puts `options` on `request` exactly as the API defines them: priority and tag in
/// RequestOptions, the optimizer in QueryOptions, the replicas in DirectedReadOptions, the staleness
/// as the timestamp bound of a single-use read-only transaction (asking for its read timestamp).
/// A partitioned query's transaction and Data Boost flag are set per partition instead.
pub fn apply_options(options: &RequestOptions, request: &mut pb::ExecuteSqlRequest) {
    if options.priority.is_some() || options.request_tag.is_some() {
        request.request_options = Some(pb::RequestOptions {
            priority: options.priority.map_or(0, |p| wire_priority(p) as i32),
            request_tag: options.request_tag.clone().unwrap_or_default(),
            transaction_tag: String::new(),
        });
    }
    if options.optimizer_version.is_some() || options.optimizer_statistics_package.is_some() {
        request.query_options = Some(pb::execute_sql_request::QueryOptions {
            optimizer_version: options.optimizer_version.clone().unwrap_or_default(),
            optimizer_statistics_package: options
                .optimizer_statistics_package
                .clone()
                .unwrap_or_default(),
        });
    }
    if let Some(directed) = &options.directed_reads {
        request.directed_read_options = Some(wire_directed_reads(directed));
    }
    if options.partitioned.is_none()
        && let Some(staleness) = options.staleness
    {
        request.transaction = Some(pb::TransactionSelector {
            selector: Some(pb::transaction_selector::Selector::SingleUse(read_only(
                staleness,
            ))),
        });
    }
}

fn wire_priority(priority: Priority) -> pb::request_options::Priority {
    match priority {
        Priority::Low => pb::request_options::Priority::Low,
        Priority::Medium => pb::request_options::Priority::Medium,
        Priority::High => pb::request_options::Priority::High,
    }
}

fn wire_directed_reads(directed: &DirectedReads) -> pb::DirectedReadOptions {
    use pb::directed_read_options::{
        ExcludeReplicas, IncludeReplicas, ReplicaSelection as Wire, Replicas, replica_selection,
    };
    let selections = |replicas: &[ReplicaSelection]| {
        replicas
            .iter()
            .map(|r| Wire {
                location: r.location.clone(),
                r#type: match r.kind {
                    None => replica_selection::Type::Unspecified,
                    Some(ReplicaType::ReadWrite) => replica_selection::Type::ReadWrite,
                    Some(ReplicaType::ReadOnly) => replica_selection::Type::ReadOnly,
                } as i32,
            })
            .collect()
    };
    pb::DirectedReadOptions {
        replicas: Some(match directed {
            DirectedReads::Include(r) => Replicas::IncludeReplicas(IncludeReplicas {
                replica_selections: selections(r),
                auto_failover_disabled: false,
            }),
            DirectedReads::Exclude(r) => Replicas::ExcludeReplicas(ExcludeReplicas {
                replica_selections: selections(r),
            }),
        }),
    }
}

/// The wire value of a query mode.
pub fn wire_mode(mode: QueryMode) -> pb::execute_sql_request::QueryMode {
    match mode {
        QueryMode::Normal => pb::execute_sql_request::QueryMode::Normal,
        QueryMode::WithStats => pb::execute_sql_request::QueryMode::WithStats,
        QueryMode::Profile => pb::execute_sql_request::QueryMode::Profile,
    }
}

/// An open session on an endpoint. Close it with [`Session::close`]; a session that is only dropped
/// is left for the server to expire.
#[derive(Debug)]
pub struct Session {
    channel: Channel,
    name: String,
    headers: CallHeaders,
    endpoint: String,
    description: String,
    timeouts: Timeouts,
    created_in: Duration,
    /// The kind asked for, and the kind the server granted.
    kind: (SessionKind, SessionKind),
}

/// What [`Session::create`] needs besides the database: the channel, the headers, where it goes.
pub(super) struct Opened {
    pub(super) channel: Channel,
    pub(super) headers: CallHeaders,
    pub(super) endpoint: String,
    pub(super) description: String,
    pub(super) plaintext: bool,
}

/// A new token source for `target` with its first token already fetched; that fetch and every
/// renewal are held to `limit`, and a stalled token endpoint is named as the step that failed.
pub(super) async fn first_token(
    target: &CloudTarget,
    limit: Duration,
) -> Result<TokenSource, ClientError> {
    let tokens = target.token_source(limit)?;
    tokens.authorization().await?;
    Ok(tokens)
}

impl Session {
    /// Connects to `endpoint` and creates a regular session in `database` (for Cloud Spanner, the
    /// target's own database names the headers), each step within its limit in `timeouts`.
    pub async fn open(
        endpoint: &Endpoint,
        database: &DatabasePath,
        timeouts: Timeouts,
    ) -> Result<Session, ClientError> {
        Self::open_as(
            endpoint,
            database,
            timeouts,
            SessionKind::Regular,
            HeaderOptions::default(),
        )
        .await
    }

    /// [`Session::open`], asking for a session of `kind` (see [`Session::granted`]), every call
    /// carrying the optional headers `options` asks for.
    pub async fn open_as(
        endpoint: &Endpoint,
        database: &DatabasePath,
        timeouts: Timeouts,
        kind: SessionKind,
        options: HeaderOptions,
    ) -> Result<Session, ClientError> {
        let (channel, headers, address) = match endpoint {
            Endpoint::Plaintext { host_port, .. } => (
                plaintext(host_port, timeouts.connect).await?,
                CallHeaders::plain(database)?,
                host_port.clone(),
            ),
            Endpoint::Cloud(target) => {
                target.check_endpoint()?;
                let tokens = first_token(target, timeouts.call).await?;
                let channel = tokio::time::timeout(timeouts.connect, target.connect())
                    .await
                    .map_err(|_| ClientError::NoAnswer {
                        endpoint: target.endpoint.clone(),
                        after: timeouts.connect,
                    })??;
                (
                    channel,
                    CallHeaders::cloud(target, tokens)?,
                    target.endpoint.clone(),
                )
            }
        };
        let opened = Opened {
            channel,
            headers,
            endpoint: address,
            description: endpoint.description(),
            plaintext: matches!(endpoint, Endpoint::Plaintext { .. }),
        };
        Self::create(opened, database, timeouts, kind, options).await
    }

    /// Creates a session of `kind` in `database` on a channel already open, every call carrying
    /// the optional headers `options` asks for.
    pub(super) async fn create(
        opened: Opened,
        database: &DatabasePath,
        timeouts: Timeouts,
        kind: SessionKind,
        options: HeaderOptions,
    ) -> Result<Session, ClientError> {
        let Opened {
            channel,
            headers,
            endpoint,
            description,
            plaintext,
        } = opened;
        let headers = headers.with_options(options);
        let request = headers
            .request(pb::CreateSessionRequest {
                database: database.name(),
                session: session_kind::template(kind),
            })
            .await?;
        let started = Instant::now();
        let mut client = SpannerClient::new(channel.clone());
        let answer = answered(
            &endpoint,
            "CreateSession",
            timeouts.call,
            client.create_session(request),
        )
        .await?
        .map_err(|status| (status, database.name()));
        let session = match answer {
            Ok(response) => response.into_inner(),
            Err((status, database)) => {
                return Err(
                    ClientError::diagnose(&endpoint, status, plaintext, |status| {
                        ClientError::CreateSession { database, status }
                    })
                    .await,
                );
            }
        };
        Ok(Session {
            channel,
            kind: (kind, session_kind::granted(&session)),
            name: session.name,
            headers,
            endpoint,
            description,
            timeouts,
            created_in: started.elapsed(),
        })
    }

    /// The kind of session asked for.
    pub fn asked(&self) -> SessionKind {
        self.kind.0
    }

    /// The kind the server granted (read back from its answer, not assumed): the emulator grants a
    /// regular session to a multiplexed request.
    pub fn granted(&self) -> SessionKind {
        self.kind.1
    }

    /// What the session runs on, in words (`local instance 127.0.0.1:PORT`, `endpoint …`).
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The limits its calls keep.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// How long CreateSession took.
    pub fn created_in(&self) -> Duration {
        self.created_in
    }

    /// The session's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The endpoint it was opened on, as given (for errors).
    pub(super) fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Its channel.
    pub(super) fn channel(&self) -> &Channel {
        &self.channel
    }

    /// The headers its calls carry.
    pub(super) fn headers(&self) -> &CallHeaders {
        &self.headers
    }

    /// Whether the server granted a multiplexed session.
    pub fn is_multiplexed(&self) -> bool {
        self.granted() == SessionKind::Multiplexed
    }

    /// The request `query` becomes in this session: SQL, mode, the parameters with their types, and
    /// each option in the field the API defines for it (see [`apply_options`]).
    pub fn prepare(&self, query: &Query) -> Result<PreparedQuery, ClientError> {
        query.options.check()?;
        if query.options.partitioned.is_some() && query.mode != QueryMode::Normal {
            return Err(ClientError::Option(super::options::OptionError {
                option: "partitioned".into(),
                value: query.mode.as_str().into(),
                why: super::options::PARTITIONED_MODE.into(),
            }));
        }
        let mut request = pb::ExecuteSqlRequest {
            session: self.name.clone(),
            sql: query.sql.clone(),
            query_mode: wire_mode(query.mode) as i32,
            ..Default::default()
        };
        params::apply(&query.params, &mut request)?;
        apply_options(&query.options, &mut request);
        Ok(PreparedQuery {
            request,
            partitioned: query.options.partitioned,
            staleness: query.options.staleness,
        })
    }

    /// Runs `query` once, timed, resuming broken streams by `policy`; every call (resumes
    /// included) carries this session's headers.
    pub async fn execute(
        &self,
        query: &PreparedQuery,
        policy: ResumePolicy,
        decoding: Decoding<'_>,
    ) -> Result<IterationTiming, IterationError> {
        self.execute_identified(query, policy, decoding).await.1
    }

    /// [`Session::execute`], returning too the ids its calls carried, whether it failed or not
    /// (a failed call is the one support is asked about).
    pub async fn execute_identified(
        &self,
        query: &PreparedQuery,
        policy: ResumePolicy,
        decoding: Decoding<'_>,
    ) -> (CallIds, Result<IterationTiming, IterationError>) {
        let headers = match self.headers.iteration().await {
            Ok(headers) => headers,
            Err(error) => return (CallIds::default(), Err(error.into())),
        };
        let timing = self.run_query(&headers, query, policy, decoding).await;
        let ids = CallIds {
            request_id: headers.first_request(),
            trace_id: headers.trace_id(),
        };
        (ids, timing)
    }

    async fn run_query(
        &self,
        headers: &IterationHeaders<'_>,
        query: &PreparedQuery,
        policy: ResumePolicy,
        decoding: Decoding<'_>,
    ) -> Result<IterationTiming, IterationError> {
        let mut timing = if let Some(partitioned) = query.partitioned {
            let call = PartitionCall {
                channel: self.channel.clone(),
                endpoint: &self.endpoint,
                headers,
                timeouts: self.timeouts,
            };
            let how = (partitioned, query.staleness);
            partitioned::run(call, &query.request, how, policy, decoding).await?
        } else {
            run_iteration(
                self.channel.clone(),
                &query.request,
                headers.next_call(),
                policy,
                self.timeouts,
                decoding,
            )
            .await?
        };
        timing.trace_id = headers.trace_id();
        Ok(timing)
    }

    /// Runs `query` once receiving only its bytes (the wire floor, [`super::floor`]), resuming by
    /// `policy`. Not for partitioned queries (they are read as their partitions).
    pub async fn execute_bytes_only(
        &self,
        query: &PreparedQuery,
        policy: ResumePolicy,
    ) -> Result<IterationTiming, IterationError> {
        let headers = self.headers.iteration().await?;
        let mut timing = super::floor::read_bytes(
            self.channel.clone(),
            &query.request,
            headers.next_call(),
            policy,
            self.timeouts,
        )
        .await?;
        timing.trace_id = headers.trace_id();
        Ok(timing)
    }

    /// Deletes the session, waiting at most `within` for the server's answer. Returns whether the
    /// server answered in time (an unanswered deletion is left to the server's expiry).
    /// A multiplexed session cannot be deleted (Spanner refuses, and expires it on its own): it is
    /// left, and `Ok(true)` returned.
    pub async fn close(self, within: Duration) -> Result<bool, ClientError> {
        if self.granted() == SessionKind::Multiplexed {
            return Ok(true);
        }
        let request = self
            .headers
            .request(pb::DeleteSessionRequest {
                name: self.name.clone(),
            })
            .await?;
        let mut client = SpannerClient::new(self.channel.clone());
        match tokio::time::timeout(within, client.delete_session(request)).await {
            Err(_) => Ok(false),
            Ok(Ok(_)) => Ok(true),
            Ok(Err(status)) => Err(ClientError::from_status(&self.endpoint, status, |status| {
                ClientError::DeleteSession {
                    session: self.name.clone(),
                    status,
                }
            })),
        }
    }
}

async fn plaintext(host_port: &str, within: Duration) -> Result<Channel, ClientError> {
    super::check_host_port(host_port).map_err(ClientError::BadEndpoint)?;
    tokio::time::timeout(within, connect_plaintext(host_port))
        .await
        .map_err(|_| ClientError::NoAnswer {
            endpoint: host_port.to_owned(),
            after: within,
        })?
        .map_err(|e| ClientError::Unreachable {
            endpoint: host_port.to_owned(),
            reason: error_chain(&e),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text<'a>(headers: &'a MetadataMap, name: &str) -> Option<&'a str> {
        headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[tokio::test]
    async fn plain_headers_name_the_database_and_carry_no_token() {
        let headers = CallHeaders::plain(&DatabasePath::default()).expect("valid names");
        let current = headers.current().await.expect("no token to fetch");
        assert_eq!(
            text(&current, RESOURCE_PREFIX_HEADER),
            Some("projects/test-project/instances/test-instance/databases/test-db")
        );
        assert!(current.get("authorization").is_none());
        assert!(current.get(REQUEST_PARAMS_HEADER).is_none());
    }

    #[test]
    fn a_name_that_cannot_be_a_header_is_a_clear_error() {
        let database = DatabasePath {
            database: "bad\nname".into(),
            ..DatabasePath::default()
        };
        let error = CallHeaders::plain(&database).expect_err("a newline");
        assert!(matches!(error, ClientError::BadName { .. }), "{error:?}");
        assert!(error.to_string().contains("cannot be sent as a header"));
    }

    #[test]
    fn every_query_mode_has_its_wire_value() {
        assert_eq!(wire_mode(QueryMode::Normal) as i32, 0);
        assert_eq!(wire_mode(QueryMode::Profile) as i32, 2);
        assert_eq!(wire_mode(QueryMode::WithStats) as i32, 3);
    }
}
