//! Where a command that has runs writes them: a flag per export format ([`Format`], the one
//! list), flattened into `profile` and `client`.

use std::path::PathBuf;

use super::html::HtmlArgs;
use crate::export::{Format, write_atomically};
use crate::report::RunReport;

/// The files a command's runs are written to.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ReportOutputs {
    /// Write every iteration as CSV here.
    #[arg(long, value_name = "OUT.csv")]
    pub csv: Option<PathBuf>,
    /// Write the JSON report here (for `spanprof compare`, `explain` and the window).
    #[arg(long, value_name = "OUT.json")]
    pub json: Option<PathBuf>,
    /// Write the Markdown summary here.
    #[arg(long, value_name = "OUT.md")]
    pub markdown: Option<PathBuf>,
    /// Write a Chrome trace event JSON here (Perfetto UI, chrome://tracing, speedscope): a
    /// process per variant, a thread per stream, each iteration's waits and decodes.
    #[arg(long, value_name = "OUT.trace.json")]
    pub trace: Option<PathBuf>,
    /// The HTML report.
    #[command(flatten)]
    pub html: HtmlArgs,
}

impl ReportOutputs {
    /// Where `format` is to be written, if anywhere.
    pub fn path(&self, format: Format) -> Option<&PathBuf> {
        match format {
            Format::Csv => self.csv.as_ref(),
            Format::Json => self.json.as_ref(),
            Format::Markdown => self.markdown.as_ref(),
            Format::Trace => self.trace.as_ref(),
            Format::Html => self.html.html.as_ref(),
        }
    }

    /// Writes `reports` in every format asked for; the HTML report compares `pairs` (baseline,
    /// other) at its top (`None`: every run after the first against the first).
    pub fn write(
        &self,
        reports: &[RunReport],
        pairs: Option<Vec<(usize, usize)>>,
    ) -> anyhow::Result<()> {
        // `--redact` covers every file written: a JSON beside a redacted page would hand over
        // what the page leaves out.
        let redacted = self.html.redaction().apply(reports);
        for format in Format::ALL {
            match (format, self.path(format)) {
                (_, None) => {}
                (Format::Html, Some(_)) => self.html.write(reports, pairs.clone())?,
                (format, Some(path)) => {
                    write_atomically(path, &format.exporter().export(&redacted)?)?;
                }
            }
        }
        Ok(())
    }
}
