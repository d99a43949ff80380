//! The local instance against hostile and careless SQL: statements
//! that would harm the server or the host are refused before they run, queries that never produce a
//! row still stop, and a value never reaches a client as another type than its column's.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use spanprof::server::KnobSettings;
use spanprof::wire::{Row, StreamDecoder, Type, Value};
use tonic::Code;

use crate::client::{TestClient, with_params};
use crate::local::start;
use crate::serve_process::ServeProcess;
use crate::support::s;

/// `PRAGMA hard_heap_limit` (read-only in SQLite's eyes, process-wide in effect) was accepted,
/// and from then on no query could open its connection. The server runs as its own process here, so
/// that on a server without the fix the harm stays there.
#[tokio::test(flavor = "multi_thread")]
async fn no_statement_breaks_the_server_for_the_clients_after_it() {
    let server = ServeProcess::start(&["--rows", "100"]);
    let mut attacker = TestClient::connect(&server.host).await;
    for pragma in [
        "PRAGMA hard_heap_limit=5000000",
        "PRAGMA soft_heap_limit=5000000",
        "PRAGMA temp_store_directory='/tmp'",
        "PRAGMA threads=8",
        "PRAGMA mmap_size=1000000",
        "PRAGMA query_only=0",
        "pragma main.cache_size = 1",
    ] {
        let err = attacker.query(pragma).await.expect_err(pragma);
        assert_eq!(err.code(), Code::InvalidArgument, "{pragma}: {err:?}");
        assert!(
            err.message().contains("PRAGMA"),
            "{pragma}: {}",
            err.message()
        );
    }
    for sql in [
        "SELECT * FROM pragma_table_info('Singers')",
        "SELECT name FROM sqlite_master",
        "SELECT load_extension('/tmp/x')",
    ] {
        let err = attacker.query(sql).await.expect_err(sql);
        assert_eq!(err.code(), Code::InvalidArgument, "{sql}: {err:?}");
        assert!(
            err.message().contains("not allowed"),
            "{sql}: {}",
            err.message()
        );
    }
    let err = attacker
        .query("INSERT INTO Singers (SingerId) VALUES (99)")
        .await;
    assert_eq!(err.expect_err("a write").code(), Code::FailedPrecondition);
    // Whatever was tried, the next client is served, on connections of its own.
    let mut next = TestClient::connect(&server.host).await;
    for _ in 0..3 {
        let got = next
            .query("WITH t AS (SELECT SingerId FROM Singers) SELECT COUNT(*) FROM t")
            .await
            .expect("served");
        assert!(matches!(got.rows[0].values()[0], Value::Int64(n) if n > 0));
    }
}

/// `ATTACH '/some/path.db'` created the file, and the error texts told whether a path existed
/// or was readable.
#[tokio::test(flavor = "multi_thread")]
async fn attach_neither_reaches_nor_reveals_the_host_filesystem() {
    let instance = start(10, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let fresh = dir.path().join("fresh.db");
    let existing = dir.path().join("existing.db");
    std::fs::write(&existing, b"not a database").expect("written");
    let paths = [
        fresh.display().to_string(),
        existing.display().to_string(),
        dir.path().display().to_string(),
        "/nonexistent/directory/x.db".to_owned(),
        "/etc/passwd".to_owned(),
        ":memory:".to_owned(),
        "file:x?mode=memory&cache=shared".to_owned(),
    ];
    let mut answers = HashSet::new();
    for path in &paths {
        for sql in [
            format!("ATTACH '{path}' AS x"),
            format!("ATTACH DATABASE '{path}' AS main2"),
            format!("VACUUM INTO '{path}'"),
        ] {
            let err = client.query(&sql).await.expect_err(&sql);
            assert!(
                matches!(err.code(), Code::InvalidArgument | Code::FailedPrecondition),
                "{sql}: {err:?}"
            );
            let message = err.message();
            assert!(!message.contains(path.as_str()), "{sql}: {message}");
            for telling in [
                "unable to open",
                "exist",
                "permission",
                "directory",
                "not a database",
            ] {
                assert!(!message.contains(telling), "{sql}: {message}");
            }
            let verb = sql.split_whitespace().next().unwrap_or_default().to_owned();
            answers.insert((verb, err.code(), message.to_owned()));
        }
    }
    assert!(!fresh.exists(), "a file was created on the host");
    assert_eq!(
        std::fs::read(&existing).ok().as_deref(),
        Some(&b"not a database"[..])
    );
    // One answer per statement whatever the path: nothing to learn about the host from it.
    assert_eq!(answers.len(), 2, "{answers:#?}");
    let err = client.query("DETACH x").await.expect_err("DETACH");
    assert_eq!(err.code(), Code::InvalidArgument);
}

/// Counts from 1 for ever and returns one row at the end that never comes.
const ENDLESS: &str =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c";

/// A query that returns no rows kept its thread busy for ever: past the client's deadline,
/// and after the client left (the thread noticed a departed client only when it sent rows).
#[tokio::test(flavor = "multi_thread")]
async fn a_query_without_rows_stops_at_its_deadline_and_when_its_client_leaves() {
    let server = ServeProcess::start(&["--rows", "100"]);
    let mut client = TestClient::connect(&server.host).await;

    let mut request = tonic::Request::new(client.request(ENDLESS));
    request.set_timeout(Duration::from_millis(300));
    let asked = Instant::now();
    let err = client
        .client
        .execute_streaming_sql(request)
        .await
        .expect_err("no answer within the deadline");
    assert!(
        matches!(err.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{err:?}"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(5),
        "{:?}",
        asked.elapsed()
    );
    let stopped = server
        .wait_for_query_threads(0, Duration::from_millis(100))
        .await;
    assert!(stopped.is_some(), "the query thread outlived its deadline");

    for unary in [false, true] {
        let mut caller = client.client.clone();
        let request = client.request(ENDLESS);
        let call = tokio::spawn(async move {
            if unary {
                caller.execute_sql(request).await.map(drop)
            } else {
                caller.execute_streaming_sql(request).await.map(drop)
            }
        });
        let running = server
            .wait_for_query_threads(1, Duration::from_secs(5))
            .await;
        assert!(running.is_some(), "the query started");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(server.query_threads(), 1, "it runs until its client leaves");
        call.abort();
        let left = Instant::now();
        let _ = call.await;
        let stopped = server
            .wait_for_query_threads(0, Duration::from_millis(1000))
            .await;
        let took = stopped.map(|_| left.elapsed());
        eprintln!("unary {unary}: the query thread stopped {took:?} after its client left");
        assert!(
            took.is_some_and(|t| t <= Duration::from_millis(100)),
            "unary {unary}: the query thread stopped {took:?} after its client left"
        );
    }
}

/// A query without rows at shutdown: stopping the instance stops its queries, which report it.
#[tokio::test(flavor = "multi_thread")]
async fn stopping_the_instance_stops_its_queries() {
    let instance = start(10, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let request = client.request(ENDLESS);
    let call = tokio::spawn(async move { client.client.execute_streaming_sql(request).await });
    let waited = Instant::now();
    while instance.occupancy().queries == 0 && waited.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(instance.occupancy().queries, 1);
    instance.stop(Duration::from_secs(5)).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the call ends")
        .expect("joins");
    let err = answer.expect_err("the query was stopped");
    assert_eq!(err.code(), Code::Unavailable, "{err:?}");
    assert!(err.message().contains("shutting down"), "{}", err.message());
}

/// Reads a stream until its end or error: the rows of the messages received, and the error.
async fn rows_until_error(client: &mut TestClient, sql: &str) -> (Vec<Row>, Option<tonic::Status>) {
    use prost::Message as _;
    let request = client.request(sql);
    let mut stream = match client.client.execute_streaming_sql(request).await {
        Ok(response) => response.into_inner(),
        Err(status) => return (Vec::new(), Some(status)),
    };
    let mut decoder = StreamDecoder::new();
    let mut rows = Vec::new();
    loop {
        match stream.message().await {
            Ok(Some(message)) => decoder
                .feed_bytes(&message.encode_to_vec(), &mut rows)
                .expect("every value received is of its column's type"),
            Ok(None) => return (rows, None),
            Err(status) => return (rows, Some(status)),
        }
    }
}

/// Column types were guessed from the first 128 rows, and a later value of another type was
/// sent anyway (text in an INT64 column, bytes in a STRING column).
#[tokio::test(flavor = "multi_thread")]
async fn a_value_that_does_not_fit_its_column_fails_the_query_naming_the_column() {
    let instance = start(300, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let counted = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 300)";
    for (select, column, ty) in [
        ("CASE WHEN x < 200 THEN x ELSE 'abc' END AS v", "v", "INT64"),
        (
            "CASE WHEN x < 200 THEN 'text' ELSE x'00ff' END AS b",
            "b",
            "STRING",
        ),
        (
            "CASE WHEN x < 250 THEN x * 0.5 ELSE 'half' END AS f",
            "f",
            "FLOAT64",
        ),
        (
            "CASE WHEN x < 150 THEN x'01' ELSE 'one' END AS y",
            "y",
            "BYTES",
        ),
    ] {
        let sql = format!("{counted} SELECT {select} FROM c");
        let (rows, err) = rows_until_error(&mut client, &sql).await;
        let err = err.expect("the query fails");
        assert_eq!(err.code(), Code::InvalidArgument, "{sql}: {err:?}");
        let message = err.message();
        assert!(message.contains(&format!("{column:?}")), "{sql}: {message}");
        assert!(message.contains(ty), "{sql}: {message}");
        assert!(rows.len() < 300, "{sql}: every row arrived");
    }
    // A table column fed by another arm of a UNION is checked as its type too.
    let sql = "SELECT BirthDate FROM Seed23 WHERE Id < 5 UNION ALL SELECT 'not a date'";
    let (rows, err) = rows_until_error(&mut client, sql).await;
    let err = err.expect("the query fails");
    assert!(err.message().contains("BirthDate"), "{}", err.message());
    assert!(rows.len() <= 4);
    // Values that fit their column still go through: NULLs anywhere, integers in a FLOAT64 column.
    let sql = format!(
        "{counted} SELECT CASE WHEN x % 2 = 0 THEN NULL ELSE x END AS n, x * 1.5 AS r FROM c"
    );
    let (rows, err) = rows_until_error(&mut client, &sql).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(rows.len(), 300);
}

/// A FLOAT64 parameter NaN came back NULL (SQLite keeps no NaN); now it comes back NaN.
#[tokio::test(flavor = "multi_thread")]
async fn nan_parameters_come_back_as_nan() {
    let instance = start(10, KnobSettings::default()).await;
    let mut client = TestClient::connect(&instance.host_port()).await;
    let params = [
        ("x", Type::Float64, s("NaN")),
        ("y", Type::Float64, s("-Infinity")),
        ("z", Type::Float64, crate::support::num(1.5)),
    ];
    for sql in [
        "SELECT @x AS x, @y AS y, @z AS z",
        "SELECT Id, @x AS x, @y AS y, @z AS z FROM Seed23 WHERE Id <= 3",
    ] {
        let got = client
            .stream(with_params(client.request(sql), &params))
            .await
            .expect("runs");
        assert!(!got.rows.is_empty(), "{sql}");
        let width = got.columns.len();
        for column in &got.columns[width - 3..] {
            assert_eq!(column.ty, Type::Float64, "{sql}: {}", column.name);
        }
        for row in &got.rows {
            let values = &row.values()[width - 3..];
            assert!(
                matches!(values[0], Value::Float64(f) if f.is_nan()),
                "{sql}: {values:?}"
            );
            assert_eq!(values[1], Value::Float64(f64::NEG_INFINITY), "{sql}");
            assert_eq!(values[2], Value::Float64(1.5), "{sql}");
        }
    }
}
