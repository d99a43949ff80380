//! Reports too long for one cell of the team store. A `STRING(MAX)` cell holds at most 2,621,440
//! characters (10 MiB), a report of about 1,100 iterations more: such a report is cut into chunks of
//! at most [`CHUNK_BYTES`] (on character boundaries), kept in their own table, and the run's
//! `Report` cell holds a marker naming how many there are (`parts:N`, never a JSON report). The
//! table, its `Part` column and the marker keep the spelling stores were written with.

/// The most bytes of a report in one chunk: well within a cell's characters and bytes, and a
/// commit of a few chunks within a request's size.
pub const CHUNK_BYTES: usize = 1 << 20;

/// The longest report kept whole in the run's own cell, in bytes (a cell holds 2,621,440
/// characters; in bytes, so that no count of characters is needed).
pub const WHOLE_BYTES: usize = 2_621_440;

/// What the `Report` cell holds for a report kept in `n` chunks.
pub fn marker(n: usize) -> String {
    format!("parts:{n}")
}

/// How many chunks a `Report` cell says the report was cut into; `None` for a report kept whole.
pub fn chunks_of(cell: &str) -> Option<usize> {
    cell.strip_prefix("parts:")?.parse().ok()
}

/// `json` cut into chunks of at most [`CHUNK_BYTES`], each ending on a character boundary.
pub fn split(json: &str) -> Vec<&str> {
    let mut chunks = Vec::with_capacity(json.len() / CHUNK_BYTES + 1);
    let mut rest = json;
    while !rest.is_empty() {
        let mut end = rest.len().min(CHUNK_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (chunk, tail) = rest.split_at(end);
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// The report again, from its chunks in order; an error when chunks are missing.
pub fn join(chunks: Vec<(i64, String)>, expected: usize) -> Result<String, String> {
    let numbered = chunks
        .iter()
        .enumerate()
        .all(|(i, (n, _))| i64::try_from(i).is_ok_and(|i| i == *n));
    if chunks.len() != expected || !numbered {
        return Err(format!(
            "stored in {expected} chunks, {} found",
            chunks.len()
        ));
    }
    Ok(chunks.into_iter().map(|(_, text)| text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_report_is_cut_on_character_boundaries_and_joined_back() {
        let json = format!("[\"{}\"]", "é".repeat(CHUNK_BYTES));
        let chunks = split(&json);
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().all(|p| p.len() <= CHUNK_BYTES));
        let numbered: Vec<(i64, String)> = chunks
            .iter()
            .enumerate()
            .map(|(i, p)| (i as i64, (*p).to_owned()))
            .collect();
        assert_eq!(join(numbered.clone(), 3).expect("joins"), json);
        let missing = join(numbered[..2].to_vec(), 3).expect_err("one missing");
        assert_eq!(missing, "stored in 3 chunks, 2 found");
        assert_eq!(chunks_of(&marker(3)), Some(3));
        assert_eq!(chunks_of("{\"runs\":[]}"), None);
        assert!(split("").is_empty());
    }
}
