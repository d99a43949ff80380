//! `spanprof seed`: create the demo tables in a Cloud Spanner emulator (or any plaintext endpoint)
//! and load their rows, reusing whatever already exists.

use std::io::Write;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tonic::transport::Channel;

use crate::client::admin::{self, Ensured};
use crate::client::connect_plaintext;
use crate::demo::{self, DemoTable};
use crate::wire::Value;

/// The environment variable official clients read the emulator's address from.
const EMULATOR_HOST_VAR: &str = "SPANNER_EMULATOR_HOST";
/// How long connecting to the endpoint may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Rows per commit, at most (the cell and byte limits may make commits smaller).
const BATCH_ROWS: usize = 1_000;

/// Arguments of `spanprof seed`.
#[derive(Debug, Clone, clap::Args)]
pub struct SeedArgs {
    /// The emulator's plaintext gRPC address, HOST:PORT (default: $SPANNER_EMULATOR_HOST).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// The project id.
    #[arg(long)]
    pub project: String,
    /// The instance id (2-64 characters: a lowercase letter first, then letters, digits, hyphens).
    #[arg(long)]
    pub instance: String,
    /// The database id (2-30 characters: a lowercase letter first, then letters, digits, hyphens).
    #[arg(long)]
    pub database: String,
    /// Rows to load into Seed23 (ids 1 to N).
    #[arg(long, default_value_t = 10_000)]
    pub rows: u64,
}

impl SeedArgs {
    /// The endpoint to use: `--endpoint`, else `$SPANNER_EMULATOR_HOST`.
    pub fn resolved_endpoint(&self) -> anyhow::Result<String> {
        if let Some(endpoint) = &self.endpoint {
            return Ok(endpoint.clone());
        }
        match std::env::var(EMULATOR_HOST_VAR) {
            Ok(host) if !host.trim().is_empty() => Ok(host.trim().to_owned()),
            _ => anyhow::bail!("no endpoint: pass --endpoint HOST:PORT or set {EMULATOR_HOST_VAR}"),
        }
    }
}

/// Seeds the demo tables as `args` asks, printing what was created or reused, the rows written and
/// the time taken to `out`.
pub fn run_seed(args: &SeedArgs, mut out: impl Write) -> anyhow::Result<()> {
    let endpoint = args.resolved_endpoint()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("spanprof-seed")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(seed(args, &endpoint, &mut out))
}

async fn seed(args: &SeedArgs, endpoint: &str, out: &mut impl Write) -> anyhow::Result<()> {
    let started = Instant::now();
    let channel = tokio::time::timeout(CONNECT_TIMEOUT, connect_plaintext(endpoint))
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {} s", CONNECT_TIMEOUT.as_secs()))
        .and_then(|connected| connected.map_err(anyhow::Error::from))
        .with_context(|| format!("cannot connect to {endpoint}"))?;

    let instance = admin::ensure_instance(channel.clone(), &args.project, &args.instance)
        .await
        .with_context(|| format!("at {endpoint}"))?;
    let instance_name = admin::instance_name(&args.project, &args.instance);
    writeln!(out, "instance {instance_name}: {}", describe(&instance))?;

    let tables = demo::tables();
    let ddl: Vec<String> = tables.iter().map(DemoTable::ddl).collect();
    let database = admin::ensure_database(
        channel.clone(),
        &args.project,
        &args.instance,
        &args.database,
        &ddl,
    )
    .await
    .with_context(|| format!("at {endpoint}"))?;
    let database_name = admin::database_name(&args.project, &args.instance, &args.database);
    writeln!(out, "database {database_name}: {}", describe(&database))?;

    let mut total = 0;
    for table in &tables {
        let loaded = Instant::now();
        let written = load_table(channel.clone(), &database_name, table, args.rows)
            .await
            .with_context(|| format!("at {endpoint}"))?;
        total += written;
        writeln!(
            out,
            "{}: wrote {written} rows in {:.2} s",
            table.name,
            loaded.elapsed().as_secs_f64()
        )?;
    }
    writeln!(
        out,
        "seeded {total} rows in {:.2} s",
        started.elapsed().as_secs_f64()
    )?;
    out.flush()?;
    Ok(())
}

/// Loads the rows of one demo table: `seed23_rows` rows for Seed23, all rows for the others.
async fn load_table(
    channel: Channel,
    database_name: &str,
    table: &DemoTable,
    seed23_rows: u64,
) -> Result<u64, admin::AdminError> {
    let load = |rows: Box<dyn Iterator<Item = Vec<Value>> + Send>| {
        admin::load_rows(channel.clone(), database_name, table, rows, BATCH_ROWS)
    };
    let last_id = i64::try_from(seed23_rows).unwrap_or(i64::MAX);
    match table.name {
        "Seed23" => load(Box::new((1..=last_id).map(demo::seed23::row))).await,
        "Singers" => load(Box::new(demo::music::singer_rows().into_iter())).await,
        "Albums" => load(Box::new(demo::music::album_rows().into_iter())).await,
        "Blobs" => load(Box::new(demo::blobs::ids().filter_map(demo::blobs::row))).await,
        _ => Ok(0),
    }
}

fn describe(ensured: &Ensured) -> String {
    match ensured {
        Ensured::Created => "created".to_owned(),
        Ensured::Reused { added_tables } if added_tables.is_empty() => "reused".to_owned(),
        Ensured::Reused { added_tables } => {
            format!("reused; created tables {}", added_tables.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_says_created_or_reused() {
        assert_eq!(describe(&Ensured::Created), "created");
        assert_eq!(
            describe(&Ensured::Reused {
                added_tables: Vec::new()
            }),
            "reused"
        );
        assert_eq!(
            describe(&Ensured::Reused {
                added_tables: vec!["Blobs".into()]
            }),
            "reused; created tables Blobs"
        );
    }
}
