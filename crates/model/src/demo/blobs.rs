//! `Blobs`: 14 rows whose `Data` doubles from 1 KiB (id 1) to 8 MiB (id 14), for profiling how
//! large values are chunked and reassembled. The bytes are random (so they don't compress) and the
//! same on every run.

use std::ops::RangeInclusive;

use super::rng::Rng;
use super::{DemoTable, field};
use crate::wire::{Type, Value};

/// Tells this table's random streams apart from other tables'.
const SALT: u64 = 0xb10b_5000_0000_0004;
/// The column index of `Data`, which also names its random stream.
const DATA: usize = 3;
/// The number of rows.
const ROWS: i64 = 14;

/// `Blobs(Id INT64, Label STRING(MAX), SizeBytes INT64, Data BYTES(MAX)) PRIMARY KEY (Id)`.
pub fn table() -> DemoTable {
    DemoTable {
        name: "Blobs",
        columns: vec![
            field("Id", Type::Int64),
            field("Label", Type::String),
            field("SizeBytes", Type::Int64),
            field("Data", Type::Bytes),
        ],
        primary_key: vec!["Id"],
        length_limits: Vec::new(),
        parent: None,
        not_null: Vec::new(),
    }
}

/// The ids of the rows: `1..=14`.
pub fn ids() -> RangeInclusive<i64> {
    1..=ROWS
}

/// The row with key `id` (`Id`, `Label` like `"4 KiB"`, `SizeBytes`, `Data`), or `None` if there is
/// no such row. Row `id` holds `1024 << (id - 1)` bytes: up to 8 MiB, so ask for one at a time.
pub fn row(id: i64) -> Option<Vec<Value>> {
    if !ids().contains(&id) {
        return None;
    }
    let size = 1024usize << (id - 1);
    let data = Rng::for_cell(SALT, id, DATA).bytes(size);
    Some(vec![
        Value::Int64(id),
        Value::String(label(size)),
        Value::Int64(size as i64),
        Value::Bytes(data),
    ])
}

/// `1 KiB`, `512 KiB`, `1 MiB`, `8 MiB`: sizes are powers of two from 1 KiB.
fn label(size: usize) -> String {
    if size >= 1 << 20 {
        format!("{} MiB", size >> 20)
    } else {
        format!("{} KiB", size >> 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::fits;

    #[test]
    fn sizes_double_from_1_kib_to_8_mib_with_matching_labels() {
        let table = table();
        let mut labels = Vec::new();
        let mut previous: Option<Vec<u8>> = None;
        for id in ids() {
            let row = row(id).expect("a row for every id");
            for (field, value) in table.columns.iter().zip(&row) {
                assert!(fits(&field.ty, value), "{}", field.name);
            }
            let expected = 1024usize << (id - 1);
            assert_eq!(row[0], Value::Int64(id));
            assert_eq!(row[2], Value::Int64(expected as i64));
            let Value::Bytes(data) = &row[3] else {
                panic!("Data is not BYTES: {:?}", row[3]);
            };
            assert_eq!(data.len(), expected);
            // A smaller row's bytes are not a prefix of the next one's: each row has its own stream.
            if let Some(prev) = previous {
                assert_ne!(data[..prev.len()], prev[..]);
            }
            previous = Some(data.clone());
            if let Value::String(label) = &row[1] {
                labels.push(label.clone());
            }
        }
        assert_eq!(labels.len(), 14);
        assert_eq!(labels[0], "1 KiB");
        assert_eq!(labels[9], "512 KiB");
        assert_eq!(labels[10], "1 MiB");
        assert_eq!(labels[13], "8 MiB");
        let last = previous.expect("rows");
        assert_eq!(last.len(), 8 << 20);
        // Random, not padding: every byte value turns up, and the tail is not zero.
        let mut seen = [false; 256];
        last.iter().for_each(|&b| seen[usize::from(b)] = true);
        assert!(seen.iter().all(|&s| s));
        assert!(last[last.len() - 64..].iter().any(|&b| b != 0));
    }

    #[test]
    fn rows_are_deterministic_and_only_for_known_ids() {
        assert_eq!(row(3), row(3));
        assert_ne!(row(1), row(2));
        for missing in [0, -1, 15, i64::MAX, i64::MIN] {
            assert_eq!(row(missing), None, "{missing}");
        }
        assert_eq!(ids().count(), 14);
    }
}
