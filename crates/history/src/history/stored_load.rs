//! A load run as the history keeps it: its report whole (as JSON) beside the figures a listing
//! shows. Load runs live in a table of their own, their ids marked `L` (`L12` in a SQLite file,
//! `L` and 16 hex digits in Spanner), so one id names one run whichever kind it is.

use serde::Serialize;

use super::fingerprint::normalize_sql;
use super::stored::unix_ms;
use crate::load::{LoadReport, Model};

/// What starts the id of a load run.
pub const LOAD_ID_PREFIX: char = 'L';

/// Whether `id` names a load run.
pub fn is_load_id(id: &str) -> bool {
    id.starts_with(LOAD_ID_PREFIX)
}

/// A load run ready to be saved.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredLoad {
    /// Its listing line (its `id` empty until saved).
    pub summary: LoadSummary,
    /// When it started, milliseconds since the Unix epoch (0 when unreadable).
    pub started_ms: i64,
    /// The report, serialized whole.
    pub report_json: String,
}

/// A load run's line in a listing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadSummary {
    /// The store's id of the run (`L...`).
    pub id: String,
    /// When it started, RFC 3339 UTC.
    pub started_at: String,
    /// Its label.
    pub label: String,
    /// Where it ran.
    pub target: String,
    /// What it measured ([`load_fingerprint`]).
    pub fingerprint: String,
    /// `open` (rates) or `closed` (concurrencies).
    pub model: String,
    /// Its steps.
    pub steps: u32,
    /// Requests that ended, over all steps.
    pub requests: u64,
    /// The knee's level, if it had one.
    pub knee: Option<f64>,
    /// The SQL it ran.
    pub sql: String,
}

impl StoredLoad {
    /// `report` as stored, its fingerprint taken with its database's name.
    pub fn new(report: &LoadReport) -> Result<Self, serde_json::Error> {
        Ok(StoredLoad {
            summary: LoadSummary {
                id: String::new(),
                started_at: report.started_at.clone(),
                label: report.label.clone(),
                target: report.target.clone(),
                fingerprint: load_fingerprint(report),
                model: model_name(report.model).to_owned(),
                steps: u32::try_from(report.steps.len()).unwrap_or(u32::MAX),
                requests: report.steps.iter().map(|s| s.count).sum(),
                knee: report.knee,
                sql: report.sql.clone(),
            },
            started_ms: unix_ms(&report.started_at).unwrap_or(0),
            report_json: serde_json::to_string(report)?,
        })
    }
}

/// How a listing names `model`.
pub fn model_name(model: Model) -> &'static str {
    match model {
        Model::Open => "open",
        Model::Closed => "closed",
    }
}

/// What a load run measured: its query (as [`normalize_sql`] writes it), the kind of target,
/// the database's name, the model and the decoder. Processes that ran one load together share it.
pub fn load_fingerprint(report: &LoadReport) -> String {
    let kind = report.target.split_whitespace().next().unwrap_or("");
    let sql = normalize_sql(&report.sql);
    let hash = crate::fnv::of_parts(&[
        b"load",
        sql.as_bytes(),
        kind.as_bytes(),
        report.database.as_bytes(),
        model_name(report.model).as_bytes(),
        report.decoder.as_bytes(),
    ]);
    format!("{hash:016x}")
}
