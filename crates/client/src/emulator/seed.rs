//! Seeding an emulator (or any plaintext endpoint) with the demo tables: the instance and the
//! database are created or reused, then every table's rows are written; what happened comes back
//! as plain data for the command line and the app to print.

use std::time::{Duration, Instant};

use tonic::transport::Channel;

use crate::client::admin::{self, AdminError, Ensured};
use crate::client::rows;
use crate::client::{
    Readable, Timeouts, check_host_port, connect_plaintext_answering_within, probe,
};
use crate::demo::{self, DemoTable};
use crate::wire::Value;

/// How long an endpoint whose connection broke is given to say what it speaks.
const PROBE_WAIT: Duration = Duration::from_secs(2);
/// Rows per commit, at most (the cell and byte limits may make commits smaller).
const BATCH_ROWS: usize = 1_000;

/// Where the demo tables go, and how many Seed23 rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedTarget {
    /// The plaintext gRPC address, `host:port`.
    pub endpoint: String,
    /// The project id.
    pub project: String,
    /// The instance id.
    pub instance: String,
    /// The database id.
    pub database: String,
    /// Rows to write to Seed23 (ids 1 to N); the other tables get all their rows.
    pub seed23_rows: u64,
    /// How long connecting and each call may take.
    pub timeouts: Timeouts,
}

/// What a seeding did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSummary {
    /// `projects/P/instances/I`.
    pub instance_name: String,
    /// Whether the instance was created or reused.
    pub instance: Ensured,
    /// `projects/P/instances/I/databases/D`.
    pub database_name: String,
    /// Whether the database was created or reused, and the tables added to it.
    pub database: Ensured,
    /// The tables written, in the order they were written.
    pub tables: Vec<TableSeeded>,
    /// The time the whole seeding took, connecting included.
    pub elapsed: Duration,
}

impl SeedSummary {
    /// The rows written to all tables.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }
}

/// The rows written to one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSeeded {
    /// The table name.
    pub table: &'static str,
    /// The rows written (inserted or updated).
    pub rows: u64,
    /// The time writing them took.
    pub elapsed: Duration,
}

/// Why seeding failed.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// The runtime for [`seed_blocking`] could not be started.
    #[error("cannot start the async runtime")]
    Runtime(#[source] std::io::Error),
    /// The endpoint did not take the connection in time.
    #[error("cannot connect to {endpoint}: no connection within {}", Readable(*.after))]
    ConnectTimeout {
        /// The endpoint.
        endpoint: String,
        /// How long it was waited for.
        after: Duration,
    },
    /// Connecting to the endpoint failed.
    #[error("cannot connect to {endpoint}")]
    Connect {
        /// The endpoint.
        endpoint: String,
        /// Why.
        #[source]
        source: tonic::transport::Error,
    },
    /// The endpoint is not a `host:port`.
    #[error("{0}")]
    BadEndpoint(crate::client::EndpointError),
    /// The endpoint is not a gRPC server.
    #[error("{endpoint} does not speak gRPC ({what}): is it the right host and port?")]
    NotGrpc {
        /// The endpoint.
        endpoint: String,
        /// What it did instead.
        what: String,
    },
    /// An admin or data call failed.
    #[error("at {endpoint}")]
    Admin {
        /// The endpoint.
        endpoint: String,
        /// The call that failed and the server's answer.
        #[source]
        source: AdminError,
    },
}

/// [`seed`] on a runtime of its own (threads named `spanprof-seed`), for callers without one.
pub fn seed_blocking(target: &SeedTarget) -> Result<SeedSummary, SeedError> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("spanprof-seed")
        .enable_all()
        .build()
        .map_err(SeedError::Runtime)?
        .block_on(seed(target))
}

/// Makes sure the instance and database of `target` exist with the demo tables, and writes the
/// tables' rows (`insert_or_update`, so seeding again rewrites the same rows).
pub async fn seed(target: &SeedTarget) -> Result<SeedSummary, SeedError> {
    let started = Instant::now();
    let endpoint = &target.endpoint;
    let channel = connect(endpoint, target.timeouts).await?;
    let at = |source| SeedError::Admin {
        endpoint: endpoint.clone(),
        source,
    };
    let instance =
        match admin::ensure_instance(channel.clone(), &target.project, &target.instance).await {
            Ok(instance) => instance,
            Err(error @ AdminError::Transport { .. }) => {
                // The first call broke in the connection: say so if the endpoint is no gRPC server.
                return Err(match probe(endpoint, PROBE_WAIT).await {
                    Some(what) => SeedError::NotGrpc {
                        endpoint: endpoint.clone(),
                        what,
                    },
                    None => at(error),
                });
            }
            Err(error) => return Err(at(error)),
        };
    let tables = demo::tables();
    let ddl: Vec<String> = tables.iter().map(DemoTable::ddl).collect();
    let database = admin::ensure_database(
        channel.clone(),
        &target.project,
        &target.instance,
        &target.database,
        &ddl,
    )
    .await
    .map_err(at)?;
    let database_name = admin::database_name(&target.project, &target.instance, &target.database);
    let mut seeded = Vec::with_capacity(tables.len());
    for table in &tables {
        let loaded = Instant::now();
        let rows = load_table(channel.clone(), &database_name, table, target.seed23_rows)
            .await
            .map_err(at)?;
        seeded.push(TableSeeded {
            table: table.name,
            rows,
            elapsed: loaded.elapsed(),
        });
    }
    Ok(SeedSummary {
        instance_name: admin::instance_name(&target.project, &target.instance),
        instance,
        database_name,
        database,
        tables: seeded,
        elapsed: started.elapsed(),
    })
}

/// A plaintext channel to `endpoint` within `timeouts.connect`, each of whose calls must be
/// answered within `timeouts.call`.
async fn connect(endpoint: &str, timeouts: Timeouts) -> Result<Channel, SeedError> {
    check_host_port(endpoint).map_err(SeedError::BadEndpoint)?;
    let connecting = connect_plaintext_answering_within(endpoint, timeouts.call);
    match tokio::time::timeout(timeouts.connect, connecting).await {
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(source)) => Err(SeedError::Connect {
            endpoint: endpoint.to_owned(),
            source,
        }),
        Err(_) => Err(SeedError::ConnectTimeout {
            endpoint: endpoint.to_owned(),
            after: timeouts.connect,
        }),
    }
}

/// Loads the rows of one demo table: `seed23_rows` rows for Seed23, all rows for the others.
async fn load_table(
    channel: Channel,
    database_name: &str,
    table: &DemoTable,
    seed23_rows: u64,
) -> Result<u64, AdminError> {
    let load = |rows: Box<dyn Iterator<Item = Vec<Value>> + Send>| {
        rows::load_rows(channel.clone(), database_name, table, rows, BATCH_ROWS)
    };
    let last_id = i64::try_from(seed23_rows).unwrap_or(i64::MAX);
    match table.name {
        "Seed23" => load(Box::new((1..=last_id).map(demo::seed23::row))).await,
        "Singers" => load(Box::new(demo::music::singer_rows().into_iter())).await,
        "Albums" => load(Box::new(demo::music::album_rows().into_iter())).await,
        "Blobs" => load(Box::new(demo::blobs::ids().filter_map(demo::blobs::row))).await,
        "Accounts" => load(Box::new(demo::accounts::rows())).await,
        _ => Ok(0),
    }
}
