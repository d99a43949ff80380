//! The demo tables: what the built-in local instance serves and what `spanprof seed` loads into the
//! Cloud Spanner emulator.
//!
//! Each table is described once ([`DemoTable`]: Spanner columns, primary key, GoogleSQL DDL) and its
//! rows come from a deterministic generator ([`rng`]), so every cell is a pure function of (table,
//! row id, column) and the same on every machine:
//! - [`seed23`]: the 23-column `Seed23` table of the recorded stream vectors, as many rows as asked for;
//! - [`music`]: the classic `Singers` and interleaved `Albums` sample, a few fixed rows;
//! - [`blobs`]: `Blobs`, 14 rows whose `Data` doubles from 1 KiB to 8 MiB;
//! - [`accounts`]: `Accounts`, 1,000 balances of 1,000, for read-write transactions.

pub mod accounts;
pub mod blobs;
pub mod music;
pub mod rng;
pub mod seed23;
mod words;

#[cfg(test)]
use crate::wire::Value;
use crate::wire::{Field, Type};

/// One demo table: its Spanner columns, its primary key and what its DDL needs besides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoTable {
    /// The table name, e.g. `Seed23`.
    pub name: &'static str,
    /// The columns in table order, with their Spanner types.
    pub columns: Vec<Field>,
    /// The primary key columns, in key order.
    pub primary_key: Vec<&'static str>,
    /// The STRING or BYTES columns whose length limit is not `MAX`, with their limit
    /// (`FirstName STRING(1024)`).
    pub length_limits: Vec<(&'static str, u32)>,
    /// The table this one is interleaved in (`INTERLEAVE IN PARENT .. ON DELETE CASCADE`), if any.
    pub parent: Option<&'static str>,
    /// The columns besides the key that are `NOT NULL`.
    pub not_null: Vec<&'static str>,
}

impl DemoTable {
    /// The GoogleSQL `CREATE TABLE` statement for the emulator, on one line and without a trailing
    /// semicolon. Key columns are `NOT NULL`, and those [`DemoTable::not_null`] names.
    ///
    /// `CREATE TABLE Albums (SingerId INT64 NOT NULL, ..., MarketingBudget INT64) PRIMARY KEY
    /// (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE`
    pub fn ddl(&self) -> String {
        let mut out = String::with_capacity(64 + 32 * self.columns.len());
        out.push_str("CREATE TABLE ");
        out.push_str(self.name);
        out.push_str(" (");
        for (i, column) in self.columns.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(&column.name);
            out.push(' ');
            push_ddl_type(&mut out, &column.ty, self.length_limit(&column.name));
            let name = column.name.as_str();
            if self.primary_key.contains(&name) || self.not_null.contains(&name) {
                out.push_str(" NOT NULL");
            }
        }
        out.push_str(") PRIMARY KEY (");
        out.push_str(&self.primary_key.join(", "));
        out.push(')');
        if let Some(parent) = self.parent {
            out.push_str(", INTERLEAVE IN PARENT ");
            out.push_str(parent);
            out.push_str(" ON DELETE CASCADE");
        }
        out
    }

    /// The position of the column called `name`, if there is one.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    fn length_limit(&self, column: &str) -> Option<u32> {
        self.length_limits
            .iter()
            .find(|(name, _)| *name == column)
            .map(|&(_, limit)| limit)
    }
}

/// Appends the DDL spelling of a column type: `STRING(MAX)`, `ARRAY<FLOAT64>`, `NUMERIC`, ...
/// `limit` replaces `MAX` for STRING and BYTES (and their arrays).
fn push_ddl_type(out: &mut String, ty: &Type, limit: Option<u32>) {
    let sized = |out: &mut String, base: &str| {
        out.push_str(base);
        out.push('(');
        match limit {
            Some(n) => out.push_str(&n.to_string()),
            None => out.push_str("MAX"),
        }
        out.push(')');
    };
    match ty {
        Type::String => sized(out, "STRING"),
        Type::Bytes => sized(out, "BYTES"),
        Type::Array(element) => {
            out.push_str("ARRAY<");
            push_ddl_type(out, element, limit);
            out.push('>');
        }
        // The scalar types print as their GoogleSQL names.
        other => out.push_str(&other.to_string()),
    }
}

/// All demo tables, parents before the tables interleaved in them: `Seed23`, `Singers`, `Albums`,
/// `Blobs`, `Accounts`.
pub fn tables() -> Vec<DemoTable> {
    vec![
        seed23::table(),
        music::singers(),
        music::albums(),
        blobs::table(),
        accounts::table(),
    ]
}

/// A column of `name` and type `ty`.
fn field(name: &str, ty: Type) -> Field {
    Field {
        name: name.to_owned(),
        ty,
    }
}

/// Whether `v` is a value of type `ty` (NULL is a value of every type; array elements are checked).
#[cfg(test)]
pub(crate) fn fits(ty: &Type, v: &Value) -> bool {
    match (ty, v) {
        (_, Value::Null)
        | (Type::Bool, Value::Bool(_))
        | (Type::Int64, Value::Int64(_))
        | (Type::Float32, Value::Float32(_))
        | (Type::Float64, Value::Float64(_))
        | (Type::Numeric { .. }, Value::Numeric(_))
        | (Type::String, Value::String(_))
        | (Type::Bytes, Value::Bytes(_))
        | (Type::Json { .. }, Value::Json(_))
        | (Type::Date, Value::Date(_))
        | (Type::Timestamp, Value::Timestamp(_)) => true,
        (Type::Array(element), Value::Array(items)) => items.iter().all(|i| fits(element, i)),
        (Type::Struct(fields), Value::Struct(items)) => {
            fields.len() == items.len() && fields.iter().zip(items).all(|(f, i)| fits(&f.ty, i))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddl_spells_the_music_tables_like_the_classic_sample() {
        assert_eq!(
            music::singers().ddl(),
            "CREATE TABLE Singers (SingerId INT64 NOT NULL, FirstName STRING(1024), \
             LastName STRING(1024), SingerInfo BYTES(MAX), BirthDate DATE) PRIMARY KEY (SingerId)"
        );
        assert_eq!(
            music::albums().ddl(),
            "CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, \
             AlbumTitle STRING(MAX), MarketingBudget INT64) PRIMARY KEY (SingerId, AlbumId), \
             INTERLEAVE IN PARENT Singers ON DELETE CASCADE"
        );
        assert_eq!(
            blobs::table().ddl(),
            "CREATE TABLE Blobs (Id INT64 NOT NULL, Label STRING(MAX), SizeBytes INT64, \
             Data BYTES(MAX)) PRIMARY KEY (Id)"
        );
        assert_eq!(
            accounts::table().ddl(),
            "CREATE TABLE Accounts (AccountId INT64 NOT NULL, Balance INT64 NOT NULL) PRIMARY KEY \
             (AccountId)"
        );
    }

    #[test]
    fn ddl_spells_every_seed23_type() {
        assert_eq!(
            seed23::table().ddl(),
            "CREATE TABLE Seed23 (Id INT64 NOT NULL, Name STRING(MAX), Email STRING(MAX), \
             Country STRING(MAX), Age INT64, Score FLOAT64, Balance NUMERIC, Active BOOL, \
             CreatedAt TIMESTAMP, UpdatedAt TIMESTAMP, BirthDate DATE, Avatar BYTES(MAX), \
             Tags ARRAY<STRING(MAX)>, Scores ARRAY<FLOAT64>, Attrs JSON, Counter INT64, \
             Ratio FLOAT64, Notes STRING(MAX), Category STRING(MAX), Flags ARRAY<BOOL>, \
             Version INT64, Region STRING(MAX), Checksum BYTES(MAX)) PRIMARY KEY (Id)"
        );
    }

    #[test]
    fn tables_are_well_formed_and_parents_come_first() {
        let tables = tables();
        let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
        assert_eq!(names, ["Seed23", "Singers", "Albums", "Blobs", "Accounts"]);
        for (i, table) in tables.iter().enumerate() {
            let mut columns: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
            columns.sort_unstable();
            columns.dedup();
            assert_eq!(
                columns.len(),
                table.columns.len(),
                "{}: duplicate column",
                table.name
            );
            assert!(!table.primary_key.is_empty(), "{}", table.name);
            for key in &table.primary_key {
                assert!(table.column_index(key).is_some(), "{}.{key}", table.name);
            }
            for (column, _) in &table.length_limits {
                let index = table.column_index(column).expect("limited column exists");
                assert!(matches!(
                    table.columns[index].ty,
                    Type::String | Type::Bytes
                ));
            }
            if let Some(parent) = table.parent {
                let parent_index = names.iter().position(|n| *n == parent).expect("parent");
                assert!(parent_index < i, "{} before its parent", table.name);
                let parent_key = &tables[parent_index].primary_key;
                assert_eq!(table.primary_key[..parent_key.len()], parent_key[..]);
            }
        }
    }

    #[test]
    fn fits_checks_types_and_array_elements() {
        let strings = Type::Array(Box::new(Type::String));
        assert!(fits(&Type::Int64, &Value::Int64(1)));
        assert!(fits(&Type::Date, &Value::Null));
        assert!(!fits(&Type::Int64, &Value::Float64(1.0)));
        assert!(!fits(
            &Type::Json { pg: false },
            &Value::String("{}".into())
        ));
        assert!(fits(
            &strings,
            &Value::Array(vec![Value::String("a".into()), Value::Null])
        ));
        assert!(!fits(&strings, &Value::Array(vec![Value::Bool(true)])));
        assert!(!fits(&strings, &Value::String("a".into())));
    }
}
