//! Load variants' exports (`spanprof load --vary`), bytes out: one JSON document of every run and
//! their comparison, and one CSV of every run's steps, each row led by its variant. The page is
//! `html/`'s ([`super::load_variants_html`]).

use super::ExportError;
use super::load::load_csv_table;
use super::redact::Redaction;
use crate::analysis::load_variants::{VariantComparison, compare_variants};
use crate::load::LoadReport;

/// The version of the variants' JSON document.
pub const LOAD_VARIANTS_VERSION: u32 = 1;
/// The document's `kind`.
pub const LOAD_VARIANTS_KIND: &str = "load-variants";

/// Load runs of one workload that differ in one setting, and their comparison: what
/// `load --vary --json` writes.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LoadVariants {
    /// [`LOAD_VARIANTS_KIND`].
    pub kind: String,
    /// [`LOAD_VARIANTS_VERSION`].
    pub version: u32,
    /// The setting varied (`lock-mode`, `isolation`, `max-commit-delay`, `skew`).
    pub setting: String,
    /// Its values, in the order run.
    pub values: Vec<String>,
    /// A whole load run per value, in the same order.
    pub runs: Vec<LoadReport>,
    /// The runs compared, each against the first.
    pub comparison: VariantComparison,
}

impl LoadVariants {
    /// The runs `runs` of `setting`'s `values` (the same order), compared.
    pub fn new(setting: &str, values: Vec<String>, runs: Vec<LoadReport>) -> LoadVariants {
        let comparison = compare_variants(&values, &runs);
        LoadVariants {
            kind: LOAD_VARIANTS_KIND.to_owned(),
            version: LOAD_VARIANTS_VERSION,
            setting: setting.to_owned(),
            values,
            runs,
            comparison,
        }
    }

    /// With what `redaction` names left out of every run (the comparison holds figures and the
    /// setting's values only).
    pub fn redacted(&self, redaction: Redaction) -> LoadVariants {
        LoadVariants {
            runs: self.runs.iter().map(|r| redaction.apply_load(r)).collect(),
            ..self.clone()
        }
    }

    /// `setting=value` of the `i`-th run.
    pub fn variant(&self, i: usize) -> String {
        let value = self.values.get(i).map_or("?", String::as_str);
        format!("{}={value}", self.setting)
    }
}

/// The document, pretty-printed.
pub fn load_variants_json(doc: &LoadVariants) -> Result<Vec<u8>, ExportError> {
    let mut bytes = serde_json::to_vec_pretty(doc)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// A row per (run, step): `variant` (`lock-mode=optimistic`), then a load run's CSV columns
/// ([`super::load_csv`]'s). A run whose columns are fewer (a mix's scripts' columns come last, and
/// a run cancelled before its first step has none) has them empty; runs whose columns differ
/// otherwise are refused, never written under the wrong header.
pub fn load_variants_csv(doc: &LoadVariants) -> Result<Vec<u8>, ExportError> {
    let tables: Vec<_> = doc.runs.iter().map(load_csv_table).collect();
    let widest = tables
        .iter()
        .map(|(header, _)| header)
        .max_by_key(|h| h.len())
        .cloned()
        .unwrap_or_default();
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(std::iter::once("variant".to_owned()).chain(widest.iter().cloned()))?;
    for (i, (header, rows)) in tables.into_iter().enumerate() {
        if !widest.starts_with(&header) {
            return Err(ExportError::Csv(::csv::Error::from(std::io::Error::other(
                format!(
                    "the steps of {} have columns the other runs' have not: the variants' runs \
                     are not of one workload",
                    doc.variant(i)
                ),
            ))));
        }
        for mut cells in rows {
            cells.resize(widest.len(), String::new());
            w.write_record(std::iter::once(doc.variant(i)).chain(cells))?;
        }
    }
    w.into_inner()
        .map_err(|e| ExportError::Csv(::csv::Error::from(e.into_error())))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::load::{LoadSteps, Model, RunFacts, StepCpu, StepLevel, StepTally};

    fn run(label: &str, levels: &[u32]) -> LoadReport {
        let steps = levels
            .iter()
            .map(|c| {
                StepTally::read_write(StepLevel::Concurrency(*c)).finish(
                    Duration::ZERO,
                    Duration::from_secs(1),
                    StepCpu::default(),
                )
            })
            .collect();
        let plan = LoadSteps {
            model: Model::Closed,
            levels: levels.iter().map(|c| StepLevel::Concurrency(*c)).collect(),
            step_duration: Duration::from_secs(1),
            max_in_flight: 4,
            drain: Duration::from_secs(1),
        };
        let facts = RunFacts {
            label: label.to_owned(),
            sql: "SELECT 'Zanzibar'".to_owned(),
            ..RunFacts::default()
        };
        LoadReport::new(facts, &plan, steps)
    }

    #[test]
    fn the_csv_has_a_row_per_run_and_step_led_by_its_variant() {
        let doc = LoadVariants::new(
            "lock-mode",
            vec!["pessimistic".into(), "optimistic".into()],
            vec![run("a", &[1, 2]), run("b", &[1])],
        );
        let text = String::from_utf8(load_variants_csv(&doc).expect("a CSV")).expect("UTF-8");
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[0].starts_with("variant,target_rate,concurrency,"),
            "{}",
            lines[0]
        );
        assert_eq!(lines.len(), 4, "{text}");
        assert!(
            lines[1].starts_with("lock-mode=pessimistic,,1,"),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].starts_with("lock-mode=pessimistic,,2,"),
            "{}",
            lines[2]
        );
        assert!(
            lines[3].starts_with("lock-mode=optimistic,,1,"),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn the_json_is_one_document_of_every_run_and_the_comparison_and_redacts_every_run() {
        let doc = LoadVariants::new(
            "skew",
            vec!["0.5".into(), "2".into()],
            vec![run("a", &[1]), run("b", &[1])],
        );
        let json: serde_json::Value =
            serde_json::from_slice(&load_variants_json(&doc).expect("JSON")).expect("reads");
        assert_eq!(json["kind"], "load-variants");
        assert_eq!(json["version"], 1);
        assert_eq!(json["setting"], "skew");
        assert_eq!(json["runs"].as_array().map(Vec::len), Some(2));
        assert_eq!(json["comparison"]["rows"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            json["comparison"]["words"].as_array().map(Vec::len),
            Some(1)
        );
        let literals = Redaction::parse("literals").expect("literals");
        let redacted = load_variants_json(&doc.redacted(literals)).expect("JSON");
        assert!(!String::from_utf8_lossy(&redacted).contains("Zanzibar"));
    }

    #[test]
    fn the_page_has_the_comparison_first_then_each_run_s_section_and_redacts_every_run() {
        let doc = LoadVariants::new(
            "isolation",
            vec!["serializable".into(), "repeatable-read".into()],
            vec![run("a", &[1]), run("b", &[1])],
        );
        let page = String::from_utf8(
            super::super::load_variants_html(&doc, Redaction::NONE).expect("a page"),
        )
        .expect("UTF-8");
        let comparison = page
            .find("<h2>Variants: isolation</h2>")
            .expect("the comparison");
        let first = page
            .find("<h2>isolation=serializable</h2>")
            .expect("the first run");
        let second = page
            .find("<h2>isolation=repeatable-read</h2>")
            .expect("the second");
        assert!(comparison < first && first < second);
        // Each run's section under an id of its own: no id twice on one page.
        assert_eq!(page.matches("<section id=\"load-").count(), 2);
        assert!(page.contains("<section id=\"load-1\">"));
        assert!(!page.contains("<section id=\"load\">"));
        assert!(
            page.contains(&doc.comparison.words[0]),
            "{}",
            doc.comparison.words[0]
        );
        assert!(page.contains("Zanzibar"));
        let literals = Redaction::parse("literals").expect("literals");
        let redacted = super::super::load_variants_html(&doc, literals).expect("a page");
        assert!(!String::from_utf8_lossy(&redacted).contains("Zanzibar"));
    }
}
