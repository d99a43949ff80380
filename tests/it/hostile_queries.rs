//! Queries under one another's feet: a long query over the demo tables held a lock
//! that every other query of the instance waited on, so one client's cross join stalled everyone's
//! `SELECT 1` until it ended.

use std::time::{Duration, Instant};

use spanprof::server::KnobSettings;

use crate::client::TestClient;
use crate::local::start;

/// While one query runs without a deadline, another client's queries over every demo table
/// are answered at once, and the long query is still running afterwards (it was not the one that gave way).
#[tokio::test(flavor = "multi_thread")]
async fn a_long_query_does_not_hold_up_another_clients_queries() {
    let instance = start(3000, KnobSettings::default()).await;
    let host = instance.host_port();
    // 2.7e10 combinations: minutes of work at the least, far past this test.
    let long = tokio::spawn(async move {
        let mut client = TestClient::connect(&host).await;
        client
            .query("SELECT count(*) FROM Seed23 a, Seed23 b, Seed23 c WHERE a.Id + b.Id + c.Id > 0")
            .await
    });
    let running = Instant::now() + Duration::from_secs(10);
    while instance.occupancy().queries == 0 {
        assert!(Instant::now() < running, "the long query never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Let it get well into its scan.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut other = TestClient::connect(&instance.host_port()).await;
    for sql in [
        "SELECT 1",
        "SELECT count(*) FROM Singers",
        "SELECT AlbumTitle FROM Albums LIMIT 3",
        "SELECT Id FROM Blobs WHERE Id = 1",
        "SELECT Id FROM Seed23 WHERE Id <= 10",
    ] {
        let asked = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(10), other.query(sql))
            .await
            .unwrap_or_else(|_| panic!("{sql}: no answer within 10 s while another query runs"))
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert!(!answer.rows.is_empty(), "{sql}: no rows");
        assert!(
            asked.elapsed() < Duration::from_secs(5),
            "{sql}: answered after {:?}",
            asked.elapsed()
        );
    }
    assert!(
        !long.is_finished(),
        "the long query ended before the others were asked: {:?}",
        long.await
    );
    long.abort();
    // The long query's client is gone: its query stops and gives its slot back.
    let stopped = Instant::now() + Duration::from_secs(10);
    while instance.occupancy().queries > 0 {
        assert!(
            Instant::now() < stopped,
            "the abandoned long query still runs 10 s after its client left"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
