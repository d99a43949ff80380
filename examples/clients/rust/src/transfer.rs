//! `spanprof-rust-client transfer N`: what tests/python/transfer.py does, through the Rust client.
//!
//! Runs N transfers between accounts 1 and 2, each one read-write transaction of two UPDATEs run
//! by the client's `TransactionRunner` (which retries an ABORTED with its own policy, calling the
//! closure again), then reads the two balances. Prints them as one JSON array on stdout and
//! `N transfers in A attempts` on stderr, A the closure's calls. The database is the one named by
//! SPANPROF_PROJECT, SPANPROF_INSTANCE and SPANPROF_DATABASE when set, else the test database.

use google_cloud_spanner::client::Spanner;
use google_cloud_spanner::statement::Statement;

use crate::Failure;

const TRANSFER: [&str; 2] = [
    "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1",
    "UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2",
];
const BALANCES: &str = "SELECT Balance FROM Accounts WHERE AccountId IN (1, 2) ORDER BY AccountId";

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// Runs the mode; `args` are those after `transfer`.
pub async fn run(args: &[String]) -> Result<(), Failure> {
    let transfers: u32 = match args {
        [n] => n
            .parse()
            .map_err(|_| format!("transfer N: {n:?} is not a count"))?,
        _ => return Err("usage: spanprof-rust-client transfer N".into()),
    };
    let database = format!(
        "projects/{}/instances/{}/databases/{}",
        env_or("SPANPROF_PROJECT", "test-project"),
        env_or("SPANPROF_INSTANCE", "test-instance"),
        env_or("SPANPROF_DATABASE", "test-db")
    );
    // The builder finds SPANNER_EMULATOR_HOST itself: plaintext, anonymous credentials.
    let spanner = Spanner::builder().build().await?;
    let client = spanner.database_client(database).build().await?;
    let mut attempts: u32 = 0;
    for _ in 0..transfers {
        client
            .read_write_transaction()
            .build()
            .run(async |transaction| {
                attempts += 1;
                for sql in TRANSFER {
                    transaction
                        .execute_update(Statement::builder(sql).build())
                        .await?;
                }
                Ok(())
            })
            .await?;
    }
    let mut rows = client
        .single_use()
        .build()
        .execute_query(Statement::builder(BALANCES).build())
        .await?;
    let mut balances = Vec::new();
    while let Some(row) = rows.next().await.transpose()? {
        balances.push(row.get::<i64>(0)?);
    }
    println!("{}", serde_json::to_string(&balances)?);
    eprintln!("{transfers} transfers in {attempts} attempts");
    Ok(())
}
