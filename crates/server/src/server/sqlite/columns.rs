//! The Spanner type of each result column, and the check every value of it passes before it is sent.
//!
//! SQLite is dynamically typed: a column may hold an integer in one row and text in the next. A
//! column's type is decided once, before any row goes out, in this order:
//! - a column read straight from a demo table has that column's type;
//! - a column that is exactly a query parameter (`SELECT @x`, seen in the bytecode) has the
//!   parameter's type;
//! - any other (an expression) takes the type of its first non-NULL value's storage class (INTEGER:
//!   INT64, REAL: FLOAT64, TEXT: STRING, BLOB: BYTES; INT64 when every value looked at is NULL).
//!
//! Every value is then checked against its column's type as it is encoded: a value that does not fit
//! (text in an INT64 column, a blob in a STRING column) fails the query with an error naming the
//! column; a value of one type is never sent as another. A table column is checked by storage class
//! when the statement is one plain SELECT (its values come from the table, which holds nothing else);
//! when the statement has several (UNION arms, subqueries), where another arm may feed it, each value is
//! decoded as the column's type (a date must be a date).
//!
//! SQLite keeps no NaN: it stores a NaN as NULL. A column that is exactly a NaN FLOAT64 parameter
//! sends NaN where SQLite gives NULL; elsewhere (inside expressions) a NaN parameter acts as NULL.

use std::collections::HashMap;

use rusqlite::Statement;
use rusqlite::types::{Value as SqlValue, ValueRef};

use super::scan::Op;
use super::sql_value::{encode_sql, from_sql, param_to_sql, type_of_sql};
use crate::wire::{Field, Type, decode_value};

/// A query parameter as the query thread binds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its value in SQLite (a NaN FLOAT64 binds as NULL).
    pub value: SqlValue,
    /// Its Spanner type (STRING when the request declared none).
    pub ty: Type,
    /// Whether it is a FLOAT64 or FLOAT32 NaN.
    pub nan: bool,
}

impl Param {
    /// A request's parameter: the wire value decoded by its declared type (STRING when undeclared,
    /// as Spanner infers untyped string parameters), stored the way the tables store that type.
    pub fn from_wire(ty: Option<&Type>, value: prost_types::Value) -> Result<Self, String> {
        let value = param_to_sql(ty, value)?;
        let nan = matches!(value, SqlValue::Real(f) if f.is_nan());
        Ok(Param {
            value: if nan { SqlValue::Null } else { value },
            ty: ty.cloned().unwrap_or(Type::String),
            nan,
        })
    }
}

/// One result column as the query thread sends it.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Its name and Spanner type.
    pub field: Field,
    /// How the type was decided, for errors.
    origin: Origin,
    /// Each value is decoded as the type, not only checked by storage class.
    full_check: bool,
    /// The column is exactly a NaN parameter: SQLite's NULL stands for NaN.
    nan: bool,
}

/// Where a column's type came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Table,
    Parameter,
    FirstValue,
}

/// A column whose type may still wait for its first value.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    name: String,
    ty: Option<Type>,
    origin: Origin,
    full_check: bool,
    nan: bool,
}

impl Pending {
    /// Whether the type is still unknown.
    pub fn is_open(&self) -> bool {
        self.ty.is_none()
    }

    /// Types an open column from `value` if it is not NULL.
    pub fn look_at(&mut self, value: ValueRef<'_>) {
        if self.ty.is_none() {
            self.ty = type_of_sql(value);
        }
    }

    /// The column, INT64 if nothing typed it (as Spanner types a bare NULL).
    pub fn decide(self) -> Column {
        self.decide_or(Type::Int64)
    }

    /// The column, `default` if nothing typed it.
    pub fn decide_or(self, default: Type) -> Column {
        Column {
            field: Field {
                name: self.name,
                ty: self.ty.unwrap_or(default),
            },
            origin: self.origin,
            full_check: self.full_check,
            nan: self.nan,
        }
    }
}

/// What is known of the columns before any row: each column's table type (`declared`), whether the
/// statement is one plain SELECT (`simple`), and the parameter each column exactly is, if any.
pub fn plan(
    names: Vec<String>,
    declared: Vec<Option<Type>>,
    simple: bool,
    parameters: &[Option<&Param>],
) -> Vec<Pending> {
    names
        .into_iter()
        .zip(declared)
        .enumerate()
        .map(|(i, (name, declared))| {
            let parameter = parameters.get(i).copied().flatten();
            let (ty, origin) = match (declared, parameter) {
                (Some(ty), _) => (Some(ty), Origin::Table),
                (None, Some(p)) => (Some(p.ty.clone()), Origin::Parameter),
                (None, None) => (None, Origin::FirstValue),
            };
            Pending {
                name,
                full_check: origin == Origin::Table && !simple,
                nan: origin == Origin::Parameter && parameter.is_some_and(|p| p.nan),
                ty,
                origin,
            }
        })
        .collect()
}

impl Column {
    /// Writes `value`, this column's value in row `row` (from 1), as the body of an encoded
    /// `google.protobuf.Value`; a value that does not fit the column's type is an error naming it.
    /// Per value on the hot path: one test of two flags, then the encoding's own match (inlined into
    /// the row loop: a call per value showed as 2% of the general path's instructions in callgrind).
    #[inline(always)]
    pub fn encode(&self, value: ValueRef<'_>, row: u64, out: &mut Vec<u8>) -> Result<(), String> {
        if self.nan || self.full_check {
            return self.encode_rare(value, row, out);
        }
        encode_sql(&self.field.ty, value, out).map_err(|e| self.misfit(row, &e))
    }

    /// [`Column::encode`] for the rare columns: a NaN parameter's, or one decoded as its type.
    fn encode_rare(&self, value: ValueRef<'_>, row: u64, out: &mut Vec<u8>) -> Result<(), String> {
        if self.nan && matches!(value, ValueRef::Null) {
            crate::server::encoded::put_delimited(out, crate::server::encoded::tag::STRING, b"NaN");
            return Ok(());
        }
        let ty = &self.field.ty;
        let checked = encode_sql(ty, value, out).and_then(|()| {
            if self.full_check {
                decode_value(ty, from_sql(ty, value)?).map_err(|e| e.to_string())?;
            }
            Ok(())
        });
        checked.map_err(|e| self.misfit(row, &e))
    }

    fn misfit(&self, row: u64, why: &str) -> String {
        let from = match self.origin {
            Origin::Table => "the table column's type",
            Origin::Parameter => "the parameter's type",
            Origin::FirstValue => "the type of its first value",
        };
        format!(
            "column {:?} is {} ({from}), but row {row} holds a value that does not fit: {why}; \
             give the column one type in every row (CAST it)",
            self.field.name, self.field.ty
        )
    }
}

/// For each of the `width` result columns, the number of the parameter it exactly is: its result
/// register is written by one `Variable` instruction and by nothing else the program does. Anything
/// less certain (several result rows, an instruction this does not know touching the register)
/// gives `None`, and the column is typed from its values.
pub fn parameter_columns(ops: &[Op], width: usize) -> Vec<Option<i64>> {
    let mut results = ops.iter().filter(|op| op.opcode == "ResultRow");
    let (Some(result), None) = (results.next(), results.next()) else {
        return vec![None; width];
    };
    let [first, count, _] = result.p;
    if usize::try_from(count).ok() != Some(width) {
        return vec![None; width];
    }
    (first..first + count)
        .map(|register| {
            let mut writers = ops.iter().filter(|op| writes(op, register));
            match (writers.next(), writers.next()) {
                (Some(op), None) if op.opcode == "Variable" => Some(op.p[0]),
                _ => None,
            }
        })
        .collect()
}

/// Whether `op` may write `register`: the output operands of the instructions that plain result
/// columns use, none for those that only jump or move cursors, and any operand for the rest.
fn writes(op: &Op, register: i64) -> bool {
    let [p1, p2, p3] = op.p;
    match op.opcode.as_str() {
        "Init" | "Goto" | "Halt" | "Transaction" | "VOpen" | "VFilter" | "VNext" | "Next"
        | "Prev" | "Rewind" | "Last" | "Noop" | "OpenRead" | "ResultRow" => false,
        "Integer" | "Int64" | "Real" | "String8" | "String" | "Blob" | "Variable" | "SCopy"
        | "IntCopy" => register == p2,
        "Null" => (p2..=p2.max(p3)).contains(&register),
        "Copy" => (p2..=p2 + p3.max(0)).contains(&register),
        "Column" | "VColumn" => register == p3,
        _ => [p1, p2, p3].contains(&register),
    }
}

/// The parameters by their number in the statement (`?NNN`): the bound values' metadata, for
/// [`parameter_columns`] to look up.
pub fn by_number<'a>(
    stmt: &Statement<'_>,
    params: &'a HashMap<String, Param>,
) -> HashMap<i64, &'a Param> {
    (1..=stmt.parameter_count())
        .filter_map(|i| {
            let name = stmt.parameter_name(i)?.strip_prefix('@')?;
            Some((i64::try_from(i).ok()?, params.get(name)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(opcode: &str, p1: i64, p2: i64, p3: i64) -> Op {
        Op {
            opcode: opcode.into(),
            p: [p1, p2, p3],
        }
    }

    #[test]
    fn a_result_register_only_a_variable_writes_is_that_parameter() {
        // SELECT @p, Id FROM Seed23, as SQLite compiles it.
        let program = vec![
            op("Init", 0, 10, 0),
            op("VOpen", 0, 0, 0),
            op("Integer", 0, 1, 0),
            op("Integer", 0, 2, 0),
            op("VFilter", 0, 9, 1),
            op("Variable", 1, 3, 0),
            op("VColumn", 0, 0, 4),
            op("ResultRow", 3, 2, 0),
            op("VNext", 0, 5, 0),
            op("Halt", 0, 0, 0),
            op("Transaction", 0, 0, 3),
            op("Goto", 0, 1, 0),
        ];
        assert_eq!(parameter_columns(&program, 2), vec![Some(1), None]);
        // Something else writes the register too: not certain.
        let mut changed = program.clone();
        changed.insert(6, op("Add", 5, 3, 3));
        assert_eq!(parameter_columns(&changed, 2), vec![None, None]);
        // Two result rows (UNION ALL): no column is known.
        let mut union = program.clone();
        union.insert(8, op("ResultRow", 3, 2, 0));
        assert_eq!(parameter_columns(&union, 2), vec![None, None]);
        assert_eq!(
            parameter_columns(&program, 3),
            vec![None; 3],
            "width differs"
        );
    }

    #[test]
    fn a_nan_parameter_column_sends_nan_and_misfits_name_the_column() {
        let param = Param {
            value: SqlValue::Null,
            ty: Type::Float64,
            nan: true,
        };
        let columns = plan(
            vec!["x".into(), "e".into()],
            vec![None, None],
            true,
            &[Some(&param), None],
        );
        let [x, mut e] = <[Pending; 2]>::try_from(columns).expect("two");
        assert!(!x.is_open() && e.is_open());
        e.look_at(ValueRef::Integer(1));
        let (x, e) = (x.decide(), e.decide());
        assert_eq!(e.field.ty, Type::Int64);
        let mut out = Vec::new();
        x.encode(ValueRef::Null, 1, &mut out).expect("NaN");
        let wire = <prost_types::Value as prost::Message>::decode(&out[..]).expect("a value");
        assert!(
            matches!(decode_value(&Type::Float64, wire), Ok(crate::wire::Value::Float64(f)) if f.is_nan())
        );
        let err = e
            .encode(ValueRef::Text(b"abc"), 201, &mut Vec::new())
            .expect_err("text in an INT64 column");
        assert!(
            err.contains("\"e\"") && err.contains("row 201") && err.contains("INT64"),
            "{err}"
        );
    }

    #[test]
    fn table_columns_of_compound_statements_are_decoded_as_their_type() {
        let column = |simple| {
            plan(vec!["d".into()], vec![Some(Type::Date)], simple, &[None])
                .remove(0)
                .decide()
        };
        let not_a_date = ValueRef::Text(b"not a date");
        assert!(column(true).encode(not_a_date, 1, &mut Vec::new()).is_ok());
        assert!(
            column(false)
                .encode(not_a_date, 1, &mut Vec::new())
                .is_err()
        );
        assert!(
            column(false)
                .encode(ValueRef::Text(b"2024-02-29"), 1, &mut Vec::new())
                .is_ok()
        );
    }
}
