//! Read-write transactions on the local instance, through a real tonic client over a loopback
//! port: transfers between Accounts, DML in streams and unary calls, seqno replays, batch DML,
//! mutations, scripted aborts with their RetryInfo, optimistic validation per row, the idle abort,
//! max_commit_delay's batches, the bounds, and reads running while transactions commit.

use std::time::{Duration, Instant};

use prost::Message;
use spanprof_server::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof_wire::proto::google::rpc;
use spanprof_wire::proto::google::spanner::v1 as pb;
use spanprof_wire::proto::google::spanner::v1::execute_sql_request::QueryMode;
use spanprof_wire::proto::google::spanner::v1::spanner_client::SpannerClient;
use spanprof_wire::wire::result_stats::QueryStats;
use tonic::Code;
use tonic::transport::Channel;

const DATABASE: &str = "projects/p/instances/i/databases/d";

/// A local instance and a client of it, with one session.
struct Local {
    instance: LocalInstance,
    client: SpannerClient<Channel>,
    session: String,
}

impl Local {
    async fn start(knobs: KnobSettings) -> Local {
        let config = ServerConfig {
            seed23_rows: 1_000,
            knobs,
            ..ServerConfig::default()
        };
        let instance = LocalInstance::start(config).await.expect("starts");
        let channel = Channel::from_shared(format!("http://{}", instance.host_port()))
            .expect("a URI")
            .connect()
            .await
            .expect("connects");
        let mut client = SpannerClient::new(channel);
        let session = new_session(&mut client, false).await;
        Local {
            instance,
            client,
            session,
        }
    }

    async fn begin(&mut self) -> Vec<u8> {
        begin_in(&mut self.client, &self.session, Vec::new()).await
    }

    async fn dml(
        &mut self,
        id: &[u8],
        sql: &str,
        seqno: i64,
    ) -> Result<pb::ResultSet, tonic::Status> {
        let request = sql_request(&self.session, Some(by_id(id)), sql, seqno);
        Ok(self.client.execute_sql(request).await?.into_inner())
    }

    async fn commit(&mut self, id: &[u8]) -> Result<pb::CommitResponse, tonic::Status> {
        commit_in(&mut self.client, &self.session, id).await
    }

    /// The balance of account `id`, read outside any transaction.
    async fn balance(&mut self, id: i64) -> i64 {
        let sql = format!("SELECT Balance FROM Accounts WHERE AccountId = {id}");
        let answer = self
            .client
            .execute_sql(sql_request(&self.session, None, &sql, 0))
            .await
            .expect("reads")
            .into_inner();
        int(&answer.rows[0].values[0])
    }
}

async fn new_session(client: &mut SpannerClient<Channel>, multiplexed: bool) -> String {
    let request = pb::CreateSessionRequest {
        database: DATABASE.into(),
        session: Some(pb::Session {
            multiplexed,
            ..Default::default()
        }),
    };
    client
        .create_session(request)
        .await
        .expect("a session")
        .into_inner()
        .name
}

fn read_write(previous: Vec<u8>) -> pb::TransactionOptions {
    pb::TransactionOptions {
        mode: Some(pb::transaction_options::Mode::ReadWrite(
            pb::transaction_options::ReadWrite {
                read_lock_mode: 2,
                multiplexed_session_previous_transaction_id: previous,
            },
        )),
        ..Default::default()
    }
}

async fn begin_in(
    client: &mut SpannerClient<Channel>,
    session: &str,
    previous: Vec<u8>,
) -> Vec<u8> {
    let request = pb::BeginTransactionRequest {
        session: session.into(),
        options: Some(read_write(previous)),
        ..Default::default()
    };
    client
        .begin_transaction(request)
        .await
        .expect("begins")
        .into_inner()
        .id
}

async fn commit_in(
    client: &mut SpannerClient<Channel>,
    session: &str,
    id: &[u8],
) -> Result<pb::CommitResponse, tonic::Status> {
    let request = pb::CommitRequest {
        session: session.into(),
        transaction: Some(pb::commit_request::Transaction::TransactionId(id.to_vec())),
        return_commit_stats: true,
        ..Default::default()
    };
    Ok(client.commit(request).await?.into_inner())
}

fn by_id(id: &[u8]) -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Id(id.to_vec())),
    }
}

fn sql_request(
    session: &str,
    transaction: Option<pb::TransactionSelector>,
    sql: &str,
    seqno: i64,
) -> pb::ExecuteSqlRequest {
    pb::ExecuteSqlRequest {
        session: session.into(),
        transaction,
        sql: sql.into(),
        seqno,
        ..Default::default()
    }
}

fn int(value: &prost_types::Value) -> i64 {
    match &value.kind {
        Some(prost_types::value::Kind::StringValue(s)) => s.parse().expect("an INT64"),
        other => panic!("not an INT64: {other:?}"),
    }
}

fn row_count(stats: Option<&pb::ResultSetStats>) -> Option<i64> {
    match stats?.row_count {
        Some(pb::result_set_stats::RowCount::RowCountExact(n)) => Some(n),
        _ => None,
    }
}

/// Every PartialResultSet of a streaming call.
async fn stream(
    client: &mut SpannerClient<Channel>,
    request: pb::ExecuteSqlRequest,
) -> Result<Vec<pb::PartialResultSet>, tonic::Status> {
    let mut messages = client.execute_streaming_sql(request).await?.into_inner();
    let mut all = Vec::new();
    while let Some(message) = messages.message().await? {
        all.push(message);
    }
    Ok(all)
}

/// The precommit token a multiplexed session's retry reply carries, if the answer is one.
fn retry_token(reply: &pb::CommitResponse) -> Option<pb::MultiplexedSessionPrecommitToken> {
    match reply.multiplexed_session_retry.clone()? {
        pb::commit_response::MultiplexedSessionRetry::PrecommitToken(token) => Some(token),
    }
}

async fn commit_with(
    client: &mut SpannerClient<Channel>,
    session: &str,
    id: &[u8],
    precommit_token: Option<pb::MultiplexedSessionPrecommitToken>,
    mutations: Vec<pb::Mutation>,
) -> Result<pb::CommitResponse, tonic::Status> {
    let request = pb::CommitRequest {
        session: session.into(),
        transaction: Some(pb::commit_request::Transaction::TransactionId(id.to_vec())),
        mutations,
        precommit_token,
        ..Default::default()
    };
    Ok(client.commit(request).await?.into_inner())
}

/// The delay an ABORTED asks for, read from its details and from its trailer.
fn retry_delays(status: &tonic::Status) -> (Option<Duration>, Option<Duration>) {
    let delay = |info: rpc::RetryInfo| {
        info.retry_delay
            .map(|d| Duration::new(d.seconds as u64, d.nanos as u32))
    };
    let from_details = rpc::Status::decode(status.details())
        .ok()
        .and_then(|s| {
            s.details
                .into_iter()
                .find(|a| a.type_url == "type.googleapis.com/google.rpc.RetryInfo")
        })
        .and_then(|any| rpc::RetryInfo::decode(&any.value[..]).ok())
        .and_then(delay);
    let from_trailer = status
        .metadata()
        .get_bin("google.rpc.retryinfo-bin")
        .and_then(|v| v.to_bytes().ok())
        .and_then(|b| rpc::RetryInfo::decode(b).ok())
        .and_then(delay);
    (from_details, from_trailer)
}

const DEBIT_1: &str = "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1";
const CREDIT_2: &str = "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transfer_commits_once_and_only_its_transaction_sees_it_before() {
    let mut local = Local::start(KnobSettings::default()).await;
    let id = local.begin().await;
    let debit = local.dml(&id, DEBIT_1, 1).await.expect("debits");
    assert_eq!(row_count(debit.stats.as_ref()), Some(1));
    // The credit on a stream: its row count in the last message.
    let credit = sql_request(&local.session, Some(by_id(&id)), CREDIT_2, 2);
    let messages = stream(&mut local.client, credit).await.expect("credits");
    let last = messages.last().expect("a message");
    assert_eq!(row_count(last.stats.as_ref()), Some(1));
    // The transaction sees its own writes; nobody else does before its commit.
    let inside = local
        .dml(&id, "SELECT Balance FROM Accounts WHERE AccountId = 1", 0)
        .await
        .expect("reads in the transaction");
    assert_eq!(int(&inside.rows[0].values[0]), 999);
    assert_eq!(local.balance(1).await, 1_000);
    let committed = local.commit(&id).await.expect("commits");
    assert!(committed.commit_timestamp.is_some());
    assert_eq!(committed.commit_stats.map(|s| s.mutation_count), Some(2));
    // The same Commit sent again (as after a lost answer) gets the same answer and applies
    // nothing: a transaction commits once.
    let again = local.commit(&id).await.expect("answered again");
    assert_eq!(again.commit_timestamp, committed.commit_timestamp);
    assert_eq!(again.commit_stats.map(|s| s.mutation_count), Some(2));
    assert_eq!(
        (local.balance(1).await, local.balance(2).await),
        (999, 1_001)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inline_begin_returns_the_id_first_and_then_return_gives_the_rows() {
    let mut local = Local::start(KnobSettings::default()).await;
    let begin = pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Begin(read_write(
            Vec::new(),
        ))),
    };
    let sql = "UPDATE Accounts SET Balance = Balance + 5 WHERE AccountId = 7 THEN RETURN Balance";
    let messages = stream(
        &mut local.client,
        sql_request(&local.session, Some(begin), sql, 1),
    )
    .await
    .expect("runs");
    let id = messages[0]
        .metadata
        .as_ref()
        .and_then(|m| m.transaction.as_ref())
        .map(|t| t.id.clone())
        .expect("the transaction in the first metadata");
    assert!(!id.is_empty());
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    let values: Vec<&prost_types::Value> = messages.iter().flat_map(|m| &m.values).collect();
    assert_eq!(values.len(), 1);
    assert_eq!(int(values[0]), 1_005);
    assert_eq!(
        row_count(messages.last().and_then(|m| m.stats.as_ref())),
        Some(1)
    );
    local.commit(&id).await.expect("commits");
    assert_eq!(local.balance(7).await, 1_005);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_statement_and_a_rollback_leave_nothing() {
    let mut local = Local::start(KnobSettings::default()).await;
    let id = local.begin().await;
    local.dml(&id, DEBIT_1, 1).await.expect("debits");
    let misspelt = local
        .dml(
            &id,
            "UPDATE Accounts SET Balanse = 0 WHERE AccountId = 2",
            2,
        )
        .await
        .expect_err("no such column");
    assert_eq!(misspelt.code(), Code::InvalidArgument, "{misspelt:?}");
    let rollback = pb::RollbackRequest {
        session: local.session.clone(),
        transaction_id: id.clone(),
    };
    local
        .client
        .rollback(rollback.clone())
        .await
        .expect("rolls back");
    local
        .client
        .rollback(rollback)
        .await
        .expect("twice, still no error");
    assert_eq!(local.balance(1).await, 1_000);
    let late = local.commit(&id).await.expect_err("rolled back");
    assert_eq!(late.code(), Code::FailedPrecondition, "{late:?}");
    let unknown = local.commit(b"nobody").await.expect_err("unknown");
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replayed_seqno_answers_again_without_running_and_dml_needs_a_transaction() {
    let mut local = Local::start(KnobSettings::default()).await;
    let id = local.begin().await;
    let first = local.dml(&id, DEBIT_1, 4).await.expect("debits");
    let replay = local.dml(&id, DEBIT_1, 4).await.expect("the same answer");
    assert_eq!(first, replay);
    // Another DML may not reuse the seqno (a client that sends none sends 0 every time: its
    // second DML is refused rather than answered with the first's answer).
    let reused = local
        .dml(&id, CREDIT_2, 4)
        .await
        .expect_err("seqno 4 is taken");
    assert_eq!(reused.code(), Code::InvalidArgument, "{reused:?}");
    assert!(reused.message().contains("seqno"), "{reused:?}");
    // 0 is a seqno like any other (the official Python client's first).
    let zero = local.dml(&id, CREDIT_2, 0).await.expect("seqno 0");
    assert_eq!(local.dml(&id, CREDIT_2, 0).await.expect("replayed"), zero);
    local.commit(&id).await.expect("commits");
    assert_eq!(local.balance(1).await, 999, "applied once");
    assert_eq!(local.balance(2).await, 1_001, "applied once");
    // Outside a read-write transaction DML is refused, single-use or not.
    let single = sql_request(&local.session, None, DEBIT_1, 1);
    let refused = local
        .client
        .execute_sql(single)
        .await
        .expect_err("read-only");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    let single_rw = pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::SingleUse(read_write(
            Vec::new(),
        ))),
    };
    let refused = local
        .client
        .execute_sql(sql_request(&local.session, Some(single_rw), DEBIT_1, 1))
        .await
        .expect_err("single-use read-write");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    assert_eq!(local.balance(1).await, 999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_dml_stops_at_the_first_failure_and_says_it() {
    let mut local = Local::start(KnobSettings::default()).await;
    let id = local.begin().await;
    let statement = |sql: &str| pb::execute_batch_dml_request::Statement {
        sql: sql.into(),
        ..Default::default()
    };
    let request = pb::ExecuteBatchDmlRequest {
        session: local.session.clone(),
        transaction: Some(by_id(&id)),
        statements: vec![
            statement("UPDATE Accounts SET Balance = 0 WHERE AccountId <= 3"),
            statement("UPDATE Nowhere SET Balance = 0"),
            statement("UPDATE Accounts SET Balance = 0 WHERE AccountId = 4"),
        ],
        seqno: 1,
        ..Default::default()
    };
    let answer = local
        .client
        .execute_batch_dml(request)
        .await
        .expect("the call succeeds")
        .into_inner();
    assert_eq!(answer.result_sets.len(), 1);
    assert_eq!(row_count(answer.result_sets[0].stats.as_ref()), Some(3));
    let status = answer.status.expect("the failure");
    assert_eq!(status.code, Code::InvalidArgument as i32);
    assert!(status.message.contains("Nowhere"), "{}", status.message);
    local.commit(&id).await.expect("commits");
    assert_eq!(local.balance(3).await, 0);
    assert_eq!(
        local.balance(4).await,
        1_000,
        "the statement after the failure never ran"
    );
}

fn write(table: &str, columns: &[&str], rows: &[&[i64]]) -> pb::mutation::Write {
    pb::mutation::Write {
        table: table.into(),
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        values: rows
            .iter()
            .map(|row| prost_types::ListValue {
                values: row
                    .iter()
                    .map(|n| prost_types::Value {
                        kind: Some(prost_types::value::Kind::StringValue(n.to_string())),
                    })
                    .collect(),
            })
            .collect(),
    }
}

fn key(n: i64) -> prost_types::ListValue {
    prost_types::ListValue {
        values: vec![prost_types::Value {
            kind: Some(prost_types::value::Kind::StringValue(n.to_string())),
        }],
    }
}

fn single_use_commit(session: &str, mutations: Vec<pb::Mutation>) -> pb::CommitRequest {
    pb::CommitRequest {
        session: session.into(),
        transaction: Some(pb::commit_request::Transaction::SingleUseTransaction(
            read_write(Vec::new()),
        )),
        mutations,
        return_commit_stats: true,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutations_of_every_kind_apply_together_or_not_at_all() {
    use pb::mutation::Operation;
    let mut local = Local::start(KnobSettings::default()).await;
    let accounts = ["AccountId", "Balance"];
    let op = |operation| pb::Mutation {
        operation: Some(operation),
    };
    let range = pb::KeyRange {
        start_key_type: Some(pb::key_range::StartKeyType::StartClosed(key(10))),
        end_key_type: Some(pb::key_range::EndKeyType::EndOpen(key(13))),
    };
    let mutations = vec![
        op(Operation::Insert(write(
            "Accounts",
            &accounts,
            &[&[2001, 5], &[2002, 6]],
        ))),
        op(Operation::Update(write(
            "Accounts",
            &accounts,
            &[&[2001, 50]],
        ))),
        op(Operation::InsertOrUpdate(write(
            "Accounts",
            &accounts,
            &[&[2002, 60], &[2003, 70]],
        ))),
        op(Operation::Replace(write(
            "Accounts",
            &accounts,
            &[&[20, 7]],
        ))),
        op(Operation::Delete(pb::mutation::Delete {
            table: "Accounts".into(),
            key_set: Some(pb::KeySet {
                keys: vec![key(5)],
                ranges: vec![range],
                all: false,
            }),
        })),
    ];
    let committed = local
        .client
        .commit(single_use_commit(&local.session, mutations))
        .await
        .expect("commits")
        .into_inner();
    // 4 + 2 + 4 + 2 columns written, one key and one range deleted.
    assert_eq!(committed.commit_stats.map(|s| s.mutation_count), Some(14));
    for (id, want) in [(2001, 50), (2002, 60), (2003, 70), (20, 7)] {
        assert_eq!(local.balance(id).await, want, "account {id}");
    }
    let count = local
        .client
        .execute_sql(sql_request(
            &local.session,
            None,
            "SELECT count(*) FROM Accounts WHERE AccountId IN (5, 10, 11, 12, 13)",
            0,
        ))
        .await
        .expect("counts")
        .into_inner();
    assert_eq!(
        int(&count.rows[0].values[0]),
        1,
        "only 13, past the open end, is left"
    );
    // An insert of a row that exists fails the commit, and the update beside it is not applied.
    let clash = vec![
        op(Operation::Update(write("Accounts", &accounts, &[&[30, 1]]))),
        op(Operation::Insert(write(
            "Accounts",
            &accounts,
            &[&[2001, 1]],
        ))),
    ];
    let refused = local
        .client
        .commit(single_use_commit(&local.session, clash))
        .await
        .expect_err("the row exists");
    assert_eq!(refused.code(), Code::AlreadyExists, "{refused:?}");
    assert_eq!(local.balance(30).await, 1_000);
    let seed23 = vec![op(Operation::Delete(pb::mutation::Delete {
        table: "Seed23".into(),
        key_set: Some(pb::KeySet {
            all: true,
            ..Default::default()
        }),
    }))];
    let refused = local
        .client
        .commit(single_use_commit(&local.session, seed23))
        .await
        .expect_err("Seed23 is generated");
    assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_third_new_transaction_aborts_once_with_retry_info_and_its_retry_commits() {
    let mut local = Local::start(KnobSettings {
        abort_every: 3,
        abort_retry_delay_ms: 20,
        ..KnobSettings::default()
    })
    .await;
    let mut aborted = Vec::new();
    for transfer in 1..=9 {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let id = local.begin().await;
            local.dml(&id, DEBIT_1, 1).await.expect("debits");
            local.dml(&id, CREDIT_2, 2).await.expect("credits");
            match local.commit(&id).await {
                Ok(_) => break,
                Err(status) => {
                    assert_eq!(status.code(), Code::Aborted, "{status:?}");
                    assert!(status.message().contains("abort_every"), "{status:?}");
                    let twenty = Some(Duration::from_millis(20));
                    assert_eq!(retry_delays(&status), (twenty, twenty));
                    aborted.push(transfer);
                    assert!(attempts < 3, "the retry commits");
                }
            }
        }
    }
    assert_eq!(aborted, [3, 6, 9]);
    assert_eq!(
        (local.balance(1).await, local.balance(2).await),
        (991, 1_009)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_a_multiplexed_session_names_the_aborted_transaction() {
    let mut local = Local::start(KnobSettings {
        abort_every: 1,
        ..KnobSettings::default()
    })
    .await;
    let session = new_session(&mut local.client, true).await;
    let first = begin_in(&mut local.client, &session, Vec::new()).await;
    let aborted = commit_following_retry(&mut local.client, &session, &first)
        .await
        .expect_err("doomed");
    assert_eq!(aborted.code(), Code::Aborted);
    // Without the previous id it is a new transaction, doomed too; with it, a retry.
    let fresh = begin_in(&mut local.client, &session, Vec::new()).await;
    assert!(
        commit_following_retry(&mut local.client, &session, &fresh)
            .await
            .is_err()
    );
    let retry = begin_in(&mut local.client, &session, fresh.clone()).await;
    commit_following_retry(&mut local.client, &session, &retry)
        .await
        .expect("a retry commits");
}

/// A commit on a multiplexed session as its clients make it: without a token first (nothing
/// else in the transaction gave one), then again with the token of the retry reply.
async fn commit_following_retry(
    client: &mut SpannerClient<Channel>,
    session: &str,
    id: &[u8],
) -> Result<pb::CommitResponse, tonic::Status> {
    let reply = commit_in(client, session, id).await?;
    let token = retry_token(&reply).expect("a multiplexed commit without a token is told to retry");
    commit_with(client, session, id, Some(token), Vec::new()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_optimistic_transactions_on_one_row_the_later_commit_aborts_and_other_rows_go_on() {
    let mut local = Local::start(KnobSettings::default()).await;
    let first = local.begin().await;
    let second = local.begin().await;
    let elsewhere = local.begin().await;
    local.dml(&first, DEBIT_1, 1).await.expect("first writes");
    local
        .dml(
            &second,
            "UPDATE Accounts SET Balance = 0 WHERE AccountId = 1",
            1,
        )
        .await
        .expect("second writes the same row");
    local
        .dml(
            &elsewhere,
            "UPDATE Accounts SET Balance = 0 WHERE AccountId = 500",
            1,
        )
        .await
        .expect("a third writes another row");
    local.commit(&first).await.expect("the first commits");
    // Its reads are validated at its commit, as Spanner's optimistic transactions are: a read
    // of the row after the first's commit goes through (seeing its own write).
    let read = local
        .dml(
            &second,
            "SELECT Balance FROM Accounts WHERE AccountId = 1",
            2,
        )
        .await
        .expect("an optimistic read does not abort before the commit");
    assert_eq!(int(&read.rows[0].values[0]), 0);
    let lost = local.commit(&second).await.expect_err("validation fails");
    assert_eq!(lost.code(), Code::Aborted, "{lost:?}");
    assert!(
        lost.message().contains("accounts(1)"),
        "names the row: {lost:?}"
    );
    assert!(
        retry_delays(&lost).0.is_some(),
        "an abort carries RetryInfo"
    );
    local
        .commit(&elsewhere)
        .await
        .expect("validation is per row: another row's writer commits");
    assert_eq!(local.balance(500).await, 0);
    assert_eq!(local.balance(1).await, 999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_transaction_aborts_and_commits_wait_out_their_delay_together() {
    let mut local = Local::start(KnobSettings {
        transaction_idle_timeout_ms: 200,
        ..KnobSettings::default()
    })
    .await;
    let idle = local.begin().await;
    local.dml(&idle, DEBIT_1, 1).await.expect("debits");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let late = local.commit(&idle).await.expect_err("idle too long");
    assert_eq!(late.code(), Code::Aborted, "{late:?}");
    // Two commits that allow 300 ms: applied together, one timestamp.
    let mut requests = Vec::new();
    for account in [100, 200] {
        let id = local.begin().await;
        // Tables of their own: the validation would abort the second writer of one table.
        let sql = if account == 100 {
            "UPDATE Singers SET FirstName = 'x' WHERE SingerId = 1"
        } else {
            "UPDATE Albums SET AlbumTitle = 'x' WHERE SingerId = 1"
        };
        local.dml(&id, sql, 1).await.expect("writes");
        requests.push(pb::CommitRequest {
            session: local.session.clone(),
            transaction: Some(pb::commit_request::Transaction::TransactionId(id)),
            max_commit_delay: Some(prost_types::Duration {
                seconds: 0,
                nanos: 300_000_000,
            }),
            ..Default::default()
        });
    }
    let started = Instant::now();
    let (mut a, mut b) = (local.client.clone(), local.client.clone());
    let (ra, rb) = (requests[0].clone(), requests[1].clone());
    let (one, two) = tokio::join!(a.commit(ra), b.commit(rb));
    let (one, two) = (
        one.expect("commits").into_inner(),
        two.expect("commits").into_inner(),
    );
    assert_eq!(one.commit_timestamp, two.commit_timestamp, "one batch");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    let mut too_long = requests[0].clone();
    too_long.max_commit_delay = Some(prost_types::Duration {
        seconds: 1,
        nanos: 0,
    });
    let refused = local
        .client
        .commit(too_long)
        .await
        .expect_err("over 500 ms");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_bounded_and_the_sandbox_still_refuses_all_but_dml() {
    let mut local = Local::start(KnobSettings {
        max_mutations_per_commit: 3,
        max_transactions_per_session: 3,
        max_statements_per_transaction: 2,
        ..KnobSettings::default()
    })
    .await;
    use pb::mutation::Operation;
    let four = vec![pb::Mutation {
        operation: Some(Operation::Insert(write(
            "Accounts",
            &["AccountId", "Balance"],
            &[&[3001, 1], &[3002, 1]],
        ))),
    }];
    let refused = local
        .client
        .commit(single_use_commit(&local.session, four))
        .await
        .expect_err("4 mutations");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    let id = local.begin().await;
    local.dml(&id, DEBIT_1, 1).await.expect("one");
    local.dml(&id, CREDIT_2, 2).await.expect("two");
    let third = local
        .dml(&id, DEBIT_1, 3)
        .await
        .expect_err("a third is one too many");
    assert_eq!(third.code(), Code::ResourceExhausted, "{third:?}");
    let other = local.begin().await;
    for (seqno, (sql, what)) in (10..).zip([
        ("DROP TABLE Accounts", "DDL"),
        ("DELETE FROM Seed23 WHERE Id = 1", "Seed23"),
        ("PRAGMA query_only = 0", "PRAGMA"),
        ("COMMIT", "transaction control"),
    ]) {
        let refused = local.dml(&other, sql, seqno).await.expect_err(what);
        assert_eq!(refused.code(), Code::InvalidArgument, "{what}: {refused:?}");
        let said = refused.message();
        assert!(
            said.contains("not allowed") || said.contains("may not be modified"),
            "{what}: {refused:?}"
        );
    }
    local.begin().await;
    let request = pb::BeginTransactionRequest {
        session: local.session.clone(),
        options: Some(read_write(Vec::new())),
        ..Default::default()
    };
    let full = local
        .client
        .begin_transaction(request)
        .await
        .expect_err("a fourth");
    assert_eq!(full.code(), Code::ResourceExhausted, "{full:?}");
    // The database's growth, and a commit's bytes.
    local.instance.knobs().set(KnobSettings {
        max_database_bytes: 1,
        max_commit_bytes: 10,
        ..KnobSettings::default()
    });
    let grows = local
        .dml(
            &other,
            "INSERT INTO Blobs (Id, Data) VALUES (100, zeroblob(4000000))",
            20,
        )
        .await
        .expect_err("past max_database_bytes");
    // Nothing of it stays: the transaction reads its table as it was.
    let count = local
        .dml(&other, "SELECT count(*) FROM Accounts", 0)
        .await
        .expect("reads");
    assert_eq!(int(&count.rows[0].values[0]), 1_000);
    assert_eq!(grows.code(), Code::ResourceExhausted, "{grows:?}");
    let big = local.commit(&id).await.expect_err("past max_commit_bytes");
    assert_eq!(big.code(), Code::InvalidArgument, "{big:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_run_while_transactions_commit() {
    let mut local = Local::start(KnobSettings::default()).await;
    let mut reader = local.client.clone();
    let session = local.session.clone();
    let reads = tokio::spawn(async move {
        let mut done = 0;
        let until = Instant::now() + Duration::from_millis(1_500);
        while Instant::now() < until {
            for sql in [
                "SELECT sum(Balance) FROM Accounts",
                "SELECT count(*) FROM Seed23",
            ] {
                let answer = reader
                    .execute_sql(sql_request(&session, None, sql, 0))
                    .await
                    .expect("a read never fails for a commit")
                    .into_inner();
                if sql.contains("sum") {
                    // Transfers move money, never make or lose it.
                    assert_eq!(int(&answer.rows[0].values[0]), 1_000_000);
                }
                done += 1;
            }
        }
        done
    });
    let mut commits = 0;
    let until = Instant::now() + Duration::from_millis(1_000);
    while Instant::now() < until {
        let id = local.begin().await;
        local.dml(&id, DEBIT_1, 1).await.expect("debits");
        local.dml(&id, CREDIT_2, 2).await.expect("credits");
        local.commit(&id).await.expect("commits");
        commits += 1;
    }
    let done = reads.await.expect("the reader");
    assert!(done > 10 && commits > 10, "{done} reads, {commits} commits");
    assert_eq!(local.balance(1).await, 1_000 - commits);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_database_grows_under_commits_while_reads_scan_it() {
    let mut local = Local::start(KnobSettings::default()).await;
    let mut reader = local.client.clone();
    let session = local.session.clone();
    let reads = tokio::spawn(async move {
        let mut done = 0;
        let until = Instant::now() + Duration::from_millis(1_500);
        while Instant::now() < until {
            let sql = "SELECT count(*), sum(length(Data)) FROM Blobs";
            reader
                .execute_sql(sql_request(&session, None, sql, 0))
                .await
                .expect("a read never fails while the database grows");
            done += 1;
        }
        done
    });
    // Each commit adds 512 KiB: the in-memory database is reallocated as it grows.
    for n in 0..24 {
        let id = local.begin().await;
        let sql = format!(
            "INSERT INTO Blobs (Id, Data) VALUES ({}, zeroblob(524288))",
            100 + n
        );
        local.dml(&id, &sql, 1).await.expect("inserts");
        local.commit(&id).await.expect("commits");
    }
    assert!(reads.await.expect("the reader") > 5);
    let count = local
        .client
        .execute_sql(sql_request(
            &local.session,
            None,
            "SELECT count(*) FROM Blobs WHERE Id >= 100",
            0,
        ))
        .await
        .expect("counts")
        .into_inner();
    assert_eq!(int(&count.rows[0].values[0]), 24);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_begins_its_transaction_inline_and_its_replay_runs_nothing_again() {
    let mut local = Local::start(KnobSettings::default()).await;
    let begin = pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Begin(read_write(
            Vec::new(),
        ))),
    };
    let statement = |sql: &str| pb::execute_batch_dml_request::Statement {
        sql: sql.into(),
        ..Default::default()
    };
    let mut request = pb::ExecuteBatchDmlRequest {
        session: local.session.clone(),
        transaction: Some(begin),
        statements: vec![statement(DEBIT_1), statement(CREDIT_2)],
        seqno: 7,
        ..Default::default()
    };
    let answer = local
        .client
        .execute_batch_dml(request.clone())
        .await
        .expect("runs")
        .into_inner();
    assert!(answer.status.is_none(), "{:?}", answer.status);
    let id = answer.result_sets[0]
        .metadata
        .as_ref()
        .and_then(|m| m.transaction.as_ref())
        .map(|t| t.id.clone())
        .expect("the first result set names the transaction");
    assert!(
        answer.result_sets[1]
            .metadata
            .as_ref()
            .is_some_and(|m| m.transaction.is_none())
    );
    request.transaction = Some(by_id(&id));
    let replay = local
        .client
        .execute_batch_dml(request)
        .await
        .expect("replays")
        .into_inner();
    assert_eq!(replay.result_sets.len(), 2);
    // A query in the transaction, streamed, sees the batch once.
    let query = sql_request(
        &local.session,
        Some(by_id(&id)),
        "SELECT Balance FROM Accounts WHERE AccountId IN (1, 2) ORDER BY AccountId",
        0,
    );
    let messages = stream(&mut local.client, query).await.expect("reads");
    let values: Vec<i64> = messages.iter().flat_map(|m| &m.values).map(int).collect();
    assert_eq!(values, [999, 1_001]);
    assert!(
        messages.last().is_some_and(|m| m.stats.is_none()),
        "a query has no row count"
    );
    local.commit(&id).await.expect("commits");
    assert_eq!(
        (local.balance(1).await, local.balance(2).await),
        (999, 1_001)
    );
}

/// `query_stats` as text, parsed as spanprof's client parses it.
fn query_stats(stats: Option<&pb::ResultSetStats>) -> Option<QueryStats> {
    let fields = &stats?.query_stats.as_ref()?.fields;
    let entries = fields
        .iter()
        .filter_map(|(k, v)| match &v.kind {
            Some(prost_types::value::Kind::StringValue(s)) => Some((k.clone(), s.clone())),
            _ => None,
        })
        .collect();
    Some(QueryStats::from_entries(entries))
}

fn with_mode(mut request: pb::ExecuteSqlRequest, mode: QueryMode) -> pb::ExecuteSqlRequest {
    request.query_mode = mode as i32;
    request
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_in_a_transaction_report_their_statistics_in_with_stats_and_profile_only() {
    let mut local = Local::start(KnobSettings::default()).await;
    let id = local.begin().await;
    let session = local.session.clone();
    let query = "SELECT AccountId, Balance FROM Accounts WHERE AccountId <= 3";
    let mut seqno = 0;
    for mode in [QueryMode::Normal, QueryMode::WithStats, QueryMode::Profile] {
        let with_stats = mode != QueryMode::Normal;
        seqno += 1;
        let unary = sql_request(&session, Some(by_id(&id)), DEBIT_1, seqno);
        let debit = local.client.execute_sql(with_mode(unary, mode)).await;
        let debit = debit.expect("debits").into_inner();
        seqno += 1;
        let streamed = with_mode(
            sql_request(&session, Some(by_id(&id)), CREDIT_2, seqno),
            mode,
        );
        let credit = stream(&mut local.client, streamed).await.expect("credits");
        let credit = credit.last().and_then(|m| m.stats.clone());
        let unary = sql_request(&session, Some(by_id(&id)), query, 0);
        let read = local.client.execute_sql(with_mode(unary, mode)).await;
        let read = read.expect("reads").into_inner();
        let streamed = with_mode(sql_request(&session, Some(by_id(&id)), query, 0), mode);
        let rows = stream(&mut local.client, streamed).await.expect("reads");
        let streamed_read = rows.last().and_then(|m| m.stats.clone());
        assert!(rows[..rows.len() - 1].iter().all(|m| m.stats.is_none()));
        for (what, stats, dml_rows, rows) in [
            ("unary DML", debit.stats.as_ref(), Some(1), 0),
            ("streamed DML", credit.as_ref(), Some(1), 0),
            ("unary query", read.stats.as_ref(), None, 3),
            ("streamed query", streamed_read.as_ref(), None, 3),
        ] {
            assert_eq!(row_count(stats), dml_rows, "{mode:?} {what}");
            let parsed = query_stats(stats);
            assert_eq!(parsed.is_some(), with_stats, "{mode:?} {what}: {stats:?}");
            let Some(parsed) = parsed else { continue };
            let elapsed = parsed.elapsed.expect("elapsed_time");
            assert!(elapsed > Duration::ZERO, "{mode:?} {what}");
            assert!(parsed.cpu_time.is_some(), "{mode:?} {what}: cpu_time");
            assert_eq!(parsed.rows_returned, Some(rows), "{mode:?} {what}");
            let waited = parsed.lock_wait.expect("lock_wait_time, measured");
            assert!(
                waited <= elapsed,
                "{mode:?} {what}: {waited:?} of {elapsed:?}"
            );
        }
    }
    let plan = with_mode(
        sql_request(&session, Some(by_id(&id)), DEBIT_1, 99),
        QueryMode::Plan,
    );
    let refused = local.client.execute_sql(plan).await.expect_err("PLAN");
    assert_eq!(refused.code(), Code::InvalidArgument, "{refused:?}");
    local.commit(&id).await.expect("commits");
    assert_eq!(local.balance(1).await, 997, "PLAN ran nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_statement_waiting_for_another_transactions_statement_reports_a_queue_wait_not_a_lock_wait()
 {
    let mut local = Local::start(KnobSettings::default()).await;
    let (slow, quick) = (local.begin().await, local.begin().await);
    // Seed23's rows are generated as they are read: a self-join of its 1,000 rows holds the
    // read-write connection for a while.
    let long = "SELECT count(*) FROM Seed23 a, Seed23 b WHERE a.Id + b.Id > 0";
    let mut other = local.client.clone();
    let held = with_mode(
        sql_request(&local.session, Some(by_id(&slow)), long, 0),
        QueryMode::WithStats,
    );
    let holder = tokio::spawn(async move { other.execute_sql(held).await });
    tokio::time::sleep(Duration::from_millis(30)).await;
    let debit = with_mode(
        sql_request(&local.session, Some(by_id(&quick)), DEBIT_1, 1),
        QueryMode::WithStats,
    );
    let debit = local.client.execute_sql(debit).await.expect("debits");
    let held = holder.await.expect("joins").expect("the long query runs");
    let long_ran = query_stats(held.into_inner().stats.as_ref()).expect("stats");
    let waited = query_stats(debit.into_inner().stats.as_ref()).expect("stats");
    let (elapsed, queued) = (
        waited.elapsed.expect("elapsed"),
        waited.queue_wait.expect("its wait for the connection"),
    );
    let long_elapsed = long_ran.elapsed.expect("elapsed");
    assert!(
        long_elapsed > Duration::from_millis(80),
        "the long query held the connection {long_elapsed:?}"
    );
    assert!(
        queued >= Duration::from_millis(20) && queued <= elapsed,
        "the debit waited {queued:?} of its {elapsed:?} behind a query of {long_elapsed:?}"
    );
    // The two touch different rows: the connection is the model's one writer, not a lock.
    assert_eq!(waited.lock_wait, Some(Duration::ZERO));
    assert!(
        long_ran.queue_wait.expect("measured") < Duration::from_millis(20),
        "the long query waited for nobody"
    );
}

/// A multiplexed session's precommit token, its bytes and sequence number.
fn seq(token: Option<&pb::MultiplexedSessionPrecommitToken>) -> Option<i32> {
    token.map(|t| t.seq_num)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_on_a_multiplexed_session_carries_a_growing_token_and_the_commit_needs_the_latest()
 {
    let mut local = Local::start(KnobSettings::default()).await;
    let session = new_session(&mut local.client, true).await;
    let request = pb::BeginTransactionRequest {
        session: session.clone(),
        options: Some(read_write(Vec::new())),
        ..Default::default()
    };
    let begun = local
        .client
        .begin_transaction(request)
        .await
        .expect("begins");
    let begun = begun.into_inner();
    assert_eq!(seq(begun.precommit_token.as_ref()), None, "no mutation key");
    let id = begun.id;
    let debit = sql_request(&session, Some(by_id(&id)), DEBIT_1, 1);
    let debit = local.client.execute_sql(debit).await.expect("debits");
    let first = debit.into_inner().precommit_token;
    assert_eq!(seq(first.as_ref()), Some(1));
    let credit = sql_request(&session, Some(by_id(&id)), CREDIT_2, 2);
    let messages = stream(&mut local.client, credit).await.expect("credits");
    let (last, earlier) = messages.split_last().expect("a message");
    assert!(earlier.iter().all(|m| m.precommit_token.is_none()));
    assert_eq!(
        seq(last.precommit_token.as_ref()),
        Some(2),
        "in the last message"
    );
    assert!(last.last && row_count(last.stats.as_ref()) == Some(1));
    let batch = pb::ExecuteBatchDmlRequest {
        session: session.clone(),
        transaction: Some(by_id(&id)),
        statements: vec![pb::execute_batch_dml_request::Statement {
            sql: "UPDATE Accounts SET Balance = Balance WHERE AccountId = 3".into(),
            ..Default::default()
        }],
        seqno: 3,
        ..Default::default()
    };
    let batch = local.client.execute_batch_dml(batch).await.expect("runs");
    let third = batch.into_inner().precommit_token;
    assert_eq!(seq(third.as_ref()), Some(3));
    // Without a token, or with an earlier one: the retry reply, nothing committed.
    let reply = commit_with(&mut local.client, &session, &id, None, Vec::new()).await;
    let reply = reply.expect("a retry reply");
    assert!(reply.commit_timestamp.is_none());
    let retry = retry_token(&reply).expect("a token to commit with");
    assert_eq!(retry.seq_num, 4);
    let reply = commit_with(&mut local.client, &session, &id, third.clone(), Vec::new()).await;
    assert_eq!(seq(retry_token(&reply.expect("a reply")).as_ref()), Some(5));
    assert_eq!(local.balance(1).await, 1_000, "nothing committed yet");
    let mut forged = retry.clone();
    forged.precommit_token[0] ^= 1;
    let refused = commit_with(&mut local.client, &session, &id, Some(forged), Vec::new()).await;
    assert_eq!(
        refused.expect_err("not its token").code(),
        Code::InvalidArgument
    );
    let latest = pb::MultiplexedSessionPrecommitToken {
        seq_num: 5,
        ..retry.clone()
    };
    let latest = pb::MultiplexedSessionPrecommitToken {
        precommit_token: [&id[..], &5i32.to_be_bytes()].concat(),
        ..latest
    };
    let committed = commit_with(&mut local.client, &session, &id, Some(latest), Vec::new()).await;
    let committed = committed.expect("commits");
    assert!(committed.commit_timestamp.is_some() && committed.multiplexed_session_retry.is_none());
    assert_eq!(
        (local.balance(1).await, local.balance(2).await),
        (999, 1_001)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regular_session_hands_out_no_tokens_and_commits_without_one() {
    let mut local = Local::start(KnobSettings::default()).await;
    let id = local.begin().await;
    let debit = local.dml(&id, DEBIT_1, 1).await.expect("debits");
    assert!(debit.precommit_token.is_none());
    let credit = sql_request(&local.session, Some(by_id(&id)), CREDIT_2, 2);
    let messages = stream(&mut local.client, credit).await.expect("credits");
    assert!(messages.iter().all(|m| m.precommit_token.is_none()));
    let session = local.session.clone();
    let committed = commit_with(&mut local.client, &session, &id, None, Vec::new()).await;
    let committed = committed.expect("commits");
    assert!(committed.commit_timestamp.is_some() && committed.multiplexed_session_retry.is_none());
    assert_eq!(local.balance(1).await, 999);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_only_transaction_on_a_multiplexed_session_needs_its_mutation_key() {
    use pb::mutation::Operation;
    let mut local = Local::start(KnobSettings::default()).await;
    let session = new_session(&mut local.client, true).await;
    let insert = |id: i64| pb::Mutation {
        operation: Some(Operation::Insert(write(
            "Accounts",
            &["AccountId", "Balance"],
            &[&[id, 7]],
        ))),
    };
    let begin = |mutation_key: Option<pb::Mutation>| pb::BeginTransactionRequest {
        session: session.clone(),
        options: Some(read_write(Vec::new())),
        mutation_key,
        ..Default::default()
    };
    let count = |local: &mut Local, id: i64| {
        let sql = format!("SELECT count(*) FROM Accounts WHERE AccountId = {id}");
        let request = sql_request(&local.session, None, &sql, 0);
        let mut client = local.client.clone();
        async move {
            let answer = client.execute_sql(request).await.expect("reads");
            int(&answer.into_inner().rows[0].values[0])
        }
    };
    // Without a key: nothing gave it a token, and its commit is refused.
    let bare = local
        .client
        .begin_transaction(begin(None))
        .await
        .expect("begins");
    let bare = bare.into_inner().id;
    let refused = commit_with(&mut local.client, &session, &bare, None, vec![insert(3001)]).await;
    let refused = refused.expect_err("a mutation-only commit without a key");
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert_eq!(count(&mut local, 3001).await, 0);
    // A key naming no table of the database is refused at the begin.
    let mut wrong = insert(3002);
    if let Some(Operation::Insert(w)) = &mut wrong.operation {
        w.table = "NoSuchTable".into();
    }
    let refused = local.client.begin_transaction(begin(Some(wrong))).await;
    assert_eq!(
        refused.expect_err("a bad key").code(),
        Code::InvalidArgument
    );
    // With a key: the begin's answer carries the first token; a commit that leaves it out gets
    // the retry reply, holds its mutations, and the commit with the token applies them once.
    let keyed = local
        .client
        .begin_transaction(begin(Some(insert(3002))))
        .await;
    let keyed = keyed.expect("begins").into_inner();
    assert_eq!(seq(keyed.precommit_token.as_ref()), Some(1));
    let reply = commit_with(
        &mut local.client,
        &session,
        &keyed.id,
        None,
        vec![insert(3002)],
    )
    .await;
    let token = retry_token(&reply.expect("a reply")).expect("the retry reply");
    assert_eq!(count(&mut local, 3002).await, 0, "not committed yet");
    let committed = commit_with(
        &mut local.client,
        &session,
        &keyed.id,
        Some(token),
        Vec::new(),
    );
    committed.await.expect("commits what the first commit sent");
    assert_eq!(count(&mut local, 3002).await, 1);
    // A key and the token from the begin: it commits at once.
    let at_once = local
        .client
        .begin_transaction(begin(Some(insert(3003))))
        .await;
    let at_once = at_once.expect("begins").into_inner();
    let token = at_once.precommit_token;
    let committed = commit_with(
        &mut local.client,
        &session,
        &at_once.id,
        token,
        vec![insert(3003)],
    )
    .await;
    assert!(committed.expect("commits").commit_timestamp.is_some());
    assert_eq!(count(&mut local, 3003).await, 1);
}
