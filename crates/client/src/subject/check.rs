//! Every row checked: what a client printed against what the server sent it.
//!
//! The server's answer (the messages the tap kept) is decoded by spanprof's reference decoder; the
//! client's output is read as canonical JSON rows (one array per line, the encoding of
//! `tests/vectors/README.md`) or as a single `rows N` line. Values are compared by column type: floats
//! as numbers (`1` and `1.0` are equal), JSON text as the JSON it holds (key order and spacing aside),
//! everything else as written. The first difference is named: rows missing after a message, rows
//! repeated, or the first wrong value.

use crate::report::Check;
use std::collections::HashMap;
use std::fmt;

use prost::bytes::Bytes;
use serde_json::Value as Json;

use crate::wire::{DecodeError, Field, Row, StreamDecoder, Type};

/// The answer a client should have read.
#[derive(Debug, Clone)]
pub struct Expected {
    /// Its columns.
    pub columns: Vec<Field>,
    /// Its rows.
    pub rows: Vec<Row>,
    /// Rows complete after each message (cumulative), message 1 first.
    pub after_message: Vec<u64>,
}

impl Expected {
    /// The answer in `messages`, decoded by the reference decoder.
    pub fn decode(messages: &[Bytes]) -> Result<Self, DecodeError> {
        let mut decoder = StreamDecoder::new();
        let mut rows = Vec::new();
        let mut after_message = Vec::with_capacity(messages.len());
        for message in messages {
            decoder.feed_bytes(message, &mut rows)?;
            after_message.push(rows.len() as u64);
        }
        decoder.finish()?;
        let columns = decoder
            .stream()
            .columns()
            .map(|c| c.to_vec())
            .unwrap_or_default();
        Ok(Expected {
            columns,
            rows,
            after_message,
        })
    }

    /// The 1-based message after which exactly `rows` rows were complete, if one ended there.
    fn message_ending_at(&self, rows: u64) -> Option<usize> {
        self.after_message
            .iter()
            .position(|&n| n == rows)
            .map(|i| i + 1)
    }
}

/// How a client's rows passed the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Every value of every row was compared.
    Values {
        /// The rows.
        rows: u64,
    },
    /// Only a `rows N` line was printed; the count was compared.
    Count {
        /// The rows.
        rows: u64,
    },
}

impl Checked {
    /// How the rows were checked: every value, or a count.
    pub fn kind(self) -> Check {
        match self {
            Checked::Values { .. } => Check::Values,
            Checked::Count { .. } => Check::Count,
        }
    }

    /// The rows the client printed (or counted).
    pub fn rows(self) -> u64 {
        match self {
            Checked::Values { rows } | Checked::Count { rows } => rows,
        }
    }
}

/// A client's rows that are not the server's: how many it printed, how many were sent, and the
/// first difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Rows the client printed (or counted).
    pub printed: u64,
    /// Rows the server sent.
    pub sent: u64,
    /// Whether the client printed rows (else only a count).
    pub values: bool,
    /// The first difference.
    pub difference: Difference,
}

/// The first way a client's rows differ from the server's.
#[derive(Debug, Clone, PartialEq)]
pub enum Difference {
    /// The rows from `from` (0-based) on are missing; `after_message` when the rows printed are
    /// exactly those of the first messages.
    MissingFrom {
        /// The first row missing.
        from: u64,
        /// The message after which every row is missing, if the loss starts at one's end.
        after_message: Option<usize>,
    },
    /// Rows `from..to` are missing and the rest follows.
    MissingBetween {
        /// The first row missing.
        from: u64,
        /// The row printed next.
        to: u64,
    },
    /// Printed row `row` repeats row `repeats` (both 0-based).
    Repeated {
        /// The printed row.
        row: u64,
        /// The earlier row it repeats.
        repeats: u64,
    },
    /// More rows than were sent, and the first extra one is not a repeat.
    Extra {
        /// The first extra row.
        from: u64,
    },
    /// A value differs.
    Value {
        /// The row, 0-based.
        row: u64,
        /// The column, 0-based.
        column: usize,
        /// Its name and type.
        name: String,
        /// What the server sent, canonical JSON.
        sent: String,
        /// What the client printed.
        printed: String,
    },
    /// A row's width differs from the columns'.
    Width {
        /// The row, 0-based.
        row: u64,
        /// Its values.
        printed: usize,
        /// The columns.
        columns: usize,
    },
    /// An output line that is neither a row nor `rows N`.
    Unreadable {
        /// The line, 1-based.
        line: u64,
        /// Why.
        reason: String,
    },
    /// The output was cut at its bound before its end.
    TooLong {
        /// The bound, in bytes.
        max_bytes: usize,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} rows",
            crate::text::count(self.printed),
            crate::text::count(self.sent)
        )?;
        if !self.values {
            f.write_str(" (a count only)")?;
        }
        f.write_str(": ")?;
        let row = |r: &u64| crate::text::count(r + 1);
        match &self.difference {
            Difference::MissingFrom {
                after_message: Some(m),
                ..
            } => write!(f, "rows after message {m} missing"),
            Difference::MissingFrom { from, .. } => {
                write!(f, "rows from row {} on missing", row(from))
            }
            Difference::MissingBetween { from, to } => {
                write!(
                    f,
                    "rows {} to {} missing",
                    row(from),
                    crate::text::count(*to)
                )
            }
            Difference::Repeated { row: r, repeats } => write!(
                f,
                "row {} repeats row {}: rows duplicated",
                row(r),
                row(repeats)
            ),
            Difference::Extra { from } => {
                write!(f, "rows from row {} on were never sent", row(from))
            }
            Difference::Value {
                row: r,
                column,
                name,
                sent,
                printed,
            } => write!(
                f,
                "row {}, column {} ({name}): the server sent {sent}, the client printed {printed}",
                row(r),
                column + 1
            ),
            Difference::Width {
                row: r,
                printed,
                columns,
            } => write!(
                f,
                "row {} has {printed} values, the result {columns} columns",
                row(r)
            ),
            Difference::Unreadable { line, reason } => {
                write!(
                    f,
                    "output line {} is not a row: {reason}",
                    crate::text::count(*line)
                )
            }
            Difference::TooLong { max_bytes } => write!(
                f,
                "the output is longer than the {} MiB the check reads",
                max_bytes >> 20
            ),
        }
    }
}

/// A line `rows N`.
fn count_line(line: &str) -> Option<u64> {
    line.trim().strip_prefix("rows ")?.trim().parse().ok()
}

/// How much longer than the longest row sent (as canonical JSON) a printed row may be: spellings
/// differ (`1.0` for `1`, `\u00e9` for `é`), but a line past this holds no row that was sent.
const LINE_SLACK_FACTOR: usize = 8;
/// See [`LINE_SLACK_FACTOR`]: bytes a line may have beyond that multiple.
const LINE_SLACK_BYTES: usize = 4096;

/// The server's rows in the form the printed ones are compared in, made when the first printed
/// row is read (a count-only output needs none of it).
struct Sent<'e> {
    expected: &'e Expected,
    types: Vec<&'e Type>,
    /// Each row normalised.
    rows: Vec<Json>,
    /// The first row with each digest.
    first_seen: HashMap<u64, u64>,
    /// The longest line a printed row may be.
    max_line: usize,
}

impl<'e> Sent<'e> {
    fn new(expected: &'e Expected) -> Self {
        let types: Vec<&Type> = expected.columns.iter().map(|c| &c.ty).collect();
        let mut first_seen = HashMap::new();
        let mut longest = 0;
        let rows: Vec<Json> = (0u64..)
            .zip(&expected.rows)
            .map(|(i, r)| {
                let row = normalize_row(&types, &r.to_canonical_json());
                let text = row.to_string();
                longest = longest.max(text.len());
                first_seen.entry(digest_text(&text)).or_insert(i);
                row
            })
            .collect();
        Sent {
            expected,
            types,
            rows,
            first_seen,
            max_line: longest
                .saturating_mul(LINE_SLACK_FACTOR)
                .saturating_add(LINE_SLACK_BYTES),
        }
    }

    /// How printed row `i` (0-based) differs from the server's, if it does; only the first extra
    /// row (`i` = rows sent) is looked at past the end.
    fn differs(&self, i: u64, got: &Json) -> Option<Difference> {
        let sent = self.rows.len() as u64;
        if i > sent {
            return None;
        }
        let got = normalize_row(&self.types, got);
        let repeat = self.first_seen.get(&digest(&got)).copied();
        if i == sent {
            return Some(match repeat {
                Some(j) => Difference::Repeated { row: i, repeats: j },
                None => Difference::Extra { from: sent },
            });
        }
        let row = &self.rows[i as usize];
        if *row == got {
            return None;
        }
        Some(match repeat {
            Some(j) if j < i => Difference::Repeated { row: i, repeats: j },
            Some(j) => Difference::MissingBetween { from: i, to: j },
            None => first_value_difference(self.expected, i, row, &got),
        })
    }
}

/// What a client printed, read line by line: each row is compared as it is read and dropped, so
/// the check holds the server's rows and one printed row, never the whole output.
enum Printed {
    /// Rows were printed: how many, and the first difference.
    Rows(u64, Option<Difference>),
    /// Only a `rows N` line.
    Count(u64),
}

fn read_output(expected: &Expected, stdout: &[u8]) -> Result<Printed, Difference> {
    let text = std::str::from_utf8(stdout).map_err(|e| Difference::Unreadable {
        line: stdout[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64
            + 1,
        reason: "not UTF-8".into(),
    })?;
    let mut sent: Option<Sent<'_>> = None;
    let (mut printed, mut first_difference) = (0u64, None);
    let mut count = None;
    for (i, line) in (1u64..).zip(text.lines()) {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(n) = count_line(line) {
            count = Some(n);
            continue;
        }
        let unreadable = |reason: String| Difference::Unreadable { line: i, reason };
        if count.is_some() {
            return Err(unreadable("a row after the `rows N` line".into()));
        }
        let sent = sent.get_or_insert_with(|| Sent::new(expected));
        if line.len() > sent.max_line {
            return Err(unreadable(format!(
                "{} bytes, longer than any row that was sent could be printed",
                crate::text::count(line.len() as u64)
            )));
        }
        match serde_json::from_str::<Json>(line) {
            Ok(row @ Json::Array(_)) => {
                if first_difference.is_none() {
                    first_difference = sent.differs(printed, &row);
                }
                printed += 1;
            }
            Ok(_) => return Err(unreadable("not a JSON array".into())),
            Err(e) => return Err(unreadable(format!("not JSON ({e})"))),
        }
    }
    Ok(match count {
        Some(n) if printed == 0 => Printed::Count(n),
        _ => Printed::Rows(printed, first_difference),
    })
}

/// Checks a client's standard output (`truncated`: cut at its bound) against `expected`.
pub fn check(expected: &Expected, stdout: &[u8], truncated: bool) -> Result<Checked, Mismatch> {
    let sent = expected.rows.len() as u64;
    let mismatch = |printed: u64, values: bool, difference| Mismatch {
        printed,
        sent,
        values,
        difference,
    };
    if truncated {
        return Err(mismatch(
            0,
            true,
            Difference::TooLong {
                max_bytes: super::command::MAX_STDOUT_BYTES,
            },
        ));
    }
    match read_output(expected, stdout).map_err(|d| mismatch(0, true, d))? {
        Printed::Count(n) if n == sent => Ok(Checked::Count { rows: n }),
        Printed::Count(n) => Err(mismatch(n, false, missing_or_extra(expected, n))),
        Printed::Rows(n, Some(difference)) => Err(mismatch(n, true, difference)),
        Printed::Rows(n, None) if n < sent => Err(mismatch(n, true, missing_or_extra(expected, n))),
        Printed::Rows(n, None) => Ok(Checked::Values { rows: n }),
    }
}

/// When only the counts differ.
fn missing_or_extra(expected: &Expected, printed: u64) -> Difference {
    if printed < expected.rows.len() as u64 {
        Difference::MissingFrom {
            from: printed,
            after_message: expected.message_ending_at(printed),
        }
    } else {
        Difference::Extra {
            from: expected.rows.len() as u64,
        }
    }
}

/// A row's digest, to find which earlier row a printed one repeats.
fn digest(row: &Json) -> u64 {
    digest_text(&row.to_string())
}

/// [`digest`] of a row already written as JSON text.
fn digest_text(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn first_value_difference(expected: &Expected, row: u64, sent: &Json, got: &Json) -> Difference {
    let (Json::Array(sent), Json::Array(got)) = (sent, got) else {
        return Difference::Width {
            row,
            printed: 0,
            columns: expected.columns.len(),
        };
    };
    if sent.len() != got.len() {
        return Difference::Width {
            row,
            printed: got.len(),
            columns: sent.len(),
        };
    }
    let column = sent.iter().zip(got).position(|(a, b)| a != b).unwrap_or(0);
    let field = expected.columns.get(column);
    Difference::Value {
        row,
        column,
        name: field.map_or_else(String::new, |f| format!("{} {}", f.name, f.ty)),
        sent: clipped(&sent[column]),
        printed: clipped(&got[column]),
    }
}

/// A value as JSON text, at most 80 characters, control characters escaped.
fn clipped(value: &Json) -> String {
    let text = value.to_string();
    let mut out: String = text.chars().take(80).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    crate::report::printable(&out).into_owned()
}

fn normalize_row(types: &[&Type], row: &Json) -> Json {
    match row {
        Json::Array(values) if values.len() == types.len() => Json::Array(
            values
                .iter()
                .zip(types)
                .map(|(v, ty)| normalize(ty, v))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A value in the form two equal values share: floats as f64 numbers, JSON text re-serialised with
/// sorted keys, arrays element by element.
fn normalize(ty: &Type, value: &Json) -> Json {
    match (ty, value) {
        (Type::Float64 | Type::Float32, Json::Number(n)) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| value.clone(), Json::Number),
        (Type::Json { .. }, Json::String(text)) => match serde_json::from_str::<Json>(text) {
            Ok(parsed) => Json::String(sorted(parsed).to_string()),
            Err(_) => value.clone(),
        },
        (Type::Array(element), Json::Array(items)) => {
            Json::Array(items.iter().map(|v| normalize(element, v)).collect())
        }
        (Type::Struct(fields), Json::Array(items)) if fields.len() == items.len() => Json::Array(
            items
                .iter()
                .zip(fields)
                .map(|(v, f)| normalize(&f.ty, v))
                .collect(),
        ),
        _ => value.clone(),
    }
}

fn sorted(value: Json) -> Json {
    match value {
        Json::Object(map) => {
            let mut entries: Vec<(String, Json)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Json::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Json::Array(items) => Json::Array(items.into_iter().map(sorted).collect()),
        Json::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Json::Number(n), Json::Number),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost_types::value::Kind;

    use crate::proto::google::spanner::v1 as pb;

    fn expected() -> Expected {
        let columns = vec![
            Field {
                name: "Id".into(),
                ty: Type::Int64,
            },
            Field {
                name: "Score".into(),
                ty: Type::Float64,
            },
            Field {
                name: "Attrs".into(),
                ty: Type::Json { pg: false },
            },
        ];
        // Ten messages of ten rows, each value as the wire spells it (INT64 as a string).
        let messages: Vec<Bytes> = (0..10)
            .map(|m| {
                let values = (m * 10..m * 10 + 10)
                    .flat_map(|i| {
                        [
                            Kind::StringValue(i.to_string()),
                            Kind::NumberValue(i as f64),
                            Kind::StringValue(format!(r#"{{"a":{i},"b":"x"}}"#)),
                        ]
                    })
                    .map(|kind| prost_types::Value { kind: Some(kind) })
                    .collect();
                let message = pb::PartialResultSet {
                    metadata: (m == 0).then(|| pb::ResultSetMetadata {
                        row_type: Some(crate::wire::struct_type(&columns)),
                        ..Default::default()
                    }),
                    values,
                    ..Default::default()
                };
                Bytes::from(prost::Message::encode_to_vec(&message))
            })
            .collect();
        Expected::decode(&messages).expect("decodes")
    }

    fn printed(rows: &[Json]) -> Vec<u8> {
        rows.iter()
            .map(|r| format!("{r}\n"))
            .collect::<String>()
            .into_bytes()
    }

    fn canonical(e: &Expected) -> Vec<Json> {
        e.rows.iter().map(Row::to_canonical_json).collect()
    }

    #[test]
    fn equal_rows_pass_whatever_their_spelling_and_counts_are_compared() {
        let e = expected();
        assert!(e.after_message.len() > 5, "{:?}", e.after_message);
        // Node prints 3.0 as 3; Python re-serialises JSON with its own spacing.
        let respelled: Vec<Json> = (0..100)
            .map(|i| serde_json::json!([i.to_string(), i, format!(r#"{{"b": "x", "a": {i}}}"#)]))
            .collect();
        assert_eq!(
            check(&e, &printed(&respelled), false),
            Ok(Checked::Values { rows: 100 })
        );
        assert_eq!(
            check(&e, b"rows 100\n", false),
            Ok(Checked::Count { rows: 100 })
        );
        let short = check(&e, b"rows 7\n", false).expect_err("short");
        assert!(
            short
                .to_string()
                .starts_with("7 of 100 rows (a count only)"),
            "{short}"
        );
    }

    #[test]
    fn the_first_difference_is_named() {
        let e = expected();
        let rows = canonical(&e);
        let first = e.after_message[0] as usize;
        let lost = check(&e, &printed(&rows[..first]), false).expect_err("lost rows");
        assert_eq!(
            lost.to_string(),
            format!("{first} of 100 rows: rows after message 1 missing")
        );
        let mut repeated = rows[..60].to_vec();
        repeated.extend_from_slice(&rows[50..]);
        let dup = check(&e, &printed(&repeated), false).expect_err("repeats");
        assert_eq!(
            dup.to_string(),
            "110 of 100 rows: row 61 repeats row 51: rows duplicated"
        );
        let mut gap = rows.clone();
        gap.drain(10..20);
        assert_eq!(
            check(&e, &printed(&gap), false)
                .expect_err("gap")
                .to_string(),
            "90 of 100 rows: rows 11 to 20 missing"
        );
        let mut wrong = rows.clone();
        wrong[42][1] = serde_json::json!(42.5);
        assert_eq!(
            check(&e, &printed(&wrong), false)
                .expect_err("wrong")
                .to_string(),
            "100 of 100 rows: row 43, column 2 (Score FLOAT64): the server sent 42.0, the client printed 42.5"
        );
        let garbage = check(&e, b"[\"0\", 0, \"{}\"]\nnot json\n", false).expect_err("garbage");
        assert!(
            garbage.to_string().contains("output line 2 is not a row"),
            "{garbage}"
        );
        assert!(check(&e, b"", true).is_err(), "a cut output is not checked");
    }
}
