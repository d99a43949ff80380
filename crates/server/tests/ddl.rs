//! UpdateDatabaseDdl on the local instance, through real tonic clients over a loopback port: a
//! table created with several types, written by DML and by mutations, read by SQL (typed as
//! declared) and by Read; an index created and dropped; the table dropped; the refusals (ALTER
//! TABLE, a demo table, a duplicate name); a failing statement leaving the ones before it applied,
//! with the operation carrying its error (GetOperation too); a transaction aborted by DDL on a
//! table it touched; and every bound.

use prost::Message;
use prost_types::value::Kind;
use spanprof_server::server::service::{KEPT_OPERATION_BYTES, KEPT_OPERATIONS};
use spanprof_server::server::sqlite::ddl::{
    MAX_COLUMNS, MAX_DDL_STATEMENT_BYTES, MAX_DDL_STATEMENTS, MAX_KEY_COLUMNS, MAX_NAME_CHARS,
};
use spanprof_server::server::sqlite::schema::{MAX_CREATED_TABLES, MAX_INDEXES_PER_TABLE};
use spanprof_server::server::{LocalInstance, ServerConfig};
use spanprof_wire::proto::google::longrunning::{self as lro, operations_client::OperationsClient};
use spanprof_wire::proto::google::spanner::admin::database::v1::{
    self as dbadmin, database_admin_client::DatabaseAdminClient,
};
use spanprof_wire::proto::google::spanner::v1 as pb;
use spanprof_wire::proto::google::spanner::v1::spanner_client::SpannerClient;
use tonic::Code;
use tonic::transport::Channel;

const DATABASE: &str = "projects/p/instances/i/databases/d";

struct Local {
    _instance: LocalInstance,
    channel: Channel,
    spanner: SpannerClient<Channel>,
    admin: DatabaseAdminClient<Channel>,
    session: String,
}

impl Local {
    async fn start() -> Local {
        let config = ServerConfig {
            seed23_rows: 100,
            ..ServerConfig::default()
        };
        let instance = LocalInstance::start(config).await.expect("starts");
        let channel = Channel::from_shared(format!("http://{}", instance.host_port()))
            .expect("a URI")
            .connect()
            .await
            .expect("connects");
        let mut spanner = SpannerClient::new(channel.clone());
        let session = spanner
            .create_session(pb::CreateSessionRequest {
                database: DATABASE.into(),
                session: None,
            })
            .await
            .expect("a session")
            .into_inner()
            .name;
        Local {
            _instance: instance,
            admin: DatabaseAdminClient::new(channel.clone()),
            channel,
            spanner,
            session,
        }
    }

    /// The call's outcome: the operation, or the call's own refusal.
    async fn try_ddl(&mut self, statements: &[&str]) -> Result<lro::Operation, tonic::Status> {
        let request = dbadmin::UpdateDatabaseDdlRequest {
            database: DATABASE.into(),
            statements: statements.iter().map(|s| (*s).to_owned()).collect(),
            operation_id: String::new(),
        };
        Ok(self.admin.update_database_ddl(request).await?.into_inner())
    }

    /// The operation's error, if it ended in one (it is always done).
    async fn ddl(&mut self, statements: &[&str]) -> Option<(Code, String)> {
        let op = self.try_ddl(statements).await.expect("the call is taken");
        assert!(op.done);
        match op.result.expect("a result") {
            lro::operation::Result::Error(e) => Some((Code::from(e.code), e.message)),
            lro::operation::Result::Response(any) => {
                assert_eq!(any.type_url, "type.googleapis.com/google.protobuf.Empty");
                None
            }
        }
    }

    async fn query(&mut self, sql: &str) -> Result<pb::ResultSet, tonic::Status> {
        let request = pb::ExecuteSqlRequest {
            session: self.session.clone(),
            sql: sql.into(),
            ..Default::default()
        };
        Ok(self.spanner.execute_sql(request).await?.into_inner())
    }

    async fn begin(&mut self) -> Vec<u8> {
        let request = pb::BeginTransactionRequest {
            session: self.session.clone(),
            options: Some(pb::TransactionOptions {
                mode: Some(pb::transaction_options::Mode::ReadWrite(Default::default())),
                ..Default::default()
            }),
            ..Default::default()
        };
        let answer = self
            .spanner
            .begin_transaction(request)
            .await
            .expect("begins");
        answer.into_inner().id
    }

    async fn dml(&mut self, id: &[u8], sql: &str, seqno: i64) -> Result<(), tonic::Status> {
        let request = pb::ExecuteSqlRequest {
            session: self.session.clone(),
            transaction: Some(by_id(id)),
            sql: sql.into(),
            seqno,
            ..Default::default()
        };
        self.spanner.execute_sql(request).await.map(drop)
    }

    async fn commit(
        &mut self,
        id: &[u8],
        mutations: Vec<pb::Mutation>,
    ) -> Result<(), tonic::Status> {
        let request = pb::CommitRequest {
            session: self.session.clone(),
            transaction: Some(pb::commit_request::Transaction::TransactionId(id.to_vec())),
            mutations,
            ..Default::default()
        };
        self.spanner.commit(request).await.map(drop)
    }
}

fn by_id(id: &[u8]) -> pb::TransactionSelector {
    pb::TransactionSelector {
        selector: Some(pb::transaction_selector::Selector::Id(id.to_vec())),
    }
}

fn string(s: &str) -> prost_types::Value {
    prost_types::Value {
        kind: Some(Kind::StringValue(s.into())),
    }
}

fn text(value: &prost_types::Value) -> String {
    match &value.kind {
        Some(Kind::StringValue(s)) => s.clone(),
        Some(Kind::BoolValue(b)) => b.to_string(),
        Some(Kind::NumberValue(n)) => n.to_string(),
        Some(Kind::NullValue(_)) => "NULL".into(),
        Some(Kind::ListValue(l)) => l.values.iter().map(text).collect::<Vec<_>>().join("|"),
        other => format!("{other:?}"),
    }
}

fn rows(answer: &pb::ResultSet) -> Vec<Vec<String>> {
    answer
        .rows
        .iter()
        .map(|r| r.values.iter().map(text).collect())
        .collect()
}

fn codes(answer: &pb::ResultSet) -> Vec<pb::TypeCode> {
    let fields = &answer
        .metadata
        .as_ref()
        .expect("metadata")
        .row_type
        .as_ref()
        .expect("a row type")
        .fields;
    fields
        .iter()
        .map(|f| {
            pb::TypeCode::try_from(f.r#type.as_ref().expect("a type").code).expect("a known code")
        })
        .collect()
}

const SONGS: &str = "CREATE TABLE Songs (
    SingerId INT64 NOT NULL,
    SongId INT64 NOT NULL,
    Title STRING(20),
    Released DATE,
    Length FLOAT64,
    Hit BOOL,
    Price NUMERIC,
    Cover BYTES(MAX),
    Tags ARRAY<STRING(MAX)>,
    Meta JSON,
    UpdatedAt TIMESTAMP OPTIONS (allow_commit_timestamp = true),
) PRIMARY KEY (SingerId, SongId)";

#[tokio::test]
async fn a_created_table_is_written_by_dml_and_mutations_and_read_typed_by_sql_and_by_keys() {
    let mut local = Local::start().await;
    assert_eq!(local.ddl(&[SONGS]).await, None);

    let id = local.begin().await;
    local
        .dml(
            &id,
            "INSERT INTO Songs (SingerId, SongId, Title, Released, Length, Hit, Price) \
             VALUES (1, 1, 'Nothing Is Same', '2023-02-01', 3.5, TRUE, '1.25')",
            1,
        )
        .await
        .expect("inserts by DML");
    local.commit(&id, Vec::new()).await.expect("commits");

    let id = local.begin().await;
    let write = pb::mutation::Write {
        table: "songs".into(),
        columns: vec![
            "SingerId".into(),
            "SongId".into(),
            "Title".into(),
            "Released".into(),
            "Tags".into(),
        ],
        values: vec![prost_types::ListValue {
            values: vec![
                string("1"),
                string("2"),
                string("Second"),
                string("2024-12-31"),
                prost_types::Value {
                    kind: Some(Kind::ListValue(prost_types::ListValue {
                        values: vec![string("a"), string("b")],
                    })),
                },
            ],
        }],
    };
    let mutation = pb::Mutation {
        operation: Some(pb::mutation::Operation::Insert(write)),
    };
    local
        .commit(&id, vec![mutation])
        .await
        .expect("inserts by mutation");

    let answer = local
        .query(
            "SELECT SongId, Title, Released, Length, Hit, Price, Tags FROM Songs ORDER BY SongId",
        )
        .await
        .expect("reads");
    assert_eq!(
        codes(&answer),
        vec![
            pb::TypeCode::Int64,
            pb::TypeCode::String,
            pb::TypeCode::Date,
            pb::TypeCode::Float64,
            pb::TypeCode::Bool,
            pb::TypeCode::Numeric,
            pb::TypeCode::Array
        ]
    );
    assert_eq!(
        rows(&answer),
        vec![
            vec![
                "1",
                "Nothing Is Same",
                "2023-02-01",
                "3.5",
                "true",
                "1.25",
                "NULL"
            ],
            vec!["2", "Second", "2024-12-31", "NULL", "NULL", "NULL", "a|b"],
        ]
    );

    let read = pb::ReadRequest {
        session: local.session.clone(),
        table: "Songs".into(),
        columns: vec!["Title".into(), "Released".into()],
        key_set: Some(pb::KeySet {
            keys: vec![prost_types::ListValue {
                values: vec![string("1"), string("2")],
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let answer = local
        .spanner
        .read(read)
        .await
        .expect("reads by key")
        .into_inner();
    assert_eq!(
        codes(&answer),
        vec![pb::TypeCode::String, pb::TypeCode::Date]
    );
    assert_eq!(rows(&answer), vec![vec!["Second", "2024-12-31"]]);

    // STRING(20) is enforced; NOT NULL too.
    let id = local.begin().await;
    let long = local
        .dml(&id, "INSERT INTO Songs (SingerId, SongId, Title) VALUES (1, 3, 'a title longer than twenty')", 1)
        .await
        .expect_err("too long");
    assert_eq!(long.code(), Code::FailedPrecondition, "{long:?}");

    // An index, then the table dropped.
    assert_eq!(
        local
            .ddl(&[
                "CREATE UNIQUE NULL_FILTERED INDEX SongsByTitle ON Songs (Title DESC) STORING (Hit)"
            ])
            .await,
        None
    );
    let e = local
        .ddl(&["DROP TABLE Songs"])
        .await
        .expect("an index stands in the way");
    assert_eq!(e.0, Code::FailedPrecondition);
    assert!(e.1.contains("SongsByTitle"), "{e:?}");
    assert_eq!(
        local
            .ddl(&["DROP INDEX SongsByTitle", "DROP TABLE Songs"])
            .await,
        None
    );
    let gone = local
        .query("SELECT * FROM Songs")
        .await
        .expect_err("no table");
    assert_eq!(gone.code(), Code::InvalidArgument, "{gone:?}");
    assert!(
        gone.message().starts_with("Table not found: Songs"),
        "{gone:?}"
    );
    assert_eq!(local.ddl(&["DROP TABLE IF EXISTS Songs"]).await, None);
    let e = local.ddl(&["DROP TABLE Songs"]).await.expect("not found");
    assert_eq!(e, (Code::NotFound, "Table not found: Songs".into()));
}

#[tokio::test]
async fn refusals_and_a_failing_statement_that_leaves_the_ones_before_it_applied() {
    let mut local = Local::start().await;
    for (sql, says) in [
        ("ALTER TABLE Singers ADD COLUMN X INT64", "ALTER"),
        (
            "CREATE VIEW V SQL SECURITY INVOKER AS SELECT 1",
            "CREATE VIEW",
        ),
        ("CREATE TABLE t (id bigint PRIMARY KEY)", "PostgreSQL"),
    ] {
        let e = local.try_ddl(&[sql]).await.expect_err(sql);
        assert_eq!(e.code(), Code::InvalidArgument, "{sql}");
        assert!(e.message().contains(says), "{sql}: {e:?}");
    }
    for sql in [
        "DROP TABLE Singers",
        "DROP TABLE Seed23",
        "CREATE TABLE accounts (A INT64) PRIMARY KEY (A)",
    ] {
        let e = local.ddl(&[sql]).await.expect(sql);
        assert_eq!(e.0, Code::FailedPrecondition, "{sql}");
        assert!(e.1.contains("demo table"), "{sql}: {e:?}");
    }
    // The second statement fails: the first stays, the third never runs.
    let request = dbadmin::UpdateDatabaseDdlRequest {
        database: DATABASE.into(),
        statements: vec![
            "CREATE TABLE A (Id INT64) PRIMARY KEY (Id)".into(),
            "CREATE TABLE a (Id INT64) PRIMARY KEY (Id)".into(),
            "CREATE TABLE C (Id INT64) PRIMARY KEY (Id)".into(),
        ],
        operation_id: "two_of_three".into(),
    };
    let op = local
        .admin
        .update_database_ddl(request)
        .await
        .expect("taken")
        .into_inner();
    assert!(op.done);
    let Some(lro::operation::Result::Error(e)) = &op.result else {
        panic!("an error: {op:?}");
    };
    assert_eq!(Code::from(e.code), Code::FailedPrecondition);
    assert_eq!(e.message, "Duplicate name in schema: a.");
    let metadata = op.metadata.as_ref().expect("metadata");
    assert_eq!(
        metadata.type_url,
        "type.googleapis.com/google.spanner.admin.database.v1.UpdateDatabaseDdlMetadata"
    );
    let metadata =
        dbadmin::UpdateDatabaseDdlMetadata::decode(metadata.value.as_slice()).expect("decodes");
    assert_eq!(metadata.statements.len(), 3);
    assert_eq!(metadata.commit_timestamps.len(), 1, "one statement applied");
    assert!(local.query("SELECT Id FROM A").await.is_ok());
    assert!(local.query("SELECT Id FROM C").await.is_err());
    // GetOperation answers the same.
    let again = OperationsClient::new(local.channel.clone())
        .get_operation(lro::GetOperationRequest {
            name: op.name.clone(),
        })
        .await
        .expect("answers")
        .into_inner();
    assert_eq!(again, op);
    assert!(op.name.ends_with("/operations/two_of_three"), "{}", op.name);
    // A syntax error anywhere applies nothing.
    let e = local
        .try_ddl(&[
            "CREATE TABLE D (Id INT64) PRIMARY KEY (Id)",
            "CREATE TABLE E (Id INT64",
        ])
        .await
        .expect_err("does not parse");
    assert!(e.message().contains("statement 2"), "{e:?}");
    assert!(local.query("SELECT Id FROM D").await.is_err());
}

#[tokio::test]
async fn ddl_on_a_table_aborts_the_transaction_that_touched_it() {
    let mut local = Local::start().await;
    assert_eq!(
        local
            .ddl(&["CREATE TABLE T (K INT64, V INT64) PRIMARY KEY (K)"])
            .await,
        None
    );
    let id = local.begin().await;
    local
        .dml(&id, "INSERT INTO T (K, V) VALUES (1, 1)", 1)
        .await
        .expect("inserts");
    assert_eq!(local.ddl(&["CREATE INDEX TByV ON T (V)"]).await, None);
    let e = local.commit(&id, Vec::new()).await.expect_err("aborted");
    assert_eq!(e.code(), Code::Aborted, "{e:?}");
    // A client's DML cannot run DDL itself.
    let id = local.begin().await;
    let e = local
        .dml(&id, "DROP TABLE T", 1)
        .await
        .expect_err("refused");
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
}

#[tokio::test]
async fn every_bound_is_checked() {
    let mut local = Local::start().await;
    let refused = async |local: &mut Local, statements: Vec<String>| {
        let refs: Vec<&str> = statements.iter().map(String::as_str).collect();
        local.try_ddl(&refs).await.expect_err("refused")
    };
    // Statements per request.
    let many: Vec<String> = (0..=MAX_DDL_STATEMENTS)
        .map(|i| format!("DROP TABLE IF EXISTS T{i}"))
        .collect();
    let e = refused(&mut local, many).await;
    assert!(e.message().contains("statements"), "{e:?}");
    // Bytes per statement.
    let long = format!(
        "DROP TABLE IF EXISTS T /* {} */",
        "x".repeat(MAX_DDL_STATEMENT_BYTES)
    );
    let e = refused(&mut local, vec![long]).await;
    assert!(e.message().contains("bytes"), "{e:?}");
    // Identifier length.
    let name = "N".repeat(MAX_NAME_CHARS);
    assert_eq!(
        local
            .ddl(&[&format!("CREATE TABLE {name} (K INT64) PRIMARY KEY (K)")])
            .await,
        None
    );
    let e = refused(
        &mut local,
        vec![format!("CREATE TABLE {name}X (K INT64) PRIMARY KEY (K)")],
    )
    .await;
    assert!(e.message().contains("characters"), "{e:?}");
    // Columns per table.
    let columns = |n: usize| {
        (0..n)
            .map(|i| format!("C{i} INT64"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert_eq!(
        local
            .ddl(&[&format!(
                "CREATE TABLE Wide ({}) PRIMARY KEY (C0)",
                columns(MAX_COLUMNS)
            )])
            .await,
        None
    );
    let e = refused(
        &mut local,
        vec![format!(
            "CREATE TABLE Wider ({}) PRIMARY KEY (C0)",
            columns(MAX_COLUMNS + 1)
        )],
    )
    .await;
    assert!(e.message().contains("columns"), "{e:?}");
    // Key columns.
    let keys = |n: usize| {
        (0..n)
            .map(|i| format!("C{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert_eq!(
        local
            .ddl(&[&format!(
                "CREATE TABLE Keyed ({}) PRIMARY KEY ({})",
                columns(MAX_KEY_COLUMNS),
                keys(MAX_KEY_COLUMNS)
            )])
            .await,
        None
    );
    let e = refused(
        &mut local,
        vec![format!(
            "CREATE TABLE Keyed2 ({}) PRIMARY KEY ({})",
            columns(MAX_KEY_COLUMNS + 1),
            keys(MAX_KEY_COLUMNS + 1)
        )],
    )
    .await;
    assert!(e.message().contains("primary key has more than"), "{e:?}");
    // Indexes per table.
    let indexes: Vec<String> = (0..MAX_INDEXES_PER_TABLE)
        .map(|i| format!("CREATE INDEX W{i} ON Wide (C{})", i + 1))
        .collect();
    let refs: Vec<&str> = indexes.iter().map(String::as_str).collect();
    assert_eq!(local.ddl(&refs).await, None);
    let e = local
        .ddl(&["CREATE INDEX WLast ON Wide (C900)"])
        .await
        .expect("too many indexes");
    assert_eq!(e.0, Code::FailedPrecondition);
    assert!(e.1.contains("indexes"), "{e:?}");
    // Tables in the database: three made above.
    let mut made = 3;
    while made < MAX_CREATED_TABLES {
        let batch: Vec<String> = (made..(made + MAX_DDL_STATEMENTS).min(MAX_CREATED_TABLES))
            .map(|i| format!("CREATE TABLE Many{i} (K INT64) PRIMARY KEY (K)"))
            .collect();
        made += batch.len();
        let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
        assert_eq!(local.ddl(&refs).await, None);
    }
    let e = local
        .ddl(&["CREATE TABLE OneMore (K INT64) PRIMARY KEY (K)"])
        .await
        .expect("too many tables");
    assert_eq!(e.0, Code::FailedPrecondition);
    assert!(e.1.contains(&MAX_CREATED_TABLES.to_string()), "{e:?}");
}

/// The operations kept for GetOperation hold at most KEPT_OPERATION_BYTES: past it the oldest is
/// forgotten (answered done, without its result), the latest kept.
#[tokio::test]
async fn kept_operations_are_bounded_in_bytes() {
    let mut local = Local::start().await;
    let filler = format!("/* {} */", "x".repeat(MAX_DDL_STATEMENT_BYTES - 64));
    let statements: Vec<String> = (0..8)
        .map(|i| format!("DROP TABLE IF EXISTS Nothing{i} {filler}"))
        .collect();
    let refs: Vec<&str> = statements.iter().map(String::as_str).collect();
    let per_request = statements.iter().map(String::len).sum::<usize>();
    let mut names = Vec::new();
    for _ in 0..(KEPT_OPERATION_BYTES / per_request + 1) {
        names.push(local.try_ddl(&refs).await.expect("taken").name);
    }
    let mut operations = OperationsClient::new(local.channel.clone());
    let mut get = async |name: &str| {
        operations
            .get_operation(lro::GetOperationRequest { name: name.into() })
            .await
            .expect("answers")
            .into_inner()
    };
    let first = get(&names[0]).await;
    assert!(first.done && first.result.is_none(), "forgotten: {first:?}");
    let last = get(names.last().expect("some")).await;
    assert!(last.result.is_some(), "kept");
}

/// At most KEPT_OPERATIONS operations are kept: the oldest is forgotten first.
#[tokio::test]
async fn kept_operations_are_bounded_in_number() {
    let mut local = Local::start().await;
    let mut names = Vec::new();
    for _ in 0..=KEPT_OPERATIONS {
        let op = local
            .try_ddl(&["DROP TABLE IF EXISTS Nothing"])
            .await
            .expect("taken");
        names.push(op.name);
    }
    let mut operations = OperationsClient::new(local.channel.clone());
    let first = operations
        .get_operation(lro::GetOperationRequest {
            name: names[0].clone(),
        })
        .await
        .expect("answers")
        .into_inner();
    assert!(first.result.is_none(), "forgotten: {first:?}");
    let second = operations
        .get_operation(lro::GetOperationRequest {
            name: names[1].clone(),
        })
        .await
        .expect("answers")
        .into_inner();
    assert!(second.result.is_some(), "kept: {second:?}");
}
