//! The local instance's schema: every table with its Spanner columns and primary key (the demo
//! tables, and those `UpdateDatabaseDdl` created), the indexes, and the SQLite index of each name.
//! A [`Schema`] is a snapshot that never changes; the [`Catalog`] holds the current one, which the
//! writer replaces after each DDL statement commits (`write.rs`). [`Schema::plan`] turns a parsed
//! statement (`ddl.rs`) into the SQLite statement that applies it and the schema after it, or the
//! error Spanner would give: a duplicate name, a table or column not found, a demo table (which
//! cannot be dropped or recreated), or the bounds on tables and indexes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, PoisonError, RwLock};

use tonic::Status;

use super::ddl::{Ddl, NewIndex, NewTable};
use super::sql_value::sqlite_type;
use crate::demo;
use crate::wire::{Field, Type};

/// The most tables `UpdateDatabaseDdl` may create (ours; the demo tables aside).
pub const MAX_CREATED_TABLES: usize = 256;
/// The most indexes one table may have (ours).
pub const MAX_INDEXES_PER_TABLE: usize = 32;

/// Where a table comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A demo table stored in SQLite (Singers, Albums, Blobs, Accounts).
    Demo,
    /// Seed23, generated from its ids: read-only.
    Generated,
    /// Created by `UpdateDatabaseDdl`.
    Created,
}

/// One table: its name, Spanner columns and primary key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    /// Its name, as created.
    pub name: String,
    /// Its columns in order, with their Spanner types.
    pub columns: Vec<Field>,
    /// Its primary key's columns, in key order.
    pub primary_key: Vec<String>,
    /// Where it comes from.
    pub origin: Origin,
}

impl TableDef {
    /// The column called `name` (in any case).
    pub fn column(&self, name: &str) -> Option<&Field> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Whether rows may be written (every table but Seed23).
    pub fn writable(&self) -> bool {
        self.origin != Origin::Generated
    }
}

/// An index created by `UpdateDatabaseDdl`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// Its name, as created.
    pub name: String,
    /// Its table, lower-cased.
    pub table: String,
}

/// The tables and indexes at one moment.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// Every table, by lower-cased name.
    tables: BTreeMap<String, Arc<TableDef>>,
    /// The indexes `UpdateDatabaseDdl` created, by lower-cased name.
    indexes: BTreeMap<String, IndexDef>,
    /// The table of each index SQLite has (its own primary-key indexes included), by lower-cased
    /// index name.
    sqlite_indexes: BTreeMap<String, String>,
}

/// A statement as it applies: the SQLite statements, the schema after them, and the table it
/// changes (lower-cased), for the transactions' validation.
#[derive(Debug, Clone)]
pub struct Change {
    /// What to run on SQLite (none when `IF [NOT] EXISTS` made it a no-op).
    pub sql: Vec<String>,
    /// The schema after it (its SQLite indexes to be read again).
    pub after: Schema,
    /// The table whose definition changes.
    pub table: String,
}

impl Schema {
    /// The demo tables, with SQLite's indexes of them.
    pub fn demo(sqlite_indexes: BTreeMap<String, String>) -> Self {
        let tables = demo::tables()
            .into_iter()
            .map(|t| {
                let origin = if t.name == "Seed23" {
                    Origin::Generated
                } else {
                    Origin::Demo
                };
                let def = TableDef {
                    name: t.name.to_owned(),
                    columns: t.columns,
                    primary_key: t.primary_key.iter().map(|k| (*k).to_owned()).collect(),
                    origin,
                };
                (t.name.to_lowercase(), Arc::new(def))
            })
            .collect();
        Schema {
            tables,
            indexes: BTreeMap::new(),
            sqlite_indexes,
        }
    }

    /// The table called `name` (in any case).
    pub fn table(&self, name: &str) -> Option<&Arc<TableDef>> {
        self.tables.get(&name.to_lowercase())
    }

    /// Every table, in the order of their lower-cased names.
    pub fn tables(&self) -> impl Iterator<Item = &Arc<TableDef>> {
        self.tables.values()
    }

    /// The Spanner type of a table's column.
    pub fn column_type(&self, table: &str, column: &str) -> Option<&Type> {
        Some(&self.table(table)?.column(column)?.ty)
    }

    /// The table an index belongs to, as SQLite names it (its primary-key indexes included).
    pub fn index_table(&self, name: &str) -> Option<&str> {
        self.sqlite_indexes
            .get(&name.to_lowercase())
            .map(String::as_str)
    }

    /// The index `UpdateDatabaseDdl` created under `name`, if any.
    pub fn index(&self, name: &str) -> Option<&IndexDef> {
        self.indexes.get(&name.to_lowercase())
    }

    /// Replaces what SQLite's indexes are (read again after a statement ran).
    pub fn set_sqlite_indexes(&mut self, sqlite_indexes: BTreeMap<String, String>) {
        self.sqlite_indexes = sqlite_indexes;
    }

    /// How `ddl` applies to this schema, or why it cannot.
    pub fn plan(&self, ddl: &Ddl) -> Result<Change, Status> {
        match ddl {
            Ddl::CreateTable(t) => self.create_table(t),
            Ddl::DropTable { name, if_exists } => self.drop_table(name, *if_exists),
            Ddl::CreateIndex(i) => self.create_index(i),
            Ddl::DropIndex { name, if_exists } => self.drop_index(name, *if_exists),
        }
    }

    fn unchanged(&self, table: &str) -> Change {
        Change {
            sql: Vec::new(),
            after: self.clone(),
            table: table.to_lowercase(),
        }
    }

    fn taken(&self, name: &str) -> bool {
        let key = name.to_lowercase();
        self.tables.contains_key(&key) || self.sqlite_indexes.contains_key(&key)
    }

    fn create_table(&self, t: &NewTable) -> Result<Change, Status> {
        if let Some(existing) = self.table(&t.name) {
            if existing.origin != Origin::Created {
                return Err(demo_table(&existing.name, "recreated"));
            }
            if t.if_not_exists {
                return Ok(self.unchanged(&t.name));
            }
        }
        if self.taken(&t.name) {
            return Err(duplicate(&t.name));
        }
        let created = self
            .tables
            .values()
            .filter(|t| t.origin == Origin::Created)
            .count();
        if created >= MAX_CREATED_TABLES {
            return Err(Status::failed_precondition(format!(
                "the local instance holds at most {MAX_CREATED_TABLES} created tables: drop one \
                 before creating {}",
                t.name
            )));
        }
        let mut primary_key = Vec::with_capacity(t.primary_key.len());
        let mut key_sql = Vec::with_capacity(t.primary_key.len());
        for (key, desc) in &t.primary_key {
            let Some(column) = t
                .columns
                .iter()
                .find(|c| c.field.name.eq_ignore_ascii_case(key))
            else {
                return Err(Status::failed_precondition(format!(
                    "Table {} references nonexistent key column {key}.",
                    t.name
                )));
            };
            primary_key.push(column.field.name.clone());
            key_sql.push(format!("\"{}\"{}", column.field.name, direction(*desc)));
        }
        let mut sql = format!("CREATE TABLE \"{}\" (", t.name);
        for (i, c) in t.columns.iter().enumerate() {
            let name = &c.field.name;
            let _ = write!(
                sql,
                "{}\"{name}\" {}",
                if i > 0 { ", " } else { "" },
                sqlite_type(&c.field.ty)
            );
            // Key columns are stored NOT NULL: a NULL key is not modelled.
            if c.not_null || primary_key.contains(name) {
                sql.push_str(" NOT NULL");
            }
            if let (Some(n), Type::String | Type::Bytes) = (c.max_length, &c.field.ty) {
                let _ = write!(sql, " CHECK (length(\"{name}\") <= {n})");
            }
        }
        let _ = write!(sql, ", PRIMARY KEY ({})", key_sql.join(", "));
        sql.push(')');
        let mut after = self.clone();
        let def = TableDef {
            name: t.name.clone(),
            columns: t.columns.iter().map(|c| c.field.clone()).collect(),
            primary_key,
            origin: Origin::Created,
        };
        after.tables.insert(t.name.to_lowercase(), Arc::new(def));
        Ok(Change {
            sql: vec![sql],
            after,
            table: t.name.to_lowercase(),
        })
    }

    fn drop_table(&self, name: &str, if_exists: bool) -> Result<Change, Status> {
        let Some(table) = self.table(name) else {
            if if_exists {
                return Ok(self.unchanged(name));
            }
            return Err(table_not_found(name));
        };
        if table.origin != Origin::Created {
            return Err(demo_table(&table.name, "dropped"));
        }
        let key = table.name.to_lowercase();
        if let Some(index) = self.indexes.values().find(|i| i.table == key) {
            return Err(Status::failed_precondition(format!(
                "Cannot drop table {} with indices: {}.",
                table.name, index.name
            )));
        }
        let mut after = self.clone();
        after.tables.remove(&key);
        Ok(Change {
            sql: vec![format!("DROP TABLE \"{}\"", table.name)],
            after,
            table: key,
        })
    }

    fn create_index(&self, i: &NewIndex) -> Result<Change, Status> {
        let Some(table) = self.table(&i.table) else {
            return Err(table_not_found(&i.table));
        };
        if let Some(existing) = self.index(&i.name)
            && i.if_not_exists
        {
            return Ok(self.unchanged(&existing.table));
        }
        if table.origin != Origin::Created {
            return Err(Status::failed_precondition(format!(
                "{} is a demo table of the local instance: its schema is fixed (create an index \
                 on a table you created)",
                table.name
            )));
        }
        if self.taken(&i.name) {
            return Err(duplicate(&i.name));
        }
        let key = table.name.to_lowercase();
        if self.indexes.values().filter(|x| x.table == key).count() >= MAX_INDEXES_PER_TABLE {
            return Err(Status::failed_precondition(format!(
                "table {} has {MAX_INDEXES_PER_TABLE} indexes, the most the local instance allows",
                table.name
            )));
        }
        let column = |name: &str| {
            table.column(name).map(|c| c.name.clone()).ok_or_else(|| {
                Status::not_found(format!(
                    "Index {} references nonexistent column {name} of table {}.",
                    i.name, table.name
                ))
            })
        };
        let mut parts = Vec::with_capacity(i.columns.len());
        let mut filters = Vec::new();
        for (name, desc) in &i.columns {
            let name = column(name)?;
            parts.push(format!("\"{name}\"{}", direction(*desc)));
            filters.push(format!("\"{name}\" IS NOT NULL"));
        }
        for name in &i.storing {
            column(name)?;
        }
        let mut sql = format!(
            "CREATE {}INDEX \"{}\" ON \"{}\" ({})",
            if i.unique { "UNIQUE " } else { "" },
            i.name,
            table.name,
            parts.join(", ")
        );
        if i.null_filtered {
            let _ = write!(sql, " WHERE {}", filters.join(" AND "));
        }
        let mut after = self.clone();
        after.indexes.insert(
            i.name.to_lowercase(),
            IndexDef {
                name: i.name.clone(),
                table: key.clone(),
            },
        );
        Ok(Change {
            sql: vec![sql],
            after,
            table: key,
        })
    }

    fn drop_index(&self, name: &str, if_exists: bool) -> Result<Change, Status> {
        let Some(index) = self.index(name) else {
            if if_exists {
                return Ok(self.unchanged(name));
            }
            return Err(Status::not_found(format!("Index not found: {name}")));
        };
        let mut after = self.clone();
        after.indexes.remove(&name.to_lowercase());
        Ok(Change {
            sql: vec![format!("DROP INDEX \"{}\"", index.name)],
            after,
            table: index.table.clone(),
        })
    }
}

fn direction(desc: bool) -> &'static str {
    if desc { " DESC" } else { "" }
}

fn duplicate(name: &str) -> Status {
    Status::failed_precondition(format!("Duplicate name in schema: {name}."))
}

fn table_not_found(name: &str) -> Status {
    Status::not_found(format!("Table not found: {name}"))
}

fn demo_table(name: &str, what: &str) -> Status {
    Status::failed_precondition(format!(
        "{name} is a demo table of the local instance and cannot be {what} (the demo tables \
         Seed23, Singers, Albums, Blobs and Accounts are fixed)"
    ))
}

/// The current schema, shared by the database, the sandboxes and the writer.
#[derive(Debug, Default)]
pub struct Catalog {
    now: RwLock<Arc<Schema>>,
}

impl Catalog {
    /// A catalog holding `schema`.
    pub fn new(schema: Schema) -> Self {
        Catalog {
            now: RwLock::new(Arc::new(schema)),
        }
    }

    /// The schema now: a snapshot that later DDL does not change.
    pub fn get(&self) -> Arc<Schema> {
        Arc::clone(&self.now.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Makes `schema` the current one (the writer, after a DDL statement committed).
    pub fn set(&self, schema: Schema) {
        *self.now.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(schema);
    }
}

#[cfg(test)]
mod tests {
    use super::super::ddl::parse;
    use super::*;

    fn plan(schema: &Schema, sql: &str) -> Result<Change, Status> {
        schema.plan(&parse(sql).expect("parses"))
    }

    #[test]
    fn plans_sqlite_statements_and_refuses_duplicates_and_demo_tables() {
        let schema = Schema::demo(BTreeMap::new());
        let change = plan(
            &schema,
            "CREATE TABLE Songs (Id INT64, Title STRING(10) NOT NULL) PRIMARY KEY (Id DESC)",
        )
        .expect("plans");
        assert_eq!(
            change.sql,
            vec![
                "CREATE TABLE \"Songs\" (\"Id\" INTEGER NOT NULL, \"Title\" TEXT NOT NULL CHECK \
                 (length(\"Title\") <= 10), PRIMARY KEY (\"Id\" DESC))"
            ]
        );
        let after = change.after;
        assert_eq!(after.column_type("songs", "TITLE"), Some(&Type::String));
        let e = plan(&after, "CREATE TABLE SONGS (X INT64) PRIMARY KEY (X)").expect_err("dup");
        assert_eq!(e.message(), "Duplicate name in schema: SONGS.");
        assert!(
            plan(
                &after,
                "CREATE TABLE IF NOT EXISTS Songs (X INT64) PRIMARY KEY (X)"
            )
            .is_ok_and(|c| c.sql.is_empty())
        );
        for sql in [
            "DROP TABLE Singers",
            "DROP TABLE seed23",
            "CREATE TABLE Accounts (A INT64) PRIMARY KEY (A)",
        ] {
            let e = plan(&after, sql).expect_err(sql);
            assert!(e.message().contains("demo table"), "{sql}: {e:?}");
        }
        let index = plan(
            &after,
            "CREATE NULL_FILTERED INDEX ByTitle ON Songs (Title) STORING (Id)",
        )
        .expect("an index");
        assert_eq!(
            index.sql,
            vec!["CREATE INDEX \"ByTitle\" ON \"Songs\" (\"Title\") WHERE \"Title\" IS NOT NULL"]
        );
        let e = plan(&index.after, "DROP TABLE Songs").expect_err("has an index");
        assert!(e.message().contains("with indices"), "{e:?}");
        assert!(plan(&after, "CREATE INDEX X ON Songs (Nope)").is_err());
        assert!(plan(&after, "CREATE TABLE T (A INT64) PRIMARY KEY (B)").is_err());
    }
}
