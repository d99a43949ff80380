//! `spanprof explain REPORT.json [--iteration N] [--json]`: why each iteration took the time it
//! did, set against the run's median iteration, as `analysis::causes` found it.

use std::io::Write;
use std::path::PathBuf;

use super::reports::read_report_file;
use super::summary::{cause_line, iteration_text};
use crate::analysis::{self, Explanation};
use crate::report::{RunReport, printable};

/// Arguments of `spanprof explain`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExplainArgs {
    /// A JSON report (from `spanprof profile --json`) whose iterations kept their timelines.
    pub report: PathBuf,
    /// Only this iteration (numbered as in the CSV).
    #[arg(long, value_name = "N")]
    pub iteration: Option<u32>,
    /// Print JSON: `{"median_iteration", "iterations": [{"iteration", "total_ms", "extra_ms",
    /// "causes": [{"kind", "ms", "location", "at_message", "detail"}]}], "run": {"causes"}}`, an
    /// array of those when the report holds several runs; a cause's `kind` is a part's key.
    #[arg(long)]
    pub json: bool,
    /// The HTML report of the runs explained (each slowest iteration's timeline beside the
    /// median one's, with its causes).
    #[command(flatten)]
    pub html: super::outputs::Outputs<super::outputs::RunPage>,
}

/// Explains every run of the report (or one iteration of each) and prints it.
pub fn run_explain(args: &ExplainArgs, mut out: impl Write) -> anyhow::Result<()> {
    let runs = read_report_file(&args.report)?;
    // Runs of one file: told apart by label and time, then by place.
    let names = super::names::run_names(&runs.iter().collect::<Vec<_>>(), &[]);
    let explained = runs
        .iter()
        .zip(&names)
        .map(|(run, name)| explain_run(run, name, args.iteration))
        .collect::<Result<Vec<_>, _>>()?;
    args.html
        .write(crate::export::Reports::Profile(&runs), None)?;
    if args.json {
        let text = match explained.as_slice() {
            [one] => serde_json::to_string_pretty(one)?,
            many => serde_json::to_string_pretty(many)?,
        };
        writeln!(out, "{text}")?;
        return Ok(());
    }
    for (name, explanation) in names.iter().zip(&explained) {
        out.write_all(text(name, explanation).as_bytes())?;
    }
    Ok(())
}

fn explain_run(run: &RunReport, name: &str, iteration: Option<u32>) -> anyhow::Result<Explanation> {
    let all = analysis::explain(run)?;
    Ok(match iteration {
        Some(n) => analysis::causes::only(all, name, n)?,
        None => all,
    })
}

/// The explanation of the run called `name` as text: a line per iteration, its causes indented
/// under it.
pub fn text(name: &str, explanation: &Explanation) -> String {
    let mut text = format!(
        "run {}: each iteration against the median one (#{})\n",
        printable(name),
        explanation.median_iteration
    );
    for it in &explanation.iterations {
        text.push_str(&iteration_text(it));
    }
    if !explanation.run.causes.is_empty() {
        text.push_str("the slower iterations together:\n");
        for c in &explanation.run.causes {
            text.push_str(&cause_line(c));
        }
    }
    text
}
