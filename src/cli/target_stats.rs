//! `spanprof load --read-write --server-stats`, the target's own statistics: the run's
//! transactions carry a tag (the user's `--transaction-tag`, else one made for the run), and after
//! its last step the run waits for the target's statistics interval to close and reads
//! SPANNER_SYS's LOCK_STATS and TXN_STATS of its intervals (`engine::load`'s `server_stats`); the
//! summary shows them beside the run's own figures (`analysis::server_stats`), or says the target
//! serves none. `--stats-interval` sets the built-in instance's interval (production's is a
//! minute), so that a test or a lesson need not wait one.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use crate::analysis::server_stats::{StatsView, server_stats_view};
use crate::engine::load::{AskError, ServerStatsAsk, WaitNotice, set_stats_interval};
use crate::engine::{Target, Variant};
use crate::load::LoadReport;
use crate::load::server_stats::MAX_STATS_WAIT_S;

/// The target's own statistics of a read-write run.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerStatsArgs {
    /// After the last step, wait for the target's statistics interval holding the run's end to
    /// close, read SPANNER_SYS.LOCK_STATS_TOP_MINUTE and TXN_STATS_TOP_MINUTE of the run's
    /// intervals (the transaction statistics for the run's tag), and show them beside the run's
    /// own figures (with --read-write; the transactions carry --transaction-tag, or a tag made
    /// for the run).
    #[arg(long, requires = "read_write")]
    pub server_stats: bool,
    /// How long to wait, at most, for that interval to close and appear (production's close on
    /// the minute). Ctrl-C ends the wait and still writes the run.
    #[arg(long, value_name = "DUR", default_value = "75s", value_parser = parse_wait, requires = "server_stats")]
    pub server_stats_wait: Duration,
    /// The built-in instance's statistics interval (its `_MINUTE` tables'; production's is a
    /// minute, and so is the default): a knob for tests and teaching, at least 1s.
    #[arg(long, value_name = "DUR", value_parser = super::serve::parse_stats_interval)]
    pub stats_interval: Option<Duration>,
}

fn parse_wait(text: &str) -> Result<Duration, String> {
    let d = super::target::parse_limit(text)?;
    if d.as_secs_f64() > MAX_STATS_WAIT_S {
        return Err(format!("the wait is at most {MAX_STATS_WAIT_S} s"));
    }
    Ok(d)
}

impl ServerStatsArgs {
    /// The built-in instance's knobs with the interval asked for; a notice when the target is
    /// another (its interval is its own).
    pub fn apply(&self, target: &mut Target) -> Option<String> {
        let interval = self.stats_interval?;
        (!set_stats_interval(target, interval)).then(|| {
            "--stats-interval sets the built-in instance's statistics interval: ignored for this \
             target"
                .into()
        })
    }

    /// What the run asks of the target's statistics, with the tag put on `variant`'s
    /// transactions (the engine makes it); None without --server-stats.
    pub fn ask(&self, variant: &mut Variant) -> anyhow::Result<Option<ServerStatsAsk>> {
        if !self.server_stats {
            return Ok(None);
        }
        let notice = WaitNotice(Arc::new(|words| eprintln!("{words}")));
        match ServerStatsAsk::tagging(variant, self.server_stats_wait, notice) {
            Ok(ask) => Ok(Some(ask)),
            Err(AskError::NotReadWrite) => anyhow::bail!(
                "--server-stats reads a read-write run's statistics: add --read-write"
            ),
            Err(e) => Err(e.into()),
        }
    }
}

/// The summary's "The target's own statistics" block, when the run asked for them.
pub fn block(t: &mut String, r: &LoadReport) {
    let Some(view) = server_stats_view(r) else {
        return;
    };
    let _ = writeln!(t, "\nThe target's own statistics");
    match view {
        StatsView::NotServed(words) | StatsView::NotRead(words) | StatsView::NotCounted(words) => {
            let _ = writeln!(t, "  {words}");
        }
        StatsView::Compared(c) => {
            let _ = writeln!(t, "  {}:", c.what_was_read());
            for line in &c.lines {
                let _ = writeln!(t, "  {}", line.words);
            }
            for notice in &c.notices {
                let _ = writeln!(t, "  note: {}", crate::text::printable(notice));
            }
            let _ = writeln!(t, "  why they may differ:");
            for caveat in &c.caveats {
                let _ = writeln!(t, "    - {caveat}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_keep_their_floor_and_the_wait_its_bound() {
        assert_eq!(
            super::super::serve::parse_stats_interval("2s"),
            Ok(Duration::from_secs(2))
        );
        assert!(super::super::serve::parse_stats_interval("500ms").is_err());
        assert!(parse_wait("2h").is_err());
    }

    #[test]
    fn the_command_line_waits_as_long_as_the_window_by_default() {
        use clap::Parser as _;
        let argv = [
            "spanprof",
            "load",
            "--read-write",
            "--server-stats",
            "--concurrency",
            "1",
            "--sql",
            "SELECT 1",
        ];
        let cli = super::super::Cli::try_parse_from(argv).expect("parses");
        let Some(super::super::Command::Load(args)) = cli.command else {
            panic!("not load");
        };
        assert_eq!(
            args.server_stats.server_stats_wait,
            crate::engine::load::DEFAULT_STATS_WAIT
        );
    }
}
