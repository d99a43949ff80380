//! The formats every kind of run exports to, listed once ([`Format`]): which kinds of run each
//! exports, its names (the menu's, the command line's flag), the names a save proposes, and its
//! document made from a run's reports ([`Exported`]), with what `--redact` names left out.

use std::cell::OnceCell;

use super::{
    Csv, ExportError, Exporter, Html, Json, Markdown, Redaction, Trace, load_csv, load_hdr_log,
    load_html, load_json,
};
use crate::load::LoadReport;
use crate::report::RunReport;

/// The kinds of run whose reports export: each format says which of them it can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    /// A profile's runs (`RunReport`s, of `profile`, `client` and the window's Run).
    Profile,
    /// A load run (a `LoadReport`, of `load` and the window's Load tab).
    Load,
}

impl RunKind {
    /// Every kind.
    pub const ALL: [RunKind; 2] = [RunKind::Profile, RunKind::Load];

    /// Its name in a sentence ("a load run").
    pub fn describe(self) -> &'static str {
        match self {
            RunKind::Profile => "a profile's runs",
            RunKind::Load => "a load run",
        }
    }
}

/// The formats reports export to: the one list the command line's flags, the window's Export
/// menus and dialogs, and `--redact`'s words read, for every kind of run. A new format is an arm
/// here: each match below then asks for what it says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// A run's row per iteration, the engine's columns; a load run's row per step.
    Csv,
    /// The whole report, which the app (and `spanprof compare`, `load merge`) can read back.
    Json,
    /// A summary table per run.
    Markdown,
    /// Chrome trace event JSON of the iterations' timelines (Perfetto UI, chrome://tracing,
    /// speedscope).
    Trace,
    /// A load run's latencies from the intended start, a line per step, in HdrHistogram's
    /// interval log format, which its own tools read.
    HdrLog,
    /// One offline HTML page of the runs (every run after the first compared with the first),
    /// or of a load run, with the JSON report inside, which the app reads back.
    Html,
}

impl Format {
    /// Every format, in menu order.
    pub const ALL: [Format; 6] = [
        Format::Csv,
        Format::Json,
        Format::Markdown,
        Format::Trace,
        Format::HdrLog,
        Format::Html,
    ];

    /// Whether it exports a run of `kind`.
    pub fn exports(self, kind: RunKind) -> bool {
        match self {
            Format::Csv | Format::Json | Format::Html => true,
            Format::Markdown | Format::Trace => kind == RunKind::Profile,
            Format::HdrLog => kind == RunKind::Load,
        }
    }

    /// The formats that export a run of `kind`, in menu order.
    pub fn of(kind: RunKind) -> impl Iterator<Item = Format> {
        Format::ALL.into_iter().filter(move |f| f.exports(kind))
    }

    /// Its short name, as a sentence lists it ("JSON, CSV, Markdown").
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Json => "JSON",
            Format::Markdown => "Markdown",
            Format::Trace => "trace",
            Format::HdrLog => "HDR log",
            Format::Html => "HTML",
        }
    }

    /// The title of the dialog that saves it for a run of `kind`.
    pub fn title(self, kind: RunKind) -> &'static str {
        match (self, kind) {
            (Format::Csv, RunKind::Profile) => "Export the CSV of iterations",
            (Format::Csv, RunKind::Load) => "Export the load run's CSV of steps",
            (Format::Json, RunKind::Profile) => "Export the JSON report",
            (Format::Json, RunKind::Load) => "Export the load run's JSON report",
            (Format::Markdown, _) => "Export the Markdown summary",
            (Format::Trace, _) => "Export a Chrome trace",
            (Format::HdrLog, _) => "Export the load run's HDR interval log",
            (Format::Html, RunKind::Profile) => "Export an HTML report",
            (Format::Html, RunKind::Load) => "Export the load run's HTML report",
        }
    }

    /// The menu's name for it.
    pub fn label(self, kind: RunKind) -> &'static str {
        match (self, kind) {
            (Format::Csv, RunKind::Profile) => "CSV of iterations…",
            (Format::Csv, RunKind::Load) => "CSV of steps…",
            (Format::Json, _) => "JSON report…",
            (Format::Markdown, _) => "Markdown summary…",
            (Format::Trace, _) => "Trace (Perfetto, chrome://tracing)…",
            (Format::HdrLog, _) => "HDR interval log…",
            (Format::Html, _) => "HTML report (one offline page)…",
        }
    }

    /// The command line's flag for it, without its dashes (`--hdr-log`).
    pub fn flag(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Trace => "trace",
            Format::HdrLog => "hdr-log",
            Format::Html => "html",
        }
    }

    /// What the command line's help calls the file its flag names.
    pub fn flag_value(self) -> &'static str {
        match self {
            Format::Csv => "OUT.csv",
            Format::Json => "OUT.json",
            Format::Markdown => "OUT.md",
            Format::Trace => "OUT.trace.json",
            Format::HdrLog => "OUT.hlog",
            Format::Html => "OUT.html",
        }
    }

    /// What the command line's help says of its flag for a run of `kind`.
    pub fn help(self, kind: RunKind) -> &'static str {
        match (self, kind) {
            (Format::Csv, RunKind::Profile) => "Write every iteration as CSV here",
            (Format::Csv, RunKind::Load) => "Write a CSV row per step here",
            (Format::Json, RunKind::Profile) => {
                "Write the JSON report here (for `spanprof compare`, `explain` and the window)"
            }
            (Format::Json, RunKind::Load) => "Write the JSON report here",
            (Format::Markdown, _) => "Write the Markdown summary here",
            (Format::Trace, _) => {
                "Write a Chrome trace event JSON here (Perfetto UI, chrome://tracing, \
                 speedscope): a process per variant, a thread per stream, each iteration's \
                 waits and decodes"
            }
            (Format::HdrLog, _) => {
                "Write the HDR interval log (latencies from the intended start, a line per \
                 step) here"
            }
            (Format::Html, _) => {
                "Write one self-contained HTML report here: opens offline in any browser, and \
                 spanprof reads it back (compare, explain, the window's File > Open report)"
            }
        }
    }

    /// The usual end of its file's name, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Markdown => "md",
            // A trace is JSON too: its own suffix keeps it from taking the report's name.
            Format::Trace => "trace.json",
            Format::HdrLog => "hlog",
            Format::Html => "html",
        }
    }

    /// Its document of `exported`'s reports. The HTML page leaves out what the redaction names
    /// itself (and says so at its top); every other format is given the reports with it left
    /// out, so a redaction covers every file.
    pub fn export(self, exported: &Exported<'_>) -> Result<Vec<u8>, ExportError> {
        let unsupported = || ExportError::Unsupported {
            format: self.name(),
            kind: exported.reports.kind(),
        };
        if !self.exports(exported.reports.kind()) {
            return Err(unsupported());
        }
        if self == Format::Html {
            return match exported.reports {
                Reports::Profile(runs) => Html {
                    redaction: exported.redaction,
                    pairs: exported.pairs.clone(),
                }
                .export(runs),
                Reports::Load(run) => load_html(run, exported.redaction),
            };
        }
        match (self, exported.redacted()) {
            (Format::Csv, Reports::Profile(runs)) => Csv.export(runs),
            (Format::Json, Reports::Profile(runs)) => Json.export(runs),
            (Format::Markdown, Reports::Profile(runs)) => Markdown.export(runs),
            (Format::Trace, Reports::Profile(runs)) => Trace.export(runs),
            (Format::Csv, Reports::Load(run)) => load_csv(run),
            (Format::Json, Reports::Load(run)) => load_json(run),
            (Format::HdrLog, Reports::Load(run)) => load_hdr_log(run),
            _ => Err(unsupported()),
        }
    }

    /// The file name a save dialog proposes for `reports`: `spanprof-<label>-<date>.<ext>` for
    /// a profile's runs (the label of the one run, or how many there are, and the day the newest
    /// one started), `spanprof-load-<label>-<date>.<ext>` for a load run.
    pub fn file_name(self, reports: Reports<'_>) -> String {
        let (label, date) = match reports {
            Reports::Profile(runs) => {
                let label = match runs {
                    [one] => file_name_part(&one.config.label),
                    [] => String::new(),
                    many => format!("{}-runs", many.len()),
                };
                let date = runs
                    .iter()
                    .map(|r| r.started_at.get(..10).unwrap_or_default())
                    .filter(|d| is_date(d))
                    .max()
                    .unwrap_or_default();
                (label, date)
            }
            Reports::Load(run) => {
                let date = run.started_at.get(..10).filter(|d| is_date(d));
                (file_name_part(&run.label), date.unwrap_or_default())
            }
        };
        let mut name = String::from(stem(reports.kind()));
        for part in [label.as_str(), date] {
            if !part.is_empty() {
                name.push('-');
                name.push_str(part);
            }
        }
        format!("{name}.{}", self.extension())
    }

    /// The file name a save proposes for a run of `kind` when there is none to name it after:
    /// `spanprof.<ext>`, `spanprof-load.<ext>`.
    pub fn bare_file_name(self, kind: RunKind) -> String {
        format!("{}.{}", stem(kind), self.extension())
    }
}

/// How a saved file's name begins for a run of `kind`.
fn stem(kind: RunKind) -> &'static str {
    match kind {
        RunKind::Profile => "spanprof",
        RunKind::Load => "spanprof-load",
    }
}

/// A finished run's reports, of one kind, as the formats are given them.
#[derive(Debug, Clone, Copy)]
pub enum Reports<'a> {
    /// A profile's runs, in the order given.
    Profile(&'a [RunReport]),
    /// A load run.
    Load(&'a LoadReport),
}

impl Reports<'_> {
    /// Their kind of run.
    pub fn kind(self) -> RunKind {
        match self {
            Reports::Profile(_) => RunKind::Profile,
            Reports::Load(_) => RunKind::Load,
        }
    }

    /// A copy of them, to travel to a thread of its own.
    pub fn owned(self) -> OwnedReports {
        match self {
            Reports::Profile(runs) => OwnedReports::Profile(runs.to_vec()),
            Reports::Load(run) => OwnedReports::Load(Box::new(run.clone())),
        }
    }
}

/// [`Reports`] owned: what a save takes to a thread of its own, and a redacted copy.
#[derive(Debug, Clone)]
pub enum OwnedReports {
    /// A profile's runs, in order.
    Profile(Vec<RunReport>),
    /// A load run.
    Load(Box<LoadReport>),
}

impl OwnedReports {
    /// Them, borrowed.
    pub fn reports(&self) -> Reports<'_> {
        match self {
            OwnedReports::Profile(runs) => Reports::Profile(runs),
            OwnedReports::Load(run) => Reports::Load(run),
        }
    }
}

/// What a command or a save exports: one kind of run's reports, what to leave out of every file
/// made of them, and the runs the HTML page compares at its top. The redacted reports are made
/// once, at the first format that needs them, however many files are written.
#[derive(Debug)]
pub struct Exported<'a> {
    reports: Reports<'a>,
    redaction: Redaction,
    pairs: Option<Vec<(usize, usize)>>,
    redacted: OnceCell<OwnedReports>,
}

impl<'a> Exported<'a> {
    /// `reports` as they are, every run after the first compared with the first on a page.
    pub fn new(reports: Reports<'a>) -> Self {
        Exported {
            reports,
            redaction: Redaction::NONE,
            pairs: None,
            redacted: OnceCell::new(),
        }
    }

    /// With what `redaction` names left out of every file.
    pub fn redacting(self, redaction: Redaction) -> Self {
        Exported { redaction, ..self }
    }

    /// With the page comparing `pairs` (baseline, other: positions in the runs) at its top
    /// (`None`: every run after the first against the first).
    pub fn comparing(self, pairs: Option<Vec<(usize, usize)>>) -> Self {
        Exported { pairs, ..self }
    }

    /// The reports with the redaction applied: the ones given when it names nothing.
    fn redacted(&self) -> Reports<'_> {
        if !self.redaction.any() {
            return self.reports;
        }
        let redacted = self.redacted.get_or_init(|| match self.reports {
            Reports::Profile(runs) => {
                OwnedReports::Profile(self.redaction.apply(runs).into_owned())
            }
            Reports::Load(run) => OwnedReports::Load(Box::new(self.redaction.apply_load(run))),
        });
        redacted.reports()
    }
}

/// `label` as part of a file name: letters, digits, `.`, `_` and `-` kept, every other run of
/// characters one `-`, at most 60 characters.
pub fn file_name_part(label: &str) -> String {
    let mut part = String::new();
    for c in label.chars() {
        if c.is_alphanumeric() || matches!(c, '.' | '_' | '-') {
            part.push(c);
        } else if !part.ends_with('-') {
            part.push('-');
        }
    }
    part.trim_matches(|c| c == '-' || c == '.')
        .chars()
        .take(60)
        .collect()
}

/// Whether `text` is a `YYYY-MM-DD` date.
pub fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::fixture;
    use crate::load::{LoadSteps, Model, RunFacts, StepCpu, StepLevel, StepTally};
    use std::time::Duration;

    const SECRET: &str = "Zanzibar";

    /// A load run of one step whose label and SQL hold a literal.
    fn load_run() -> LoadReport {
        let mut tally = StepTally::new(StepLevel::Rate(10.0));
        tally.error("UNAVAILABLE", Duration::from_millis(5));
        let step = tally.finish(Duration::ZERO, Duration::from_secs(1), StepCpu::default());
        let plan = LoadSteps {
            model: Model::Open,
            levels: vec![StepLevel::Rate(10.0)],
            step_duration: Duration::from_secs(1),
            max_in_flight: 10,
            drain: Duration::from_secs(1),
        };
        let facts = RunFacts {
            label: format!("scan: '{SECRET}'"),
            sql: format!("SELECT * FROM t WHERE k = '{SECRET}'"),
            started_at: "2026-03-01T10:00:00Z".into(),
            ..RunFacts::default()
        };
        LoadReport::new(facts, &plan, vec![step])
    }

    /// The fixture's runs, the first one's SQL holding a literal.
    fn runs() -> Vec<RunReport> {
        let mut runs = fixture::reports();
        runs[0].config.sql = format!("SELECT * FROM t WHERE k = '{SECRET}'");
        runs
    }

    #[test]
    fn a_format_exports_exactly_the_kinds_of_run_it_says_it_does() {
        let (runs, load) = (runs(), load_run());
        for format in Format::ALL {
            for reports in [Reports::Profile(&runs), Reports::Load(&load)] {
                let kind = reports.kind();
                match format.export(&Exported::new(reports)) {
                    Ok(bytes) => {
                        assert!(format.exports(kind), "{format:?} wrote {kind:?}");
                        assert!(!bytes.is_empty(), "{format:?} of {kind:?} is empty");
                    }
                    Err(ExportError::Unsupported {
                        format: name,
                        kind: k,
                    }) => {
                        assert!(!format.exports(kind), "{format:?} refused {kind:?}");
                        assert_eq!((name, k), (format.name(), kind));
                    }
                    Err(e) => panic!("{format:?} of {kind:?}: {e}"),
                }
            }
        }
    }

    #[test]
    fn the_hdr_log_is_a_load_run_s_format_and_markdown_and_the_trace_a_profile_s() {
        use Format::*;
        let of = |kind| Format::of(kind).collect::<Vec<_>>();
        assert_eq!(of(RunKind::Profile), [Csv, Json, Markdown, Trace, Html]);
        assert_eq!(of(RunKind::Load), [Csv, Json, HdrLog, Html]);
        let error = HdrLog
            .export(&Exported::new(Reports::Profile(&runs())))
            .expect_err("no HDR log of a profile");
        assert_eq!(
            error.to_string(),
            "HDR log is not a format of a profile's runs"
        );
    }

    #[test]
    fn the_flags_keep_the_command_line_s_spellings_each_once() {
        let flags: Vec<&str> = Format::ALL.iter().map(|f| f.flag()).collect();
        assert_eq!(
            flags,
            ["csv", "json", "markdown", "trace", "hdr-log", "html"]
        );
        let mut names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
        names.dedup();
        assert_eq!(names.len(), Format::ALL.len());
        for format in Format::ALL {
            assert_eq!(
                format.flag_value(),
                format!("OUT.{}", format.extension()),
                "a flag's file ends as its format's files do"
            );
        }
    }

    #[test]
    fn a_redaction_covers_every_file_of_either_kind() {
        let (runs, load) = (runs(), load_run());
        let literals = Redaction::parse("literals").expect("literals");
        for reports in [Reports::Profile(&runs), Reports::Load(&load)] {
            let kind = reports.kind();
            let plain = Exported::new(reports);
            let redacted = Exported::new(reports).redacting(literals);
            let mut carried = 0;
            for format in Format::of(kind) {
                let text = |e: &Exported<'_>| {
                    String::from_utf8_lossy(&format.export(e).expect("exports")).into_owned()
                };
                // Only a file that carries the literal unredacted shows the redaction at work.
                carried += usize::from(text(&plain).contains(SECRET));
                assert!(
                    !text(&redacted).contains(SECRET),
                    "{format:?} of {kind:?} kept the literal"
                );
            }
            assert!(carried >= 2, "{kind:?}: {carried} files held the literal");
        }
    }

    #[test]
    fn a_save_proposes_the_run_s_label_and_date_for_either_kind() {
        let (runs, load) = (runs(), load_run());
        assert_eq!(
            Format::Trace.file_name(Reports::Profile(&runs[1..])),
            "spanprof-slow-2026-03-01.trace.json"
        );
        assert_eq!(
            Format::HdrLog.file_name(Reports::Load(&load)),
            format!("spanprof-load-scan-{SECRET}-2026-03-01.hlog")
        );
        assert_eq!(
            Format::Csv.file_name(Reports::Profile(&[])),
            Format::Csv.bare_file_name(RunKind::Profile)
        );
        assert_eq!(
            Format::Html.bare_file_name(RunKind::Load),
            "spanprof-load.html"
        );
    }
}
