//! GoogleSQL DDL, as the local instance's `UpdateDatabaseDdl` reads it: `CREATE TABLE`, `DROP
//! TABLE`, `CREATE INDEX` and `DROP INDEX`, parsed into plain data ([`Ddl`]) with every bound
//! checked on the way; everything else is refused by name (ALTER TABLE, INTERLEAVE IN PARENT,
//! CREATE VIEW, CHANGE STREAM, ROW DELETION POLICY, DEFAULT and generated columns, constraints,
//! PostgreSQL's spellings...). Keywords are read in any case, names may be backquoted, comments
//! (`--`, `#`, `/* */`) are skipped. What the names refer to is `schema.rs`'s business.

use crate::wire::{Field, Type};

/// The most statements one `UpdateDatabaseDdl` may carry (ours).
pub const MAX_DDL_STATEMENTS: usize = 64;
/// The longest statement, in bytes (ours).
pub const MAX_DDL_STATEMENT_BYTES: usize = 128 * 1024;
/// The longest name of a table, column or index (Spanner's).
pub const MAX_NAME_CHARS: usize = 128;
/// The most columns of a table (Spanner's).
pub const MAX_COLUMNS: usize = 1_024;
/// The most columns of a primary key or of an index key (Spanner's).
pub const MAX_KEY_COLUMNS: usize = 16;

/// One statement, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ddl {
    /// `CREATE TABLE`.
    CreateTable(NewTable),
    /// `DROP TABLE`.
    DropTable {
        /// The table.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
    /// `CREATE INDEX`.
    CreateIndex(NewIndex),
    /// `DROP INDEX`.
    DropIndex {
        /// The index.
        name: String,
        /// `IF EXISTS`.
        if_exists: bool,
    },
}

/// A `CREATE TABLE` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewTable {
    /// The table's name, as written.
    pub name: String,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// Its columns, in order.
    pub columns: Vec<NewColumn>,
    /// Its primary key: column names, each with `DESC`.
    pub primary_key: Vec<(String, bool)>,
}

/// A column of a `CREATE TABLE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewColumn {
    /// Its name and Spanner type.
    pub field: Field,
    /// `STRING(N)` or `BYTES(N)` (of the column or its array's elements): N.
    pub max_length: Option<u32>,
    /// `NOT NULL`.
    pub not_null: bool,
}

/// A `CREATE INDEX` statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewIndex {
    /// The index's name.
    pub name: String,
    /// Its table.
    pub table: String,
    /// `UNIQUE`.
    pub unique: bool,
    /// `NULL_FILTERED`.
    pub null_filtered: bool,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// Its key: column names, each with `DESC`.
    pub columns: Vec<(String, bool)>,
    /// `STORING (...)`.
    pub storing: Vec<String>,
}

/// Why a statement was not read (INVALID_ARGUMENT).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DdlError(pub String);

fn err<T>(message: impl Into<String>) -> Result<T, DdlError> {
    Err(DdlError(message.into()))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A bare word (keyword or name).
    Word(String),
    /// A backquoted name.
    Quoted(String),
    /// Digits.
    Number(String),
    /// One of `( ) , < > = ;`.
    Symbol(char),
}

/// The tokens of `sql`; comments skipped.
fn tokens(sql: &str) -> Result<Vec<Token>, DdlError> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            i += 1;
        } else if c == '#' || (c == '-' && next == Some('-')) {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let end = (i + 2..chars.len().saturating_sub(1))
                .find(|&j| chars[j] == '*' && chars[j + 1] == '/')
                .ok_or_else(|| DdlError("a /* comment is not closed".into()))?;
            i = end + 2;
        } else if c == '`' {
            let end = (i + 1..chars.len())
                .find(|&j| chars[j] == '`')
                .ok_or_else(|| DdlError("a backquoted name is not closed".into()))?;
            out.push(Token::Quoted(chars[i + 1..end].iter().collect()));
            i = end + 1;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                i += 1;
            }
            out.push(Token::Number(chars[start..i].iter().collect()));
        } else if "(),<>=;".contains(c) {
            out.push(Token::Symbol(c));
            i += 1;
        } else {
            return err(format!(
                "unexpected character {c:?}: the local instance reads GoogleSQL DDL (CREATE \
                 TABLE, DROP TABLE, CREATE INDEX, DROP INDEX)"
            ));
        }
    }
    // One trailing semicolon is tolerated.
    if out.last() == Some(&Token::Symbol(';')) {
        out.pop();
    }
    Ok(out)
}

/// Reads one statement.
pub fn parse(sql: &str) -> Result<Ddl, DdlError> {
    if sql.len() > MAX_DDL_STATEMENT_BYTES {
        return err(format!(
            "a DDL statement of {} bytes, more than the {MAX_DDL_STATEMENT_BYTES} the local \
             instance reads",
            sql.len()
        ));
    }
    let mut p = Parser {
        tokens: tokens(sql)?,
        at: 0,
    };
    let ddl = p.statement()?;
    match p.peek() {
        None => Ok(ddl),
        Some(t) => err(format!("unexpected {} after the statement", shown(t))),
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

fn shown(t: &Token) -> String {
    let text = match t {
        Token::Word(w) | Token::Number(w) => w.clone(),
        Token::Quoted(w) => format!("`{w}`"),
        Token::Symbol(c) => c.to_string(),
    };
    let cut: String = text.chars().take(64).collect();
    format!("'{cut}'")
}

/// Statements and clauses the local instance does not serve, by their first words.
const REFUSED: [(&[&str], &str); 12] = [
    (
        &["ALTER"],
        "ALTER statements (ALTER TABLE, ALTER INDEX, ALTER DATABASE...)",
    ),
    (&["CREATE", "VIEW"], "CREATE VIEW"),
    (&["CREATE", "OR"], "CREATE OR REPLACE (views)"),
    (&["CREATE", "CHANGE"], "CHANGE STREAM"),
    (&["DROP", "CHANGE"], "CHANGE STREAM"),
    (&["CREATE", "SEARCH"], "search indexes"),
    (&["CREATE", "VECTOR"], "vector indexes"),
    (&["CREATE", "SEQUENCE"], "sequences"),
    (&["CREATE", "ROLE"], "roles"),
    (&["GRANT"], "GRANT"),
    (&["CREATE", "MODEL"], "models"),
    (&["CREATE", "PROTO"], "proto bundles"),
];

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn peek_word(&self, n: usize) -> Option<&str> {
        match self.tokens.get(self.at + n) {
            Some(Token::Word(w)) => Some(w),
            _ => None,
        }
    }

    /// Takes the keyword `word` if it comes next.
    fn eat(&mut self, word: &str) -> bool {
        let here = self
            .peek_word(0)
            .is_some_and(|w| w.eq_ignore_ascii_case(word));
        if here {
            self.at += 1;
        }
        here
    }

    fn expect(&mut self, word: &str) -> Result<(), DdlError> {
        if self.eat(word) {
            return Ok(());
        }
        err(format!("expected {word}, found {}", self.found()))
    }

    fn found(&self) -> String {
        self.peek().map_or("the end of the statement".into(), shown)
    }

    fn symbol(&mut self, c: char) -> bool {
        let here = self.peek() == Some(&Token::Symbol(c));
        if here {
            self.at += 1;
        }
        here
    }

    fn expect_symbol(&mut self, c: char) -> Result<(), DdlError> {
        if self.symbol(c) {
            return Ok(());
        }
        err(format!("expected '{c}', found {}", self.found()))
    }

    /// A name: `[A-Za-z_][A-Za-z0-9_]*`, at most [`MAX_NAME_CHARS`], bare or backquoted.
    fn name(&mut self, what: &str) -> Result<String, DdlError> {
        let name = match self.peek() {
            Some(Token::Word(w) | Token::Quoted(w)) => w.clone(),
            _ => {
                return err(format!(
                    "expected the name of {what}, found {}",
                    self.found()
                ));
            }
        };
        self.at += 1;
        let well_formed = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !well_formed {
            return err(format!(
                "the name {} of {what} is not a GoogleSQL identifier (letters, digits and _, \
                 not starting with a digit)",
                shown(&Token::Quoted(name))
            ));
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return err(format!(
                "the name of {what} is {} characters long, more than the {MAX_NAME_CHARS} \
                 Spanner allows",
                name.chars().count()
            ));
        }
        if name.len() >= 7 && name[..7].eq_ignore_ascii_case("sqlite_") {
            return err(format!(
                "the name {name} is reserved on the local instance (names starting with sqlite_)"
            ));
        }
        Ok(name)
    }

    fn statement(&mut self) -> Result<Ddl, DdlError> {
        for (words, what) in REFUSED {
            if words
                .iter()
                .enumerate()
                .all(|(n, w)| self.peek_word(n).is_some_and(|x| x.eq_ignore_ascii_case(w)))
            {
                return err(format!(
                    "{what} is not supported by the local instance: it accepts CREATE TABLE, \
                     DROP TABLE, CREATE INDEX and DROP INDEX"
                ));
            }
        }
        if self.eat("CREATE") {
            if self.eat("TABLE") {
                return self.create_table().map(Ddl::CreateTable);
            }
            return self.create_index().map(Ddl::CreateIndex);
        }
        if self.eat("DROP") {
            let table = self.eat("TABLE");
            if !table {
                self.expect("INDEX")?;
            }
            let if_exists = self.eat("IF") && {
                self.expect("EXISTS")?;
                true
            };
            let name = self.name(if table { "the table" } else { "the index" })?;
            return Ok(if table {
                Ddl::DropTable { name, if_exists }
            } else {
                Ddl::DropIndex { name, if_exists }
            });
        }
        err(format!(
            "the local instance accepts CREATE TABLE, DROP TABLE, CREATE INDEX and DROP INDEX; \
             this statement starts with {}",
            self.found()
        ))
    }

    fn if_not_exists(&mut self) -> Result<bool, DdlError> {
        if !self.eat("IF") {
            return Ok(false);
        }
        self.expect("NOT")?;
        self.expect("EXISTS")?;
        Ok(true)
    }

    fn create_table(&mut self) -> Result<NewTable, DdlError> {
        let if_not_exists = self.if_not_exists()?;
        let name = self.name("the table")?;
        self.expect_symbol('(')?;
        let mut columns: Vec<NewColumn> = Vec::new();
        while !self.symbol(')') {
            for word in ["CONSTRAINT", "FOREIGN", "CHECK", "PRIMARY", "SYNONYM"] {
                if self
                    .peek_word(0)
                    .is_some_and(|w| w.eq_ignore_ascii_case(word))
                {
                    return err(format!(
                        "{word} inside CREATE TABLE is not supported by the local instance \
                         (columns only; the primary key comes after the parenthesis)"
                    ));
                }
            }
            let column = self.column()?;
            if columns
                .iter()
                .any(|c| c.field.name.eq_ignore_ascii_case(&column.field.name))
            {
                return err(format!(
                    "Duplicate column name {}.{}",
                    name, column.field.name
                ));
            }
            columns.push(column);
            if columns.len() > MAX_COLUMNS {
                return err(format!(
                    "table {name} has more than {MAX_COLUMNS} columns, the most Spanner allows"
                ));
            }
            if !self.symbol(',') {
                self.expect_symbol(')')?;
                break;
            }
        }
        if columns.is_empty() {
            return err(format!("table {name} has no columns"));
        }
        self.expect("PRIMARY")?;
        self.expect("KEY")?;
        let primary_key = self.key_list("the primary key")?;
        if primary_key.is_empty() {
            return err(format!(
                "table {name}: PRIMARY KEY () (a table of one row) is not supported by the local \
                 instance; name a key column"
            ));
        }
        if self.symbol(',') {
            return err(match self.peek_word(0) {
                Some(w) if w.eq_ignore_ascii_case("INTERLEAVE") => {
                    "INTERLEAVE IN PARENT is not supported by the local instance: create the \
                     table without it (the key may still begin with the parent's key)"
                }
                Some(w) if w.eq_ignore_ascii_case("ROW") => {
                    "ROW DELETION POLICY is not supported by the local instance"
                }
                _ => {
                    "only INTERLEAVE IN PARENT or ROW DELETION POLICY may follow the primary \
                      key, and the local instance supports neither"
                }
            });
        }
        Ok(NewTable {
            name,
            if_not_exists,
            columns,
            primary_key,
        })
    }

    /// `( name [ASC|DESC], ... )`, at most [`MAX_KEY_COLUMNS`], possibly empty.
    fn key_list(&mut self, what: &str) -> Result<Vec<(String, bool)>, DdlError> {
        self.expect_symbol('(')?;
        let mut keys: Vec<(String, bool)> = Vec::new();
        if self.symbol(')') {
            return Ok(keys);
        }
        loop {
            let name = self.name(&format!("a column of {what}"))?;
            let desc = self.eat("DESC");
            if !desc {
                self.eat("ASC");
            }
            if keys.iter().any(|(k, _)| k.eq_ignore_ascii_case(&name)) {
                return err(format!("{what} names column {name} twice"));
            }
            keys.push((name, desc));
            if keys.len() > MAX_KEY_COLUMNS {
                return err(format!(
                    "{what} has more than {MAX_KEY_COLUMNS} columns, the most Spanner allows"
                ));
            }
            if !self.symbol(',') {
                self.expect_symbol(')')?;
                return Ok(keys);
            }
        }
    }

    fn column(&mut self) -> Result<NewColumn, DdlError> {
        let name = self.name("a column")?;
        let (ty, max_length) = self.column_type(&name)?;
        let mut not_null = false;
        loop {
            if self.eat("NOT") {
                self.expect("NULL")?;
                not_null = true;
            } else if self.eat("OPTIONS") {
                self.options(&name)?;
            } else if let Some(w) = self.peek_word(0) {
                let what = match w.to_ascii_uppercase().as_str() {
                    "DEFAULT" => "DEFAULT values",
                    "AS" => "generated columns (AS ...)",
                    "HIDDEN" => "HIDDEN columns",
                    "PRIMARY" => "PRIMARY KEY on a column (name the key after the columns)",
                    "REFERENCES" | "CONSTRAINT" => "foreign keys",
                    "NULL" => "NULL written out (columns are nullable unless NOT NULL)",
                    _ => return err(format!("unexpected {} after column {name}", self.found())),
                };
                return err(format!(
                    "{what} are not supported by the local instance (column {name})"
                ));
            } else {
                return Ok(NewColumn {
                    field: Field { name, ty },
                    max_length,
                    not_null,
                });
            }
        }
    }

    /// `OPTIONS (allow_commit_timestamp = true|false|null)`: accepted, of no effect.
    fn options(&mut self, column: &str) -> Result<(), DdlError> {
        self.expect_symbol('(')?;
        loop {
            if !self.eat("allow_commit_timestamp") {
                return err(format!(
                    "column {column}: the only column option the local instance knows is \
                     allow_commit_timestamp, found {}",
                    self.found()
                ));
            }
            self.expect_symbol('=')?;
            if !(self.eat("true") || self.eat("false") || self.eat("null")) {
                return err(format!(
                    "column {column}: allow_commit_timestamp takes true, false or null, found {}",
                    self.found()
                ));
            }
            if !self.symbol(',') {
                return self.expect_symbol(')');
            }
        }
    }

    /// A column's type: a scalar, or an ARRAY of one.
    fn column_type(&mut self, column: &str) -> Result<(Type, Option<u32>), DdlError> {
        if self.eat("ARRAY") {
            self.expect_symbol('<')?;
            let (element, length) = self.scalar(column)?;
            self.expect_symbol('>')?;
            return Ok((Type::Array(Box::new(element)), length));
        }
        self.scalar(column)
    }

    fn scalar(&mut self, column: &str) -> Result<(Type, Option<u32>), DdlError> {
        let word = self.peek_word(0).unwrap_or_default().to_ascii_uppercase();
        let ty = match word.as_str() {
            "INT64" => Type::Int64,
            "FLOAT64" => Type::Float64,
            "FLOAT32" => Type::Float32,
            "BOOL" => Type::Bool,
            "DATE" => Type::Date,
            "TIMESTAMP" => Type::Timestamp,
            "NUMERIC" => Type::Numeric { pg: false },
            "JSON" => Type::Json { pg: false },
            "STRING" => Type::String,
            "BYTES" => Type::Bytes,
            _ => {
                return err(format!(
                    "column {column}: unknown or unsupported type {}; the local instance is a \
                     GoogleSQL database and knows INT64, FLOAT64, FLOAT32, BOOL, STRING(N|MAX), \
                     BYTES(N|MAX), DATE, TIMESTAMP, NUMERIC, JSON and ARRAY<...> of them \
                     (PostgreSQL-dialect DDL is not supported)",
                    self.found()
                ));
            }
        };
        self.at += 1;
        if !matches!(ty, Type::String | Type::Bytes) {
            return Ok((ty, None));
        }
        self.expect_symbol('(')?;
        let length = if self.eat("MAX") {
            None
        } else {
            let n = match self.peek() {
                Some(Token::Number(n)) => n.parse::<u32>().ok().filter(|&n| n > 0),
                _ => None,
            };
            let Some(n) = n else {
                return err(format!(
                    "column {column}: {word}(N) takes a length of 1 or more, or MAX; found {}",
                    self.found()
                ));
            };
            self.at += 1;
            Some(n)
        };
        self.expect_symbol(')')?;
        Ok((ty, length))
    }

    fn create_index(&mut self) -> Result<NewIndex, DdlError> {
        let unique = self.eat("UNIQUE");
        let null_filtered = self.eat("NULL_FILTERED");
        if !self.eat("INDEX") {
            return err(format!(
                "CREATE {} is not supported by the local instance: it accepts CREATE TABLE and \
                 CREATE [UNIQUE] [NULL_FILTERED] INDEX",
                self.found()
            ));
        }
        let if_not_exists = self.if_not_exists()?;
        let name = self.name("the index")?;
        self.expect("ON")?;
        let table = self.name("the index's table")?;
        let columns = self.key_list(&format!("index {name}"))?;
        if columns.is_empty() {
            return err(format!("index {name} names no columns"));
        }
        let mut storing = Vec::new();
        if self.eat("STORING") {
            self.expect_symbol('(')?;
            loop {
                storing.push(self.name("a stored column")?);
                if storing.len() > MAX_COLUMNS {
                    return err(format!(
                        "index {name} stores more than {MAX_COLUMNS} columns"
                    ));
                }
                if !self.symbol(',') {
                    self.expect_symbol(')')?;
                    break;
                }
            }
        }
        if self.symbol(',') || self.peek_word(0).is_some() {
            return err(format!(
                "{} after CREATE INDEX's columns is not supported by the local instance \
                 (INTERLEAVE IN, WHERE and OPTIONS are not)",
                self.found()
            ));
        }
        Ok(NewIndex {
            name,
            table,
            unique,
            null_filtered,
            if_not_exists,
            columns,
            storing,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_four_statements_in_any_case_with_comments_and_backquotes() {
        let sql = "create table if not exists `Songs` ( -- a comment\n Id INT64 NOT NULL, \
                   Title string(100) OPTIONS (allow_commit_timestamp = true), Tags ARRAY<STRING(MAX)>, \
                   /* c */ At TIMESTAMP, # more\n Score FLOAT32 ) PRIMARY KEY (Id DESC);";
        let Ok(Ddl::CreateTable(t)) = parse(sql) else {
            panic!("parses: {:?}", parse(sql));
        };
        assert_eq!(t.name, "Songs");
        assert!(t.if_not_exists);
        assert_eq!(t.columns.len(), 5);
        assert_eq!(t.columns[1].max_length, Some(100));
        assert_eq!(t.columns[2].field.ty, Type::Array(Box::new(Type::String)));
        assert!(t.columns[0].not_null && !t.columns[1].not_null);
        assert_eq!(t.primary_key, vec![("Id".to_string(), true)]);
        assert_eq!(
            parse("DROP TABLE IF EXISTS Songs"),
            Ok(Ddl::DropTable {
                name: "Songs".into(),
                if_exists: true
            })
        );
        let Ok(Ddl::CreateIndex(i)) = parse(
            "CREATE UNIQUE NULL_FILTERED INDEX ByTitle ON Songs (Title, At DESC) STORING (Score)",
        ) else {
            panic!("parses an index");
        };
        assert!(i.unique && i.null_filtered);
        assert_eq!(
            i.columns,
            vec![("Title".into(), false), ("At".into(), true)]
        );
        assert_eq!(i.storing, vec!["Score".to_string()]);
        assert!(matches!(
            parse("drop index ByTitle"),
            Ok(Ddl::DropIndex { .. })
        ));
    }

    #[test]
    fn refuses_what_it_does_not_serve_by_name() {
        for (sql, says) in [
            ("ALTER TABLE T ADD COLUMN X INT64", "ALTER"),
            (
                "CREATE VIEW V SQL SECURITY INVOKER AS SELECT 1",
                "CREATE VIEW",
            ),
            ("CREATE CHANGE STREAM S FOR ALL", "CHANGE STREAM"),
            (
                "CREATE TABLE C (A INT64, B INT64) PRIMARY KEY (A, B), INTERLEAVE IN PARENT P",
                "INTERLEAVE IN PARENT",
            ),
            (
                "CREATE TABLE C (A INT64, T TIMESTAMP) PRIMARY KEY (A), ROW DELETION POLICY \
                 (OLDER_THAN(T, INTERVAL 1 DAY))",
                "ROW DELETION POLICY",
            ),
            ("CREATE TABLE t (id bigint PRIMARY KEY)", "PostgreSQL"),
            (
                "CREATE TABLE T (A INT64 DEFAULT (1)) PRIMARY KEY (A)",
                "DEFAULT",
            ),
            ("CREATE TABLE T (A INT64)", "expected PRIMARY"),
            (
                "CREATE TABLE sqlite_x (A INT64) PRIMARY KEY (A)",
                "reserved",
            ),
            (
                "CREATE TABLE T (A INT64, a STRING(MAX)) PRIMARY KEY (A)",
                "Duplicate column",
            ),
            ("CREATE TABLE T (A STRING(0)) PRIMARY KEY (A)", "length"),
            ("SELECT 1", "starts with 'SELECT'"),
        ] {
            let e = parse(sql).expect_err(sql);
            assert!(e.0.contains(says), "{sql}: {e}");
        }
    }
}
