//! `spanprof plan FILE [--json | --dot]`: the operator tree of the plans a JSON report kept (each
//! distinct plan aggregated over the iterations that ran it), of a recorded stream's PROFILE
//! statistics, or of a plan in Spanner's REST JSON (the Cloud console's download); and the plan
//! summaries `profile` and `compare` print. Everything is computed by [`crate::plan`].

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::json;

use crate::analysis::PairNames;
use crate::export::read_json;
use crate::plan::{self, OperatorTree, PlanAggregate, QueryPlan, render};
use crate::report::{RunReport, printable};
use crate::wire::{bounded_json, decode_stream_file};

/// Arguments of `spanprof plan`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlanArgs {
    /// A JSON report (`spanprof profile --json`), a recorded stream (`spanprof record
    /// --query-mode profile`), or a query plan in Spanner's REST JSON.
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long, conflicts_with = "dot")]
    pub json: bool,
    /// Print the operator tree for Graphviz (`| dot -Tsvg > plan.svg`).
    #[arg(long)]
    pub dot: bool,
}

/// The plans a file holds, each with what it is.
struct Shown {
    /// "run narrow, plan 1a2b…, 9 iterations (#1–#9)", or the file's kind.
    heading: String,
    tree: OperatorTree,
    aggregate: Option<PlanAggregate>,
}

/// Prints the plans of `args.file`.
pub fn run_plan(args: &PlanArgs, mut out: impl Write) -> anyhow::Result<()> {
    let bytes = crate::export::read_bounded(&args.file, crate::export::MAX_REPORT_BYTES)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let (shown, changes) =
        load(&bytes).with_context(|| format!("cannot read a plan from {}", args.file.display()))?;
    anyhow::ensure!(
        !shown.is_empty(),
        "{} holds no query plan: profile with --query-mode profile to keep one",
        args.file.display()
    );
    if args.dot {
        for s in &shown {
            out.write_all(render::tree_dot(&s.tree).as_bytes())?;
        }
        return Ok(());
    }
    if args.json {
        let plans: Vec<serde_json::Value> = shown
            .iter()
            .map(|s| {
                let spreads = s.aggregate.as_ref().map_or(&[][..], |a| &a.spreads[..]);
                json!({
                    "heading": s.heading,
                    "fingerprint": s.aggregate.as_ref().map(|a| &a.signature),
                    "iterations": s.aggregate.as_ref().map(|a| &a.iterations),
                    "server_ms": s.tree.root_total_ms(),
                    "summary": render::summary_line(&s.tree, 3),
                    "operators": render::tree_json(&s.tree, spreads),
                })
            })
            .collect();
        let document = json!({ "plans": plans, "changes": changes });
        serde_json::to_writer_pretty(&mut out, &document)?;
        writeln!(out)?;
        return Ok(());
    }
    for (n, s) in shown.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}", printable(&s.heading))?;
        writeln!(out, "{}", render::summary_line(&s.tree, 3))?;
        out.write_all(render::tree_text(&s.tree).as_bytes())?;
    }
    for change in &changes {
        writeln!(out, "\n{}", printable(change))?;
    }
    Ok(())
}

/// The plans in a file and the plan-change findings.
fn load(bytes: &[u8]) -> anyhow::Result<(Vec<Shown>, Vec<String>)> {
    // What the file is, read without keeping any of it: a JSON document was read whole as a
    // generic value first, and 63 MiB of small objects took 5.1 GB.
    let kind = serde_json::from_slice::<Kind>(bytes);
    if let Err(e) = &kind
        && looks_like_json(bytes)
    {
        anyhow::bail!("not valid JSON: {e}");
    }
    match kind.ok() {
        Some(Kind::Report) => {
            let runs = read_json(bytes)?;
            let mut shown = Vec::new();
            let mut changes = Vec::new();
            for run in &runs {
                for aggregate in run.plan_aggregates(&BTreeSet::new()) {
                    shown.push(Shown {
                        heading: heading(run, &aggregate),
                        tree: aggregate.tree.clone(),
                        aggregate: Some(aggregate),
                    });
                }
                changes.extend(
                    run.plans
                        .changes()
                        .iter()
                        .map(|c| format!("{}: {}", run.config.label, c.text())),
                );
            }
            if shown.is_empty()
                && let Some(reason) = runs.iter().find_map(unreadable_plan)
            {
                anyhow::bail!("{reason}");
            }
            Ok((shown, changes))
        }
        Some(Kind::Other) => {
            let document = bounded_json::from_slice(bytes, bounded_json::BUDGET)
                .context("read as a query plan in Spanner's JSON")?;
            let plan = QueryPlan::from_json(&document)?;
            Ok((
                vec![Shown {
                    heading: "a query plan in Spanner's JSON".into(),
                    tree: OperatorTree::of(&plan),
                    aggregate: None,
                }],
                Vec::new(),
            ))
        }
        None => {
            let stream =
                decode_stream_file(bytes).context("not a JSON report nor a stream file")?;
            let nodes = stream.stats.and_then(|s| s.plan).context(
                "the recorded stream carries no query plan (record with --query-mode profile)",
            )?;
            let plan = QueryPlan::from_nodes(&nodes)?;
            Ok((
                vec![Shown {
                    heading: format!(
                        "a recorded execution ({} rows), plan {}",
                        stream.rows.len(),
                        plan::signature(&plan)
                    ),
                    tree: OperatorTree::of(&plan),
                    aggregate: None,
                }],
                Vec::new(),
            ))
        }
    }
}

/// What a JSON document is: a spanprof report (an object with `spanprof_report`) or anything
/// else. Read by looking at the keys of the top object only, every value skipped unkept.
enum Kind {
    Report,
    Other,
}

impl<'de> serde::Deserialize<'de> for Kind {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Kind, D::Error> {
        deserializer.deserialize_any(KindVisitor)
    }
}

struct KindVisitor;

impl<'de> serde::de::Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut kind = Kind::Other;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "spanprof_report" {
                kind = Kind::Report;
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(kind)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Kind::Other)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
        Ok(Kind::Other)
    }

    fn visit_unit<E>(self) -> Result<Kind, E> {
        Ok(Kind::Other)
    }
}

/// Whether `bytes` begin (after white space) as a JSON document does: a stream file cannot, its
/// first frame's length would be past a gigabyte.
fn looks_like_json(bytes: &[u8]) -> bool {
    matches!(
        bytes.iter().find(|b| !b.is_ascii_whitespace()),
        Some(b'{' | b'[')
    )
}

/// Why `run` kept plans but none can be shown: the first that cannot be read, and why.
fn unreadable_plan(run: &RunReport) -> Option<String> {
    let label = &run.config.label;
    run.plans.iterations.iter().find_map(|it| {
        if let Some(error) = &it.error {
            return Some(format!(
                "run {label}, iteration {}: its plan cannot be read: {error}",
                it.iteration
            ));
        }
        let print = it.signature.as_deref()?;
        match run.plans.plan(print)? {
            Err(error) => Some(format!("run {label}: plan {print} cannot be read: {error}")),
            Ok(_) => None,
        }
    })
}

fn heading(run: &RunReport, a: &PlanAggregate) -> String {
    let span = match (a.iterations.first(), a.iterations.last()) {
        (Some(first), Some(last)) if first != last => format!(" (#{first}–#{last})"),
        (Some(only), _) => format!(" (#{only})"),
        _ => String::new(),
    };
    format!(
        "run {}, plan {}, median over {} iterations{span}",
        run.config.label,
        a.signature,
        a.iterations.len()
    )
}

/// What `spanprof profile` prints under its summary for a run that kept plans: the hottest
/// operators of its main plan, and any plan change.
pub fn plan_summary(report: &RunReport, top: usize) -> String {
    let Some(main) = report.plan_aggregates(&BTreeSet::new()).into_iter().next() else {
        return String::new();
    };
    let tree = &main.tree;
    let mut text = format!(
        "\nplan {} (median over {} iterations): {}\n",
        main.signature,
        main.iterations.len(),
        render::summary_line(tree, 3)
    );
    text.push_str(&format!(
        "{:>10} {:>10} {:>7} {:>10} {:>10}  operator\n",
        "self ms", "total ms", "share", "rows", "scanned"
    ));
    let value = |x: Option<f64>, digits: usize| {
        x.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
    };
    for position in tree.hottest().into_iter().take(top) {
        let op = &tree.operators[position];
        let f = &op.figures;
        text.push_str(&format!(
            "{:>10} {:>10} {:>7} {:>10} {:>10}  {}\n",
            value(f.self_ms, 3),
            value(f.total_ms, 3),
            tree.share(position)
                .map_or_else(|| "-".to_owned(), |s| format!("{s:.1}%")),
            value(f.rows, 0),
            value(f.scanned_rows, 0),
            printable(&op.title())
        ));
    }
    for change in report.plans.changes() {
        text.push_str(&format!("{}\n", printable(&change.text())));
    }
    text
}

/// What `spanprof compare` prints after its verdict when both runs kept plans: their main plans
/// matched operator by operator, the runs called by `names`.
pub fn plan_diff_text(a: &RunReport, b: &RunReport, names: PairNames<'_>) -> String {
    let main = |r: &RunReport| r.plan_aggregates(&BTreeSet::new()).into_iter().next();
    match (main(a), main(b)) {
        (Some(pa), Some(pb)) => format!(
            "\n{}",
            render::diff_text(&plan::diff(&pa.tree, &pb.tree), names.a, names.b)
        ),
        _ => String::new(),
    }
}
