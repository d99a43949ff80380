//! Read and StreamingRead on the local instance, through a real tonic client over a loopback
//! port: point reads by key, ranges of each bound kind, `all` with a limit, columns in the order
//! asked, the answer the equivalent query gives, streams cut small with resume tokens and resumed
//! from one, a read in a read-write transaction seeing its own UPDATE, and the refusals.

use spanprof_server::server::{KnobSettings, LocalInstance, ServerConfig};
use spanprof_wire::proto::google::spanner::v1 as pb;
use spanprof_wire::proto::google::spanner::v1::spanner_client::SpannerClient;
use tonic::Code;
use tonic::transport::Channel;

const DATABASE: &str = "projects/p/instances/i/databases/d";

/// A local instance and a client of it, with one session.
struct Local {
    _instance: LocalInstance,
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
        let request = pb::CreateSessionRequest {
            database: DATABASE.into(),
            session: None,
        };
        let session = client
            .create_session(request)
            .await
            .expect("a session")
            .into_inner()
            .name;
        Local {
            _instance: instance,
            client,
            session,
        }
    }

    fn request(&self, table: &str, columns: &[&str], key_set: pb::KeySet) -> pb::ReadRequest {
        pb::ReadRequest {
            session: self.session.clone(),
            table: table.into(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            key_set: Some(key_set),
            ..Default::default()
        }
    }

    /// The rows of a unary Read, as integers (every column read here is an INT64).
    async fn read(&mut self, request: pb::ReadRequest) -> Result<Vec<Vec<i64>>, tonic::Status> {
        let answer = self.client.read(request).await?.into_inner();
        Ok(ints(&answer.rows))
    }

    /// The status a Read that must fail gets.
    async fn refused(&mut self, request: pb::ReadRequest) -> tonic::Status {
        self.read(request).await.expect_err("refused")
    }

    async fn query(&mut self, sql: &str) -> pb::ResultSet {
        let request = pb::ExecuteSqlRequest {
            session: self.session.clone(),
            sql: sql.into(),
            ..Default::default()
        };
        self.client
            .execute_sql(request)
            .await
            .expect("queries")
            .into_inner()
    }

    async fn streaming(
        &mut self,
        request: pb::ReadRequest,
    ) -> Result<Vec<pb::PartialResultSet>, tonic::Status> {
        let mut messages = self.client.streaming_read(request).await?.into_inner();
        let mut all = Vec::new();
        while let Some(message) = messages.message().await? {
            all.push(message);
        }
        Ok(all)
    }
}

fn int(value: &prost_types::Value) -> i64 {
    match &value.kind {
        Some(prost_types::value::Kind::StringValue(s)) => s.parse().expect("an INT64"),
        other => panic!("not an INT64: {other:?}"),
    }
}

fn ints(rows: &[prost_types::ListValue]) -> Vec<Vec<i64>> {
    rows.iter()
        .map(|row| row.values.iter().map(int).collect())
        .collect()
}

/// A key (or key prefix) of INT64 values, encoded as Spanner encodes them: as strings.
fn key(values: &[i64]) -> prost_types::ListValue {
    prost_types::ListValue {
        values: values
            .iter()
            .map(|v| prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(v.to_string())),
            })
            .collect(),
    }
}

fn keys(list: &[&[i64]]) -> pb::KeySet {
    pb::KeySet {
        keys: list.iter().map(|k| key(k)).collect(),
        ..Default::default()
    }
}

/// Where a range starts or ends: the key prefix, and whether it is in the range.
type End<'a> = (&'a [i64], bool);

fn range((start, start_closed): End<'_>, (end, end_closed): End<'_>) -> pb::KeyRange {
    use pb::key_range::{EndKeyType, StartKeyType};
    pb::KeyRange {
        start_key_type: Some(if start_closed {
            StartKeyType::StartClosed(key(start))
        } else {
            StartKeyType::StartOpen(key(start))
        }),
        end_key_type: Some(if end_closed {
            EndKeyType::EndClosed(key(end))
        } else {
            EndKeyType::EndOpen(key(end))
        }),
    }
}

fn ranges(list: Vec<pb::KeyRange>) -> pb::KeySet {
    pb::KeySet {
        ranges: list,
        ..Default::default()
    }
}

fn all() -> pb::KeySet {
    pb::KeySet {
        all: true,
        ..Default::default()
    }
}

fn names(metadata: Option<&pb::ResultSetMetadata>) -> Vec<String> {
    let fields = &metadata
        .and_then(|m| m.row_type.as_ref())
        .expect("a row type")
        .fields;
    fields.iter().map(|f| f.name.clone()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn point_reads_return_the_columns_asked_in_key_order_as_the_equivalent_query_does() {
    let mut local = Local::start(KnobSettings::default()).await;
    // Asked out of order, one twice, one missing, the column names in another case.
    let request = local.request(
        "accounts",
        &["balance", "AccountId"],
        keys(&[&[3], &[1], &[2000], &[3], &[2]]),
    );
    let answer = local
        .client
        .read(request)
        .await
        .expect("reads")
        .into_inner();
    assert_eq!(names(answer.metadata.as_ref()), ["Balance", "AccountId"]);
    assert_eq!(
        ints(&answer.rows),
        [[1000, 1], [1000, 2], [1000, 3]],
        "each key once, in key order"
    );
    let query = local
        .query("SELECT Balance, AccountId FROM Accounts WHERE AccountId IN (1, 2, 3) ORDER BY 2")
        .await;
    assert_eq!(answer.metadata, query.metadata, "the query's metadata");
    assert_eq!(answer.rows, query.rows, "the query's rows");

    // A two-column key, and Seed23's keys read from its virtual table.
    let albums = local.request(
        "Albums",
        &["AlbumId", "SingerId"],
        keys(&[&[2, 1], &[1, 2], &[1, 1], &[9, 9]]),
    );
    assert_eq!(
        local.read(albums).await.expect("reads"),
        [[1, 1], [2, 1], [1, 2]]
    );
    let seed23 = local.request("Seed23", &["Id"], keys(&[&[900], &[7], &[1001], &[42]]));
    assert_eq!(local.read(seed23).await.expect("reads"), [[7], [42], [900]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ranges_of_each_bound_kind_and_prefixes_read_what_they_name() {
    let mut local = Local::start(KnobSettings::default()).await;
    let cases: Vec<(pb::KeyRange, Vec<i64>)> = vec![
        (range((&[5], true), (&[8], false)), vec![5, 6, 7]),
        (range((&[5], false), (&[8], true)), vec![6, 7, 8]),
        (range((&[5], true), (&[8], true)), vec![5, 6, 7, 8]),
        (range((&[5], false), (&[8], false)), vec![6, 7]),
        (range((&[998], true), (&[], true)), vec![998, 999, 1000]),
        (range((&[], true), (&[2], true)), vec![1, 2]),
        (range((&[8], true), (&[5], true)), vec![]),
    ];
    for (r, want) in cases {
        for table in ["Accounts", "Seed23"] {
            let column = if table == "Accounts" {
                "AccountId"
            } else {
                "Id"
            };
            let request = local.request(table, &[column], ranges(vec![r.clone()]));
            let got: Vec<i64> = local
                .read(request)
                .await
                .expect("reads")
                .into_iter()
                .map(|row| row[0])
                .collect();
            assert_eq!(got, want, "{table}: {r:?}");
        }
    }
    // Overlapping ranges and keys: each row once, in key order.
    let mut set = ranges(vec![
        range((&[4], true), (&[6], true)),
        range((&[5], true), (&[7], false)),
    ]);
    set.keys = vec![key(&[2]), key(&[5])];
    let request = local.request("Accounts", &["AccountId"], set);
    assert_eq!(
        local.read(request).await.expect("reads"),
        [[2], [4], [5], [6]]
    );
    // A prefix of Albums' key: singer 1's albums; an open start past singer 1 leaves the others.
    let prefix = local.request(
        "Albums",
        &["SingerId", "AlbumId"],
        ranges(vec![range((&[1], true), (&[1], true))]),
    );
    let singer_1 = local.read(prefix).await.expect("reads");
    let query = local
        .query("SELECT SingerId, AlbumId FROM Albums WHERE SingerId = 1 ORDER BY 1, 2")
        .await;
    assert!(!singer_1.is_empty());
    assert_eq!(singer_1, ints(&query.rows));
    let after = local.request(
        "Albums",
        &["SingerId", "AlbumId"],
        ranges(vec![range((&[1], false), (&[], true))]),
    );
    let query = local
        .query("SELECT SingerId, AlbumId FROM Albums WHERE SingerId > 1 ORDER BY 1, 2")
        .await;
    assert_eq!(local.read(after).await.expect("reads"), ints(&query.rows));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_with_a_limit_reads_the_first_rows_in_key_order() {
    let mut local = Local::start(KnobSettings::default()).await;
    for (table, column) in [("Accounts", "AccountId"), ("Seed23", "Id")] {
        let mut request = local.request(table, &[column], all());
        request.limit = 4;
        assert_eq!(
            local.read(request.clone()).await.expect("reads"),
            [[1], [2], [3], [4]],
            "{table}"
        );
        request.limit = 0;
        let every = local.read(request).await.expect("reads");
        assert_eq!(every.len(), 1000, "{table}: no limit");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_read_is_cut_small_with_resume_tokens_and_resumes_from_one() {
    let knobs = KnobSettings {
        max_message_bytes: 256,
        ..KnobSettings::default()
    };
    let mut local = Local::start(knobs).await;
    let mut request = local.request("Accounts", &["AccountId", "Balance"], all());
    request.limit = 300;
    let messages = local.streaming(request.clone()).await.expect("streams");
    assert!(messages.len() >= 10, "{} messages", messages.len());
    assert_eq!(
        names(messages[0].metadata.as_ref()),
        ["AccountId", "Balance"]
    );
    assert!(messages[1..].iter().all(|m| m.metadata.is_none()));
    assert!(
        messages.iter().all(|m| !m.resume_token.is_empty()),
        "a token on every message"
    );
    let values: Vec<i64> = messages
        .iter()
        .flat_map(|m| m.values.iter().map(int))
        .collect();
    let want: Vec<i64> = (1..=300).flat_map(|id| [id, 1000]).collect();
    assert!(messages.iter().all(|m| !m.chunked_value));
    assert_eq!(values, want);

    // Resumed after message 4: what followed it, again.
    request.resume_token = messages[4].resume_token.clone();
    let resumed = local.streaming(request.clone()).await.expect("resumes");
    let again: Vec<&Vec<prost_types::Value>> = resumed.iter().map(|m| &m.values).collect();
    let rest: Vec<&Vec<prost_types::Value>> = messages[5..].iter().map(|m| &m.values).collect();
    assert_eq!(again, rest);

    // A token of another read is refused.
    request.columns = vec!["AccountId".into()];
    let other = local.streaming(request).await.expect_err("another read");
    assert_eq!(other.code(), Code::InvalidArgument, "{other:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_in_a_read_write_transaction_sees_its_own_update_and_no_other_read_does() {
    use pb::transaction_selector::Selector;
    let mut local = Local::start(KnobSettings::default()).await;
    let begin = pb::BeginTransactionRequest {
        session: local.session.clone(),
        options: Some(pb::TransactionOptions {
            mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
            ..Default::default()
        }),
        ..Default::default()
    };
    let id = local
        .client
        .begin_transaction(begin)
        .await
        .expect("begins")
        .into_inner()
        .id;
    let in_txn = Some(pb::TransactionSelector {
        selector: Some(Selector::Id(id.clone())),
    });
    let update = pb::ExecuteSqlRequest {
        session: local.session.clone(),
        transaction: in_txn.clone(),
        sql: "UPDATE Accounts SET Balance = 5 WHERE AccountId = 7".into(),
        seqno: 1,
        ..Default::default()
    };
    local.client.execute_sql(update).await.expect("updates");
    let mut request = local.request("Accounts", &["Balance"], keys(&[&[7], &[8]]));
    assert_eq!(
        local.read(request.clone()).await.expect("reads"),
        [[1000], [1000]],
        "outside, before the commit"
    );
    request.transaction = in_txn;
    assert_eq!(
        local.read(request.clone()).await.expect("reads"),
        [[5], [1000]]
    );
    let streamed = local.streaming(request.clone()).await.expect("streams");
    let values: Vec<i64> = streamed
        .iter()
        .flat_map(|m| m.values.iter().map(int))
        .collect();
    assert_eq!(values, [5, 1000]);
    // A lock hint changes no answer (what it locks: `tests/locking/hints.rs`).
    request.lock_hint = pb::read_request::LockHint::Exclusive as i32;
    assert_eq!(local.read(request).await.expect("reads"), [[5], [1000]]);
    let rollback = pb::RollbackRequest {
        session: local.session.clone(),
        transaction_id: id,
    };
    local.client.rollback(rollback).await.expect("rolls back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_names_wrong_keys_and_hostile_names_are_refused_before_any_sql_runs() {
    let mut local = Local::start(KnobSettings::default()).await;
    let status = local
        .refused(local.request("Nowhere", &["Id"], all()))
        .await;
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(status.message().contains("Nowhere"), "{status:?}");
    let status = local
        .refused(local.request("Accounts", &["Nope"], all()))
        .await;
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert!(status.message().contains("Nope"), "{status:?}");
    let status = local.refused(local.request("Accounts", &[], all())).await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    // A key of the wrong arity, a range end longer than the key, a value of the wrong type.
    let wrong = [
        local.request("Accounts", &["Balance"], keys(&[&[1, 2]])),
        local.request("Albums", &["AlbumId"], keys(&[&[1]])),
        local.request(
            "Accounts",
            &["Balance"],
            ranges(vec![range((&[1], true), (&[1, 2], true))]),
        ),
        local.request(
            "Accounts",
            &["Balance"],
            pb::KeySet {
                keys: vec![prost_types::ListValue {
                    values: vec![prost_types::Value {
                        kind: Some(prost_types::value::Kind::StringValue("one".into())),
                    }],
                }],
                ..Default::default()
            },
        ),
    ];
    for request in wrong {
        let status = local.refused(request.clone()).await;
        assert_eq!(
            status.code(),
            Code::InvalidArgument,
            "{request:?}: {status:?}"
        );
    }
    let mut by_index = local.request("Accounts", &["Balance"], all());
    by_index.index = "AccountsByBalance".into();
    let status = local.refused(by_index).await;
    assert_eq!(status.code(), Code::NotFound, "{status:?}");

    // Names that would be SQL if spliced: refused as names, never run.
    for (table, column) in [
        ("Accounts; DROP TABLE x", "Balance"),
        ("Accounts\" ; DELETE FROM \"Accounts", "Balance"),
        ("Accounts", "Balance\" FROM Accounts; --"),
    ] {
        let status = local.refused(local.request(table, &[column], all())).await;
        assert_eq!(status.code(), Code::NotFound, "{table}: {status:?}");
        assert!(
            status.message().starts_with("Table not found")
                || status.message().starts_with("Column not found"),
            "{status:?}"
        );
    }
    let mut request = local.request("Accounts", &["Balance"], all());
    request.limit = 2;
    assert_eq!(local.read(request).await.expect("reads"), [[1000], [1000]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_at_its_bounds_runs_and_one_past_them_is_refused() {
    let mut local = Local::start(KnobSettings::default()).await;
    // The most keys, each of the widest key (two columns): 20,000 parameters.
    let many: Vec<Vec<i64>> = (0..10_000).map(|i| vec![i % 7, i / 7]).collect();
    let list: Vec<&[i64]> = many.iter().map(Vec::as_slice).collect();
    let request = local.request("Albums", &["SingerId", "AlbumId"], keys(&list));
    let query = local
        .query("SELECT SingerId, AlbumId FROM Albums ORDER BY 1, 2")
        .await;
    assert_eq!(
        local.read(request).await.expect("reads"),
        ints(&query.rows),
        "every album's key is among them"
    );
    // The most ranges, each bounded on both columns.
    let ranges_at_most: Vec<pb::KeyRange> = (0..500)
        .map(|i| range((&[i, 1], true), (&[i, 1], true)))
        .collect();
    let request = local.request("Albums", &["SingerId"], ranges(ranges_at_most.clone()));
    let firsts = local.read(request).await.expect("reads");
    let query = local
        .query("SELECT SingerId FROM Albums WHERE AlbumId = 1 ORDER BY 1")
        .await;
    assert_eq!(firsts, ints(&query.rows));

    let one_key_more: Vec<Vec<i64>> = (1..=10_001).map(|i| vec![i]).collect();
    let list: Vec<&[i64]> = one_key_more.iter().map(Vec::as_slice).collect();
    let status = local
        .refused(local.request("Seed23", &["Id"], keys(&list)))
        .await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().contains("10000"), "{status:?}");
    let mut one_range_more = ranges_at_most;
    one_range_more.push(range((&[1], true), (&[2], true)));
    let status = local
        .refused(local.request("Albums", &["SingerId"], ranges(one_range_more)))
        .await;
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_null_names_no_key_and_bounds_a_range_before_every_key() {
    let mut local = Local::start(KnobSettings::default()).await;
    let null = prost_types::Value {
        kind: Some(prost_types::value::Kind::NullValue(0)),
    };
    let with_null = |values: &[i64]| {
        let mut key = key(values);
        key.values.push(null.clone());
        key
    };
    let mut set = keys(&[&[4]]);
    set.keys.push(with_null(&[]));
    let request = local.request("Accounts", &["AccountId"], set);
    assert_eq!(local.read(request).await.expect("reads"), [[4]]);
    // Albums from (1, NULL) to (2, NULL): NULL sorts first, so singer 1's albums, none of 2's.
    let between = pb::KeyRange {
        start_key_type: Some(pb::key_range::StartKeyType::StartOpen(with_null(&[1]))),
        end_key_type: Some(pb::key_range::EndKeyType::EndClosed(with_null(&[2]))),
    };
    let request = local.request("Albums", &["SingerId", "AlbumId"], ranges(vec![between]));
    let query = local
        .query("SELECT SingerId, AlbumId FROM Albums WHERE SingerId = 1 ORDER BY 1, 2")
        .await;
    assert_eq!(local.read(request).await.expect("reads"), ints(&query.rows));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_that_begins_a_read_write_transaction_returns_its_id_first() {
    use pb::transaction_selector::Selector;
    let mut local = Local::start(KnobSettings::default()).await;
    let mut request = local.request("Accounts", &["Balance"], keys(&[&[9]]));
    request.transaction = Some(pb::TransactionSelector {
        selector: Some(Selector::Begin(pb::TransactionOptions {
            mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
            ..Default::default()
        })),
    });
    let messages = local.streaming(request).await.expect("streams");
    let id = messages[0]
        .metadata
        .as_ref()
        .and_then(|m| m.transaction.as_ref())
        .map(|t| t.id.clone())
        .expect("the transaction begun");
    assert!(!id.is_empty());
    let values: Vec<i64> = messages
        .iter()
        .flat_map(|m| m.values.iter().map(int))
        .collect();
    assert_eq!(values, [1000]);
    let commit = pb::CommitRequest {
        session: local.session.clone(),
        transaction: Some(pb::commit_request::Transaction::TransactionId(id)),
        ..Default::default()
    };
    local.client.commit(commit).await.expect("commits");
}
