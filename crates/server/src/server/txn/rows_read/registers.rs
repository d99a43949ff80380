//! The registers of a statement's program: its instructions as `EXPLAIN` lists them, which of them
//! write a register, and the values a register may hold when every writer gives a known one (a
//! literal, a parameter's value, a copy, an `IN` list's member), as the key prefixes of a table.
//! The part of the read capture that knows SQLite's opcodes one by one.

use std::collections::{BTreeSet, HashMap};

use rusqlite::Connection;
use rusqlite::types::{Value as SqlValue, ValueRef};

use crate::server::sqlite::schema::TableDef;
use crate::server::txn::lock_key::{KeyPart, RowKey};
use crate::server::txn::row_key::key_part;

/// One instruction of a program, as `EXPLAIN` lists it.
#[derive(Debug, Clone)]
pub(super) struct Op {
    pub(super) opcode: String,
    pub(super) p1: i64,
    pub(super) p2: i64,
    pub(super) p3: i64,
    pub(super) p4: SqlValue,
}

/// The bytecode of `sql` and the names of its parameters by number (from 1; index 0 unused).
pub(super) fn program(
    conn: &Connection,
    sql: &str,
) -> rusqlite::Result<(Vec<Op>, Vec<Option<String>>)> {
    let mut stmt = conn.prepare(&format!("EXPLAIN {sql}"))?;
    let names = (0..=stmt.parameter_count())
        .map(|i| stmt.parameter_name(i).map(str::to_owned))
        .collect();
    let mut rows = stmt.raw_query();
    let mut ops = Vec::new();
    while let Some(row) = rows.next()? {
        let opcode: String = row.get(1)?;
        // The programs of triggers follow the statement's, each from its own `Init`, in registers
        // of their own: the write capture's read nothing.
        if opcode == "Init" && !ops.is_empty() {
            break;
        }
        ops.push(Op {
            opcode,
            p1: row.get(2)?,
            p2: row.get(3)?,
            p3: row.get(4)?,
            p4: row.get(5)?,
        });
    }
    Ok((ops, names))
}

/// The program, the values of its parameters by number, and the bound on keys.
pub(super) struct Program<'a> {
    pub(super) ops: &'a [Op],
    pub(super) params: Vec<Option<SqlValue>>,
    pub(super) max_keys: usize,
    /// The instructions that may write each register, by their place in `ops`: each
    /// instruction is looked at once here, not once per register asked about (an `IN` list of
    /// many values made that quadratic).
    writers: HashMap<i64, Vec<usize>>,
    /// The index went past [`MAX_WRITER_ENTRIES`]: no register's value is known.
    too_big: bool,
}

/// The entries of a program's writers index at most (a hostile statement's program is long).
const MAX_WRITER_ENTRIES: usize = 1 << 20;

/// How deep a register's value is followed (copies, an `IN` list's records).
pub(super) const MAX_DEPTH: usize = 6;

impl<'a> Program<'a> {
    /// The program `ops`, its parameters' values `params`, at most `max_keys` keys named.
    pub(super) fn new(ops: &'a [Op], params: Vec<Option<SqlValue>>, max_keys: usize) -> Self {
        let mut writers: HashMap<i64, Vec<usize>> = HashMap::new();
        let mut entries = 0usize;
        let mut too_big = false;
        'ops: for (i, op) in ops.iter().enumerate() {
            for r in written(op) {
                entries += 1;
                if entries > MAX_WRITER_ENTRIES {
                    too_big = true;
                    break 'ops;
                }
                writers.entry(r).or_default().push(i);
            }
        }
        Program {
            ops,
            params,
            max_keys,
            writers,
            too_big,
        }
    }

    /// The instructions that may write register `r`, in program order; None when the program
    /// was too big to index (then nothing about a register is known).
    pub(super) fn writers_of(&self, r: i64) -> Option<impl Iterator<Item = &'a Op> + '_> {
        if self.too_big {
            return None;
        }
        let at = self.writers.get(&r).map_or(&[][..], Vec::as_slice);
        Some(at.iter().filter_map(|&i| self.ops.get(i)))
    }

    /// The values register `r` may hold, when every instruction writing it gives a known one.
    pub(super) fn values(&self, r: i64, depth: usize) -> Option<Vec<SqlValue>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let mut out = Vec::new();
        for op in self.writers_of(r)? {
            let more = match op.opcode.as_str() {
                "Integer" => vec![SqlValue::Integer(op.p1)],
                "Int64" | "Real" | "String8" | "String" => vec![constant(op)?],
                "Null" => vec![SqlValue::Null],
                "Variable" => vec![self.params.get(usize::try_from(op.p1).ok()?)?.clone()?],
                "SCopy" | "IntCopy" => self.values(op.p1, depth + 1)?,
                "Copy" | "Move" => self.values(op.p1 + (r - op.p2), depth + 1)?,
                "Column" => self.listed(op.p1, op.p2, depth + 1)?,
                _ => return None,
            };
            out.extend(more);
            if out.len() > self.max_keys {
                return None;
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The values of column `column` of ephemeral cursor `cursor`, when it is an `IN` list: every
    /// record inserted into it made of registers of known values.
    fn listed(&self, cursor: i64, column: i64, depth: usize) -> Option<Vec<SqlValue>> {
        let ephemeral = self
            .ops
            .iter()
            .any(|op| op.opcode == "OpenEphemeral" && op.p1 == cursor);
        if !ephemeral {
            return None;
        }
        // Each record register once: an `IN` list's inserts all reuse one.
        let mut records = BTreeSet::new();
        for insert in self.ops.iter().filter(|op| {
            op.p1 == cursor && matches!(op.opcode.as_str(), "IdxInsert" | "Insert" | "OpenDup")
        }) {
            if insert.opcode == "OpenDup" {
                return None;
            }
            records.insert(insert.p2);
        }
        let mut registers = BTreeSet::new();
        for record_register in records {
            for record in self.writers_of(record_register)? {
                if record.opcode != "MakeRecord" || column >= record.p2 {
                    return None;
                }
                registers.insert(record.p1 + column);
            }
        }
        let mut out = Vec::new();
        for r in registers {
            out.extend(self.values(r, depth + 1)?);
            if out.len() > self.max_keys {
                return None;
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The keys that registers `r .. r + n` may hold together, for `table`'s first `n` key
    /// columns; None when one is unknown, not of its column's type, or there are too many.
    pub(super) fn prefixes(&self, table: &TableDef, r: i64, n: i64) -> Option<Vec<RowKey>> {
        let n = usize::try_from(n).ok()?;
        let mut keys = vec![RowKey::default()];
        for (i, name) in table.primary_key.iter().take(n).enumerate() {
            let ty = &table.column(name)?.ty;
            let parts = self
                .values(r + i as i64, 0)?
                .iter()
                .map(|v| key_part(ty, ValueRef::from(v)))
                .collect::<Option<BTreeSet<KeyPart>>>()?;
            if keys.len().saturating_mul(parts.len()) > self.max_keys {
                return None;
            }
            keys = keys
                .iter()
                .flat_map(|k| {
                    parts.iter().map(move |p| {
                        let mut k = k.clone();
                        k.0.push(p.clone());
                        k
                    })
                })
                .collect();
        }
        (keys.first().map(|k| k.0.len()) == Some(n)).then_some(keys)
    }
}

/// A literal's value, from its P4.
fn constant(op: &Op) -> Option<SqlValue> {
    let text = match &op.p4 {
        SqlValue::Text(t) => t.as_str(),
        other => return Some(other.clone()),
    };
    Some(match op.opcode.as_str() {
        "Int64" => SqlValue::Integer(text.parse().ok()?),
        "Real" => SqlValue::Real(text.parse().ok()?),
        _ => SqlValue::Text(text.to_owned()),
    })
}

/// The registers `op` may write: the registers the instructions that write one name, and for
/// every instruction not known to leave its operands alone, each of its operands. (A range of a
/// `Null`, `Copy` or `Move` wider than the program could use is cut at [`MAX_WRITER_ENTRIES`],
/// which marks the program too big to know.)
pub(super) fn written(op: &Op) -> Box<dyn Iterator<Item = i64>> {
    let (p1, p2, p3) = (op.p1, op.p2, op.p3);
    let span = |from: i64, to: i64| {
        let to = to.min(from.saturating_add(MAX_WRITER_ENTRIES as i64));
        Box::new(from..=to) as Box<dyn Iterator<Item = i64>>
    };
    match op.opcode.as_str() {
        "Integer" | "Int64" | "Real" | "String8" | "String" | "Variable" | "SCopy" | "IntCopy"
        | "Rowid" | "IdxRowid" | "BeginSubrtn" | "Blob" | "Sequence" | "RowData" | "SorterData"
        | "Count" => Box::new(std::iter::once(p2)),
        "RowSetAdd" => Box::new(std::iter::once(p1)),
        "Null" => span(p2, p2.max(p3)),
        "Copy" => span(p2, p2.saturating_add(p3)),
        "Move" => span(p2, p2.saturating_add(p3.max(1)) - 1),
        "Column" | "MakeRecord" | "RowSetRead" | "Function" | "PureFunc" | "Add" | "Subtract"
        | "Multiply" | "Divide" | "Remainder" | "Concat" | "BitAnd" | "BitOr" | "ShiftLeft"
        | "ShiftRight" | "VColumn" => Box::new(std::iter::once(p3)),
        // Read their operands (registers, cursors, addresses), or change only a value's type.
        "Init" | "Goto" | "Halt" | "HaltIfNull" | "Transaction" | "TableLock" | "Noop"
        | "Explain" | "OpenRead" | "OpenWrite" | "ReopenIdx" | "OpenEphemeral" | "OpenDup"
        | "OpenAutoindex" | "Close" | "NullRow" | "ColumnsUsed" | "Rewind" | "Last" | "Next"
        | "Prev" | "SeekRowid" | "NotExists" | "SeekGE" | "SeekGT" | "SeekLE" | "SeekLT"
        | "SeekScan" | "SeekHit" | "IdxGT" | "IdxGE" | "IdxLT" | "IdxLE" | "Found" | "NotFound"
        | "NoConflict" | "IfNoHope" | "DeferredSeek" | "FinishSeek" | "Eq" | "Ne" | "Lt" | "Le"
        | "Gt" | "Ge" | "IsNull" | "NotNull" | "Affinity" | "MustBeInt" | "RealAffinity"
        | "TypeCheck" | "ResultRow" | "IdxInsert" | "Insert" | "Delete" | "IdxDelete" | "Once"
        | "If" | "IfNot" | "Return" | "Filter" | "ElseEq" | "Permutation" | "Compare" | "Jump" => {
            Box::new(std::iter::empty())
        }
        _ => {
            let mut all = vec![p1, p2, p3];
            all.dedup();
            Box::new(all.into_iter())
        }
    }
}

/// The first key after every key that starts with `prefix`: its last part's successor, or None
/// (the table's end) when there is none to name.
pub(super) fn successor(prefix: &RowKey) -> Option<RowKey> {
    let mut parts = prefix.0.clone();
    let last = parts.pop()?;
    let next = match last {
        KeyPart::Int64(i) => KeyPart::Int64(i.checked_add(1)?),
        KeyPart::Bool(false) => KeyPart::Bool(true),
        KeyPart::String(s) => KeyPart::String(format!("{s}\0").into()),
        KeyPart::Bytes(b) => KeyPart::Bytes([&b[..], &[0]].concat().into()),
        KeyPart::Date(d) => KeyPart::Date(d.checked_add(1)?),
        _ => return None,
    };
    parts.push(next);
    Some(RowKey(parts))
}
