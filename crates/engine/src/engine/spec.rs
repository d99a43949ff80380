//! What to profile: the [`Variant`]s a profile runs and compares, and the [`ProfileSpec`] that
//! holds them, with what can be checked before anything runs ([`SpecError`]) and the configuration
//! a variant's report records.

use crate::client::read_write::ReadWriteOptions;
use crate::client::{
    DatabasePath, HeaderOptions, OptionError, Param, Query, QueryMode, RequestOptions, SessionKind,
    Timeouts,
};
use crate::report::{RunConfig, SweepPoint};
use crate::script::Script;
use crate::wire::DecoderKind;

use super::schedule::Order;
use super::target::Target;

/// One thing a profile runs and compares: a query as the user states it, under a label.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Its label: its run's name in reports, exports and comparisons.
    pub label: String,
    /// One SQL statement.
    pub sql: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// The query mode.
    pub mode: QueryMode,
    /// How the query is asked.
    pub options: RequestOptions,
    /// When the variant is one point of a sweep: the swept parameter and its value here.
    pub sweep: Option<SweepPoint>,
    /// Every iteration a cold start: a new connection, token source and session first, each step
    /// timed ([`cold`]).
    pub cold: bool,
    /// The kind of session to ask for; `None`: [`Variant::session_kind`]'s default.
    pub session: Option<SessionKind>,
    /// Run as a read-write transaction (`profile --read-write`): `sql` is its script.
    pub read_write: Option<ReadWrite>,
}

/// A variant run as a read-write transaction: its script, parsed, and how it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadWrite {
    /// The steps each iteration runs in one transaction.
    pub script: Script,
    /// Isolation, locking, begin, commit options, tag and retry policy.
    pub options: ReadWriteOptions,
}

impl Variant {
    /// `sql` under `label`, with statistics, no parameters, no options.
    pub fn new(label: impl Into<String>, sql: impl Into<String>) -> Self {
        Variant {
            label: label.into(),
            sql: sql.into(),
            params: Vec::new(),
            mode: QueryMode::default(),
            options: RequestOptions::default(),
            sweep: None,
            cold: false,
            session: None,
            read_write: None,
        }
    }

    /// The kind of session its queries run on: the one asked for, else multiplexed (the official
    /// clients' default for read-only work), or regular for a partitioned read (Spanner has not
    /// always taken partitioned operations on a multiplexed session).
    /// A read-write transaction runs on a regular session unless asked otherwise.
    pub fn session_kind(&self) -> SessionKind {
        self.session.unwrap_or(
            if self.options.partitioned.is_some() || self.read_write.is_some() {
                SessionKind::Regular
            } else {
                SessionKind::Multiplexed
            },
        )
    }

    /// The query as the client layer takes it.
    pub fn query(&self) -> Query {
        Query {
            sql: self.sql.clone(),
            params: self.params.clone(),
            mode: self.mode,
            options: self.options.clone(),
        }
    }
}

/// What to profile.
#[derive(Debug, Clone)]
pub struct ProfileSpec {
    /// The database; its reports carry its name, and the history keeps them under it.
    pub database: DatabasePath,
    /// The variants, at least one, with distinct labels; the first is the comparisons' reference
    /// unless said otherwise.
    pub variants: Vec<Variant>,
    /// Timed iterations of each variant.
    pub iterations: u32,
    /// Untimed iterations of each variant first (reported, marked warm-up).
    pub warmup: u32,
    /// The decoder that turns the stream into rows.
    pub decoder: DecoderKind,
    /// How long connecting, each call and each iteration may take.
    pub timeouts: Timeouts,
    /// The order of the variants' timed iterations.
    pub order: Order,
    /// The official clients' optional headers: the AFE timing opt-in, end-to-end tracing.
    pub headers: HeaderOptions,
}

impl Default for ProfileSpec {
    /// `SELECT * FROM Seed23 LIMIT 1000` labelled `run` on the default database, with statistics,
    /// 10 iterations after one warm-up. Callers set what they need and take the rest from here.
    fn default() -> Self {
        ProfileSpec {
            database: DatabasePath::default(),
            variants: vec![Variant::new("run", "SELECT * FROM Seed23 LIMIT 1000")],
            iterations: 10,
            warmup: 1,
            decoder: DecoderKind::default(),
            timeouts: Timeouts::DEFAULT,
            order: Order::default(),
            headers: HeaderOptions::default(),
        }
    }
}

/// The most variants one profile runs (a sweep's values and a workload's queries together).
pub const MAX_VARIANTS: usize = 1000;

/// A profile that cannot run as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// No variant to run.
    #[error("nothing to run: a profile needs at least one query")]
    NoVariants,
    /// Two variants share a label, so their runs could not be told apart.
    #[error("two variants are labelled \"{0}\": labels name runs and must differ")]
    DuplicateLabel(String),
    /// More variants than a profile runs.
    #[error(
        "{0} variants: a profile runs at most {MAX_VARIANTS} (each runs every iteration, interleaved)"
    )]
    TooManyVariants(usize),
    /// A label that is empty, too long or holds control characters.
    #[error("the label \"{0}\" is not a label: 1 to 200 bytes of printable text")]
    BadLabel(String),
    /// A read-write variant's options cannot be used.
    #[error("{label}: {why}")]
    ReadWrite {
        /// The variant.
        label: String,
        /// What is wrong.
        why: String,
    },
    /// A variant's request options cannot be used together.
    #[error("{label}: {error}")]
    Options {
        /// The variant.
        label: String,
        /// What is wrong.
        error: OptionError,
    },
}

impl ProfileSpec {
    /// Checks what can be checked before anything runs: at least one variant, labels that are
    /// labels and differ, options that go together.
    pub fn check(&self) -> Result<(), SpecError> {
        if self.variants.is_empty() {
            return Err(SpecError::NoVariants);
        }
        if self.variants.len() > MAX_VARIANTS {
            return Err(SpecError::TooManyVariants(self.variants.len()));
        }
        let mut labels = std::collections::HashSet::with_capacity(self.variants.len());
        for v in &self.variants {
            let label = &v.label;
            if label.is_empty() || label.len() > 200 || label.chars().any(char::is_control) {
                return Err(SpecError::BadLabel(crate::text::excerpt(label, 80)));
            }
            if !labels.insert(label.as_str()) {
                return Err(SpecError::DuplicateLabel(label.clone()));
            }
            if let Some(rw) = &v.read_write {
                rw.options.check().map_err(|why| SpecError::ReadWrite {
                    label: label.clone(),
                    why,
                })?;
                if v.cold || v.options.partitioned.is_some() {
                    return Err(SpecError::ReadWrite {
                        label: label.clone(),
                        why: "a read-write transaction runs warm and unpartitioned: leave out --cold and --partitioned".into(),
                    });
                }
            }
            v.options.check().map_err(|error| SpecError::Options {
                label: label.clone(),
                error,
            })?;
            if v.options.partitioned.is_some() && v.mode != QueryMode::Normal {
                return Err(SpecError::Options {
                    label: label.clone(),
                    error: OptionError {
                        option: "partitioned".into(),
                        value: v.mode.as_str().into(),
                        why: crate::client::options::PARTITIONED_MODE.into(),
                    },
                });
            }
        }
        Ok(())
    }

    /// The configuration of `variant`'s run as its report records it.
    pub(super) fn run_config(&self, variant: &Variant, target: &Target) -> RunConfig {
        RunConfig {
            label: variant.label.clone(),
            target: target.report_name(),
            database: self.database.name(),
            sql: variant.sql.clone(),
            params: variant
                .params
                .iter()
                .map(|p| (format!("{}:{}", p.name, p.type_name), p.value.clone()))
                .collect(),
            query_mode: variant.mode,
            iterations: self.iterations,
            warmup: self.warmup,
            decoder: self.decoder.into(),
            options: variant.options.describe(),
            sweep: variant.sweep.clone(),
            cold: variant.cold,
            order: if self.variants.len() > 1 {
                self.order.describe()
            } else {
                String::new()
            },
            client_host: host_name(),
            timeouts: self.timeouts.describe(),
            read_write: variant.read_write.as_ref().map(|rw| rw.options.describe()),
            ..RunConfig::default()
        }
    }
}

/// The name of the machine this runs on (the kernel's, else `$HOSTNAME`), empty when neither
/// says.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().chars().take(255).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(labels: impl IntoIterator<Item = String>) -> ProfileSpec {
        ProfileSpec {
            variants: labels
                .into_iter()
                .map(|l| Variant::new(&l, "SELECT 1"))
                .collect(),
            ..ProfileSpec::default()
        }
    }

    #[test]
    fn variants_are_capped_and_duplicates_found_among_many() {
        let many = spec((0..100_000).map(|i| format!("n={i}")));
        assert_eq!(many.check(), Err(SpecError::TooManyVariants(100_000)));
        let mut labels: Vec<String> = (0..MAX_VARIANTS - 1).map(|i| format!("n={i}")).collect();
        labels.push("n=7".into());
        assert_eq!(
            spec(labels).check(),
            Err(SpecError::DuplicateLabel("n=7".into()))
        );
        assert_eq!(
            spec((0..MAX_VARIANTS).map(|i| format!("n={i}"))).check(),
            Ok(())
        );
    }

    #[test]
    fn a_huge_label_is_not_echoed_whole() {
        let huge = "x".repeat(10 << 20);
        let Err(error) = spec([huge]).check() else {
            panic!("a 10 MB label is refused");
        };
        let text = error.to_string();
        assert!(text.len() < 300, "{} bytes", text.len());
        assert!(text.contains("10485760 bytes"), "{text}");
    }
}
