//! How a profile's variants connect, from the command line: `--cold` (every iteration a cold
//! start), `--cold-and-warm` (each variant twice, warm and cold, interleaved like any variants),
//! and `--session regular|multiplexed` (one kind, or both: each variant once per kind). Two values
//! of a dimension make each variant a variant per value, labelled by them, so one interleaved run
//! compares them side by side.

use crate::engine::{SessionKind, Variant};

/// The connection arguments of `spanprof profile`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ConnectionArgs {
    /// Every iteration a cold start: a new connection (dns, tcp, tls, http2 timed), a new token
    /// source and its first token, a new session, then the query; the steps are phases of their
    /// own and add up with the query's to the total.
    #[arg(long, conflicts_with = "cold_and_warm")]
    pub cold: bool,
    /// Each variant twice, warm (on the run's session) and cold (as --cold), labelled `warm` and
    /// `cold`.
    #[arg(long)]
    pub cold_and_warm: bool,
    /// The kind of session to ask for: regular or multiplexed (default: multiplexed, regular for a
    /// partitioned read); both (regular,multiplexed) make each variant once per kind.
    #[arg(long, value_name = "KIND", value_delimiter = ',', value_parser = parse_kind)]
    pub session: Vec<SessionKind>,
}

/// A session kind as `--session` spells it.
pub fn parse_kind(text: &str) -> Result<SessionKind, String> {
    SessionKind::parse(text)
        .ok_or_else(|| format!("{text:?} is not a session kind: regular or multiplexed"))
}

impl ConnectionArgs {
    /// `variants` under these arguments: each one set cold, or made once per value of a dimension
    /// with two (its label gains the value; a lone variant labelled `run` takes the value as its
    /// label).
    pub fn apply(&self, variants: Vec<Variant>) -> anyhow::Result<Vec<Variant>> {
        let mut kinds = self.session.clone();
        kinds.dedup();
        anyhow::ensure!(
            kinds.len() <= 2,
            "--session names a kind at most once: regular, multiplexed, or both"
        );
        let starts: &[bool] = if self.cold_and_warm {
            &[false, true]
        } else {
            &[self.cold]
        };
        let lone_default = variants.len() == 1 && variants[0].label == "run";
        let mut out = Vec::with_capacity(variants.len() * starts.len() * kinds.len().max(1));
        for variant in variants {
            for &cold in starts {
                let kinds: Vec<Option<SessionKind>> = if kinds.is_empty() {
                    vec![variant.session]
                } else {
                    kinds.iter().copied().map(Some).collect()
                };
                for &kind in &kinds {
                    let mut words = Vec::new();
                    if starts.len() > 1 {
                        words.push(if cold { "cold" } else { "warm" });
                    }
                    if kinds.len() > 1
                        && let Some(kind) = kind
                    {
                        words.push(kind.as_str());
                    }
                    let label = match (lone_default, words.is_empty()) {
                        (_, true) => variant.label.clone(),
                        (true, false) => words.join(" "),
                        (false, false) => format!("{} {}", variant.label, words.join(" ")),
                    };
                    out.push(Variant {
                        label,
                        cold: cold || variant.cold,
                        session: kind,
                        ..variant.clone()
                    });
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(variants: &[Variant]) -> Vec<&str> {
        variants.iter().map(|v| v.label.as_str()).collect()
    }

    #[test]
    fn each_dimension_with_two_values_makes_a_variant_per_value() {
        let one = vec![Variant::new("run", "SELECT 1")];
        let both = ConnectionArgs {
            cold_and_warm: true,
            session: vec![SessionKind::Regular, SessionKind::Multiplexed],
            ..ConnectionArgs::default()
        };
        let made = both.apply(one.clone()).expect("valid");
        assert_eq!(
            labels(&made),
            [
                "warm regular",
                "warm multiplexed",
                "cold regular",
                "cold multiplexed"
            ]
        );
        assert_eq!(
            made.iter().map(|v| v.cold).collect::<Vec<_>>(),
            [false, false, true, true]
        );
        assert_eq!(made[1].session, Some(SessionKind::Multiplexed));
        let two = vec![Variant::new("a", "SELECT 1"), Variant::new("b", "SELECT 2")];
        let cold = ConnectionArgs {
            cold: true,
            session: vec![SessionKind::Regular],
            ..ConnectionArgs::default()
        };
        let made = cold.apply(two).expect("valid");
        assert_eq!(labels(&made), ["a", "b"], "one value renames nothing");
        assert!(
            made.iter()
                .all(|v| v.cold && v.session == Some(SessionKind::Regular))
        );
        let plain = ConnectionArgs::default().apply(one).expect("valid");
        assert_eq!((plain[0].cold, plain[0].session), (false, None));
        assert!(parse_kind("pooled").is_err());
    }
}
