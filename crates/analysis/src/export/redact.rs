//! Redaction of run reports before they leave the machine: the literal values of the SQL and the
//! parameters' values (`literals`), and the project, instance and database names (`names`).
//!
//! The SQL is read as GoogleSQL tokens: string and bytes literals (quoted, triple-quoted, raw) and
//! numbers become `?`, comments are left out, identifiers, keywords and `@parameters` stay. What
//! was taken out is then also taken out of every other text a report carries (labels, errors, the
//! plans' operators and conditions, a subject's command line), so it cannot come back through an
//! error message that echoes the query.

use serde_json::Value;

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

    fn apply_one(self, report: &RunReport) -> RunReport {
        let mut secrets = Secrets::default();
        let mut out = report.clone();
        if self.literals {
            out.config.sql = redact_sql(&report.config.sql, &mut secrets);
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
        out.config.label = secrets.scrub(&out.config.label);
        for arg in out.config.command.iter_mut().skip(1) {
            *arg = secrets.scrub(arg);
        }
        if let Some(stopped) = &mut out.stopped {
            *stopped = secrets.scrub(stopped);
        }
        for record in &mut out.iterations {
            record.run = secrets.scrub(&record.run);
            if let Some(error) = &mut record.error {
                *error = secrets.scrub(error);
            }
        }
        // The plans carry the query's conditions and constants in their nodes' texts.
        if !out.plans.is_empty()
            && let Ok(mut value) = serde_json::to_value(&out.plans)
        {
            scrub_value(&mut value, &secrets);
            if let Ok(plans) = serde_json::from_value(value) {
                out.plans = plans;
            } else {
                out.plans = Default::default();
            }
        }
        out
    }
}

/// `sql` with its literals written `?` and its comments left out.
pub fn redact_text_sql(sql: &str) -> String {
    redact_sql(sql, &mut Secrets::default())
}

/// A target's text with its project, instance and database names written `?`.
pub fn redact_target(target: &str) -> String {
    redact_names(target, &mut Secrets::default())
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
        Value::Object(map) => map.values_mut().for_each(|v| scrub_value(v, secrets)),
        _ => {}
    }
}

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

/// The SQL with its literals as `?` (strings `'?'`, bytes `b'?'`, numbers `?`) and its comments
/// left out; each literal's text remembered.
fn redact_sql(sql: &str, secrets: &mut Secrets) -> String {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = String::with_capacity(sql.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        // Comments: -- and # to the line's end, /* */.
        if (c == '-' && next == Some('-')) || c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && next == Some('*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i = (i + 2).min(chars.len());
            out.push(' ');
            continue;
        }
        // Quoted identifiers stay as written.
        if c == '`' {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == '`')
                .unwrap_or(chars.len() - 1);
            out.extend(&chars[i..=end]);
            i = end + 1;
            continue;
        }
        // Identifiers and keywords, with the string prefixes r, b, rb, br.
        if c.is_alphabetic() || c == '_' || c == '@' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let prefix = word.to_ascii_lowercase();
            let quoted = chars.get(i).is_some_and(|&q| q == '\'' || q == '"');
            if quoted && matches!(prefix.as_str(), "r" | "b" | "rb" | "br") {
                let (end, text) = string_literal(&chars, i, prefix.contains('r'));
                secrets.add(&text);
                out.push_str(&word);
                out.push_str("'?'");
                i = end;
            } else {
                out.push_str(&word);
            }
            continue;
        }
        if c == '\'' || c == '"' {
            let (end, text) = string_literal(&chars, i, false);
            secrets.add(&text);
            out.push_str("'?'");
            i = end;
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && next.is_some_and(|n| n.is_ascii_digit())) {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '+' || chars[i] == '-') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            secrets.add(&text);
            out.push('?');
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The string literal opening at `start` (a quote, or three): where it ends and its contents.
fn string_literal(chars: &[char], start: usize, raw: bool) -> (usize, String) {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let open = if triple { 3 } else { 1 };
    let mut i = start + open;
    let mut text = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && !raw {
            if let Some(&escaped) = chars.get(i + 1) {
                text.push(escaped);
            }
            i += 2;
            continue;
        }
        let closes = if triple {
            c == quote && chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)
        } else {
            c == quote
        };
        if closes {
            return (i + open, text);
        }
        text.push(c);
        i += 1;
    }
    (chars.len(), text)
}

#[cfg(test)]
mod tests;
