//! The run history on the command line: `--history` / `--no-history` on the commands that save
//! (`profile`, `client`, `load`), saving on `history::HistoryWorker` after a run, and `spanprof history`
//! (list, `show`, `export`). `--baseline history:...` is read back by `gate.rs`.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;

use super::target::parse_limit;
use crate::export::{
    Exported, Exporter, Format, Json, Markdown, Redaction, Reports, write_atomically,
};
use crate::history::{
    self, Filter, HistoryWorker, LoadSummary, Location, RunSummary, StoredLoad, is_load_id,
};
use crate::load::LoadReport;
use crate::report::{RunReport, printable};

/// Where a command saves its runs.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HistoryArgs {
    /// The run history: a SQLite file, or spanner://projects/P/instances/I/databases/D (through
    /// $SPANNER_EMULATOR_HOST). Default: $XDG_DATA_HOME/spanprof/history.sqlite.
    #[arg(long = "history", value_name = "PATH", env = "SPANPROF_HISTORY")]
    pub history: Option<String>,
    /// Save nothing in the run history.
    #[arg(long)]
    pub no_history: bool,
}

impl HistoryArgs {
    /// The store these arguments choose.
    pub fn location(&self) -> anyhow::Result<Location> {
        Ok(Location::choose(self.history.as_deref(), self.no_history)?)
    }

    /// Starts saving: a worker for the chosen store, or (when none can be chosen) one that saves
    /// nothing, the reason said on stderr once.
    pub fn worker(&self) -> Option<HistoryWorker> {
        let location = match self.location() {
            Ok(Location::Off) => return None,
            Ok(location) => location,
            Err(e) => {
                eprintln!("history was not saved: {e}");
                return None;
            }
        };
        match HistoryWorker::start(location) {
            Ok(worker) => Some(worker),
            Err(e) => {
                eprintln!("history was not saved: cannot start its thread: {e}");
                None
            }
        }
    }
}

/// Saves the load run `report` in the store `args` choose, at once, and says under which id on
/// stderr (`load merge history:ID` takes it); a store that cannot take it is said, never failing
/// the run.
pub fn save_load(args: &HistoryArgs, report: &LoadReport) {
    let saved = (|| -> anyhow::Result<Option<(String, String)>> {
        let location = args.location()?;
        let Some(mut store) = history::open(&location)? else {
            return Ok(None);
        };
        let id = store.save_load(&StoredLoad::new(report)?);
        for notice in store.take_notices() {
            eprintln!("{}", printable(&notice));
        }
        Ok(Some((id?, location.describe())))
    })();
    match saved {
        Ok(Some((id, store))) => eprintln!("saved as load run {id} in the history {store}"),
        Ok(None) => {}
        Err(e) => eprintln!("history was not saved: {e:#}"),
    }
}

/// Waits for `worker`'s saves and prints what it has to say on stderr (one line each).
pub fn finish(worker: Option<HistoryWorker>) {
    if let Some(worker) = worker {
        for notice in worker.finish() {
            eprintln!("{}", printable(&notice));
        }
    }
}

/// Arguments of `spanprof history`.
#[derive(Debug, Clone, clap::Args)]
pub struct HistoryCommandArgs {
    /// `show` or `export` one run; without one, list runs.
    #[command(subcommand)]
    pub action: Option<HistoryAction>,
    /// The run history (as for `profile`).
    #[arg(
        long = "history",
        value_name = "PATH",
        env = "SPANPROF_HISTORY",
        global = true
    )]
    pub history: Option<String>,
    /// Print the list as JSON: {"runs": [{"id", "started_at", "label", "target", "fingerprint",
    /// "iterations", "median_total_ms", "p90_total_ms", "sql"}]}.
    #[arg(long)]
    pub json: bool,
    /// Only runs whose SQL contains TEXT (any case).
    #[arg(long, value_name = "TEXT", conflicts_with = "fingerprint")]
    pub sql: Option<String>,
    /// Only runs with this fingerprint.
    #[arg(long, value_name = "F")]
    pub fingerprint: Option<String>,
    /// Only runs started within DUR of now (`90m`, `2h`, `7d`).
    #[arg(long, value_name = "DUR", value_parser = parse_since)]
    pub since: Option<Duration>,
    /// At most N runs, newest first.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
}

/// What `spanprof history` does to one run.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum HistoryAction {
    /// Print one run as a report (Markdown, or with --json the JSON report).
    Show {
        /// The run's id (from the list).
        id: String,
        /// The JSON report instead.
        #[arg(long)]
        json: bool,
    },
    /// Write one run as a JSON report (for `spanprof compare`), or as an HTML report when the
    /// file's name ends in `.html`.
    Export {
        /// The run's id.
        id: String,
        /// The file to write: FILE.json, or FILE.html.
        #[arg(
            short = 'o',
            long = "out",
            value_name = "FILE",
            required_unless_present = "html"
        )]
        out: Option<PathBuf>,
        /// Write the run as an HTML report here (as `-o FILE.html`).
        #[arg(long, value_name = "OUT.html", conflicts_with = "out")]
        html: Option<PathBuf>,
        /// In an HTML report, leave out the SQL's literal values (`literals`, the default) or
        /// those and the project, instance and database names (`names`).
        #[arg(
            long,
            value_name = "WHAT",
            num_args = 0..=1,
            default_missing_value = "literals",
            value_parser = crate::export::Redaction::parse
        )]
        redact: Option<crate::export::Redaction>,
    },
}

/// Runs `spanprof history`.
pub fn run_history(args: &HistoryCommandArgs, mut out: impl Write) -> anyhow::Result<()> {
    let location = Location::choose(args.history.as_deref(), false)?;
    let mut store = history::open(&location)?.context("no history store")?;
    for notice in store.take_notices() {
        eprintln!("{}", printable(&notice));
    }
    let one = |store: &mut dyn history::HistoryStore, id: &str| -> anyhow::Result<RunReport> {
        store.get(id)?.with_context(|| {
            format!(
                "the history {} holds no run {}",
                location.describe(),
                printable(id)
            )
        })
    };
    match &args.action {
        Some(action) if is_load_id(action.id()) => {
            load_action(action, &mut *store, &location, &mut out)?;
        }
        Some(HistoryAction::Show { id, json }) => {
            let run = [one(&mut *store, id)?];
            if *json {
                out.write_all(&Json.export(&run)?)?;
            } else {
                out.write_all(&Markdown.export(&run)?)?;
                out.write_all(super::summary::findings(&run[0]).as_bytes())?;
            }
        }
        Some(HistoryAction::Export {
            id,
            out: path,
            html: html_path,
            redact,
        }) => {
            let run = [one(&mut *store, id)?];
            let (path, format) = export_path(path.as_ref(), html_path.as_ref(), redact.is_some())?;
            export_one(path, format, Reports::Profile(&run), *redact)?;
            writeln!(out, "wrote run {} to {}", printable(id), path.display())?;
        }
        None => {
            let filter = Filter {
                sql_contains: args.sql.clone(),
                fingerprint: args.fingerprint.clone(),
                target: None,
                since_ms: args
                    .since
                    .map(|d| history::stored::now_ms() - d.as_millis() as i64),
                limit: Some(args.limit),
            };
            let runs = store.list(&filter)?;
            let loads = store.list_loads(&filter)?;
            for notice in store.take_notices() {
                eprintln!("{}", printable(&notice));
            }
            // Buffered: stdout writes each line through on its own, a system call per line of
            // 100,000 runs' JSON. Serialized as they are, without a tree of values in between.
            let mut out = std::io::BufWriter::new(out);
            if args.json {
                #[derive(serde::Serialize)]
                struct Listing<'a> {
                    runs: &'a [RunSummary],
                    load_runs: &'a [LoadSummary],
                }
                let listing = Listing {
                    runs: &runs,
                    load_runs: &loads,
                };
                serde_json::to_writer_pretty(&mut out, &listing)?;
                writeln!(out)?;
            } else {
                write_table(&mut out, &runs)?;
                if !loads.is_empty() {
                    writeln!(out, "\nload runs")?;
                    write_load_table(&mut out, &loads)?;
                }
            }
            out.flush()?;
        }
    }
    Ok(())
}

impl HistoryAction {
    /// The run the action names.
    fn id(&self) -> &str {
        match self {
            HistoryAction::Show { id, .. } | HistoryAction::Export { id, .. } => id,
        }
    }
}

/// `show` or `export` of a load run.
fn load_action(
    action: &HistoryAction,
    store: &mut dyn history::HistoryStore,
    location: &Location,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let id = action.id();
    let run = store.get_load(id)?.with_context(|| {
        format!(
            "the history {} holds no load run {}",
            location.describe(),
            printable(id)
        )
    })?;
    match action {
        HistoryAction::Show { json: true, .. } => {
            out.write_all(&crate::export::load_json(&run)?)?
        }
        HistoryAction::Show { .. } => {
            out.write_all(super::load_summary::summary(&run).as_bytes())?
        }
        HistoryAction::Export {
            out: path,
            html: html_path,
            redact,
            ..
        } => {
            let (path, format) = export_path(path.as_ref(), html_path.as_ref(), redact.is_some())?;
            export_one(path, format, Reports::Load(&run), *redact)?;
            writeln!(
                out,
                "wrote load run {} to {}",
                printable(id),
                path.display()
            )?;
        }
    }
    Ok(())
}

/// Where `history export` writes, and in which format: HTML (`--html`, or a name ending in
/// `.html`) or JSON; `--redact` only for HTML.
fn export_path<'a>(
    out: Option<&'a PathBuf>,
    html: Option<&'a PathBuf>,
    redact: bool,
) -> anyhow::Result<(&'a PathBuf, Format)> {
    let Some(path) = out.or(html) else {
        anyhow::bail!("say where to write the run: -o FILE or --html FILE");
    };
    let is_html = html.is_some()
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"));
    anyhow::ensure!(
        is_html || !redact,
        "--redact is for an HTML report: name the file FILE.html"
    );
    let format = if is_html { Format::Html } else { Format::Json };
    Ok((path, format))
}

/// Writes one stored run of either kind to `path` in `format`, with what `redact` names left out.
fn export_one(
    path: &std::path::Path,
    format: Format,
    reports: Reports<'_>,
    redact: Option<Redaction>,
) -> anyhow::Result<()> {
    let redaction = redact.unwrap_or(Redaction::NONE);
    if redaction.any() {
        super::outputs::say_what_is_not_redacted(None);
    }
    let exported = Exported::new(reports).redacting(redaction);
    write_atomically(path, &format.export(&exported)?)?;
    Ok(())
}

/// The load runs as a table, a run a line.
fn write_load_table(out: &mut impl Write, loads: &[LoadSummary]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:>6}  {:<24}  {:<20}  {:<16}  {:<16}  {:<6}  {:>5}  {:>9}  {:>8}",
        "id", "started", "label", "target", "fingerprint", "model", "steps", "requests", "knee"
    )?;
    for r in loads {
        let cut = |s: &str, n: usize| printable(s).chars().take(n).collect::<String>();
        let knee = r
            .knee
            .map_or_else(|| "-".to_owned(), |l| crate::text::trimmed(l, 3));
        writeln!(
            out,
            "{:>6}  {:<24}  {:<20}  {:<16}  {:<16}  {:<6}  {:>5}  {:>9}  {:>8}",
            cut(&r.id, 18),
            cut(&r.started_at, 24),
            cut(&r.label, 20),
            cut(&r.target, 16),
            cut(&r.fingerprint, 16),
            cut(&r.model, 6),
            r.steps,
            r.requests,
            knee
        )?;
    }
    Ok(())
}

/// A duration as `--since` takes it: `--timeout`'s units, and days (`7d`).
fn parse_since(text: &str) -> Result<Duration, String> {
    match text.trim().strip_suffix('d').map(str::parse::<u64>) {
        Some(Ok(days)) => Ok(Duration::from_secs(days.saturating_mul(86_400))),
        Some(Err(_)) => Err(format!("{text:?} is not a number of days such as 7d")),
        None => parse_limit(text),
    }
}

/// The list as a table, a run a line.
fn write_table(out: &mut impl Write, runs: &[RunSummary]) -> std::io::Result<()> {
    if runs.is_empty() {
        return writeln!(out, "no runs");
    }
    writeln!(
        out,
        "{:>6}  {:<24}  {:<20}  {:<16}  {:<16}  {:>5}  {:>10}  {:>10}",
        "id", "started", "label", "target", "fingerprint", "iters", "median ms", "p90 ms"
    )?;
    let ms = |x: Option<f64>| x.map_or_else(|| "-".to_owned(), |x| format!("{x:.2}"));
    for r in runs {
        let cut = |s: &str, n: usize| printable(s).chars().take(n).collect::<String>();
        writeln!(
            out,
            "{:>6}  {:<24}  {:<20}  {:<16}  {:<16}  {:>5}  {:>10}  {:>10}",
            cut(&r.id, 16),
            cut(&r.started_at, 24),
            cut(&r.label, 20),
            cut(&r.target, 16),
            cut(&r.fingerprint, 16),
            r.iterations,
            ms(r.median_total_ms),
            ms(r.p90_total_ms)
        )?;
    }
    Ok(())
}

/// Hands `reports` to `worker`, when there is one (each kept under the database its
/// configuration names).
pub fn save(worker: Option<&HistoryWorker>, reports: &[RunReport]) {
    if let Some(worker) = worker {
        worker.save(reports.to_vec());
    }
}
