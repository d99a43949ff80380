//! `Seed23`: the 23-column table of the recorded stream vectors, with generated rows.
//!
//! Same schema and a similar shape as the recorded rows (about 1.1 KB of wire data a row, about 5% of
//! non-key cells NULL, Notes of 200 to 800 characters with some non-ASCII), but our own data: every
//! cell is a pure function of (row id, column), so a server can produce any columns of any row, in
//! any order, without generating the others. Built for speed: the local instance streams hundreds of
//! thousands of rows a second from here.

use std::sync::OnceLock;

use super::rng::Rng;
use super::words::{
    ATTR_KEYS, ATTR_WORDS, CATEGORIES, COUNTRIES, DOMAINS, FIRST_NAMES, LAST_NAMES, NOTE_SPICE,
    NOTE_WORDS, REGIONS, TAGS,
};
use super::{DemoTable, field};
use crate::wire::{Date, Numeric, Timestamp, Type, Value};

/// The number of columns of `Seed23`.
pub const COLUMN_COUNT: usize = 23;

/// Tells this table's random streams apart from other tables'.
const SALT: u64 = 0x5eed_2300_0000_0023;
/// The chance that a non-key cell is NULL.
const NULL_CHANCE: f64 = 0.05;
/// The chance that an array element is NULL.
const NULL_ELEMENT_CHANCE: f64 = 0.04;
/// A stream of each row that is no column: the person that `Name` and `Email` both describe.
const PERSON_STREAM: usize = 1_000;
/// The stream (of row 0) that makes the corpus the notes are cut from.
const CORPUS_STREAM: usize = 1_001;

/// 2015-01-01T00:00:00Z and 2026-01-01T00:00:00Z in seconds since the Unix epoch.
const TIMESTAMP_SECONDS: (i64, i64) = (1_420_070_400, 1_767_225_600);
/// 1930-01-01 and 2007-12-31 in days since the Unix epoch.
const BIRTH_DAYS: (i64, i64) = (-14_610, 13_878);

// Column positions.
const ID: usize = 0;
const NAME: usize = 1;
const EMAIL: usize = 2;
const COUNTRY: usize = 3;
const AGE: usize = 4;
const SCORE: usize = 5;
const BALANCE: usize = 6;
const ACTIVE: usize = 7;
const CREATED_AT: usize = 8;
const UPDATED_AT: usize = 9;
const BIRTH_DATE: usize = 10;
const AVATAR: usize = 11;
const TAGS_COLUMN: usize = 12;
const SCORES: usize = 13;
const ATTRS: usize = 14;
const COUNTER: usize = 15;
const RATIO: usize = 16;
const NOTES: usize = 17;
const CATEGORY: usize = 18;
const FLAGS: usize = 19;
const VERSION: usize = 20;
const REGION: usize = 21;
const CHECKSUM: usize = 22;

/// The `Seed23` table: `Id INT64` key and 22 more columns, in the order of the vectors README.
pub fn table() -> DemoTable {
    let array = |element| Type::Array(Box::new(element));
    DemoTable {
        name: "Seed23",
        columns: vec![
            field("Id", Type::Int64),
            field("Name", Type::String),
            field("Email", Type::String),
            field("Country", Type::String),
            field("Age", Type::Int64),
            field("Score", Type::Float64),
            field("Balance", Type::Numeric { pg: false }),
            field("Active", Type::Bool),
            field("CreatedAt", Type::Timestamp),
            field("UpdatedAt", Type::Timestamp),
            field("BirthDate", Type::Date),
            field("Avatar", Type::Bytes),
            field("Tags", array(Type::String)),
            field("Scores", array(Type::Float64)),
            field("Attrs", Type::Json { pg: false }),
            field("Counter", Type::Int64),
            field("Ratio", Type::Float64),
            field("Notes", Type::String),
            field("Category", Type::String),
            field("Flags", array(Type::Bool)),
            field("Version", Type::Int64),
            field("Region", Type::String),
            field("Checksum", Type::Bytes),
        ],
        primary_key: vec!["Id"],
        length_limits: Vec::new(),
        parent: None,
        not_null: Vec::new(),
    }
}

/// The row with key `id`: all [`COLUMN_COUNT`] cells in column order.
pub fn row(id: i64) -> Vec<Value> {
    (0..COLUMN_COUNT).map(|column| cell(id, column)).collect()
}

/// The cell of row `id` in column `column` (0-based, in [`table`] order), computed on its own.
///
/// `Id` is `id` itself and never NULL; about 5% of the other cells are NULL. A column past the last
/// gives NULL.
pub fn cell(id: i64, column: usize) -> Value {
    if column == ID {
        return Value::Int64(id);
    }
    let mut rng = Rng::for_cell(SALT, id, column);
    if rng.chance(NULL_CHANCE) {
        return Value::Null;
    }
    match column {
        NAME => Value::String(name(id)),
        EMAIL => Value::String(email(id, &mut rng)),
        COUNTRY => Value::String(rng.pick(&COUNTRIES).to_owned()),
        AGE => Value::Int64(rng.range(18, 95)),
        SCORE => Value::Float64(rng.unit() * 100.0),
        BALANCE => numeric(&mut rng),
        ACTIVE => Value::Bool(rng.chance(0.7)),
        CREATED_AT | UPDATED_AT => timestamp(&mut rng),
        BIRTH_DATE => Date::from_days_since_epoch(rng.range(BIRTH_DAYS.0, BIRTH_DAYS.1))
            .map_or(Value::Null, Value::Date),
        AVATAR => {
            let len = rng.range(100, 200) as usize;
            Value::Bytes(rng.bytes(len))
        }
        TAGS_COLUMN => array(&mut rng, 6, |rng| Value::String(rng.pick(&TAGS).to_owned())),
        SCORES => array(&mut rng, 8, |rng| Value::Float64(score(rng))),
        ATTRS => Value::Json(attrs(&mut rng)),
        COUNTER => Value::Int64(rng.next_u64() as i64),
        RATIO => Value::Float64(rng.unit()),
        NOTES => Value::String(notes(&mut rng)),
        CATEGORY => Value::String(rng.pick(&CATEGORIES).to_owned()),
        FLAGS => array(&mut rng, 5, |rng| Value::Bool(rng.chance(0.5))),
        VERSION => Value::Int64(rng.range(1, 60)),
        REGION => Value::String(rng.pick(&REGIONS).to_owned()),
        CHECKSUM => Value::Bytes(rng.bytes(32)),
        _ => Value::Null,
    }
}

/// The person of row `id`, from a stream of its own so that `Name` and `Email` agree.
fn person(id: i64) -> ((&'static str, &'static str), (&'static str, &'static str)) {
    let mut rng = Rng::for_cell(SALT, id, PERSON_STREAM);
    let first = rng.pick(&FIRST_NAMES);
    (first, rng.pick(&LAST_NAMES))
}

/// `Zoë Weiß`.
fn name(id: i64) -> String {
    let ((first, _), (last, _)) = person(id);
    let mut out = String::with_capacity(first.len() + 1 + last.len());
    out.push_str(first);
    out.push(' ');
    out.push_str(last);
    out
}

/// `zoe.weiss417@example.com`: the same person as `Name`, a number and a domain.
fn email(id: i64, rng: &mut Rng) -> String {
    let ((_, first), (_, last)) = person(id);
    let domain = rng.pick(&DOMAINS);
    let mut out = String::with_capacity(first.len() + last.len() + domain.len() + 6);
    out.push_str(first);
    out.push('.');
    out.push_str(last);
    push_decimal(&mut out, rng.below(1_000));
    out.push('@');
    out.push_str(domain);
    out
}

/// A NUMERIC in canonical form: usually up to 10 integer digits, sometimes up to 29; 0 to 9
/// fractional digits without trailing zeros; no leading zeros and no `-0`.
fn numeric(rng: &mut Rng) -> Value {
    let int_digits = if rng.chance(0.03) {
        rng.range(11, 29)
    } else {
        rng.range(1, 10)
    } as usize;
    let frac_digits = rng.below(10) as usize;
    let negative = rng.chance(0.2);
    let mut out = String::with_capacity(1 + int_digits + 1 + frac_digits);
    if negative {
        out.push('-');
    }
    let leading = if int_digits == 1 {
        rng.below(10)
    } else {
        1 + rng.below(9)
    };
    push_decimal(&mut out, leading);
    push_random_digits(&mut out, rng, int_digits - 1);
    if frac_digits > 0 {
        out.push('.');
        push_random_digits(&mut out, rng, frac_digits - 1);
        push_decimal(&mut out, 1 + rng.below(9));
    } else if out == "-0" {
        out.remove(0);
    }
    Numeric::from_string(out).map_or(Value::Null, Value::Numeric)
}

/// A TIMESTAMP from 2015 through 2025, to the second, millisecond, microsecond or nanosecond.
fn timestamp(rng: &mut Rng) -> Value {
    let seconds = rng.range(TIMESTAMP_SECONDS.0, TIMESTAMP_SECONDS.1 - 1);
    let nanos = match rng.below(4) {
        0 => 0,
        1 => rng.below(1_000) * 1_000_000,
        2 => rng.below(1_000_000) * 1_000,
        _ => rng.below(1_000_000_000),
    };
    Timestamp::new(seconds, nanos as u32).map_or(Value::Null, Value::Timestamp)
}

/// Up to `max_len` elements (often none), each NULL now and then.
fn array(rng: &mut Rng, max_len: u64, mut element: impl FnMut(&mut Rng) -> Value) -> Value {
    let len = rng.below(max_len + 1) as usize;
    let mut items = Vec::with_capacity(len);
    for _ in 0..len {
        if rng.chance(NULL_ELEMENT_CHANCE) {
            items.push(Value::Null);
        } else {
            items.push(element(rng));
        }
    }
    Value::Array(items)
}

/// Powers of ten, for rounding.
const POW10: [f64; 13] = [
    1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
];

/// A number in [-5, 5] with 1 to 12 decimals, so that the texts vary in length.
fn score(rng: &mut Rng) -> f64 {
    let scale = POW10[rng.range(1, 12) as usize];
    ((rng.unit() * 10.0 - 5.0) * scale).round() / scale
}

/// A small JSON object, keys sorted, no whitespace: `{"device":"tablet","limits":[3,41],"seats":12}`.
///
/// Two draws pick which keys appear (each with chance 26/64) and the kind of each value, six bits a
/// key.
fn attrs(rng: &mut Rng) -> String {
    const _: () = assert!(ATTR_KEYS.len() * 6 <= 64, "six bits a key");
    let include = rng.next_u64();
    let kinds = rng.next_u64();
    let mut out = String::with_capacity(160);
    out.push('{');
    for (i, key) in ATTR_KEYS.iter().enumerate() {
        let shift = 6 * i;
        if (include >> shift) & 63 >= 26 {
            continue;
        }
        if out.len() > 1 {
            out.push(',');
        }
        push_json_string(&mut out, key);
        out.push(':');
        match (((kinds >> shift) & 63) * 5) >> 6 {
            0 => push_decimal(&mut out, rng.below(1_000)),
            1 => out.push_str(if rng.chance(0.5) { "true" } else { "false" }),
            2 => push_json_string(&mut out, rng.pick(&ATTR_WORDS)),
            3 => {
                out.push('[');
                for i in 0..rng.below(5) {
                    if i > 0 {
                        out.push(',');
                    }
                    push_decimal(&mut out, rng.below(100));
                }
                out.push(']');
            }
            _ => {
                out.push_str("{\"id\":");
                push_decimal(&mut out, rng.below(10));
                out.push_str(",\"tag\":");
                push_json_string(&mut out, rng.pick(&TAGS));
                out.push('}');
            }
        }
    }
    out.push('}');
    out
}

/// 200 to 800 characters of lorem-ipsum-like words; most rows mix in some non-ASCII words (a few of
/// them 4-byte emoji), about one in six is pure ASCII. May end in the middle of a word.
///
/// The hot spot of the table, so the text is copied in runs of whole words from a corpus made once
/// rather than a word at a time, with the non-ASCII words between runs.
fn notes(rng: &mut Rng) -> String {
    let corpus = corpus();
    let target = rng.range(201, 800) as usize;
    // The chance of a non-ASCII word after each run.
    let spice = if rng.chance(0.15) {
        0.0
    } else {
        0.3 + rng.unit() * 0.6
    };
    let mut out = String::with_capacity(target + target / 4);
    let mut chars = 0;
    while chars + 1 < target {
        if chars > 0 {
            out.push(' ');
            chars += 1;
        }
        let run = corpus_run(corpus, rng, target - chars);
        out.push_str(run);
        chars += run.len();
        if chars + 1 < target && rng.chance(spice) {
            out.push(' ');
            chars += 1;
            let word = rng.pick(&NOTE_SPICE);
            let room = target - chars;
            let len = word.chars().count();
            if len <= room {
                out.push_str(word);
                chars += len;
            } else {
                out.extend(word.chars().take(room));
                chars = target;
            }
        }
    }
    out
}

/// The text that notes are cut from: [`NOTE_WORDS`] separated by single spaces, and where each word
/// starts.
struct Corpus {
    text: String,
    starts: Vec<usize>,
}

/// The number of words in the corpus.
const CORPUS_WORDS: usize = 4_096;
/// The number of words of a run: a note holds about 60 characters of corpus between non-ASCII words.
const RUN_WORDS: (i64, i64) = (2, 16);

/// The corpus, made once from a fixed seed.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut rng = Rng::for_cell(SALT, 0, CORPUS_STREAM);
        let mut text = String::with_capacity(CORPUS_WORDS * 8);
        let mut starts = Vec::with_capacity(CORPUS_WORDS);
        for _ in 0..CORPUS_WORDS {
            if !text.is_empty() {
                text.push(' ');
            }
            starts.push(text.len());
            text.push_str(rng.pick(&NOTE_WORDS));
        }
        Corpus { text, starts }
    })
}

/// A run of 2 to 16 whole words from a random place in the (ASCII) corpus or, when that would not
/// fit in `room`, exactly `room` characters cut anywhere but never ending in a space. Starts at a
/// word, holds no double spaces, and is never empty for `room > 0`.
fn corpus_run<'a>(corpus: &'a Corpus, rng: &mut Rng, room: usize) -> &'a str {
    let words = rng.range(RUN_WORDS.0, RUN_WORDS.1) as usize;
    let first = rng.below((CORPUS_WORDS - words) as u64) as usize;
    let start = corpus.starts.get(first).copied().unwrap_or(0);
    // The space before the word after the run.
    let end = corpus
        .starts
        .get(first + words)
        .map_or(start, |&next| next - 1);
    let text = corpus.text.get(start..).unwrap_or("");
    if end - start >= room {
        // The corpus is ASCII: every byte is a character boundary.
        text.get(..room).unwrap_or(text).trim_end_matches(' ')
    } else {
        text.get(..end - start).unwrap_or(text)
    }
}

/// Appends `"text"`; the vocabularies need no escaping (checked by the `words` tests).
fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    out.push_str(text);
    out.push('"');
}

/// Appends `n` in decimal, without the formatting machinery.
fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

/// Appends `count` random decimal digits, 18 from each draw.
fn push_random_digits(out: &mut String, rng: &mut Rng, count: usize) {
    let mut bits = 0;
    for i in 0..count {
        if i % 18 == 0 {
            bits = rng.next_u64();
        }
        out.push(char::from(b'0' + (bits % 10) as u8));
        bits /= 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::fits;
    use crate::wire::Row;

    const ROWS: i64 = 2_000;

    fn rows() -> impl Iterator<Item = Vec<Value>> {
        (1..=ROWS).map(row)
    }

    fn column(index: usize) -> impl Iterator<Item = Value> {
        (1..=ROWS).map(move |id| cell(id, index))
    }

    fn strings(index: usize) -> Vec<String> {
        column(index)
            .filter_map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn rows_are_deterministic_and_differ_between_ids() {
        assert_eq!(row(17), row(17));
        assert_eq!(row(-5), row(-5));
        assert_ne!(row(17), row(18));
        for id in [0, 1, 2, -1, i64::MIN, i64::MAX] {
            let r = row(id);
            assert_eq!(r.len(), COLUMN_COUNT);
            assert_eq!(r[ID], Value::Int64(id));
        }
        // Neighbouring rows share few cells (a name or a country may repeat, bytes and notes don't).
        let (a, b) = (row(100), row(101));
        let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
        assert!(same <= 6, "{same} equal cells");
        assert_ne!(a[NOTES], b[NOTES]);
    }

    #[test]
    fn cells_are_computed_on_their_own() {
        for id in [3, 999, -77] {
            let r = row(id);
            for c in (0..COLUMN_COUNT).rev() {
                assert_eq!(cell(id, c), r[c], "row {id} column {c}");
            }
        }
        assert_eq!(cell(1, COLUMN_COUNT), Value::Null);
    }

    #[test]
    fn every_cell_fits_its_column_type() {
        let table = table();
        assert_eq!(table.columns.len(), COLUMN_COUNT);
        for r in rows() {
            for (field, value) in table.columns.iter().zip(&r) {
                assert!(fits(&field.ty, value), "{}: {value:?}", field.name);
            }
        }
    }

    #[test]
    fn about_five_percent_of_non_key_cells_are_null() {
        let nulls = rows()
            .flat_map(|r| r.into_iter().skip(1))
            .filter(|v| *v == Value::Null)
            .count();
        let rate = nulls as f64 / (ROWS as f64 * (COLUMN_COUNT - 1) as f64);
        assert!((0.03..=0.07).contains(&rate), "NULL rate {rate}");
        assert!(column(ID).all(|v| v != Value::Null));
        // Every non-key column has some NULLs.
        for c in 1..COLUMN_COUNT {
            assert!(column(c).any(|v| v == Value::Null), "column {c}");
        }
    }

    #[test]
    fn rows_are_about_1_1_kb_of_canonical_json() {
        let total: usize = rows()
            .map(|r| Row(r).to_canonical_json().to_string().len())
            .sum();
        let average = total as f64 / ROWS as f64;
        assert!(
            (900.0..=1500.0).contains(&average),
            "average {average} bytes"
        );
    }

    #[test]
    fn notes_have_200_to_800_chars_some_non_ascii_some_4_byte() {
        let notes = strings(NOTES);
        assert!(notes.len() > 1_800);
        for n in &notes {
            let chars = n.chars().count();
            assert!((200..=800).contains(&chars), "{chars}: {n}");
            assert!(!n.starts_with(' ') && !n.ends_with(' ') && !n.contains("  "));
        }
        let non_ascii = notes.iter().filter(|n| !n.is_ascii()).count();
        let four_byte = notes
            .iter()
            .filter(|n| n.chars().any(|c| c.len_utf8() == 4))
            .count();
        assert!(non_ascii > notes.len() / 2, "{non_ascii}");
        assert!(non_ascii < notes.len(), "some notes are pure ASCII");
        assert!(four_byte > notes.len() / 10, "{four_byte}");
    }

    #[test]
    fn names_and_emails_describe_the_same_person() {
        for id in 1..200 {
            let (Value::String(name), Value::String(email)) = (cell(id, NAME), cell(id, EMAIL))
            else {
                continue;
            };
            let first = FIRST_NAMES
                .iter()
                .find(|(n, _)| name.starts_with(&format!("{n} ")))
                .expect("a known first name");
            assert!(
                email.starts_with(&format!("{}.", first.1)),
                "{name} {email}"
            );
            assert!(email.is_ascii() && email.contains('@'), "{email}");
        }
        assert!(strings(COUNTRY).iter().all(|c| c.len() == 2));
    }

    #[test]
    fn balances_are_canonical_numerics_within_spanner_limits() {
        let mut long = 0;
        for v in column(BALANCE) {
            let Value::Numeric(n) = v else { continue };
            let text = n.as_str();
            assert_eq!(Numeric::parse(text).as_ref(), Ok(&n));
            let body = text.strip_prefix('-').unwrap_or(text);
            let (int, frac) = body.split_once('.').unwrap_or((body, ""));
            assert!((1..=29).contains(&int.len()), "{text}");
            assert!(frac.len() <= 9, "{text}");
            assert!(int == "0" || !int.starts_with('0'), "{text}");
            assert!(!frac.ends_with('0'), "{text}");
            assert_ne!(text, "-0");
            long += usize::from(int.len() > 12);
        }
        assert!(long > 10, "some balances are large: {long}");
    }

    #[test]
    fn timestamps_span_2015_to_2025_with_every_precision() {
        let mut precisions = [0usize; 4];
        for v in column(CREATED_AT).chain(column(UPDATED_AT)) {
            let Value::Timestamp(t) = v else { continue };
            let text = t.to_string();
            assert!(("2015".."2026").contains(&&text[..4]), "{text}");
            let digits = text.split_once('.').map_or(0, |(_, frac)| frac.len() - 1);
            precisions[digits.div_ceil(3)] += 1;
        }
        assert!(precisions.iter().all(|&n| n > 100), "{precisions:?}");
        for v in column(BIRTH_DATE) {
            let Value::Date(d) = v else { continue };
            assert!((1930..=2007).contains(&d.year()), "{d}");
        }
        assert_eq!(
            Date::new(1930, 1, 1).map(Date::days_since_epoch),
            Some(BIRTH_DAYS.0)
        );
        assert_eq!(
            Date::new(2007, 12, 31).map(Date::days_since_epoch),
            Some(BIRTH_DAYS.1)
        );
        let ends = [(2015, TIMESTAMP_SECONDS.0), (2026, TIMESTAMP_SECONDS.1)];
        for (year, seconds) in ends {
            let date = Date::new(year, 1, 1).expect("valid");
            assert_eq!(date.days_since_epoch() * 86_400, seconds);
        }
    }

    #[test]
    fn bytes_have_their_sizes() {
        for v in column(AVATAR) {
            let Value::Bytes(b) = v else { continue };
            assert!((100..=200).contains(&b.len()), "{}", b.len());
        }
        let checksums: Vec<Value> = column(CHECKSUM).filter(|v| *v != Value::Null).collect();
        let distinct: std::collections::HashSet<Vec<u8>> = checksums
            .iter()
            .filter_map(|v| match v {
                Value::Bytes(b) if b.len() == 32 => Some(b.clone()),
                _ => None,
            })
            .collect();
        assert!(checksums.len() > 1_800);
        assert_eq!(
            distinct.len(),
            checksums.len(),
            "32 bytes each, all different"
        );
    }

    #[test]
    fn arrays_are_sometimes_empty_and_sometimes_hold_nulls() {
        for c in [TAGS_COLUMN, SCORES, FLAGS] {
            let arrays: Vec<Vec<Value>> = column(c)
                .filter_map(|v| match v {
                    Value::Array(items) => Some(items),
                    _ => None,
                })
                .collect();
            assert!(arrays.iter().any(Vec::is_empty), "column {c}");
            assert!(
                arrays.iter().any(|a| a.contains(&Value::Null)),
                "column {c}"
            );
            assert!(arrays.iter().any(|a| a.len() >= 5), "column {c}");
        }
        let counters: Vec<Value> = column(COUNTER).collect();
        assert!(
            counters
                .iter()
                .any(|v| matches!(v, Value::Int64(n) if *n < -(1 << 62)))
        );
        assert!(
            counters
                .iter()
                .any(|v| matches!(v, Value::Int64(n) if *n > 1 << 62))
        );
    }

    #[test]
    fn attrs_are_json_objects_with_sorted_keys_and_no_whitespace() {
        let mut nested = 0;
        for v in column(ATTRS) {
            let Value::Json(text) = v else { continue };
            let parsed: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            let object = parsed.as_object().expect("an object");
            let keys: Vec<&String> = object.keys().collect();
            assert!(keys.is_sorted(), "{text}");
            // `preserve_order` keeps the keys as written, so this also checks for whitespace.
            assert_eq!(parsed.to_string(), text);
            nested += usize::from(text.contains("{\"id\":"));
        }
        assert!(nested > 100, "{nested}");
    }
}
