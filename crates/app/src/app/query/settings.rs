//! What the query panel persists: the variants, every one stored alike (the first is the run's own
//! query, the others are compared with it), the mode, decoder, iterations, warm-up, sweep, order,
//! recent queries and a subject's command line; the engine's spec made from them.
//!
//! Settings saved before the variants were stored alike kept the first variant's SQL, parameters,
//! label and options apart, beside a `variants` list of the others: they are read back into the
//! one list ([`StoredQuery`]), so nothing a user saved is lost.

use serde::{Deserialize, Deserializer, Serialize};

use super::options::OptionSettings;
use super::transaction::TransactionSettings;
use crate::engine::{
    DatabasePath, Order, Param, ProfileSpec, QueryMode, ReadWrite, SubjectSpec, Timeouts, Variant,
};
use crate::server::ServerConfig;
use crate::subject::command::CommandLine;
use crate::wire::DecoderKind;

/// The query the app opens with: something real on the built-in instance's Seed23.
pub const DEFAULT_SQL: &str = "SELECT * FROM Seed23 LIMIT 10000";
/// Recent queries remembered, at most.
const RECENT_QUERIES: usize = 10;

/// Everything the query panel persists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredQuery")]
pub struct QuerySettings {
    /// The variants: the first is the run's own query (its label the run's label), each of the
    /// others is compared with it. Never empty once read back or drawn.
    pub variants: Vec<VariantSettings>,
    /// Which variant the editor shows: an index into `variants`.
    pub editing: usize,
    /// The query mode.
    pub mode: QueryMode,
    /// The decoder that turns the answer into rows.
    pub decoder: DecoderKind,
    /// Timed iterations.
    pub iterations: u32,
    /// Warm-up iterations before them.
    pub warmup: u32,
    /// A sweep of one parameter of the first variant, `NAME:TYPE=v1,v2,...`; empty for none.
    pub sweep: String,
    /// The order of the variants' timed iterations.
    pub order: Order,
    /// Queries run before, most recent first.
    pub recent: Vec<String>,
    /// Whether Run profiles a subject, another program's client (`spanprof client`), instead of
    /// the query. Saved as `client`, as settings saved before were.
    #[serde(rename = "client")]
    pub subject: bool,
    /// The subject's command line, as a shell would split it (no variables or globs).
    pub command: String,
}

/// A variant: its own label, SQL, parameters and options; run as a query, or as a read-write
/// transaction whose script is its SQL.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct VariantSettings {
    /// Its label. Empty means the query's first words and the time for the first, and the
    /// run's label with the variant's number (`…·2`) for the others.
    pub label: String,
    /// Its SQL text.
    pub sql: String,
    /// Its parameters, one `name:TYPE=value` per line.
    pub params: String,
    /// How it is asked.
    pub options: OptionSettings,
    /// Run as a read-write transaction: `sql` is its script (statements separated by `;`).
    pub read_write: bool,
    /// The transaction's options, when it is one.
    pub transaction: TransactionSettings,
}

impl VariantSettings {
    /// The variant a new panel shows: [`DEFAULT_SQL`], nothing else set.
    fn opening() -> Self {
        VariantSettings {
            sql: DEFAULT_SQL.into(),
            ..VariantSettings::default()
        }
    }
}

impl Default for QuerySettings {
    fn default() -> Self {
        QuerySettings {
            variants: vec![VariantSettings::opening()],
            editing: 0,
            mode: QueryMode::WithStats,
            decoder: DecoderKind::Fast,
            iterations: 10,
            warmup: 1,
            sweep: String::new(),
            order: Order::default(),
            recent: Vec::new(),
            subject: false,
            command: String::new(),
        }
    }
}

/// [`QuerySettings`] as saved by this version or an older one. Older ones kept the first
/// variant's fields apart (`sql`, `params`, `label`, `options`) and `variants` held only the
/// others; any of those fields present means that layout.
#[derive(Deserialize)]
#[serde(default, rename = "QuerySettings")]
struct StoredQuery {
    variants: Vec<VariantSettings>,
    editing: usize,
    mode: QueryMode,
    decoder: DecoderKind,
    iterations: u32,
    warmup: u32,
    sweep: String,
    order: Order,
    recent: Vec<String>,
    #[serde(rename = "client")]
    subject: bool,
    command: String,
    #[serde(deserialize_with = "present")]
    sql: Option<String>,
    #[serde(deserialize_with = "present")]
    params: Option<String>,
    #[serde(deserialize_with = "present")]
    label: Option<String>,
    #[serde(deserialize_with = "present")]
    options: Option<OptionSettings>,
}

/// A field that is there, as `Some` (a missing one takes the `None` of `#[serde(default)]`): the
/// old layout stored these as plain values, which RON would not read as an `Option`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

impl Default for StoredQuery {
    fn default() -> Self {
        let d = QuerySettings::default();
        StoredQuery {
            variants: Vec::new(),
            editing: d.editing,
            mode: d.mode,
            decoder: d.decoder,
            iterations: d.iterations,
            warmup: d.warmup,
            sweep: d.sweep,
            order: d.order,
            recent: d.recent,
            subject: d.subject,
            command: d.command,
            sql: None,
            params: None,
            label: None,
            options: None,
        }
    }
}

impl From<StoredQuery> for QuerySettings {
    fn from(stored: StoredQuery) -> Self {
        let StoredQuery {
            mut variants,
            editing,
            sql,
            params,
            label,
            options,
            ..
        } = stored;
        let apart = sql.is_some() || params.is_some() || label.is_some() || options.is_some();
        if apart {
            // The old `editing` (0 for the first, k for `variants[k - 1]`) indexes the new list.
            let first = VariantSettings {
                label: label.unwrap_or_default(),
                sql: sql.unwrap_or_else(|| DEFAULT_SQL.into()),
                params: params.unwrap_or_default(),
                options: options.unwrap_or_default(),
                ..VariantSettings::default()
            };
            variants.insert(0, first);
        }
        let mut settings = QuerySettings {
            variants,
            editing,
            mode: stored.mode,
            decoder: stored.decoder,
            iterations: stored.iterations,
            warmup: stored.warmup,
            sweep: stored.sweep,
            order: stored.order,
            recent: stored.recent,
            subject: stored.subject,
            command: stored.command,
        };
        settings.keep_one();
        settings
    }
}

/// `name:TYPE=value` lines as parameters.
fn parse_params(text: &str) -> Result<Vec<Param>, String> {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(|line| Param::parse(line).map_err(|e| format!("parameter {line:?}: {e}")))
        .collect()
}

impl QuerySettings {
    /// Puts back the first variant if there is none, and points `editing` at a variant.
    pub fn keep_one(&mut self) {
        if self.variants.is_empty() {
            self.variants.push(VariantSettings::opening());
        }
        self.editing = self.editing.min(self.variants.len() - 1);
    }

    /// The first variant: the run's own query.
    pub fn first(&self) -> Option<&VariantSettings> {
        self.variants.first()
    }

    /// The first variant, to change it.
    pub fn first_mut(&mut self) -> &mut VariantSettings {
        self.keep_one();
        &mut self.variants[0]
    }

    /// The variant the editor shows, to change it.
    pub fn editing_mut(&mut self) -> &mut VariantSettings {
        self.keep_one();
        &mut self.variants[self.editing]
    }

    /// The first variant's SQL, trimmed (what a subject reads, and what is remembered).
    pub fn first_sql(&self) -> &str {
        self.first().map_or("", |v| v.sql.trim())
    }

    /// The label the user gave the run (the first variant's); empty for the query's first words
    /// and the time.
    pub fn run_label(&self) -> &str {
        self.first().map_or("", |v| v.label.trim())
    }

    /// The engine's spec for a subject's run on the local instance `server`, the program's run
    /// labelled `label`, or what is wrong with the input.
    pub fn subject_spec(&self, label: String, server: ServerConfig) -> Result<SubjectSpec, String> {
        if self.first_sql().is_empty() {
            return Err("the SQL is empty".into());
        }
        let command = CommandLine::parse(&self.command).map_err(|e| e.to_string())?;
        Ok(SubjectSpec {
            label,
            sql: self.first_sql().to_owned(),
            iterations: self.iterations.max(1),
            warmup: self.warmup,
            order: self.order,
            server,
            compare: Some(self.decoder),
            ..SubjectSpec::new(command)
        })
    }

    /// The engine's spec for the next run, its first variant labelled `label` (the others by
    /// their own labels, or `label·2`, `label·3`...), or what is wrong with the input.
    pub fn spec(&self, label: String, database: DatabasePath) -> Result<ProfileSpec, String> {
        if self.first_sql().is_empty() {
            return Err("the SQL is empty".into());
        }
        let mut variants = self
            .variants
            .iter()
            .enumerate()
            .map(|(k, v)| self.variant(k, v, &label))
            .collect::<Result<Vec<_>, _>>()?;
        if !self.sweep.trim().is_empty() {
            if variants.len() > 1 {
                return Err(
                    "a sweep sweeps one query: remove the other variants, or the sweep".into(),
                );
            }
            let sweep = crate::engine::parse_sweep(self.sweep.trim()).map_err(|e| e.to_string())?;
            variants = sweep
                .expand(&variants[0], !self.run_label().is_empty())
                .map_err(|e| e.to_string())?;
        }
        let spec = ProfileSpec {
            database,
            variants,
            iterations: self.iterations.max(1),
            warmup: self.warmup,
            decoder: self.decoder,
            timeouts: Timeouts::DEFAULT,
            order: self.order,
            headers: Default::default(),
        };
        spec.check().map_err(|e| e.to_string())?;
        Ok(spec)
    }

    /// The engine's variant for a load run of the first query, labelled `label`, or what is
    /// wrong with the input. With the read-write switch on, its script and transaction options
    /// as a profile's: each request of the load run is one such transaction.
    pub fn load_variant(&self, label: String) -> Result<Variant, String> {
        match self.first() {
            Some(first) => self.variant(0, first, &label),
            None => Err("the SQL is empty".into()),
        }
    }

    /// The engine's variant `k` of a run labelled `run`. The first is named as the run and its
    /// SQL and parameters' problems read as the run's; the others' name their variant.
    fn variant(&self, k: usize, v: &VariantSettings, run: &str) -> Result<Variant, String> {
        let name = match v.label.trim() {
            _ if k == 0 => run.to_owned(),
            "" => format!("{run}\u{b7}{}", k + 1),
            label => label.to_owned(),
        };
        let about = |e: String| if k == 0 { e } else { format!("{name}: {e}") };
        if v.sql.trim().is_empty() {
            return Err(about("the SQL is empty".into()));
        }
        let read_write = if v.read_write {
            let script = crate::script::parse(v.sql.trim())
                .map_err(|e| about(format!("the read-write script: {e}")))?;
            let options = v
                .transaction
                .to_options(self.mode)
                .map_err(|e| format!("{name}: {e}"))?;
            Some(ReadWrite { script, options })
        } else {
            None
        };
        // A transaction's requests carry its own options: the query's (staleness, replicas,
        // partitions, a cold start), hidden in that mode, do not apply.
        let options = match read_write {
            Some(_) => crate::client::RequestOptions::default(),
            None => v.options.to_options().map_err(|e| format!("{name}: {e}"))?,
        };
        Ok(Variant {
            params: parse_params(&v.params).map_err(about)?,
            mode: self.mode,
            options,
            cold: v.options.cold && read_write.is_none(),
            session: v.options.session.map(super::options::SessionChoice::kind),
            read_write,
            ..Variant::new(name, v.sql.trim())
        })
    }

    /// Adds a variant after the others, a copy of the one being edited (without its label), and
    /// edits it.
    pub fn add_variant(&mut self) {
        let copy = VariantSettings {
            label: String::new(),
            ..self.editing_mut().clone()
        };
        self.variants.push(copy);
        self.editing = self.variants.len() - 1;
    }

    /// Removes the variant being edited (never the first).
    pub fn remove_variant(&mut self) {
        if self.editing > 0 && self.editing < self.variants.len() {
            self.variants.remove(self.editing);
            self.editing -= 1;
        }
    }

    /// Remembers `sql` as the most recent query.
    pub fn remember(&mut self, sql: &str) {
        self.recent.retain(|q| q != sql);
        self.recent.insert(0, sql.to_owned());
        self.recent.truncate(RECENT_QUERIES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_checks_parameters_and_sql() {
        let mut settings = QuerySettings::default();
        settings.first_mut().params = "id:INT64=42\n\n".into();
        let spec = settings.spec("a".into(), DatabasePath::default());
        assert_eq!(spec.map(|s| s.variants[0].params.len()), Ok(1));
        settings.first_mut().params = "nonsense".into();
        assert!(
            settings
                .spec("a".into(), DatabasePath::default())
                .is_err_and(|e| e.contains("nonsense") && !e.starts_with("a: "))
        );
        settings.first_mut().sql = "  ".into();
        assert_eq!(
            settings.spec("a".into(), DatabasePath::default()).err(),
            Some("the SQL is empty".to_owned())
        );
    }

    #[test]
    fn variants_make_one_run_each_labelled_by_the_run_and_their_number() {
        let mut settings = QuerySettings::default();
        settings.first_mut().sql = "SELECT * FROM Seed23 LIMIT 100".into();
        settings.add_variant();
        assert_eq!(settings.editing, 1);
        assert_eq!(settings.variants[1].sql, "SELECT * FROM Seed23 LIMIT 100");
        settings.variants[1].sql = "SELECT Id FROM Seed23 LIMIT 100".into();
        settings.variants[1].options.priority = Some(crate::engine::Priority::Low);
        let spec = settings
            .spec("run 3".into(), DatabasePath::default())
            .expect("valid");
        let labels: Vec<&str> = spec.variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["run 3", "run 3\u{b7}2"]);
        assert_eq!(
            spec.variants[1].options.priority,
            Some(crate::engine::Priority::Low)
        );
        assert_eq!(spec.variants[0].options.priority, None);
        settings.variants[1].params = "nonsense".into();
        let error = settings
            .spec("run 3".into(), DatabasePath::default())
            .expect_err("bad parameters");
        assert!(error.starts_with("run 3\u{b7}2: parameter"), "{error}");
        settings.variants[1].params.clear();
        settings.variants[1].label = "run 3".into();
        let error = settings
            .spec("run 3".into(), DatabasePath::default())
            .expect_err("two labels alike");
        assert!(error.contains("labelled \"run 3\""), "{error}");
        settings.remove_variant();
        assert!(settings.variants.len() == 1 && settings.editing == 0);
        settings.remove_variant();
        assert_eq!(settings.variants.len(), 1, "the first is never removed");
    }

    #[test]
    fn the_cold_toggle_and_the_session_kind_reach_the_variant() {
        let mut settings = QuerySettings::default();
        settings.first_mut().options.cold = true;
        settings.first_mut().options.session = Some(super::super::options::SessionChoice::Regular);
        let spec = settings
            .spec("a".into(), DatabasePath::default())
            .expect("valid");
        assert!(spec.variants[0].cold);
        assert_eq!(
            spec.variants[0].session,
            Some(crate::client::SessionKind::Regular)
        );
        let plain = QuerySettings::default()
            .spec("a".into(), DatabasePath::default())
            .expect("valid");
        assert_eq!(
            (plain.variants[0].cold, plain.variants[0].session),
            (false, None)
        );
    }

    #[test]
    fn a_sweep_makes_a_run_per_value_of_the_first_query() {
        let mut settings = QuerySettings {
            sweep: "n:INT64=10,20,30".into(),
            ..QuerySettings::default()
        };
        settings.first_mut().sql = "SELECT * FROM Seed23 LIMIT @n".into();
        let spec = settings
            .spec("run 1".into(), DatabasePath::default())
            .expect("valid");
        let labels: Vec<&str> = spec.variants.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["n=10", "n=20", "n=30"]);
        let bad = QuerySettings {
            sweep: "n=1,2".into(),
            ..settings
        };
        assert!(bad.spec("run 1".into(), DatabasePath::default()).is_err());
    }

    #[test]
    fn a_read_write_variant_runs_its_script_as_a_transaction_with_its_options() {
        let mut settings = QuerySettings::default();
        let first = settings.first_mut();
        first.read_write = true;
        first.sql = "UPDATE Accounts SET Balance = Balance - 1 WHERE AccountId = 1;\n\
                     UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = 2"
            .into();
        first.transaction.explicit_begin = true;
        first.transaction.tag = "transfer".into();
        // The query's own options are hidden in this mode and do not apply.
        first.options.cold = true;
        first.options.staleness = "max:10s".into();
        let spec = settings
            .spec("rw".into(), DatabasePath::default())
            .expect("valid");
        let v = &spec.variants[0];
        let rw = v.read_write.as_ref().expect("a transaction");
        assert_eq!(rw.script.summary(), "2 DML");
        assert_eq!(
            rw.options.begin,
            crate::client::read_write::BeginMode::Explicit
        );
        assert_eq!(rw.options.tag.as_deref(), Some("transfer"));
        assert!(!v.cold && v.options == crate::client::RequestOptions::default());
        assert_eq!(v.session_kind(), crate::client::SessionKind::Regular);
        // A load run takes the same script and options: each request is one such transaction.
        let load = settings.load_variant("load".into()).expect("a load of it");
        assert_eq!(load.read_write, v.read_write);
        assert_eq!(load.label, "load");
        // A script that does not parse says where, and nothing is made to run.
        settings.first_mut().sql = "UPDATE Accounts SET Balance = 0;\nCOMMIT".into();
        let error = settings
            .spec("rw".into(), DatabasePath::default())
            .expect_err("COMMIT is spanprof's own");
        assert!(
            error.starts_with("the read-write script: line 2"),
            "{error}"
        );
        // Saved and read back, the mode and the options are kept.
        let saved = serde_json::to_string(&settings).expect("writes");
        let read: QuerySettings = serde_json::from_str(&saved).expect("reads");
        assert!(read.variants[0].read_write);
        assert_eq!(read.variants[0].transaction.tag, "transfer");
        let old: QuerySettings =
            serde_json::from_str(r#"{"variants": [{"sql": "SELECT 1"}]}"#).expect("reads");
        assert!(!old.variants[0].read_write);
        assert!(old.load_variant("l".into()).is_ok());
        assert!(
            read.load_variant("l".into()).is_err(),
            "a script that does not parse starts no load either"
        );
    }

    #[test]
    fn recent_queries_are_unique_most_recent_first_and_bounded() {
        let mut settings = QuerySettings::default();
        for i in 0..12 {
            settings.remember(&format!("q{i}"));
        }
        settings.remember("q5");
        assert_eq!(settings.recent.len(), RECENT_QUERIES);
        assert_eq!(settings.recent[0], "q5");
        assert_eq!(settings.recent.iter().filter(|q| *q == "q5").count(), 1);
    }

    #[test]
    fn settings_without_variants_get_the_opening_one_and_editing_stays_in_range() {
        let empty: QuerySettings =
            serde_json::from_str(r#"{"variants": [], "editing": 7}"#).expect("reads");
        assert_eq!(empty.variants, [VariantSettings::opening()]);
        assert_eq!(empty.editing, 0);
        let mut cleared = QuerySettings::default();
        cleared.variants.clear();
        assert_eq!(cleared.first_sql(), "");
        assert!(cleared.spec("a".into(), DatabasePath::default()).is_err());
        cleared.editing_mut().sql = "SELECT 1".into();
        assert_eq!(cleared.first_sql(), "SELECT 1");
    }

    #[test]
    fn the_subject_switch_is_saved_and_read_as_client() {
        let settings = QuerySettings {
            subject: true,
            ..QuerySettings::default()
        };
        let saved = serde_json::to_value(&settings).expect("writes");
        assert_eq!(saved["client"], serde_json::Value::Bool(true));
        assert!(saved.get("subject").is_none(), "{saved}");
        let read: QuerySettings =
            serde_json::from_str(r#"{"client": true, "command": "python3 p.py"}"#).expect("reads");
        assert!(read.subject);
        assert_eq!(read.command, "python3 p.py");
    }
}
