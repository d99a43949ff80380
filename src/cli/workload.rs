//! Workload files (`spanprof profile --workload FILE.toml`): the variants of a profile, each with
//! its own SQL, parameters, mode and request options, and the profile's settings.
//! docs/commands/profile.md documents the format; every key is checked (a misspelt one is an
//! error naming it), and every value is read the way the command line reads its flag.
//!
//! ```toml
//! iterations = 20            # optional; the command line's --iterations wins when given
//! order = "interleaved"      # interleaved | blocked | shuffled (with seed = N)
//!
//! [defaults]                 # optional: what every variant has unless it says otherwise
//! query_mode = "with-stats"
//! params = ["lim:INT64=10000"]
//!
//! [[variant]]
//! label = "wide"
//! sql = "SELECT * FROM Seed23 LIMIT @lim"
//!
//! [[variant]]
//! label = "narrow, low priority"
//! sql = "SELECT Id, Name FROM Seed23 LIMIT @lim"
//! priority = "low"
//! staleness = "exact:10s"
//! cold = true                # every iteration a cold start (--cold)
//! session = "regular"        # regular | multiplexed (--session)
//! ```

use serde::Deserialize;

use super::options::RequestOptionArgs;
use crate::engine::parse_sweep;
use crate::engine::{Order, Param, QueryMode, RequestOptions, SessionKind, Variant};
use crate::wire::DecoderKind;

/// A workload file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// The variants, sweeps expanded.
    pub variants: Vec<Variant>,
    /// `iterations`, when set.
    pub iterations: Option<u32>,
    /// `warmup`, when set.
    pub warmup: Option<u32>,
    /// `order` (and `seed`), when set.
    pub order: Option<Order>,
    /// `decoder`, when set.
    pub decoder: Option<DecoderKind>,
    /// `reference`: the label the others are compared with, when set.
    pub reference: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    iterations: Option<u32>,
    warmup: Option<u32>,
    order: Option<String>,
    seed: Option<u64>,
    decoder: Option<String>,
    reference: Option<String>,
    #[serde(default)]
    defaults: Fields,
    #[serde(default, rename = "variant")]
    variants: Vec<Fields>,
}

/// What a variant (or `[defaults]`) may say.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    label: Option<String>,
    sql: Option<String>,
    query_mode: Option<String>,
    params: Option<Vec<String>>,
    priority: Option<String>,
    request_tag: Option<String>,
    staleness: Option<String>,
    optimizer_version: Option<String>,
    optimizer_statistics_package: Option<String>,
    include_replicas: Option<String>,
    exclude_replicas: Option<String>,
    partitioned: Option<bool>,
    data_boost: Option<bool>,
    max_partitions: Option<u32>,
    sweep: Option<String>,
    cold: Option<bool>,
    session: Option<String>,
}

impl Fields {
    /// These fields, each one not set taken from `defaults`.
    fn over(self, defaults: &Fields) -> Fields {
        let d = defaults.clone();
        Fields {
            label: self.label,
            sql: self.sql.or(d.sql),
            query_mode: self.query_mode.or(d.query_mode),
            params: match (d.params, self.params) {
                (Some(mut base), Some(own)) => {
                    base.extend(own);
                    Some(base)
                }
                (base, own) => own.or(base),
            },
            priority: self.priority.or(d.priority),
            request_tag: self.request_tag.or(d.request_tag),
            staleness: self.staleness.or(d.staleness),
            optimizer_version: self.optimizer_version.or(d.optimizer_version),
            optimizer_statistics_package: self
                .optimizer_statistics_package
                .or(d.optimizer_statistics_package),
            include_replicas: self.include_replicas.or(d.include_replicas),
            exclude_replicas: self.exclude_replicas.or(d.exclude_replicas),
            partitioned: self.partitioned.or(d.partitioned),
            data_boost: self.data_boost.or(d.data_boost),
            max_partitions: self.max_partitions.or(d.max_partitions),
            sweep: self.sweep.or(d.sweep),
            cold: self.cold.or(d.cold),
            session: self.session.or(d.session),
        }
    }

    /// The request options, over the command line's.
    fn options(&self, line: &RequestOptions) -> anyhow::Result<RequestOptions> {
        let mut args = RequestOptionArgs {
            priority: None,
            request_tag: self.request_tag.clone(),
            staleness: None,
            optimizer_version: self.optimizer_version.clone(),
            optimizer_statistics_package: self.optimizer_statistics_package.clone(),
            include_replicas: self.include_replicas.clone(),
            exclude_replicas: self.exclude_replicas.clone(),
            partitioned: self.partitioned.unwrap_or(false),
            data_boost: self.data_boost.unwrap_or(false),
            max_partitions: self.max_partitions,
        };
        if let Some(p) = &self.priority {
            args.priority = Some(p.parse()?);
        }
        if let Some(s) = &self.staleness {
            args.staleness = Some(s.parse()?);
        }
        anyhow::ensure!(
            !(args.include_replicas.is_some() && args.exclude_replicas.is_some()),
            "include_replicas and exclude_replicas cannot both be set"
        );
        anyhow::ensure!(
            args.partitioned || (!args.data_boost && args.max_partitions.is_none()),
            "data_boost and max_partitions need partitioned = true"
        );
        let own = args.options()?;
        Ok(RequestOptions {
            priority: own.priority.or(line.priority),
            request_tag: own.request_tag.or_else(|| line.request_tag.clone()),
            staleness: own.staleness.or(line.staleness),
            optimizer_version: own
                .optimizer_version
                .or_else(|| line.optimizer_version.clone()),
            optimizer_statistics_package: own
                .optimizer_statistics_package
                .or_else(|| line.optimizer_statistics_package.clone()),
            directed_reads: own.directed_reads.or_else(|| line.directed_reads.clone()),
            partitioned: own.partitioned.or(line.partitioned),
        })
    }
}

/// `normal`, `with-stats` or `profile`.
pub fn parse_mode(text: &str) -> anyhow::Result<QueryMode> {
    [QueryMode::Normal, QueryMode::WithStats, QueryMode::Profile]
        .into_iter()
        .find(|m| m.as_str() == text)
        .ok_or_else(|| anyhow::anyhow!("query_mode {text:?} is not normal, with-stats or profile"))
}

impl Workload {
    /// Reads a workload file's text; `params`, `mode` and `options` are the command line's, under
    /// every variant's own.
    pub fn parse(
        text: &str,
        params: &[Param],
        mode: QueryMode,
        options: &RequestOptions,
    ) -> anyhow::Result<Workload> {
        let file: File = toml::from_str(text)?;
        anyhow::ensure!(
            file.defaults.label.is_none() && file.defaults.sweep.is_none(),
            "[defaults] cannot set label or sweep: those are a variant's own"
        );
        anyhow::ensure!(
            !file.variants.is_empty(),
            "no [[variant]]: a workload needs at least one"
        );
        let mut variants = Vec::new();
        for (i, fields) in file.variants.into_iter().enumerate() {
            let fields = fields.over(&file.defaults);
            let name = fields.label.clone().unwrap_or_else(|| (i + 1).to_string());
            let variant = variant(&fields, &name, params, mode, options)
                .map_err(|e| e.context(format!("variant {} ({name})", i + 1)))?;
            match &fields.sweep {
                Some(sweep) => {
                    let sweep = parse_sweep(sweep)
                        .map_err(|e| anyhow::anyhow!("variant {} ({name}): {e}", i + 1))?;
                    variants.extend(
                        sweep
                            .expand(&variant, fields.label.is_some())
                            .map_err(|e| anyhow::anyhow!("variant {} ({name}): {e}", i + 1))?,
                    );
                }
                None => variants.push(variant),
            }
        }
        let order = match (file.order.as_deref(), file.seed) {
            (None, None) => None,
            (None | Some("shuffled"), Some(seed)) => Some(Order::Shuffled(seed)),
            (Some("shuffled"), None) => Some(Order::Shuffled(0)),
            (Some("interleaved"), None) => Some(Order::Interleaved),
            (Some("blocked"), None) => Some(Order::Blocked),
            (Some(other), _) => anyhow::bail!(
                "order {other:?}: it is interleaved, blocked or shuffled (a seed goes with shuffled only)"
            ),
        };
        let decoder = match file.decoder.as_deref() {
            None => None,
            Some("fast") => Some(DecoderKind::Fast),
            Some("reference") => Some(DecoderKind::Reference),
            Some(other) => anyhow::bail!("decoder {other:?}: it is fast or reference"),
        };
        Ok(Workload {
            variants,
            iterations: file.iterations,
            warmup: file.warmup,
            order,
            decoder,
            reference: file.reference,
        })
    }
}

/// `params` with only the last of each name kept, in the order of those last ones: as if each
/// replaced the earlier one of its name and moved to the end, in one pass (a search per
/// parameter cost 32.8 s of CPU for 10^5 of them).
fn last_of_each_name(params: Vec<Param>) -> Vec<Param> {
    let last: std::collections::HashMap<String, usize> = params
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name.clone(), i))
        .collect();
    params
        .into_iter()
        .enumerate()
        .filter(|(i, p)| last.get(&p.name) == Some(i))
        .map(|(_, p)| p)
        .collect()
}

fn variant(
    fields: &Fields,
    label: &str,
    line_params: &[Param],
    line_mode: QueryMode,
    line_options: &RequestOptions,
) -> anyhow::Result<Variant> {
    let sql = fields
        .sql
        .clone()
        .ok_or_else(|| anyhow::anyhow!("no sql"))?;
    let mut params: Vec<Param> = line_params.to_vec();
    for text in fields.params.iter().flatten() {
        params.push(Param::parse(text)?);
    }
    Ok(Variant {
        params: last_of_each_name(params),
        mode: match &fields.query_mode {
            Some(m) => parse_mode(m)?,
            None => line_mode,
        },
        options: fields.options(line_options)?,
        cold: fields.cold.unwrap_or(false),
        session: match &fields.session {
            Some(text) => Some(SessionKind::parse(text).ok_or_else(|| {
                anyhow::anyhow!("session {text:?} is not a session kind: regular or multiplexed")
            })?),
            None => None,
        },
        ..Variant::new(label, sql)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Priority, Staleness};

    fn parse(text: &str) -> anyhow::Result<Workload> {
        Workload::parse(text, &[], QueryMode::WithStats, &RequestOptions::default())
    }

    #[test]
    fn a_workload_gives_each_variant_its_own_query_and_options() {
        let w = parse(
            r#"
            iterations = 7
            order = "shuffled"
            seed = 11
            reference = "wide"
            [defaults]
            params = ["lim:INT64=100"]
            [[variant]]
            label = "wide"
            sql = "SELECT * FROM Seed23 LIMIT @lim"
            [[variant]]
            label = "narrow"
            sql = "SELECT Id FROM Seed23 LIMIT @lim"
            priority = "low"
            staleness = "exact:10s"
            params = ["lim:INT64=200"]
            query_mode = "profile"
            "#,
        )
        .expect("valid");
        assert_eq!(w.iterations, Some(7));
        assert_eq!(w.order, Some(Order::Shuffled(11)));
        assert_eq!(w.reference.as_deref(), Some("wide"));
        assert_eq!(w.variants.len(), 2);
        assert_eq!(w.variants[0].params[0].value, "100");
        let narrow = &w.variants[1];
        assert_eq!(narrow.params.len(), 1, "its own lim replaces the default");
        assert_eq!(narrow.params[0].value, "200");
        assert_eq!(narrow.mode, QueryMode::Profile);
        assert_eq!(narrow.options.priority, Some(Priority::Low));
        assert_eq!(
            narrow.options.staleness,
            Some(Staleness::Exact(std::time::Duration::from_secs(10)))
        );
        assert_eq!(w.variants[0].options, RequestOptions::default());
    }

    #[test]
    fn a_variant_may_sweep_a_parameter() {
        let w = parse(
            r#"
            [[variant]]
            sql = "SELECT * FROM Seed23 LIMIT @n"
            sweep = "n:INT64=10,20,30"
            "#,
        )
        .expect("valid");
        let labels: Vec<&str> = w.variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["n=10", "n=20", "n=30"]);
    }

    #[test]
    fn a_variant_may_be_cold_and_name_its_kind_of_session() {
        let w = parse(
            r#"
            [defaults]
            session = "regular"
            [[variant]]
            label = "cold"
            sql = "SELECT 1"
            cold = true
            [[variant]]
            label = "warm"
            sql = "SELECT 1"
            session = "multiplexed"
            "#,
        )
        .expect("valid");
        let how: Vec<_> = w.variants.iter().map(|v| (v.cold, v.session)).collect();
        assert_eq!(
            how,
            [
                (true, Some(SessionKind::Regular)),
                (false, Some(SessionKind::Multiplexed))
            ]
        );
        let error = format!(
            "{:#}",
            parse("[[variant]]\nsql = \"SELECT 1\"\nsession = \"pooled\"").expect_err("a kind")
        );
        assert!(error.contains("regular or multiplexed"), "{error}");
    }

    #[test]
    fn a_later_param_replaces_an_earlier_one_of_its_name_and_moves_to_the_end() {
        let line = [
            Param::parse("a:INT64=1").expect("a param"),
            Param::parse("b:INT64=2").expect("a param"),
        ];
        let w = Workload::parse(
            "[[variant]]\nsql = \"SELECT @a, @b, @c\"\nparams = [\"c:INT64=3\", \"a:INT64=4\", \"c:INT64=5\"]",
            &line,
            QueryMode::Normal,
            &RequestOptions::default(),
        )
        .expect("valid");
        let params: Vec<(&str, &str)> = w.variants[0]
            .params
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_str()))
            .collect();
        assert_eq!(params, [("b", "2"), ("a", "4"), ("c", "5")]);
    }

    #[test]
    fn a_hundred_thousand_params_are_read_each_once_the_last_of_its_name_kept() {
        // A search per parameter made 10^5 of them cost 32.8 s of CPU. Half the names
        // come twice, so a variant keeps 75,000, each with the value given last.
        let texts: Vec<String> = (0..100_000)
            .map(|i| format!("\"p{}:INT64={i}\"", i % 75_000))
            .collect();
        let text = format!(
            "[[variant]]\nsql = \"SELECT 1\"\nparams = [{}]",
            texts.join(", ")
        );
        let w = parse(&text).expect("valid");
        let params = &w.variants[0].params;
        assert_eq!(params.len(), 75_000);
        assert_eq!(
            (params[0].name.as_str(), params[0].value.as_str()),
            ("p25000", "25000")
        );
        let last = &params[74_999];
        assert_eq!(
            (last.name.as_str(), last.value.as_str()),
            ("p24999", "99999")
        );
    }

    #[test]
    fn mistakes_are_named() {
        for (text, said) in [
            (
                "[[variant]]\nsql = \"SELECT 1\"\nprioritty = \"low\"",
                "prioritty",
            ),
            ("[[variant]]\nlabel = \"x\"", "no sql"),
            ("iterations = 3", "no [[variant]]"),
            (
                "[[variant]]\nsql = \"SELECT 1\"\npriority = \"urgent\"",
                "low, medium, high",
            ),
            (
                "[[variant]]\nsql = \"SELECT 1\"\ndata_boost = true",
                "need partitioned",
            ),
            (
                "[[variant]]\nsql = \"SELECT 1\"\npartitioned = true\nstaleness = \"max:5s\"",
                "only for single-use reads",
            ),
            (
                "order = \"random\"\n[[variant]]\nsql = \"SELECT 1\"",
                "interleaved, blocked or shuffled",
            ),
            (
                "[defaults]\nlabel = \"x\"\n[[variant]]\nsql = \"SELECT 1\"",
                "cannot set label",
            ),
        ] {
            let error = format!("{:#}", parse(text).expect_err(text));
            assert!(error.contains(said), "{text:?}: {error}");
        }
    }
}
