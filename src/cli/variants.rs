//! The variants a profile runs, from the command line: repeated `--sql` with their `--label`s, a
//! `--sweep` of one query parameter over several values ([`SweepSpec`]), or a workload file; with the
//! options and parameters of the command line under each.

use std::path::Path;

use anyhow::Context as _;

use super::workload::Workload;
pub use crate::engine::sweep::{SweepSpec, parse_sweep};
use crate::engine::{Param, QueryMode, RequestOptions, Variant};

/// What the command line says to run, before a workload file's own settings are merged in.
#[derive(Debug, Clone)]
pub struct FromCommandLine<'a> {
    /// `--sql`, in order.
    pub sql: &'a [String],
    /// `--label`, in order.
    pub labels: &'a [String],
    /// `--param`, for every variant.
    pub params: &'a [Param],
    /// `--query-mode`.
    pub mode: QueryMode,
    /// The request options, for every variant.
    pub options: &'a RequestOptions,
    /// `--sweep`.
    pub sweep: Option<&'a SweepSpec>,
    /// `--workload`.
    pub workload: Option<&'a Path>,
}

/// The variants to run, and the workload file read (when one was given, for its own settings).
pub fn variants(line: &FromCommandLine<'_>) -> anyhow::Result<(Vec<Variant>, Option<Workload>)> {
    if let Some(path) = line.workload {
        anyhow::ensure!(
            line.sql.is_empty() && line.labels.is_empty() && line.sweep.is_none(),
            "--workload describes the queries: leave out --sql, --label and --sweep"
        );
        // A workload of the most variants a profile runs is far below 4 MiB.
        let bytes = crate::export::read_bounded(path, 4 << 20)
            .with_context(|| format!("cannot read the workload file {}", path.display()))?;
        let text = String::from_utf8(bytes)
            .with_context(|| format!("the workload file {} is not UTF-8 text", path.display()))?;
        let workload = Workload::parse(&text, line.params, line.mode, line.options)
            .with_context(|| format!("workload file {}", path.display()))?;
        return Ok((workload.variants.clone(), Some(workload)));
    }
    anyhow::ensure!(
        !line.sql.is_empty(),
        "nothing to run: give --sql (repeat it to compare queries) or --workload FILE"
    );
    anyhow::ensure!(
        line.labels.is_empty() || line.labels.len() == line.sql.len(),
        "{} --sql but {} --label: give a label for each query, or none (then they are 1, 2, ...)",
        line.sql.len(),
        line.labels.len()
    );
    let own_labels = !line.labels.is_empty();
    let base: Vec<Variant> = line
        .sql
        .iter()
        .enumerate()
        .map(|(i, sql)| {
            let label = match line.labels.get(i) {
                Some(label) => label.clone(),
                None if line.sql.len() == 1 => "run".to_owned(),
                None => (i + 1).to_string(),
            };
            Variant {
                params: line.params.to_vec(),
                mode: line.mode,
                options: line.options.clone(),
                ..Variant::new(label, sql.clone())
            }
        })
        .collect();
    let Some(sweep) = line.sweep else {
        return Ok((base, None));
    };
    anyhow::ensure!(
        base.len() == 1,
        "--sweep sweeps one query: give one --sql (or a workload file with a sweep per variant)"
    );
    Ok((sweep.expand(&base[0], own_labels)?, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(
        sql: &'a [String],
        labels: &'a [String],
        sweep: Option<&'a SweepSpec>,
    ) -> FromCommandLine<'a> {
        static OPTIONS: std::sync::OnceLock<RequestOptions> = std::sync::OnceLock::new();
        FromCommandLine {
            sql,
            labels,
            params: &[],
            mode: QueryMode::WithStats,
            options: OPTIONS.get_or_init(RequestOptions::default),
            sweep,
            workload: None,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn repeated_sql_makes_a_variant_each_labelled_by_label_or_number() {
        let sql = strings(&["SELECT 1", "SELECT 2"]);
        let (numbered, _) = variants(&line(&sql, &[], None)).expect("valid");
        let labels: Vec<&str> = numbered.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["1", "2"]);
        let named = strings(&["wide", "narrow"]);
        let (labelled, _) = variants(&line(&sql, &named, None)).expect("valid");
        assert_eq!(labelled[1].label, "narrow");
        assert_eq!(labelled[1].sql, "SELECT 2");
        let one = strings(&["SELECT 1"]);
        assert_eq!(
            variants(&line(&one, &[], None)).expect("valid").0[0].label,
            "run"
        );
        let error = variants(&line(&sql, &strings(&["only"]), None)).expect_err("2 sql, 1 label");
        assert!(
            error.to_string().contains("2 --sql but 1 --label"),
            "{error}"
        );
        assert!(variants(&line(&[], &[], None)).is_err());
    }

    #[test]
    fn a_sweep_makes_one_variant_per_value_with_the_parameter_set() {
        let sweep = parse_sweep("n:INT64=100,1000,10000,100000").expect("valid");
        assert_eq!(sweep.values.len(), 4);
        let sql = strings(&["SELECT * FROM Seed23 LIMIT @n"]);
        let (points, _) = variants(&line(&sql, &[], Some(&sweep))).expect("valid");
        let labels: Vec<&str> = points.iter().map(|v| v.label.as_str()).collect();
        assert_eq!(labels, ["n=100", "n=1000", "n=10000", "n=100000"]);
        assert_eq!(points[2].params[0].value, "10000");
        assert_eq!(
            points[2].sweep.as_ref().map(|p| p.value.as_str()),
            Some("10000")
        );
        let (labelled, _) =
            variants(&line(&sql, &strings(&["scan"]), Some(&sweep))).expect("valid");
        assert_eq!(labelled[0].label, "scan n=100");
        let two = strings(&["SELECT 1", "SELECT 2"]);
        assert!(
            variants(&line(&two, &[], Some(&sweep))).is_err(),
            "one query only"
        );
    }
}
