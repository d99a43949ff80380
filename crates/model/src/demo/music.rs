//! `Singers` and `Albums`: the classic Cloud Spanner sample schema, with a few fixed rows.
//!
//! The singers are the sample's usual five; the album titles and everything else are made up here.
//! Some cells are NULL on purpose (a birth date, a singer's info, two marketing budgets).

use super::{DemoTable, field};
use crate::wire::{Date, Type, Value};

/// A singer: id, first and last name, info bytes, birth date (year, month, day).
type SingerRow = (
    i64,
    &'static str,
    &'static str,
    Option<&'static [u8]>,
    Option<(u16, u8, u8)>,
);

const SINGERS: [SingerRow; 5] = [
    (
        1,
        "Marc",
        "Richards",
        Some(b"genre=folk;label=Tidewater"),
        Some((1970, 9, 3)),
    ),
    (
        2,
        "Catalina",
        "Smith",
        Some(b"genre=pop;label=Northlight"),
        Some((1990, 8, 17)),
    ),
    (3, "Alice", "Trentor", None, Some((1991, 10, 2))),
    (
        4,
        "Lea",
        "Martin",
        Some(b"genre=jazz;label=Blue Quarry"),
        None,
    ),
    (
        5,
        "David",
        "Lomond",
        Some(b"genre=rock;label=\xe2\x80\x94"),
        Some((1977, 1, 29)),
    ),
];

/// An album: singer id, album id, title, marketing budget.
const ALBUMS: [(i64, i64, &str, Option<i64>); 11] = [
    (1, 1, "Harbor Lights at Noon", Some(250_000)),
    (1, 2, "Paper Satellites", None),
    (1, 3, "Salt and Static", Some(90_000)),
    (2, 1, "The Quiet Engine", Some(300_000)),
    (2, 2, "Glass Orchard", Some(120_000)),
    (2, 3, "Northbound Sleeper", Some(45_500)),
    (3, 1, "Velvet Arithmetic", Some(500_000)),
    (3, 2, "Lanterns for the Tide", None),
    (4, 1, "Second-Hand Thunder", Some(40_000)),
    (5, 1, "Morning in Lisbon", Some(180_000)),
    (5, 2, "Copper Weather", Some(60_000)),
];

/// `Singers(SingerId INT64, FirstName STRING(1024), LastName STRING(1024), SingerInfo BYTES(MAX),
/// BirthDate DATE) PRIMARY KEY (SingerId)`.
pub fn singers() -> DemoTable {
    DemoTable {
        name: "Singers",
        columns: vec![
            field("SingerId", Type::Int64),
            field("FirstName", Type::String),
            field("LastName", Type::String),
            field("SingerInfo", Type::Bytes),
            field("BirthDate", Type::Date),
        ],
        primary_key: vec!["SingerId"],
        length_limits: vec![("FirstName", 1024), ("LastName", 1024)],
        parent: None,
        not_null: Vec::new(),
    }
}

/// `Albums(SingerId INT64, AlbumId INT64, AlbumTitle STRING(MAX), MarketingBudget INT64) PRIMARY KEY
/// (SingerId, AlbumId)`, interleaved in `Singers` with `ON DELETE CASCADE`.
pub fn albums() -> DemoTable {
    DemoTable {
        name: "Albums",
        columns: vec![
            field("SingerId", Type::Int64),
            field("AlbumId", Type::Int64),
            field("AlbumTitle", Type::String),
            field("MarketingBudget", Type::Int64),
        ],
        primary_key: vec!["SingerId", "AlbumId"],
        length_limits: Vec::new(),
        parent: Some("Singers"),
        not_null: Vec::new(),
    }
}

/// The five singers, in key order, one `Vec` of [`singers`]' columns each.
pub fn singer_rows() -> Vec<Vec<Value>> {
    SINGERS
        .iter()
        .map(|&(id, first, last, info, birth)| {
            vec![
                Value::Int64(id),
                Value::String(first.to_owned()),
                Value::String(last.to_owned()),
                info.map_or(Value::Null, |bytes| Value::Bytes(bytes.to_vec())),
                birth
                    .and_then(|(y, m, d)| Date::new(y, m, d))
                    .map_or(Value::Null, Value::Date),
            ]
        })
        .collect()
}

/// The albums, in key order, one `Vec` of [`albums`]' columns each.
pub fn album_rows() -> Vec<Vec<Value>> {
    ALBUMS
        .iter()
        .map(|&(singer, album, title, budget)| {
            vec![
                Value::Int64(singer),
                Value::Int64(album),
                Value::String(title.to_owned()),
                budget.map_or(Value::Null, Value::Int64),
            ]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::fits;

    fn check_rows(table: &DemoTable, rows: &[Vec<Value>]) {
        for row in rows {
            assert_eq!(row.len(), table.columns.len(), "{}", table.name);
            for (field, value) in table.columns.iter().zip(row) {
                assert!(fits(&field.ty, value), "{}.{}", table.name, field.name);
            }
            for key in &table.primary_key {
                let index = table.column_index(key).expect("key column");
                assert_ne!(row[index], Value::Null, "{}.{key}", table.name);
            }
        }
    }

    fn key(row: &[Value], n: usize) -> Vec<i64> {
        row[..n]
            .iter()
            .map(|v| match v {
                Value::Int64(k) => *k,
                other => panic!("key {other:?}"),
            })
            .collect()
    }

    #[test]
    fn rows_fit_their_tables_in_strictly_increasing_key_order() {
        let (singers_rows, album_rows) = (singer_rows(), album_rows());
        check_rows(&singers(), &singers_rows);
        check_rows(&albums(), &album_rows);
        assert_eq!(singers_rows.len(), 5);
        assert!((8..=12).contains(&album_rows.len()));
        let singer_keys: Vec<Vec<i64>> = singers_rows.iter().map(|r| key(r, 1)).collect();
        let album_keys: Vec<Vec<i64>> = album_rows.iter().map(|r| key(r, 2)).collect();
        assert!(singer_keys.windows(2).all(|w| w[0] < w[1]));
        assert!(album_keys.windows(2).all(|w| w[0] < w[1]));
        // Interleaving: every album's parent exists, and every singer has an album.
        for album in &album_keys {
            assert!(singer_keys.contains(&vec![album[0]]), "{album:?}");
        }
        for singer in &singer_keys {
            assert!(album_keys.iter().any(|a| a[0] == singer[0]), "{singer:?}");
        }
    }

    #[test]
    fn the_classic_singers_with_some_nulls() {
        let names: Vec<(Value, Value)> = singer_rows()
            .into_iter()
            .map(|r| (r[1].clone(), r[2].clone()))
            .collect();
        let expected = [
            ("Marc", "Richards"),
            ("Catalina", "Smith"),
            ("Alice", "Trentor"),
            ("Lea", "Martin"),
            ("David", "Lomond"),
        ];
        for ((first, last), (want_first, want_last)) in names.iter().zip(expected) {
            assert_eq!(first, &Value::String(want_first.into()));
            assert_eq!(last, &Value::String(want_last.into()));
        }
        let singers = singer_rows();
        // Every birth date given is a real date: only Lea Martin's is NULL.
        let null_dates = singers.iter().filter(|r| r[4] == Value::Null).count();
        assert_eq!(null_dates, 1);
        assert_eq!(singers.iter().filter(|r| r[3] == Value::Null).count(), 1);
        let null_budgets = album_rows().iter().filter(|r| r[3] == Value::Null).count();
        assert_eq!(null_budgets, 2);
    }
}
