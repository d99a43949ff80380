//! HTML: one self-contained file a person opens in a browser, offline: the headline and parts of
//! every run, the bars, the slowest iteration's timeline, the comparison's verdict, the plan per
//! operator, the findings, the environment and every iteration's ids; a load run's curve and
//! percentiles (and a read-write run's goodput against its attempts). No network: styles and the one script are inline, the pictures inline SVG, and
//! a Content-Security-Policy forbids fetching anything and running any script but ours (by its
//! hash). The run's JSON report is embedded (`<script type="application/json">`, its `<` `>` `&`
//! written as `\u003c`...), so spanprof re-opens the file itself ([`read_embedded`]).

mod attempt_lanes;
mod attempts;
mod bars;
mod compare;
mod conflicts;
mod embedded;
mod goodput;
mod load;
mod load_variants;
mod markup;
mod plot;
mod run;
mod server_stats;
mod timeline;

use std::fmt::Write as _;

use base64::Engine as _;

use self::embedded::{LOAD_ID, REPORT_ID};
use self::markup::{clipped, esc};
use super::load_variants::LoadVariants;
use super::redact::Redaction;
use super::{ExportError, Exporter, Json};
use crate::load::LoadReport;
use crate::report::RunReport;

pub use self::bars::MAX_BARS;
pub use self::embedded::{read_embedded, read_embedded_load};
pub use self::run::MAX_TABLE_ROWS;

const STYLE: &str = include_str!("style.css");
const SCRIPT: &str = include_str!("script.js");

/// The HTML report of runs: each run's section, preceded by the comparisons asked for.
#[derive(Debug, Clone, Default)]
pub struct Html {
    /// What to leave out of the file.
    pub redaction: Redaction,
    /// The runs to set against each other, as (baseline, other) positions in the reports given;
    /// `None` sets every run after the first against the first.
    pub pairs: Option<Vec<(usize, usize)>>,
}

impl Exporter for Html {
    fn extension(&self) -> &'static str {
        "html"
    }

    fn export(&self, reports: &[RunReport]) -> Result<Vec<u8>, ExportError> {
        let reports = self.redaction.apply(reports);
        let pairs = self
            .pairs
            .clone()
            .unwrap_or_else(|| (1..reports.len()).map(|i| (0, i)).collect());
        let mut body = String::new();
        if !pairs.is_empty() {
            body.push_str(&compare::section(&reports, &pairs));
        }
        for (i, report) in reports.iter().enumerate() {
            body.push_str(&run::section(i, report));
        }
        let title = match &*reports {
            [one] => one.config.label.clone(),
            many => format!("{} runs", many.len()),
        };
        let nav: Vec<(String, String)> = reports
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("run-{i}"), r.config.label.clone()))
            .collect();
        let json = Json::compact(&reports)?;
        Ok(page(&Page {
            title: &title,
            host: reports
                .first()
                .map_or("", |r| r.config.client_host.as_str()),
            redaction: self.redaction,
            nav: &nav,
            body: &body,
            embedded: (REPORT_ID, &json),
        })
        .into_bytes())
    }
}

/// A load run's HTML report: its steps, the latency/throughput curve with the knee, the
/// percentiles of each step, from the intended and the actual start.
pub fn load_html(report: &LoadReport, redaction: Redaction) -> Result<Vec<u8>, ExportError> {
    let report = redaction.apply_load(report);
    let json = serde_json::to_vec(&report)?;
    let title = format!("load: {}", report.label);
    Ok(page(&Page {
        title: &title,
        host: "",
        redaction,
        nav: &[],
        body: &load::section(&report),
        embedded: (LOAD_ID, &json),
    })
    .into_bytes())
}

/// The element id of the variants' document a variants' page embeds.
const VARIANTS_ID: &str = "spanprof-load-variants";

/// Load variants' HTML report (`load --vary --html`): their comparison (table and words) at the
/// top, then each run's load section as a load run's page shows it, the variants' JSON
/// document embedded.
pub fn load_variants_html(
    doc: &LoadVariants,
    redaction: Redaction,
) -> Result<Vec<u8>, ExportError> {
    let doc = doc.redacted(redaction);
    let json = serde_json::to_vec(&doc)?;
    let mut body = load_variants::section(&doc);
    let mut nav = vec![("variants".to_owned(), "comparison".to_owned())];
    for (i, run) in doc.runs.iter().enumerate() {
        let _ = write!(
            body,
            "<div id=\"variant-{i}\"><h2>{}</h2>{}</div>",
            esc(&doc.variant(i)),
            load::section_as(run, &format!("load-{i}"))
        );
        nav.push((format!("variant-{i}"), doc.variant(i)));
    }
    let title = format!("load: {} by {}", doc.values.join(" / "), doc.setting);
    Ok(page(&Page {
        title: &title,
        host: "",
        redaction,
        nav: &nav,
        body: &body,
        embedded: (VARIANTS_ID, &json),
    })
    .into_bytes())
}

/// What a page is made of.
struct Page<'a> {
    title: &'a str,
    host: &'a str,
    redaction: Redaction,
    nav: &'a [(String, String)],
    body: &'a str,
    embedded: (&'a str, &'a [u8]),
}

/// The whole document.
fn page(p: &Page<'_>) -> String {
    let script_hash = base64::engine::general_purpose::STANDARD.encode(ring::digest::digest(
        &ring::digest::SHA256,
        SCRIPT.as_bytes(),
    ));
    let mut html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; img-src data:; \
         base-uri 'none'; form-action 'none'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"spanprof {version}\">\
         <title>spanprof: {title}</title><style>{STYLE}</style></head><body><header>\
         <h1>spanprof: {h1}</h1><p class=\"generated\">Written by spanprof {version} on {when}{host}. \
         One file, no network: open it in any browser; <code>spanprof</code> opens it again \
         (File › Open report, or <code>spanprof compare</code>).</p>",
        version = env!("CARGO_PKG_VERSION"),
        title = esc(&crate::text::excerpt(p.title, 120)),
        h1 = clipped(&crate::text::excerpt(p.title, 400)),
        when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        host = if p.host.is_empty() {
            String::new()
        } else {
            format!(", client host {}", esc(p.host))
        },
    );
    if let Some(redacted) = p.redaction.describe() {
        let _ = write!(html, "<p class=\"redacted\">{}</p>", esc(&redacted));
    }
    if p.nav.len() > 1 {
        html.push_str("<nav>");
        for (anchor, label) in p.nav {
            let _ = write!(
                html,
                "<a href=\"#{}\">{}</a>",
                esc(anchor),
                esc(&crate::text::excerpt(label, 60))
            );
        }
        html.push_str("</nav>");
    }
    let _ = write!(
        html,
        "</header><main>{}</main><footer><p class=\"note\">spanprof {}: parts of a run's time \
         never overlap and add up to its total; figures beside them are never added.</p></footer>\
         <script type=\"application/json\" id=\"{}\">",
        p.body,
        env!("CARGO_PKG_VERSION"),
        p.embedded.0
    );
    html.push_str(&inert_json(p.embedded.1));
    let _ = writeln!(html, "</script><script>{SCRIPT}</script></body></html>");
    html
}

/// JSON that cannot end the `<script>` element it sits in, nor open a comment: `<`, `>` and `&`
/// (which JSON allows only inside strings) written as `\u003c`, `\u003e`, `\u0026`, and the two
/// line separators JavaScript once disallowed as `\u2028`, `\u2029`. Still the same JSON.
fn inert_json(json: &[u8]) -> String {
    let text = String::from_utf8_lossy(json);
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `bytes` look like an HTML document (after blanks and a byte-order mark).
pub fn is_html(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let head: Vec<u8> = bytes[start..]
        .iter()
        .take(15)
        .map(u8::to_ascii_lowercase)
        .collect();
    head.starts_with(b"<!doctype html") || head.starts_with(b"<html")
}

#[cfg(test)]
mod tests;
