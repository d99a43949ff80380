//! `spanprof seed`: create the demo tables in a Cloud Spanner emulator (or any plaintext endpoint)
//! and load their rows, reusing whatever already exists; the seeding itself is
//! [`crate::emulator::seed`], this prints what it did.

use std::io::Write;

use crate::client::Timeouts;
use crate::client::admin::Ensured;
use crate::emulator::{self, SeedSummary, SeedTarget};

/// The environment variable official clients read the emulator's address from.
const EMULATOR_HOST_VAR: &str = "SPANNER_EMULATOR_HOST";

/// Arguments of `spanprof seed`.
#[derive(Debug, Clone, clap::Args)]
pub struct SeedArgs {
    /// The emulator's plaintext gRPC address, HOST:PORT (default: $SPANNER_EMULATOR_HOST).
    #[arg(long, value_name = "HOST:PORT", value_parser = super::target::parse_endpoint)]
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
    /// How long connecting may take (TCP, HTTP/2).
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = super::target::parse_limit)]
    pub connect_timeout: std::time::Duration,
    /// How long each call may take to be answered.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = super::target::parse_limit)]
    pub call_timeout: std::time::Duration,
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
    let target = SeedTarget {
        endpoint: args.resolved_endpoint()?,
        project: args.project.clone(),
        instance: args.instance.clone(),
        database: args.database.clone(),
        seed23_rows: args.rows,
        timeouts: Timeouts {
            connect: args.connect_timeout,
            call: args.call_timeout,
            ..Timeouts::DEFAULT
        },
    };
    let summary = emulator::seed_blocking(&target)?;
    for line in summary_lines(&summary) {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    Ok(())
}

/// The lines `spanprof seed` prints for `summary`.
fn summary_lines(summary: &SeedSummary) -> Vec<String> {
    let mut lines = vec![
        format!(
            "instance {}: {}",
            summary.instance_name,
            describe(&summary.instance)
        ),
        format!(
            "database {}: {}",
            summary.database_name,
            describe(&summary.database)
        ),
    ];
    lines.extend(summary.tables.iter().map(|t| {
        format!(
            "{}: wrote {} rows in {:.2} s",
            t.table,
            t.rows,
            t.elapsed.as_secs_f64()
        )
    }));
    lines.push(format!(
        "seeded {} rows in {:.2} s",
        summary.rows(),
        summary.elapsed.as_secs_f64()
    ));
    lines
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
    use std::time::Duration;

    use super::*;
    use crate::emulator::TableSeeded;

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

    #[test]
    fn the_summary_is_printed_one_line_per_step() {
        let summary = SeedSummary {
            instance_name: "projects/p/instances/i".into(),
            instance: Ensured::Created,
            database_name: "projects/p/instances/i/databases/d".into(),
            database: Ensured::Reused {
                added_tables: Vec::new(),
            },
            tables: vec![
                TableSeeded {
                    table: "Seed23",
                    rows: 100,
                    elapsed: Duration::from_millis(1250),
                },
                TableSeeded {
                    table: "Blobs",
                    rows: 14,
                    elapsed: Duration::from_millis(7),
                },
            ],
            elapsed: Duration::from_millis(2500),
        };
        assert_eq!(
            summary_lines(&summary),
            [
                "instance projects/p/instances/i: created",
                "database projects/p/instances/i/databases/d: reused",
                "Seed23: wrote 100 rows in 1.25 s",
                "Blobs: wrote 14 rows in 0.01 s",
                "seeded 114 rows in 2.50 s",
            ]
        );
    }
}
