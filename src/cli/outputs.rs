//! Where a command writes what it measured or read: one group of arguments ([`Outputs`]), a flag
//! per export format of its kind of run, made from the one list ([`Format`]: `--csv`, `--json`,
//! `--markdown`, `--trace`, `--hdr-log`, `--html`), and `--redact`, which leaves the secrets out
//! of every file the group writes. `profile` and `client` flatten it for a profile's runs, `load`
//! and `load merge` for a load run, `compare` and `explain` for the page of the runs they read.

use std::marker::PhantomData;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command, FromArgMatches};

use crate::export::{Exported, Format, Redaction, Reports, RunKind, write_atomically};

/// What a command writes: one kind of run's reports, in the formats it offers a flag for.
pub trait Files {
    /// The kind of run its files hold.
    const KIND: RunKind;

    /// Whether it offers a flag for `format`, one of its kind's: every one, unless it says
    /// otherwise.
    fn offers(format: Format) -> bool {
        format.exports(Self::KIND)
    }
}

/// `profile` and `client`: a profile's runs, in every format of theirs.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProfileFiles;

impl Files for ProfileFiles {
    const KIND: RunKind = RunKind::Profile;
}

/// `load` and `load merge`: a load run, in every format of its.
#[derive(Debug, Clone, Copy, Default)]
pub struct LoadFiles;

impl Files for LoadFiles {
    const KIND: RunKind = RunKind::Load;
}

/// `compare` and `explain`: the page of the runs they read (their `--json` prints, and writes
/// no file).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunPage;

impl Files for RunPage {
    const KIND: RunKind = RunKind::Profile;

    fn offers(format: Format) -> bool {
        format == Format::Html
    }
}

/// The files a command writes, and what `--redact` leaves out of them.
#[derive(Debug, Clone, Default)]
pub struct Outputs<F> {
    /// Where each format asked for goes, in menu order.
    paths: Vec<(Format, PathBuf)>,
    /// What to leave out of every file.
    redact: Option<Redaction>,
    files: PhantomData<F>,
}

/// The id of the group of flags, and of `--redact`.
const GROUP: &str = "outputs";
const REDACT: &str = "redact";

/// The formats a command of `F` offers flags for, in menu order.
fn offered<F: Files>() -> impl Iterator<Item = Format> {
    Format::of(F::KIND).filter(|f| F::offers(*f))
}

/// The files besides the page, as `--redact`'s words list them ("CSV, JSON, Markdown, trace").
fn others<F: Files>(last: &str) -> Option<String> {
    let names: Vec<&str> = offered::<F>()
        .filter(|f| *f != Format::Html)
        .map(Format::name)
        .collect();
    match names.as_slice() {
        [] => None,
        [one] => Some((*one).to_owned()),
        [rest @ .., end] => Some(format!("{}{last}{end}", rest.join(", "))),
    }
}

impl<F: Files> clap::Args for Outputs<F> {
    fn augment_args(mut cmd: Command) -> Command {
        for format in offered::<F>() {
            cmd = cmd.arg(
                Arg::new(format.flag())
                    .long(format.flag())
                    .value_name(format.flag_value())
                    .value_parser(clap::value_parser!(PathBuf))
                    .action(ArgAction::Set)
                    .help(format.help(F::KIND)),
            );
        }
        let files = match others::<F>(", ") {
            Some(others) => {
                format!(", and of every other file the command writes ({others}),")
            }
            None => String::new(),
        };
        let redact = Arg::new(REDACT)
            .long(REDACT)
            .value_name("WHAT")
            .num_args(0..=1)
            .default_missing_value("literals")
            .value_parser(Redaction::parse)
            .requires(Format::Html.flag())
            .help(format!(
                "Leave out of the HTML report{files} the SQL's literal values and comments and \
                 the parameters' values (`literals`, the default), or those and the project, \
                 instance and database names (`names`). The report says what was left out; what \
                 the command prints and the run it saves in the history keep them"
            ));
        let group = ArgGroup::new(GROUP)
            .args(offered::<F>().map(Format::flag))
            .multiple(true);
        cmd.arg(redact).group(group)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl<F: Files> FromArgMatches for Outputs<F> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut ArgMatches) -> Result<Self, clap::Error> {
        let paths = offered::<F>()
            .filter_map(|f| Some((f, matches.remove_one::<PathBuf>(f.flag())?)))
            .collect();
        Ok(Outputs {
            paths,
            redact: matches.remove_one::<Redaction>(REDACT),
            files: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        let given = Self::from_arg_matches(matches)?;
        for (format, path) in given.paths {
            self.paths.retain(|(f, _)| *f != format);
            self.paths.push((format, path));
        }
        self.paths.sort_by_key(|(f, _)| *f);
        self.redact = given.redact.or(self.redact);
        Ok(())
    }
}

impl<F: Files> Outputs<F> {
    /// Where `format` is to be written, if anywhere.
    pub fn path(&self, format: Format) -> Option<&PathBuf> {
        self.paths
            .iter()
            .find(|(f, _)| *f == format)
            .map(|(_, p)| p)
    }

    /// What to leave out (nothing unless `--redact`).
    pub fn redaction(&self) -> Redaction {
        self.redact.unwrap_or(Redaction::NONE)
    }

    /// Writes `reports` in every format asked for, whole or not at all each; the page compares
    /// `pairs` (baseline, other) at its top (`None`: every run after the first against the
    /// first). `--redact` covers every file written: a JSON beside a redacted page would hand
    /// over what the page leaves out.
    pub fn write(
        &self,
        reports: Reports<'_>,
        pairs: Option<Vec<(usize, usize)>>,
    ) -> anyhow::Result<()> {
        debug_assert_eq!(reports.kind(), F::KIND, "the command's kind of run");
        if self.paths.is_empty() {
            return Ok(());
        }
        let exported = Exported::new(reports)
            .redacting(self.redaction())
            .comparing(pairs);
        if self.redaction().any() {
            say_what_is_not_redacted(others::<F>(" or ").as_deref());
        }
        for (format, path) in &self.paths {
            write_atomically(path, &format.export(&exported)?)?;
        }
        Ok(())
    }
}

/// Under `--redact`, says on stderr what it does not cover: the files are redacted (the page and
/// `others` beside it), what the command prints and what it saves are not.
pub fn say_what_is_not_redacted(others: Option<&str>) {
    let others = others.map_or_else(String::new, |o| format!(" and any {o}"));
    eprintln!(
        "spanprof: --redact leaves the secrets out of the files written (the HTML report{others}); \
         what is printed here and the run saved in the history (unless --no-history) keep them"
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Debug, clap::Parser)]
    struct Profile {
        #[command(flatten)]
        out: Outputs<ProfileFiles>,
    }

    #[derive(Debug, clap::Parser)]
    struct Load {
        #[command(flatten)]
        out: Outputs<LoadFiles>,
    }

    #[derive(Debug, clap::Parser)]
    struct Page {
        #[command(flatten)]
        out: Outputs<RunPage>,
    }

    #[test]
    fn each_kind_of_command_takes_the_flags_of_its_formats_and_no_other() {
        let profile = Profile::try_parse_from(["p", "--csv", "a.csv", "--trace", "t.json"])
            .expect("a profile's flags");
        assert_eq!(profile.out.path(Format::Csv), Some(&PathBuf::from("a.csv")));
        assert_eq!(
            profile.out.path(Format::Trace),
            Some(&PathBuf::from("t.json"))
        );
        assert_eq!(profile.out.path(Format::Json), None);
        assert!(Profile::try_parse_from(["p", "--hdr-log", "x.hlog"]).is_err());

        let load = Load::try_parse_from(["l", "--hdr-log", "x.hlog", "--json", "x.json"])
            .expect("a load run's flags");
        assert_eq!(
            load.out.path(Format::HdrLog),
            Some(&PathBuf::from("x.hlog"))
        );
        assert!(Load::try_parse_from(["l", "--markdown", "x.md"]).is_err());

        let page = Page::try_parse_from(["c", "--html", "x.html"]).expect("the page's flag");
        assert_eq!(page.out.path(Format::Html), Some(&PathBuf::from("x.html")));
        assert!(Page::try_parse_from(["c", "--csv", "x.csv"]).is_err());
    }

    #[test]
    fn redact_asks_for_the_page_and_defaults_to_the_literals() {
        assert!(Load::try_parse_from(["l", "--json", "x.json", "--redact"]).is_err());
        let load = Load::try_parse_from(["l", "--html", "x.html", "--redact"]).expect("parsed");
        assert_eq!(
            load.out.redaction(),
            Redaction::parse("literals").expect("literals")
        );
        let page =
            Page::try_parse_from(["c", "--html", "x.html", "--redact", "names"]).expect("parsed");
        assert!(page.out.redaction().names);
    }

    #[test]
    fn redact_s_help_lists_the_files_of_the_command_s_kind() {
        let help = |cmd: Command| {
            cmd.get_arguments()
                .find(|a| a.get_id() == REDACT)
                .and_then(|a| a.get_help())
                .map(ToString::to_string)
                .unwrap_or_default()
        };
        assert!(
            help(Profile::command()).contains("(CSV, JSON, Markdown, trace)"),
            "{}",
            help(Profile::command())
        );
        assert!(help(Load::command()).contains("(CSV, JSON, HDR log)"));
        assert!(help(Page::command()).starts_with("Leave out of the HTML report the SQL's"));
    }
}
