//! The History list's entries: what a person calls one query is its SQL, normalised as the
//! fingerprint normalises it. The stores keep and list runs by fingerprint (which also hashes the
//! mode, the options, the target's kind and the database); their keys are left as they are, so
//! every stored fingerprint and older store reads back, and the fingerprints of one SQL are joined
//! here, on the reader's thread. The mode and the other settings become columns of each run.

use crate::history::{QuerySummary, TrendPoint, normalize_sql};

/// One entry of the list: every fingerprint stored of one SQL.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryGroup {
    /// What makes it one: its SQL normalised.
    pub key: String,
    /// The SQL as its latest run wrote it.
    pub sql: String,
    /// The fingerprints of its runs (one per mode, options, target kind or database).
    pub fingerprints: Vec<String>,
    /// How many runs of it are stored.
    pub runs: u64,
    /// When the latest started, RFC 3339 UTC.
    pub last_started_at: String,
}

/// `queries` (one per fingerprint, the latest first) joined by their normalised SQL, the entry
/// with the latest run first; `wanted` keeps only the entries one of whose fingerprints it holds
/// (a search's matches), with every fingerprint of their SQL in `queries` joined to them.
pub fn group(queries: &[QuerySummary], wanted: Option<&[QuerySummary]>) -> Vec<QueryGroup> {
    let mut groups: Vec<(String, QueryGroup)> = Vec::new();
    for q in queries {
        let key = normalize_sql(&q.sql);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => {
                g.fingerprints.push(q.fingerprint.clone());
                g.runs += q.runs;
                if q.last_started_at > g.last_started_at {
                    g.last_started_at = q.last_started_at.clone();
                    g.sql = q.sql.clone();
                }
            }
            None => groups.push((
                key.clone(),
                QueryGroup {
                    key,
                    sql: q.sql.clone(),
                    fingerprints: vec![q.fingerprint.clone()],
                    runs: q.runs,
                    last_started_at: q.last_started_at.clone(),
                },
            )),
        }
    }
    let mut groups: Vec<QueryGroup> = groups
        .into_iter()
        .filter(|(_, g)| {
            wanted.is_none_or(|w| w.iter().any(|q| g.fingerprints.contains(&q.fingerprint)))
        })
        .map(|(_, g)| g)
        .collect();
    groups.sort_by(|a, b| b.last_started_at.cmp(&a.last_started_at));
    groups
}

/// `n` and its noun, in the singular for one (`1 run`, `2 runs`).
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The trends of one entry's fingerprints as one, oldest first, the latest `limit` kept.
pub fn merge(trends: Vec<Vec<TrendPoint>>, limit: usize) -> Vec<TrendPoint> {
    let mut points: Vec<TrendPoint> = trends.into_iter().flatten().collect();
    // RFC 3339 UTC times sort as text; the id breaks ties as the stores do.
    points.sort_by(|a, b| {
        let key = |p: &TrendPoint| {
            (
                p.summary.started_at.clone(),
                p.summary.id.parse::<i64>().ok(),
            )
        };
        key(a).cmp(&key(b))
    });
    let extra = points.len().saturating_sub(limit);
    points.drain(..extra);
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::RunSummary;

    fn query(fingerprint: &str, sql: &str, runs: u64, last: &str) -> QuerySummary {
        QuerySummary {
            fingerprint: fingerprint.into(),
            sql: sql.into(),
            runs,
            last_started_at: last.into(),
        }
    }

    fn point(id: &str, started_at: &str) -> TrendPoint {
        TrendPoint {
            summary: RunSummary {
                id: id.into(),
                started_at: started_at.into(),
                label: String::new(),
                target: String::new(),
                fingerprint: String::new(),
                iterations: 0,
                median_total_ms: None,
                p90_total_ms: None,
                sql: String::new(),
            },
            pinned: false,
            failed: false,
            plan: None,
            measures: Vec::new(),
            settings: None,
        }
    }

    #[test]
    fn fingerprints_of_one_sql_are_one_entry_as_the_fingerprint_normalises_it() {
        let queries = [
            query("profile", "select 1 ;", 1, "2026-03-02T00:00:00Z"),
            query("other", "SELECT 2", 4, "2026-03-03T00:00:00Z"),
            query("normal", "SELECT  1", 2, "2026-03-01T00:00:00Z"),
        ];
        let groups = group(&queries, None);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].sql, "SELECT 2");
        assert_eq!(groups[1].fingerprints, ["profile", "normal"]);
        assert_eq!(groups[1].runs, 3);
        assert_eq!(groups[1].sql, "select 1 ;", "the latest run's text");
        let found = group(&queries, Some(&queries[2..]));
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].fingerprints.len(),
            2,
            "a match brings its SQL's others"
        );
    }

    #[test]
    fn trends_merge_in_time_and_keep_the_latest() {
        let a = vec![
            point("1", "2026-03-01T00:00:00Z"),
            point("4", "2026-03-04T00:00:00Z"),
        ];
        let b = vec![point("2", "2026-03-02T00:00:00Z")];
        let ids = |points: &[TrendPoint]| -> Vec<String> {
            points.iter().map(|p| p.summary.id.clone()).collect()
        };
        assert_eq!(ids(&merge(vec![a.clone(), b.clone()], 10)), ["1", "2", "4"]);
        assert_eq!(ids(&merge(vec![a, b], 2)), ["2", "4"]);
    }
}
