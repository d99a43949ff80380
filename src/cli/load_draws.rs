//! What `spanprof load` runs and draws: its query arguments (`--sql`, `--query-mode`, `--decoder`,
//! and `--param`, which here draws a value per request: `NAME=uniform:LO..HI`,
//! `NAME=zipf:LO..HI[:S]`, `NAME=int:V`, `NAME=string:TEXT`, or `profile`'s typed constant
//! `NAME:TYPE=VALUE`), the seed the draws are fixed by (`--seed`), and a read-write run's mix of
//! scripts (`--mix FILE:WEIGHT,...`, each script named by its file's stem).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::decode::DecoderChoice;
use super::profile::ModeArg;
use super::target::TargetArgs;
pub use crate::engine::load::LoadParam;
use crate::engine::load::{LoadDraws, LoadParams, MixScript};
use crate::engine::{Param, QueryMode};
use crate::load::draw::DEFAULT_SEED;
use crate::load::{Draws, MAX_MIX_SCRIPTS, MixEntry};

/// The query of `spanprof load` and what its requests draw.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadQueryArgs {
    /// The query (one SQL statement), or with --read-write the transaction's statements
    /// separated by `;`.
    #[arg(long = "sql", value_name = "SQL")]
    pub sql: Vec<String>,
    /// normal (rows only), with-stats (server time and rows), or profile (and the plan). Default:
    /// profile for --endpoint, else with-stats.
    #[arg(long, value_enum)]
    pub query_mode: Option<ModeArg>,
    /// A parameter @NAME each request binds, drawn per request: NAME=uniform:LO..HI,
    /// NAME=zipf:LO..HI[:S] (LO the hottest; S above 0, default 0.99), or a constant NAME=int:V,
    /// NAME=string:TEXT (or NAME:TYPE=VALUE, as profile takes it); repeatable. A transaction binds
    /// the same values in every statement that mentions @NAME and in every retry.
    #[arg(long = "param", value_name = "NAME=DIST", value_parser = parse_load_param)]
    pub params: Vec<LoadParam>,
    /// The seed the draws (parameters, the mix's picks) are fixed by: the same seed draws the same
    /// values for the same requests, in the same order.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// With --read-write, a mix of scripts instead of --sql or --script: FILE:WEIGHT,FILE:WEIGHT
    /// (each weight 1 or more); each request runs one, picked by weight, and each step is also
    /// reported per script (named by its file's stem).
    #[arg(long, value_name = "FILE:W,FILE:W", requires = "read_write")]
    pub mix: Option<String>,
    /// The decoder: fast (zero-copy) or reference (prost, then rows).
    #[arg(long, value_enum, default_value_t = DecoderChoice::Fast)]
    pub decoder: DecoderChoice,
}

/// `--param`'s value: the engine reads it, as it reads the window's.
fn parse_load_param(text: &str) -> Result<LoadParam, String> {
    LoadParam::parse(text).map_err(|e| e.to_string())
}

/// `FILE:WEIGHT,FILE:WEIGHT`: each file and its weight (split at a file's last `:`).
pub fn parse_mix(text: &str) -> anyhow::Result<Vec<(PathBuf, u32)>> {
    let entries = text
        .split(',')
        .map(|entry| {
            let (file, weight) = entry.trim().rsplit_once(':').with_context(|| {
                format!("--mix {entry:?}: expected FILE:WEIGHT (a script file and its weight)")
            })?;
            let weight: u32 = weight.trim().parse().map_err(|_| {
                anyhow::anyhow!("--mix {entry:?}: the weight {weight:?} is not a whole number")
            })?;
            if weight == 0 {
                anyhow::bail!("--mix {entry:?}: a weight is 1 or more (a script of weight 0 never runs: leave it out)");
            }
            if file.trim().is_empty() {
                anyhow::bail!("--mix {entry:?}: no file before the weight");
            }
            Ok((PathBuf::from(file.trim()), weight))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if entries.len() > MAX_MIX_SCRIPTS {
        anyhow::bail!(
            "--mix holds at most {MAX_MIX_SCRIPTS} scripts, not {}",
            entries.len()
        );
    }
    Ok(entries)
}

/// A mix's script: its file's stem.
fn stem(path: &Path) -> anyhow::Result<String> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .with_context(|| format!("--mix: {} names no script", path.display()))
}

/// What `load`'s arguments draw, and a mix's scripts read and parsed; with a mix, the text the
/// report keeps as the run's SQL (each script under a comment naming it).
pub struct Drawing {
    /// The constants given as `NAME:TYPE=VALUE`.
    pub typed: Vec<Param>,
    /// The draws and the mix's scripts.
    pub draws: LoadDraws,
    /// A mix's scripts as one text.
    pub mix_sql: Option<String>,
}

impl LoadQueryArgs {
    /// The query mode asked for, or the target's default (the one that returns statistics).
    pub fn mode(&self, target: &TargetArgs) -> QueryMode {
        self.query_mode
            .map_or_else(|| target.target().default_mode(), QueryMode::from)
    }

    /// The draws the arguments ask for, the mix's files read and parsed.
    pub fn drawing(&self) -> anyhow::Result<Drawing> {
        let LoadParams {
            typed,
            drawn: params,
        } = LoadParams::of(&self.params)?;
        let mut mix = Vec::new();
        let mut scripts = Vec::new();
        let mut texts = Vec::new();
        for (path, weight) in self
            .mix
            .as_deref()
            .map(parse_mix)
            .transpose()?
            .unwrap_or_default()
        {
            let name = stem(&path)?;
            if mix.iter().any(|m: &MixEntry| m.script == name) {
                anyhow::bail!("--mix names the script {name} twice");
            }
            let text = super::read_write::read_script(&path)?;
            let script = crate::script::parse(&text)
                .with_context(|| format!("the mix's script {}", path.display()))?;
            texts.push(format!(
                "-- script {name} (weight {weight})\n{}",
                text.trim_end()
            ));
            scripts.push(MixScript {
                name: name.clone(),
                script,
            });
            mix.push(MixEntry {
                script: name,
                weight,
            });
        }
        let draws = (!params.is_empty() || !mix.is_empty()).then_some(Draws {
            seed: self.seed,
            params,
            mix,
        });
        Ok(Drawing {
            typed,
            draws: LoadDraws { draws, scripts },
            mix_sql: (!texts.is_empty()).then(|| texts.join(";\n")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mix_reads_files_and_weights_and_refuses_a_zero_weight() {
        let mix = parse_mix("a.sql:1, dir/b.sql:3").expect("valid");
        assert_eq!(
            mix,
            [(PathBuf::from("a.sql"), 1), (PathBuf::from("dir/b.sql"), 3)]
        );
        for (bad, says) in [
            ("a.sql:0", "1 or more"),
            ("a.sql", "FILE:WEIGHT"),
            ("a.sql:x", "whole number"),
            (":2", "no file"),
        ] {
            let e = parse_mix(bad).expect_err(bad).to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_typed_constant_keeps_profile_s_syntax_and_the_rest_are_draws() {
        assert!(matches!(
            parse_load_param("id:INT64=5"),
            Ok(LoadParam::Typed(_))
        ));
        assert!(matches!(
            parse_load_param("id=zipf:1..10"),
            Ok(LoadParam::Drawn(_))
        ));
        let e = parse_load_param("id=Alice").expect_err("no distribution");
        assert!(e.contains("unknown distribution"), "{e}");
    }
}
