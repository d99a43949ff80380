//! A load run's draws: the parameters each request binds, drawn over a key space (`uniform:LO..HI`,
//! `zipf:LO..HI[:S]`) or held constant (`int:V`, `string:TEXT`), and, for a mix of read-write
//! scripts, which script the request runs. Every draw is a pure function of the run's seed and the
//! request's number ([`Drawer::draw`]), so two runs with one seed draw the same keys in the same
//! order however their requests interleave; a retried transaction is the same request, and binds
//! the same values. What the report keeps ([`Draws`]) is what repeats the run.

use serde::{Deserialize, Serialize};

use crate::stats::random::SplitMix64;
use crate::stats::{MAX_ZIPF_RANKS, Zipf};
use crate::wire::Value;

/// The seed a run draws with when none is given.
pub const DEFAULT_SEED: u64 = 1;
/// YCSB's Zipf exponent, the default.
pub const DEFAULT_ZIPF_EXPONENT: f64 = 0.99;
/// The request number the warm-up draws with (a step's requests are numbered from 0).
pub const WARM_UP: u64 = u64::MAX;

/// How one parameter's value is had for each request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dist {
    /// Every integer of `lo..=hi` equally likely.
    Uniform {
        /// The lowest.
        lo: i64,
        /// The highest.
        hi: i64,
    },
    /// Zipf's distribution over `lo..=hi` with exponent `s`: `lo` the hottest (rank 1).
    Zipf {
        /// The lowest, the hottest.
        lo: i64,
        /// The highest.
        hi: i64,
        /// The exponent, above 0.
        s: f64,
    },
    /// One INT64 for every request.
    Int {
        /// The value.
        value: i64,
    },
    /// One STRING for every request.
    String {
        /// The value.
        value: String,
    },
}

/// One `--param NAME=DIST`: a parameter's name (without `@`) and how its value is had.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamDraw {
    /// The name statements mention as `@name`.
    pub name: String,
    /// How its value is had.
    #[serde(flatten)]
    pub dist: Dist,
}

/// Why a `--param NAME=DIST` cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DrawError {
    /// Not `NAME=DIST`, or an empty name.
    #[error(
        "--param {0:?}: expected NAME=DIST (uniform:LO..HI, zipf:LO..HI[:S], int:V, string:TEXT)"
    )]
    Syntax(String),
    /// A distribution this command does not know.
    #[error(
        "--param {name}: unknown distribution {kind:?} (uniform:LO..HI, zipf:LO..HI[:S], int:V or string:TEXT; a constant string is string:TEXT)"
    )]
    Unknown {
        /// The parameter.
        name: String,
        /// What was given before the first `:`.
        kind: String,
    },
    /// A range that is not `LO..HI` of two integers.
    #[error("--param {name}: {text:?} is not a range LO..HI of two integers")]
    Range {
        /// The parameter.
        name: String,
        /// What was given.
        text: String,
    },
    /// A range whose high end is below its low end.
    #[error("--param {name}: the range {lo}..{hi} ends below its start (HI < LO)")]
    Reversed {
        /// The parameter.
        name: String,
        /// Its low end.
        lo: i64,
        /// Its high end.
        hi: i64,
    },
    /// A Zipf range wider than the sampler takes.
    #[error("--param {name}: a Zipf range holds at most 2^53 keys")]
    TooWide {
        /// The parameter.
        name: String,
    },
    /// An exponent that is not a number above 0.
    #[error("--param {name}: the Zipf exponent {text:?} is not a number above 0")]
    Exponent {
        /// The parameter.
        name: String,
        /// What was given.
        text: String,
    },
    /// `int:` with no integer.
    #[error("--param {name}: {text:?} is not an INT64")]
    Int {
        /// The parameter.
        name: String,
        /// What was given.
        text: String,
    },
}

impl ParamDraw {
    /// Reads `NAME=DIST`.
    pub fn parse(text: &str) -> Result<ParamDraw, DrawError> {
        let syntax = || DrawError::Syntax(text.to_owned());
        let (name, dist) = text.split_once('=').ok_or_else(syntax)?;
        let name = name.trim().trim_start_matches('@');
        let named = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !named {
            return Err(syntax());
        }
        let name = name.to_owned();
        let (kind, spec) = dist.split_once(':').unwrap_or((dist, ""));
        let dist = match kind.trim().to_ascii_lowercase().as_str() {
            "uniform" => {
                let (lo, hi) = range(&name, spec)?;
                Dist::Uniform { lo, hi }
            }
            "zipf" => {
                let (range_text, s) = match spec.rsplit_once(':') {
                    Some((r, s)) => (r, Some(s)),
                    None => (spec, None),
                };
                let (lo, hi) = range(&name, range_text)?;
                if hi.abs_diff(lo) >= MAX_ZIPF_RANKS {
                    return Err(DrawError::TooWide { name });
                }
                let s = match s {
                    None => DEFAULT_ZIPF_EXPONENT,
                    Some(t) => match t.trim().parse::<f64>() {
                        Ok(s) if s.is_finite() && s > 0.0 => s,
                        _ => {
                            return Err(DrawError::Exponent {
                                name,
                                text: t.to_owned(),
                            });
                        }
                    },
                };
                Dist::Zipf { lo, hi, s }
            }
            "int" => match spec.trim().parse() {
                Ok(value) => Dist::Int { value },
                Err(_) => {
                    return Err(DrawError::Int {
                        name,
                        text: spec.to_owned(),
                    });
                }
            },
            "string" => Dist::String {
                value: spec.to_owned(),
            },
            other => {
                return Err(DrawError::Unknown {
                    name,
                    kind: other.to_owned(),
                });
            }
        };
        Ok(ParamDraw { name, dist })
    }

    /// `NAME=DIST` as `--param` takes it (the exponent always written).
    pub fn describe(&self) -> String {
        let dist = match &self.dist {
            Dist::Uniform { lo, hi } => format!("uniform:{lo}..{hi}"),
            Dist::Zipf { lo, hi, s } => format!("zipf:{lo}..{hi}:{s}"),
            Dist::Int { value } => format!("int:{value}"),
            Dist::String { value } => format!("string:{value}"),
        };
        format!("{}={dist}", self.name)
    }
}

/// `LO..HI`, checked.
fn range(name: &str, text: &str) -> Result<(i64, i64), DrawError> {
    let bad = || DrawError::Range {
        name: name.to_owned(),
        text: text.to_owned(),
    };
    let (lo, hi) = text.split_once("..").ok_or_else(bad)?;
    let lo: i64 = lo.trim().parse().map_err(|_| bad())?;
    let hi: i64 = hi.trim().parse().map_err(|_| bad())?;
    if hi < lo {
        return Err(DrawError::Reversed {
            name: name.to_owned(),
            lo,
            hi,
        });
    }
    Ok((lo, hi))
}

/// One script of a mix and its weight (requests pick it `weight / total` of the time).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixEntry {
    /// The script's name: its file's stem.
    pub script: String,
    /// Its weight, at least 1.
    pub weight: u32,
}

/// What a run draws with, as its report keeps it: enough to repeat it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Draws {
    /// The seed.
    pub seed: u64,
    /// The parameters, in the order given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamDraw>,
    /// A read-write run's mix of scripts (empty: one script).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<MixEntry>,
}

impl Draws {
    /// The lines `load` prints at its start: the seed, each parameter, the mix.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![format!("seed {}", self.seed)];
        lines.extend(
            self.params
                .iter()
                .map(|p| format!("--param {}", p.describe())),
        );
        if !self.mix.is_empty() {
            let mix: Vec<String> = self
                .mix
                .iter()
                .map(|m| format!("{}:{}", m.script, m.weight))
                .collect();
            lines.push(format!("mix {}", mix.join(",")));
        }
        lines
    }
}

/// What one request draws: the script it runs (its place in the mix; 0 without one) and each
/// parameter's value, in [`Draws::params`]' order.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    /// The script's place in the mix.
    pub script: usize,
    /// The values.
    pub values: Vec<Value>,
}

/// One parameter's sampler.
#[derive(Debug, Clone)]
enum Sampler {
    /// `lo` plus a draw below `span` (0: the whole 2^64).
    Uniform { lo: i64, span: u64 },
    /// `lo` plus a rank less one.
    Zipf { lo: i64, zipf: Zipf },
    /// A constant.
    Fixed(Value),
}

impl Sampler {
    fn of(dist: &Dist) -> Sampler {
        match dist {
            Dist::Uniform { lo, hi } => Sampler::Uniform {
                lo: *lo,
                span: hi.abs_diff(*lo).wrapping_add(1),
            },
            Dist::Zipf { lo, hi, s } => match Zipf::new(hi.abs_diff(*lo) + 1, *s) {
                Ok(zipf) => Sampler::Zipf { lo: *lo, zipf },
                // Parsing refused these; a report read back with them draws its low end.
                Err(_) => Sampler::Fixed(Value::Int64(*lo)),
            },
            Dist::Int { value } => Sampler::Fixed(Value::Int64(*value)),
            Dist::String { value } => Sampler::Fixed(Value::String(value.clone())),
        }
    }

    fn draw(&self, rng: &mut SplitMix64) -> Value {
        match self {
            Sampler::Uniform { lo, span: 0 } => {
                Value::Int64(lo.wrapping_add_unsigned(rng.next_u64()))
            }
            Sampler::Uniform { lo, span } => {
                Value::Int64(lo.wrapping_add_unsigned(rng.below_u64(*span)))
            }
            Sampler::Zipf { lo, zipf } => {
                Value::Int64(lo.wrapping_add_unsigned(zipf.sample(rng) - 1))
            }
            Sampler::Fixed(v) => v.clone(),
        }
    }
}

/// [`Draws`] ready to draw from: each request's script and values.
#[derive(Debug, Clone)]
pub struct Drawer {
    seed: u64,
    samplers: Vec<Sampler>,
    /// The mix's weights summed up to each script (empty or one: no pick is drawn).
    cumulative: Vec<u64>,
}

impl Drawer {
    /// A drawer for `draws`.
    pub fn new(draws: &Draws) -> Drawer {
        let mut total = 0u64;
        Drawer {
            seed: draws.seed,
            samplers: draws.params.iter().map(|p| Sampler::of(&p.dist)).collect(),
            cumulative: draws
                .mix
                .iter()
                .map(|m| {
                    total += u64::from(m.weight.max(1));
                    total
                })
                .collect(),
        }
    }

    /// Request `n`'s draws: a generator of its own, keyed by the seed and `n`, picks its script
    /// (when there is a mix) and then each parameter's value in order.
    pub fn draw(&self, n: u64) -> Drawn {
        let key = SplitMix64::new(self.seed ^ n.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64();
        let mut rng = SplitMix64::new(key);
        let script = match self.cumulative.last() {
            Some(&total) if self.cumulative.len() > 1 => {
                let r = rng.below_u64(total);
                self.cumulative.partition_point(|&c| c <= r)
            }
            _ => 0,
        };
        Drawn {
            script,
            values: self.samplers.iter().map(|s| s.draw(&mut rng)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(params: &[&str], mix: &[(&str, u32)], seed: u64) -> Draws {
        Draws {
            seed,
            params: params
                .iter()
                .map(|p| ParamDraw::parse(p).expect("valid"))
                .collect(),
            mix: mix
                .iter()
                .map(|(s, w)| MixEntry {
                    script: (*s).to_owned(),
                    weight: *w,
                })
                .collect(),
        }
    }

    #[test]
    fn each_distribution_reads_and_says_itself_back() {
        let p = ParamDraw::parse("@id=zipf:1..100").expect("valid");
        assert_eq!(p.name, "id");
        assert_eq!(
            p.dist,
            Dist::Zipf {
                lo: 1,
                hi: 100,
                s: 0.99
            }
        );
        assert_eq!(p.describe(), "id=zipf:1..100:0.99");
        for text in [
            "k=uniform:-5..5",
            "k=zipf:10..20:1.5",
            "k=int:-7",
            "k=string:a:b=c",
        ] {
            let p = ParamDraw::parse(text).expect(text);
            assert_eq!(ParamDraw::parse(&p.describe()), Ok(p));
        }
        assert_eq!(
            ParamDraw::parse("k=string:a:b=c").map(|p| p.dist),
            Ok(Dist::String {
                value: "a:b=c".into()
            })
        );
    }

    #[test]
    fn malformed_parameters_are_refused_with_what_was_wrong() {
        let err = |t: &str| ParamDraw::parse(t).expect_err(t);
        assert!(matches!(err("id"), DrawError::Syntax(_)));
        assert!(matches!(err("=int:1"), DrawError::Syntax(_)));
        assert!(matches!(err("a b=int:1"), DrawError::Syntax(_)));
        assert!(
            matches!(err("id=normal:1..5"), DrawError::Unknown { kind, .. } if kind == "normal")
        );
        assert!(matches!(err("id=Alice"), DrawError::Unknown { .. }));
        assert!(matches!(err("id=uniform:1-5"), DrawError::Range { .. }));
        assert!(matches!(err("id=uniform:a..5"), DrawError::Range { .. }));
        assert!(matches!(err("id=zipf:1..5:"), DrawError::Exponent { .. }));
        assert!(matches!(
            err("id=uniform:9..1"),
            DrawError::Reversed { lo: 9, hi: 1, .. }
        ));
        assert!(matches!(err("id=zipf:1..10:0"), DrawError::Exponent { .. }));
        assert!(matches!(
            err("id=zipf:1..10:-1"),
            DrawError::Exponent { .. }
        ));
        assert!(matches!(
            err("id=zipf:1..10:nan"),
            DrawError::Exponent { .. }
        ));
        assert!(matches!(
            err("id=zipf:0..9007199254740992"),
            DrawError::TooWide { .. }
        ));
        assert!(matches!(err("id=int:4x"), DrawError::Int { .. }));
        let words = err("id=uniform:9..1").to_string();
        assert!(words.contains("HI < LO"), "{words}");
    }

    #[test]
    fn uniform_draws_stay_in_their_bounds_and_reach_both_ends() {
        let drawer = Drawer::new(&draws(
            &[
                "k=uniform:-3..3",
                "w=uniform:-9223372036854775808..9223372036854775807",
            ],
            &[],
            5,
        ));
        let mut seen = std::collections::BTreeMap::new();
        for n in 0..7_000 {
            match drawer.draw(n).values[0] {
                Value::Int64(v) => *seen.entry(v).or_insert(0u32) += 1,
                ref other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            seen.keys().copied().collect::<Vec<_>>(),
            (-3..=3).collect::<Vec<_>>()
        );
        assert!(seen.values().all(|&c| (850..1150).contains(&c)), "{seen:?}");
    }

    #[test]
    fn one_seed_draws_the_same_keys_for_the_same_requests_in_any_order() {
        let spec = draws(
            &["id=zipf:1..1000", "u=uniform:1..10", "t=string:x"],
            &[("a", 1), ("b", 3)],
            42,
        );
        let (one, two) = (Drawer::new(&spec), Drawer::new(&spec));
        let forward: Vec<Drawn> = (0..500).map(|n| one.draw(n)).collect();
        let backward: Vec<Drawn> = (0..500).rev().map(|n| two.draw(n)).collect();
        assert!(forward.iter().eq(backward.iter().rev()));
        assert_eq!(one.draw(WARM_UP), two.draw(WARM_UP));
        let other = Drawer::new(&Draws { seed: 43, ..spec });
        let moved = (0..500)
            .filter(|&n| other.draw(n) != forward[n as usize])
            .count();
        assert!(
            moved > 400,
            "another seed draws other keys: {moved} of 500 differ"
        );
        // Neighbouring requests are not one stream shifted by a draw.
        let firsts: Vec<&Value> = forward.iter().map(|d| &d.values[0]).collect();
        assert!(firsts.windows(2).filter(|w| w[0] == w[1]).count() < 100);
    }

    #[test]
    fn a_mix_is_picked_by_its_weights() {
        let drawer = Drawer::new(&draws(&[], &[("a", 1), ("b", 3)], 9));
        let mut counts = [0u32; 2];
        for n in 0..40_000 {
            counts[drawer.draw(n).script] += 1;
        }
        // 10,000 expected for a, with a standard deviation of about 87.
        assert!((9_650..10_350).contains(&counts[0]), "{counts:?}");
        let alone = Drawer::new(&draws(&[], &[("a", 5)], 9));
        assert!((0..100).all(|n| alone.draw(n).script == 0));
    }

    #[test]
    fn the_report_keeps_the_draws_as_they_were_given() {
        let spec = draws(&["id=zipf:1..100:1.2", "t=string:x"], &[("a", 2)], 7);
        let json = serde_json::to_string(&spec).expect("serialises");
        assert!(
            json.contains(r#"{"name":"id","kind":"zipf","lo":1,"hi":100,"s":1.2}"#),
            "{json}"
        );
        let back: Draws = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, spec);
        assert_eq!(
            spec.describe(),
            [
                "seed 7",
                "--param id=zipf:1..100:1.2",
                "--param t=string:x",
                "mix a:2"
            ]
        );
    }
}
