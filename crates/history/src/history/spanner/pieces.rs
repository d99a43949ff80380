//! Reports too long for one cell of the team store. A `STRING(MAX)` cell holds at most 2,621,440
//! characters (10 MiB), a report of about 1,100 iterations more: such a report is cut into pieces of
//! at most [`PIECE_BYTES`] (on character boundaries), kept in their own table, and the run's
//! `Report` cell holds a marker naming how many there are (`parts:N`, never a JSON report). The
//! table, its `Part` column and the marker keep the spelling stores were written with.

/// The most bytes of a report in one piece: well within a cell's characters and bytes, and a
/// commit of a few pieces within a request's size.
pub const PIECE_BYTES: usize = 1 << 20;

/// The longest report kept whole in the run's own cell, in bytes (a cell holds 2,621,440
/// characters; in bytes, so that no count of characters is needed).
pub const WHOLE_BYTES: usize = 2_621_440;

/// What the `Report` cell holds for a report kept in `n` pieces.
pub fn marker(n: usize) -> String {
    format!("parts:{n}")
}

/// How many pieces a `Report` cell says the report was cut into; `None` for a report kept whole.
pub fn pieces_of(cell: &str) -> Option<usize> {
    cell.strip_prefix("parts:")?.parse().ok()
}

/// `json` cut into pieces of at most [`PIECE_BYTES`], each ending on a character boundary.
pub fn split(json: &str) -> Vec<&str> {
    let mut pieces = Vec::with_capacity(json.len() / PIECE_BYTES + 1);
    let mut rest = json;
    while !rest.is_empty() {
        let mut end = rest.len().min(PIECE_BYTES);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

/// The report again, from its pieces in order; an error when pieces are missing.
pub fn join(pieces: Vec<(i64, String)>, expected: usize) -> Result<String, String> {
    let numbered = pieces
        .iter()
        .enumerate()
        .all(|(i, (n, _))| i64::try_from(i).is_ok_and(|i| i == *n));
    if pieces.len() != expected || !numbered {
        return Err(format!(
            "stored in {expected} pieces, {} found",
            pieces.len()
        ));
    }
    Ok(pieces.into_iter().map(|(_, text)| text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_report_is_cut_on_character_boundaries_and_joined_back() {
        let json = format!("[\"{}\"]", "é".repeat(PIECE_BYTES));
        let pieces = split(&json);
        assert_eq!(pieces.len(), 3);
        assert!(pieces.iter().all(|p| p.len() <= PIECE_BYTES));
        let numbered: Vec<(i64, String)> = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (i as i64, (*p).to_owned()))
            .collect();
        assert_eq!(join(numbered.clone(), 3).expect("joins"), json);
        let missing = join(numbered[..2].to_vec(), 3).expect_err("one missing");
        assert_eq!(missing, "stored in 3 pieces, 2 found");
        assert_eq!(pieces_of(&marker(3)), Some(3));
        assert_eq!(pieces_of("{\"runs\":[]}"), None);
        assert!(split("").is_empty());
    }
}
