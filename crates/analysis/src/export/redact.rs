//! Redaction of run reports before they leave the machine: the literal values of the SQL and its
//! comments and the parameters' values (`literals`), and the project, instance and database names
//! (`names`).
//!
//! The SQL is read as GoogleSQL tokens ([`sql`]): literals become `?` and comments are left out,
//! each remembered as every text a server could echo of it (as written, its escapes decoded, a hex
//! number in decimal). What was taken out is then taken out of the whole report as it is
//! serialized: every string in it, whatever field holds it and whatever echoed the secret there
//! (an error, a resume's status, a plan's condition, a label), so no field added later escapes.

mod sql;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::load::{Dist, LoadReport};
use crate::report::RunReport;

/// What to leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Redaction {
    /// The SQL's literal values and the parameters' values (names and types kept).
    pub literals: bool,
    /// The project, instance and database names.
    pub names: bool,
}

impl Redaction {
    /// Nothing left out.
    pub const NONE: Redaction = Redaction {
        literals: false,
        names: false,
    };

    /// `literals`, or `names` (which takes the literals out too), as `--redact` spells them.
    pub fn parse(text: &str) -> Result<Redaction, String> {
        match text.trim() {
            "literals" | "" => Ok(Redaction {
                literals: true,
                names: false,
            }),
            "names" | "all" => Ok(Redaction {
                literals: true,
                names: true,
            }),
            other => Err(format!(
                "cannot redact {other:?}: say literals (the SQL's literal values and the \
                 parameters' values) or names (those and the project, instance and database names)"
            )),
        }
    }

    /// Whether anything is left out.
    pub fn any(self) -> bool {
        self.literals || self.names
    }

    /// What was left out, in words, for the top of a report; `None` when nothing was.
    pub fn describe(self) -> Option<String> {
        let mut what = Vec::new();
        if self.literals {
            what.push(
                "the SQL's literal values and comments, and the parameters' values (their names \
                 and types are kept)",
            );
        }
        if self.names {
            what.push("the project, instance and database names");
        }
        (!what.is_empty()).then(|| format!("Redacted: {}; shown as ?.", what.join("; ")))
    }

    /// `reports` with what this redaction names taken out of every field that could carry it
    /// (borrowed as they are when it names nothing: a long run is not copied for nothing).
    pub fn apply(self, reports: &[RunReport]) -> std::borrow::Cow<'_, [RunReport]> {
        if !self.any() {
            return std::borrow::Cow::Borrowed(reports);
        }
        std::borrow::Cow::Owned(reports.iter().map(|r| self.apply_one(r)).collect())
    }

    /// A load run's report with what this redaction names taken out of every field that could
    /// carry it (as it is when it names nothing).
    pub fn apply_load(self, report: &LoadReport) -> LoadReport {
        let mut out = report.clone();
        if !self.any() {
            return out;
        }
        let mut secrets = Secrets::default();
        if self.literals {
            out.sql = secrets.sql(&report.sql);
            // A constant parameter's value is a literal; a key space's bounds are its shape.
            for p in out.draws.iter_mut().flat_map(|d| d.params.iter_mut()) {
                if matches!(p.dist, Dist::Int { .. } | Dist::String { .. }) {
                    p.dist = Dist::String { value: "?".into() };
                }
            }
        }
        if self.names {
            out.target = redact_names(&report.target, &mut secrets);
            out.database = redact_names(&report.database, &mut secrets);
        }
        let sql = std::mem::take(&mut out.sql);
        let mut out = scrubbed(&out, &secrets).unwrap_or_else(|| LoadReport {
            label: secrets.scrub(&out.label),
            knee_words: secrets.scrub(&out.knee_words),
            steps: Vec::new(),
            ..out
        });
        out.sql = if self.literals {
            sql
        } else {
            secrets.scrub(&sql)
        };
        out
    }

    fn apply_one(self, report: &RunReport) -> RunReport {
        let mut secrets = Secrets::default();
        let mut out = report.clone();
        if self.literals {
            out.config.sql = secrets.sql(&report.config.sql);
            for (_, value) in &mut out.config.params {
                secrets.add(value);
                *value = "?".into();
            }
            if let Some(point) = &mut out.config.sweep {
                secrets.add(&point.value);
                point.value = "?".into();
            }
        }
        if self.names {
            out.config.target = redact_names(&report.config.target, &mut secrets);
            out.config.database = redact_names(&report.config.database, &mut secrets);
        }
        // The redacted SQL keeps its identifiers even where a literal spells one: it is the one
        // field not scrubbed again.
        let sql = std::mem::take(&mut out.config.sql);
        let mut out = scrubbed(&out, &secrets).unwrap_or_else(|| scrub_by_field(out, &secrets));
        out.config.sql = if self.literals {
            sql
        } else {
            secrets.scrub(&sql)
        };
        out
    }
}

/// `value` with every secret taken out of every string it serializes to; `None` when what is
/// left no longer reads back as a `T`.
fn scrubbed<T: Serialize + DeserializeOwned>(value: &T, secrets: &Secrets) -> Option<T> {
    let original = serde_json::to_value(value).ok()?;
    let mut out = original.clone();
    scrub_value(&mut out, secrets);
    if let Ok(back) = T::deserialize(&out) {
        return Some(back);
    }
    // A secret that spells one of spanprof's own words (a mode, a decoder, an outcome) broke a
    // field that holds one of a few words: those keep their spelling, spanprof's, not the query's.
    keep_words(&mut out, &original);
    T::deserialize(&out).ok()
}

/// Every string of `out` that was one word in `original` (letters, digits, `_`, `-`) as it was.
fn keep_words(out: &mut Value, original: &Value) {
    match (out, original) {
        (Value::String(s), Value::String(o)) => {
            let word = !o.is_empty()
                && o.len() <= 40
                && o.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if word {
                s.clone_from(o);
            }
        }
        (Value::Array(items), Value::Array(was)) => {
            for (item, o) in items.iter_mut().zip(was) {
                keep_words(item, o);
            }
        }
        (Value::Object(map), Value::Object(was)) => {
            for (key, item) in map.iter_mut() {
                if let Some(o) = was.get(key) {
                    keep_words(item, o);
                }
            }
        }
        _ => {}
    }
}

/// The last resort when a scrubbed report no longer reads back: the free texts it is known to
/// carry scrubbed one by one, and the plans and timelines (whose texts cannot be) left out.
fn scrub_by_field(mut out: RunReport, secrets: &Secrets) -> RunReport {
    out.config.label = secrets.scrub(&out.config.label);
    for arg in out.config.command.iter_mut().skip(1) {
        *arg = secrets.scrub(arg);
    }
    if let Some(stopped) = &mut out.stopped {
        *stopped = secrets.scrub(stopped);
    }
    for record in &mut out.iterations {
        record.run = secrets.scrub(&record.run);
        if let Some(error) = record.outcome.error_mut() {
            *error = secrets.scrub(error);
        }
        record.timeline = None;
    }
    out.plans = Default::default();
    out
}

/// The texts taken out, to take out of other fields too.
#[derive(Debug, Default)]
struct Secrets {
    /// Taken out wherever they occur (three characters or more).
    substrings: Vec<String>,
    /// Taken out where they stand as a whole word (shorter texts: `7` in `id = 7`, not in
    /// `Seed17` or `0.75`).
    words: Vec<String>,
}

impl Secrets {
    /// `sql` with its literals written `?` and its comments left out, each remembered.
    fn sql(&mut self, sql: &str) -> String {
        let (out, taken) = sql::redact(sql);
        for text in &taken {
            self.add(text);
        }
        out
    }

    fn add(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let list = if text.chars().count() >= 3 {
            &mut self.substrings
        } else {
            &mut self.words
        };
        if !list.iter().any(|s| s == text) {
            list.push(text.to_owned());
        }
    }

    fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        // Longer first, so a secret that contains another goes whole.
        let mut long: Vec<&String> = self.substrings.iter().collect();
        long.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for s in long {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), "?");
            }
        }
        for w in &self.words {
            out = replace_words(&out, w);
        }
        out
    }
}

/// `text` with every whole-word occurrence of `word` (not inside an identifier or a number)
/// written `?`.
fn replace_words(text: &str, word: &str) -> String {
    let is_word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let before = rest[..at].chars().last().or_else(|| out.chars().last());
        let after = rest[at + word.len()..].chars().next();
        out.push_str(&rest[..at]);
        if is_word(before) || is_word(after) {
            out.push_str(word);
        } else {
            out.push('?');
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

fn scrub_value(value: &mut Value, secrets: &Secrets) {
    match value {
        Value::String(s) => *s = secrets.scrub(s),
        Value::Array(items) => items.iter_mut().for_each(|v| scrub_value(v, secrets)),
        Value::Object(map) => map
            .iter_mut()
            .filter(|(key, _)| !ENCODED.contains(&key.as_str()))
            .for_each(|(_, v)| scrub_value(v, secrets)),
        _ => {}
    }
}

/// Fields that hold counts in a binary encoding (a load step's HDR histograms in base64), never
/// text a server echoed: a secret of three letters is found in base64 by chance ('AAA' is in
/// nearly every histogram), and taking it out would leave a histogram that no longer decodes.
const ENCODED: [&str; 2] = ["histogram", "histogram_uncorrected"];

/// `cloud projects/p/instances/i/databases/d` (or any text naming them so) with the three names
/// written `?`, each remembered.
fn redact_names(target: &str, secrets: &mut Secrets) -> String {
    let mut parts: Vec<String> = target.split('/').map(str::to_owned).collect();
    for i in 1..parts.len() {
        let key = parts[i - 1].rsplit(' ').next().unwrap_or("");
        if matches!(key, "projects" | "instances" | "databases") {
            let name = parts[i].split(' ').next().unwrap_or("").to_owned();
            secrets.add(&name);
            parts[i] = parts[i].replacen(&name, "?", 1);
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests;
