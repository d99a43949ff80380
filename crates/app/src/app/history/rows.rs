//! The chosen query's runs as rows of a table, newest first, a checkbox each to pick it: when it
//! started, its median and p90, then the settings it ran with (mode, decoder, target, options),
//! its plan and its flags; and the colours the flags and the trend's marks share. Runs of one SQL
//! in several modes are listed together, so the settings are columns a person reads, not a key
//! hidden from them. Every column has a share of the width it is given and cuts its text with an
//! ellipsis (the whole row in the tooltip), and a narrow table leaves out the columns it has no
//! room for: a row fits at any width, never running off the right edge.

use egui_extras::{Column, TableBuilder};

use crate::app::query::mode_word;
use crate::app::theme;
use crate::history::TrendPoint;
use crate::part::Measure;

/// The table's columns.
#[derive(Clone, Copy)]
enum Col {
    Run,
    Started,
    Median,
    P90,
    Mode,
    Decoder,
    Target,
    Options,
    Flags,
}

/// A column: its heading, its share of the width, and the least width of the table that draws it
/// (a narrower table leaves it to the row's tooltip).
struct Heading {
    col: Col,
    name: &'static str,
    share: f32,
    from: f32,
}

const HEADINGS: [Heading; 9] = [
    heading(Col::Run, "run", 2.2, 0.0),
    heading(Col::Started, "started", 1.9, 0.0),
    heading(Col::Median, "median", 1.0, 0.0),
    heading(Col::P90, "p90", 1.0, 520.0),
    heading(Col::Mode, "mode", 1.1, 0.0),
    heading(Col::Decoder, "decoder", 0.9, 760.0),
    heading(Col::Target, "target", 1.3, 680.0),
    heading(Col::Options, "options", 1.3, 580.0),
    heading(Col::Flags, "plan · flags", 1.4, 0.0),
];

const fn heading(col: Col, name: &'static str, share: f32, from: f32) -> Heading {
    Heading {
        col,
        name,
        share,
        from,
    }
}

/// The dashed line where a query's plan changed, and the words "plan changed" in a run's row: the
/// theme's cyan, apart in hue from the pinned runs' yellow under every colour-vision deficiency
/// (the two were one yellow), from the median's and p90's run colours and from failures' red, and
/// legible on the dark plot (about 9:1).
pub const PLAN_CHANGED: egui::Color32 = theme::SETUP;
/// A pinned run's diamond and the word "pinned" in its row: the theme's warning yellow.
pub const PINNED: egui::Color32 = theme::WARN;

/// A row's height.
const ROW: f32 = 22.0;

/// The run's name: its label, or its id in the history.
pub fn run_name(p: &TrendPoint) -> String {
    if p.summary.label.is_empty() {
        format!("run {}", p.summary.id)
    } else {
        p.summary.label.clone()
    }
}

/// Draws `points` (oldest first) newest first; `picked` says which are ticked. Returns the id of
/// the run whose box was clicked.
pub fn table(
    ui: &mut egui::Ui,
    points: &[TrendPoint],
    picked: &[String],
    measure: Measure,
) -> Option<String> {
    let width = ui.available_width();
    let shown: Vec<&Heading> = HEADINGS.iter().filter(|h| width >= h.from).collect();
    let spacing = ui.spacing().item_spacing.x;
    let room = (width - spacing * shown.len() as f32).max(40.0);
    let total: f32 = shown.iter().map(|h| h.share).sum();
    let mut toggled = None;
    let mut table = TableBuilder::new(ui)
        .id_salt("history-runs")
        .striped(true)
        .vscroll(true)
        .auto_shrink([false, true])
        .min_scrolled_height(60.0);
    for h in &shown {
        table = table.column(Column::exact(room * h.share / total).clip(true));
    }
    table
        .header(ROW, |mut header| {
            for h in &shown {
                header.col(|ui| {
                    ui.strong(h.name);
                });
            }
        })
        .body(|body| {
            body.rows(ROW, points.len(), |mut row| {
                let at = points.len() - 1 - row.index();
                let p = &points[at];
                let run = Run {
                    p,
                    on: picked.contains(&p.summary.id),
                    plan_changed: at > 0 && plan_changed(&points[at - 1], p),
                };
                for h in &shown {
                    row.col(|ui| {
                        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
                        if cell(ui, h.col, &run, measure) {
                            toggled = Some(p.summary.id.clone());
                        }
                    });
                }
                row.response().on_hover_text(described(p, measure));
            });
        });
    toggled
}

/// Whether the plan changed between run `before` and the next, `p` (both ran with a plan).
pub fn plan_changed(before: &TrendPoint, p: &TrendPoint) -> bool {
    matches!((&before.plan, &p.plan), (Some(a), Some(b)) if a != b)
}

/// A row's run: its point, whether it is picked, whether its plan differs from the run before.
struct Run<'a> {
    p: &'a TrendPoint,
    on: bool,
    plan_changed: bool,
}

/// One cell of `run`'s row; whether its box was clicked.
fn cell(ui: &mut egui::Ui, column: Col, run: &Run, measure: Measure) -> bool {
    let p = run.p;
    let figure = |f: fn(&crate::history::MeasureFigures) -> f64| {
        p.figures(measure)
            .map_or("—".into(), |m| crate::text::ms(f(&m)))
    };
    let settings = p.settings.as_ref();
    match column {
        Col::Run => {
            let mut ticked = run.on;
            return ui.checkbox(&mut ticked, run_name(p)).changed();
        }
        Col::Started => muted(ui, started(&p.summary.started_at)),
        Col::Median => {
            ui.label(figure(|m| m.median));
        }
        Col::P90 => {
            ui.label(figure(|m| m.p90));
        }
        Col::Mode => {
            ui.label(settings.map_or("—", |s| mode_word(s.mode)));
        }
        Col::Decoder => muted(
            ui,
            settings.map_or("—".into(), |s| s.decoder.as_str().into()),
        ),
        Col::Target => muted(ui, p.summary.target.clone()),
        Col::Options => muted(ui, settings.map_or("—".into(), options)),
        Col::Flags => {
            ui.horizontal(|ui| {
                if p.failed {
                    ui.colored_label(theme::ERROR, "failed");
                }
                if p.pinned {
                    ui.colored_label(PINNED, "pinned");
                }
                if run.plan_changed {
                    ui.colored_label(PLAN_CHANGED, "plan changed");
                }
                if let Some(plan) = &p.plan {
                    muted(ui, format!("plan {}", shorten(plan, 8)));
                }
            });
        }
    }
    false
}

fn muted(ui: &mut egui::Ui, text: String) {
    ui.colored_label(theme::MUTED, text);
}

/// A run's options as `name=value`, or `none`.
fn options(s: &crate::history::RunSettings) -> String {
    if s.options.is_empty() {
        return "none".into();
    }
    let words: Vec<String> = s.options.iter().map(|(n, v)| format!("{n}={v}")).collect();
    words.join(" ")
}

/// The whole row in words, for its tooltip (and the columns a narrow table leaves out).
pub fn described(p: &TrendPoint, measure: Measure) -> String {
    let mut lines = vec![format!("{} · {}", run_name(p), when(&p.summary.started_at))];
    if let Some(f) = p.figures(measure) {
        lines.push(format!(
            "{}: median {} · p90 {}",
            measure.label(),
            crate::text::ms(f.median),
            crate::text::ms(f.p90)
        ));
    }
    if let Some(s) = &p.settings {
        lines.push(format!(
            "mode {} · decoder {} · options {}",
            mode_word(s.mode),
            s.decoder.as_str(),
            options(s)
        ));
    }
    lines.push(format!("target {}", p.summary.target));
    if let Some(plan) = &p.plan {
        lines.push(format!("plan {plan}"));
    }
    lines.join("\n")
}

/// `2026-03-01T10:00:00Z` as `2026-03-01 10:00`.
pub fn when(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => rfc3339.to_owned(),
    }
}

/// `2026-03-01T10:00:05Z` as `03-01 10:00:05`, for the started column: the month, the day and
/// the time to the second fit its width (runs of one minute, a launch and a relaunch, are told
/// apart); the year is in the row's tooltip.
pub fn started(rfc3339: &str) -> String {
    match (rfc3339.get(5..10), rfc3339.get(11..19)) {
        (Some(d), Some(t)) => format!("{d} {t}"),
        _ => rfc3339.to_owned(),
    }
}

/// `text` cut to `n` characters, with an ellipsis when cut.
pub fn shorten(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(n).collect();
    cut.push('…');
    cut
}
