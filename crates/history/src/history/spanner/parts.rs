//! Reports too long for one cell of the team store. A `STRING(MAX)` cell holds at most 2,621,440
//! characters (10 MiB), a report of about 1,100 iterations more: such a report is cut into parts of
//! at most [`PART_BYTES`] (on character boundaries), kept in their own table, and the run's
//! `Report` cell holds a marker naming how many there are (`parts:N`, never a JSON report).

/// The most bytes of a report in one part: well within a cell's characters and bytes, and a
/// commit of a few parts within a request's size.
pub const PART_BYTES: usize = 1 << 20;

/// The longest report kept whole in the run's own cell, in bytes (a cell holds 2,621,440
/// characters; in bytes, so that no count of characters is needed).
pub const WHOLE_BYTES: usize = 2_621_440;

/// What the `Report` cell holds for a report kept in `n` parts.
pub fn marker(n: usize) -> String {
    format!("parts:{n}")
}

/// How many parts a `Report` cell says the report was cut into; `None` for a report kept whole.
pub fn parts_of(cell: &str) -> Option<usize> {
    cell.strip_prefix("parts:")?.parse().ok()
}

/// `json` cut into parts of at most [`PART_BYTES`], each ending on a character boundary.
pub fn split(json: &str) -> Vec<&str> {
    let mut parts = Vec::with_capacity(json.len() / PART_BYTES + 1);
    let mut rest = json;
    while !rest.is_empty() {
        let mut end = rest.len().min(PART_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (part, tail) = rest.split_at(end);
        parts.push(part);
        rest = tail;
    }
    parts
}

/// The report again, from its parts in order; an error when parts are missing.
pub fn join(parts: Vec<(i64, String)>, expected: usize) -> Result<String, String> {
    let numbered = parts
        .iter()
        .enumerate()
        .all(|(i, (n, _))| i64::try_from(i).is_ok_and(|i| i == *n));
    if parts.len() != expected || !numbered {
        return Err(format!("stored in {expected} parts, {} found", parts.len()));
    }
    Ok(parts.into_iter().map(|(_, text)| text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_report_is_cut_on_character_boundaries_and_joined_back() {
        let json = format!("[\"{}\"]", "é".repeat(PART_BYTES));
        let parts = split(&json);
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.len() <= PART_BYTES));
        let numbered: Vec<(i64, String)> = parts
            .iter()
            .enumerate()
            .map(|(i, p)| (i as i64, (*p).to_owned()))
            .collect();
        assert_eq!(join(numbered.clone(), 3).expect("joins"), json);
        let missing = join(numbered[..2].to_vec(), 3).expect_err("one missing");
        assert_eq!(missing, "stored in 3 parts, 2 found");
        assert_eq!(parts_of(&marker(3)), Some(3));
        assert_eq!(parts_of("{\"runs\":[]}"), None);
        assert!(split("").is_empty());
    }
}
