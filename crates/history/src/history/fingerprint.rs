//! What a run measured, as one short hash, so that runs of the same query find each other across
//! days and machines: the SQL normalized (whitespace, comments and the case of keywords do not
//! count; literals and identifiers do), the parameters' names and types (not their values), the
//! kind of target and its database, the query mode, the request options, and for a client run the
//! command (or that it was the wire floor). FNV-1a (`crate::fnv`), 16 hex digits.

use crate::fnv::{OFFSET_BASIS, continued};
use crate::report::{Reader, RunConfig};

/// The GoogleSQL keywords whose case does not matter (the reserved words and the common
/// non-reserved ones a query starts or joins with).
const KEYWORDS: &[&str] = &[
    "ALL",
    "AND",
    "ANY",
    "ARRAY",
    "AS",
    "ASC",
    "BETWEEN",
    "BY",
    "CASE",
    "CAST",
    "COUNT",
    "CROSS",
    "CURRENT",
    "DESC",
    "DISTINCT",
    "ELSE",
    "END",
    "EXCEPT",
    "EXISTS",
    "FALSE",
    "FETCH",
    "FOR",
    "FROM",
    "FULL",
    "GROUP",
    "HAVING",
    "IF",
    "IN",
    "INNER",
    "INTERSECT",
    "INTERVAL",
    "IS",
    "JOIN",
    "LEFT",
    "LIKE",
    "LIMIT",
    "NOT",
    "NULL",
    "NULLS",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "RIGHT",
    "ROWS",
    "SELECT",
    "STRUCT",
    "THEN",
    "TRUE",
    "UNION",
    "UNNEST",
    "USING",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "MAX",
    "MIN",
    "SUM",
    "AVG",
    "COALESCE",
    "IFNULL",
    "VALUE",
];

/// Punctuation before which whitespace never matters.
const TIGHT: &[char] = &['(', ')', ',', '.', ';', '[', ']'];
/// Punctuation after which whitespace never matters.
const OPEN: &[char] = &['(', ',', '.', '['];

/// `sql` with comments dropped, runs of whitespace made one space (none before `TIGHT` or after `OPEN`
/// punctuation), keywords in upper case, a trailing `;` dropped; quoted text kept as written.
pub fn normalize_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    let mut space = false;
    let mut word = String::new();
    let flush = |out: &mut String, word: &mut String| {
        if word.is_empty() {
            return;
        }
        let upper = word.to_ascii_uppercase();
        if KEYWORDS.contains(&upper.as_str()) {
            out.push_str(&upper);
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '@' {
            if space && !out.is_empty() && word.is_empty() && !out.ends_with(OPEN) {
                out.push(' ');
            }
            space = false;
            word.push(c);
            continue;
        }
        flush(&mut out, &mut word);
        match c {
            c if c.is_whitespace() => space = true,
            '-' if chars.peek() == Some(&'-') => {
                chars.by_ref().find(|&c| c == '\n');
                space = true;
            }
            '#' => {
                chars.by_ref().find(|&c| c == '\n');
                space = true;
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                space = true;
            }
            '\'' | '"' | '`' => {
                if space && !out.is_empty() && !out.ends_with(OPEN) {
                    out.push(' ');
                }
                space = false;
                out.push(c);
                let mut escaped = false;
                for q in chars.by_ref() {
                    out.push(q);
                    if escaped {
                        escaped = false;
                    } else if q == '\\' {
                        escaped = true;
                    } else if q == c {
                        break;
                    }
                }
            }
            c => {
                if space && !out.is_empty() && !TIGHT.contains(&c) && !out.ends_with(OPEN) {
                    out.push(' ');
                }
                space = false;
                out.push(c);
            }
        }
    }
    flush(&mut out, &mut word);
    while out.ends_with(';') {
        out.pop();
    }
    out
}

/// The fingerprint of a run of `config` against `database` (its name without host or port, so
/// the emulator on another port is the same database).
pub fn fingerprint(config: &RunConfig, database: &str) -> String {
    let text = measured(config, database);
    format!("{:016x}", continued(OFFSET_BASIS, text.as_bytes()))
}

/// Whether two runs measured the same query (all the fingerprint hashes but the database, compared
/// as text: two queries whose fingerprints collide, or a row that claims another's, differ here).
pub fn same_query(a: &RunConfig, b: &RunConfig) -> bool {
    measured(a, "") == measured(b, "")
}

/// What a fingerprint hashes, as text.
fn measured(config: &RunConfig, database: &str) -> String {
    let kind = config.target.split_whitespace().next().unwrap_or("");
    let mut text = String::new();
    let mut field = |s: &str| {
        text.push_str(s);
        text.push('\u{1}');
    };
    field(&normalize_sql(&config.sql));
    for (name_type, _value) in &config.params {
        field(name_type);
    }
    field("\u{2}");
    field(kind);
    field(database);
    field(config.query_mode.as_str());
    for (name, value) in &config.options {
        field(name);
        field(value);
    }
    field("\u{2}");
    for word in &config.command {
        field(word);
    }
    if config.decoder == Reader::BytesOnly {
        field("floor");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(sql: &str) -> RunConfig {
        RunConfig {
            label: "a".into(),
            target: "endpoint 127.0.0.1:9010".into(),
            sql: sql.into(),
            query_mode: crate::kind::QueryMode::Profile,
            ..RunConfig::default()
        }
    }

    #[test]
    fn whitespace_comments_and_keyword_case_do_not_count() {
        assert_eq!(
            normalize_sql("select  Id ,Name\n FROM Singers -- all\n where Id = @id ;"),
            "SELECT Id,Name FROM Singers WHERE Id = @id"
        );
        assert_eq!(
            normalize_sql("SELECT Id, Name FROM Singers WHERE Id = @id"),
            "SELECT Id,Name FROM Singers WHERE Id = @id"
        );
        assert_eq!(
            normalize_sql("SELECT COUNT( * ) /* n */ FROM t"),
            "SELECT COUNT(*) FROM t"
        );
    }

    #[test]
    fn literals_and_identifiers_keep_their_case_and_spaces() {
        assert_eq!(
            normalize_sql("SELECT 'a  B' FROM t WHERE s = \"it's\""),
            "SELECT 'a  B' FROM t WHERE s = \"it's\""
        );
        assert_ne!(normalize_sql("SELECT 'a'"), normalize_sql("select 'A'"));
        assert_ne!(
            normalize_sql("SELECT x FROM T"),
            normalize_sql("SELECT x FROM U")
        );
    }

    #[test]
    fn the_fingerprint_follows_what_was_measured_not_how_it_was_written() {
        let a = config("select 1");
        let mut b = config("SELECT   1;");
        b.label = "other label".into();
        b.target = "endpoint 127.0.0.1:9999".into();
        assert_eq!(fingerprint(&a, "d"), fingerprint(&b, "d"));
        assert_eq!(fingerprint(&a, "d").len(), 16);
        assert_ne!(fingerprint(&a, "d"), fingerprint(&a, "other-db"));
        let mut moded = a.clone();
        moded.query_mode = crate::kind::QueryMode::Normal;
        assert_ne!(fingerprint(&a, "d"), fingerprint(&moded, "d"));
        let mut optioned = a.clone();
        optioned.options = vec![("priority".into(), "low".into())];
        assert_ne!(fingerprint(&a, "d"), fingerprint(&optioned, "d"));
        let mut local = a.clone();
        local.target = "local".into();
        assert_ne!(fingerprint(&a, "d"), fingerprint(&local, "d"));
    }

    #[test]
    fn parameter_names_and_types_count_and_their_values_do_not() {
        let mut a = config("SELECT @n");
        a.params = vec![("n:INT64".into(), "1".into())];
        let mut b = a.clone();
        b.params = vec![("n:INT64".into(), "2".into())];
        let mut c = a.clone();
        c.params = vec![("n:STRING".into(), "1".into())];
        assert_eq!(fingerprint(&a, "d"), fingerprint(&b, "d"));
        assert_ne!(fingerprint(&a, "d"), fingerprint(&c, "d"));
    }
}
