//! `--html FILE` and `--redact`: the one HTML report every command that has runs can write
//! (`profile`, `client`, `compare`, `explain`, `load`; `history export -o FILE.html`), and what
//! `--redact` leaves out of it and of the files beside it.

use std::path::PathBuf;

use crate::export::{Exporter, Html, Redaction, write_atomically};
use crate::report::RunReport;

/// The HTML report's arguments.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct HtmlArgs {
    /// Write one self-contained HTML report here: opens offline in any browser, and spanprof
    /// reads it back (compare, explain, the window's File > Open report).
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,
    /// Leave out of the HTML report, and of every other file the command writes (JSON, CSV,
    /// Markdown, trace), the SQL's literal values and comments and the parameters' values
    /// (`literals`, the default), or those and the project, instance and database names
    /// (`names`). The report says what was left out; what the command prints and the run it
    /// saves in the history keep them.
    #[arg(
        long,
        value_name = "WHAT",
        num_args = 0..=1,
        default_missing_value = "literals",
        value_parser = Redaction::parse,
        requires = "html"
    )]
    pub redact: Option<Redaction>,
}

impl HtmlArgs {
    /// Writes the report of `reports` when asked, with `pairs` (baseline, other) compared at its
    /// top (`None`: every run after the first against the first).
    pub fn write(
        &self,
        reports: &[RunReport],
        pairs: Option<Vec<(usize, usize)>>,
    ) -> anyhow::Result<()> {
        if let Some(path) = &self.html {
            self.say_what_is_not_redacted();
            let html = Html {
                redaction: self.redaction(),
                pairs,
            };
            write_atomically(path, &html.export(reports)?)?;
        }
        Ok(())
    }

    /// Under `--redact`, says on stderr what it does not cover: the files are redacted, what the
    /// command prints and what it saves are not.
    pub fn say_what_is_not_redacted(&self) {
        if self.redaction().any() {
            eprintln!(
                "spanprof: --redact leaves the secrets out of the files written (the HTML report \
                 and any JSON, CSV, Markdown or trace); what is printed here and the run saved in \
                 the history (unless --no-history) keep them"
            );
        }
    }

    /// What to leave out (nothing unless `--redact`).
    pub fn redaction(&self) -> Redaction {
        self.redact.unwrap_or(Redaction::NONE)
    }
}
