//! `--html FILE` and `--redact`: the one HTML report every command that has runs can write
//! (`profile`, `client`, `compare`, `explain`, `load`; `history export -o FILE.html`).

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
    /// Leave out of the HTML report the SQL's literal values and comments and the parameters'
    /// values (`literals`, the default), or those and the project, instance and database names
    /// (`names`). The report says what was left out.
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
            let html = Html {
                redaction: self.redaction(),
                pairs,
            };
            write_atomically(path, &html.export(reports)?)?;
        }
        Ok(())
    }

    /// What to leave out (nothing unless `--redact`).
    pub fn redaction(&self) -> Redaction {
        self.redact.unwrap_or(Redaction::NONE)
    }
}
