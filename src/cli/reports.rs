//! JSON report files read back: by `compare`, `explain` and a `--baseline` file.

use anyhow::Context as _;

use crate::export::read_reports;
use crate::report::RunReport;

/// The runs of a report file, JSON or HTML (refused past `export::MAX_REPORT_BYTES` before more
/// is read).
pub fn read_report_file(path: &std::path::Path) -> anyhow::Result<Vec<RunReport>> {
    let bytes = crate::export::read_bounded(path, crate::export::MAX_REPORT_BYTES)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let runs = read_reports(&bytes)
        .with_context(|| format!("{} is not a spanprof report", path.display()))?;
    anyhow::ensure!(!runs.is_empty(), "{} holds no run", path.display());
    Ok(runs)
}
