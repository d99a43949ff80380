//! The Plan tab's view (named for the operators it shows, so "plan" names only `src/plan/`): the
//! shown run's query plan aggregated over the selected iterations (every timed one when none is
//! selected) as an icicle chart (each operator as wide as its total time, inside its parent's
//! width; coloured by its self time; hover for every figure, click to select) and a tree table
//! (operator, self ms, total ms, % of server, rows, scanned, executions), sortable by any column,
//! hottest first to begin with. Also the plan diff the compare view shows.
//!
//! Aggregates and diffs come from [`crate::plan`]; they are computed when the run or the
//! selection changes, not every frame.

use std::collections::BTreeSet;
use std::sync::Arc;

use egui::{Color32, FontId, Rect, Sense, Stroke, StrokeKind, pos2, vec2};
use egui_extras::{Column, TableBuilder};

use super::theme;
use crate::plan::{self, DiffKind, Operator, OperatorTree, PlanAggregate, PlanDiff, SelfTime};
use crate::report::{RunId, RunReport};

/// A column of the tree table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanColumn {
    /// The operator, in tree order.
    Operator,
    /// Self time.
    SelfMs,
    /// Total time.
    TotalMs,
    /// Self time as a share of the server's.
    Share,
    /// Rows produced.
    Rows,
    /// Rows read.
    Scanned,
    /// Executions.
    Executions,
}

impl PlanColumn {
    /// Every column, in table order.
    pub const ALL: [PlanColumn; 7] = [
        PlanColumn::Operator,
        PlanColumn::SelfMs,
        PlanColumn::TotalMs,
        PlanColumn::Share,
        PlanColumn::Rows,
        PlanColumn::Scanned,
        PlanColumn::Executions,
    ];

    /// Its heading.
    pub fn heading(self) -> &'static str {
        match self {
            PlanColumn::Operator => "operator",
            PlanColumn::SelfMs => "self ms",
            PlanColumn::TotalMs => "total ms",
            PlanColumn::Share => "% of server",
            PlanColumn::Rows => "rows",
            PlanColumn::Scanned => "scanned",
            PlanColumn::Executions => "executions",
        }
    }
}

/// The aggregates of one run over one selection.
#[derive(Debug, Clone)]
struct Computed {
    run: RunId,
    selection: BTreeSet<u32>,
    aggregates: Vec<PlanAggregate>,
    changes: Vec<String>,
}

/// The plan view's state.
#[derive(Debug)]
pub struct PlanView {
    computed: Option<Computed>,
    /// Which distinct plan is shown, by position among the aggregates.
    shown: usize,
    selected: Option<usize>,
    sort: PlanColumn,
    descending: bool,
    /// The table's rows last frame, as operator positions in the tree.
    rows_shown: Vec<usize>,
    icicle_cells: usize,
}

impl Default for PlanView {
    fn default() -> Self {
        PlanView {
            computed: None,
            shown: 0,
            selected: None,
            sort: PlanColumn::SelfMs,
            descending: true,
            rows_shown: Vec::new(),
            icicle_cells: 0,
        }
    }
}

impl PlanView {
    /// The operators in the order the table showed them last frame, by position in the shown
    /// plan's operator tree (root first, each operator before its children).
    pub fn rows_shown(&self) -> &[usize] {
        &self.rows_shown
    }

    /// How many operators the icicle drew last frame.
    pub fn icicle_cells(&self) -> usize {
        self.icicle_cells
    }

    /// The selected operator's title.
    pub fn selected(&self) -> Option<String> {
        let tree = self.tree()?;
        Some(tree.operators.get(self.selected?)?.title())
    }

    /// Sorts the table by `column`, largest first when `descending`.
    pub fn sort_by(&mut self, column: PlanColumn, descending: bool) {
        self.sort = column;
        self.descending = descending;
    }

    /// The column the table is sorted by, and whether largest first.
    pub fn sorted_by(&self) -> (PlanColumn, bool) {
        (self.sort, self.descending)
    }

    fn tree(&self) -> Option<&OperatorTree> {
        let computed = self.computed.as_ref()?;
        Some(&computed.aggregates.get(self.shown)?.tree)
    }

    /// Draws the plan of run `run` (its `report`) over `selection`.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        run: Option<(RunId, &RunReport)>,
        selection: &BTreeSet<u32>,
    ) {
        self.rows_shown.clear();
        self.icicle_cells = 0;
        let Some((id, report)) = run else {
            ui.label(
                "No run yet: run a query with the mode \"Profile (stats + plan)\" (Query panel > \
                 Mode) to see its executed plan here.",
            );
            return;
        };
        let stale = self
            .computed
            .as_ref()
            .is_none_or(|c| c.run != id || &c.selection != selection);
        if stale {
            if self.computed.as_ref().is_none_or(|c| c.run != id) {
                self.shown = 0;
                self.selected = None;
            }
            self.computed = Some(Computed {
                run: id,
                selection: selection.clone(),
                aggregates: report.plan_aggregates(selection),
                changes: report.plans.changes().iter().map(|c| c.text()).collect(),
            });
        }
        let Some(computed) = self.computed.as_ref() else {
            return;
        };
        if computed.aggregates.is_empty() {
            ui.label(if report.plans.is_empty() {
                "This run kept no plan: choose the mode \"Profile (stats + plan)\" (Query panel > \
                 Mode) to get the executed plan with every operator's time and rows."
            } else {
                "No selected iteration returned a plan."
            });
            return;
        }
        let aggregates = computed.aggregates.clone();
        let changes = computed.changes.clone();
        self.shown = self.shown.min(aggregates.len() - 1);
        ui.heading(format!("Plan of {}", report.config.label));
        self.header(ui, &aggregates, selection);
        for change in &changes {
            ui.colored_label(theme::WARN, format!("! {change}"));
        }
        let aggregate = &aggregates[self.shown];
        ui.label(
            egui::RichText::new(plan::render::summary_line(&aggregate.tree, 3))
                .small()
                .color(theme::MUTED),
        );
        ui.add_space(4.0);
        let height = (ui.available_height() * 0.42).clamp(120.0, 360.0);
        self.icicle(ui, &aggregate.tree, height);
        ui.label(
            egui::RichText::new(
                "width: total time, children inside their parent · colour: self time, hottest red \
                 · hover for every figure, click to select",
            )
            .small()
            .color(theme::MUTED),
        );
        ui.add_space(6.0);
        self.table(ui, aggregate);
    }

    fn header(
        &mut self,
        ui: &mut egui::Ui,
        aggregates: &[PlanAggregate],
        selection: &BTreeSet<u32>,
    ) {
        ui.horizontal(|ui| {
            let over = if selection.is_empty() {
                "the timed iterations".to_owned()
            } else {
                format!("{} selected iterations", selection.len())
            };
            let a = &aggregates[self.shown];
            ui.label(
                egui::RichText::new(format!(
                    "median over {} iterations ({over})",
                    a.iterations.len()
                ))
                .strong(),
            )
            .on_hover_text(format!("the plan's signature: {}", a.signature));
            ui.label(
                egui::RichText::new(format!("plan {}", a.signature))
                    .small()
                    .color(theme::MUTED),
            );
            if aggregates.len() > 1 {
                egui::ComboBox::from_id_salt("plan-choice")
                    .selected_text(format!("plan {} of {}", self.shown + 1, aggregates.len()))
                    .show_ui(ui, |ui| {
                        for (k, a) in aggregates.iter().enumerate() {
                            let text =
                                format!("{} ({} iterations)", a.signature, a.iterations.len());
                            if ui.selectable_value(&mut self.shown, k, text).changed() {
                                self.selected = None;
                            }
                        }
                    });
            }
        });
    }

    /// The icicle: the root across the whole width, each child below its parent, as wide as its
    /// share of the parent's total (children that report no time share what is left).
    fn icicle(&mut self, ui: &mut egui::Ui, tree: &OperatorTree, height: f32) {
        let depth = tree.operators.iter().map(|o| o.depth).max().unwrap_or(0) + 1;
        let row = (height / depth as f32).clamp(18.0, 30.0);
        let (area, chart) = ui.allocate_exact_size(
            vec2(ui.available_width(), row * depth as f32),
            Sense::hover(),
        );
        chart.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::accesskit::Role::Figure,
                true,
                "Icicle chart of the plan's operators",
            )
        });
        let spans = spans(tree, area.left(), area.right());
        let hottest = tree
            .operators
            .iter()
            .filter_map(|o| o.figures.self_ms)
            .fold(0.0, f64::max);
        let painter = ui.painter_at(area);
        for (position, op) in tree.operators.iter().enumerate() {
            let (left, right) = spans[position];
            if right - left < 1.0 {
                continue;
            }
            let top = area.top() + row * op.depth as f32;
            let rect = Rect::from_min_max(pos2(left, top), pos2(right, top + row - 1.0));
            let heat = op
                .figures
                .self_ms
                .filter(|_| hottest > 0.0)
                .map(|s| (s / hottest) as f32);
            painter.rect_filled(rect.shrink(0.5), 2.0, heat_colour(heat));
            let id = ui.make_persistent_id(("icicle", position));
            let response = ui.interact(rect, id, Sense::click());
            let title = op.title();
            response.widget_info(|| {
                egui::WidgetInfo::labeled(egui::accesskit::Role::Button, true, &title)
            });
            let selected = self.selected == Some(position);
            if selected || response.hovered() {
                let stroke = Stroke::new(if selected { 2.0 } else { 1.0 }, theme::SELECTED);
                painter.rect_stroke(rect.shrink(0.5), 2.0, stroke, StrokeKind::Inside);
            }
            if rect.width() > 40.0 {
                let text = painter.layout_no_wrap(
                    title.clone(),
                    FontId::proportional(12.0),
                    Color32::BLACK,
                );
                painter.with_clip_rect(rect.shrink(2.0)).galley(
                    pos2(rect.left() + 4.0, rect.center().y - text.size().y / 2.0),
                    text,
                    Color32::BLACK,
                );
            }
            if response.clicked() {
                self.selected = (!selected).then_some(position);
            }
            response.on_hover_text(tooltip(tree, position));
            self.icicle_cells += 1;
        }
    }

    fn table(&mut self, ui: &mut egui::Ui, aggregate: &PlanAggregate) {
        let tree = &aggregate.tree;
        let order = self.order(tree);
        let row_height = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
        let mut clicked = None;
        let mut resort = None;
        TableBuilder::new(ui)
            .id_salt("plan-table")
            .striped(true)
            .sense(Sense::click())
            .column(Column::remainder().at_least(220.0).clip(true))
            .columns(Column::auto().at_least(72.0), PlanColumn::ALL.len() - 1)
            .header(row_height, |mut header| {
                for column in PlanColumn::ALL {
                    header.col(|ui| {
                        ui.horizontal(|ui| {
                            let heading = egui::RichText::new(column.heading()).strong();
                            if ui
                                .add(egui::Button::new(heading).frame(false))
                                .on_hover_text("Sort by this column (again: reverse)")
                                .clicked()
                            {
                                resort = Some(column);
                            }
                            if self.sort == column {
                                // The monospace font has the arrows.
                                let arrow = if self.descending { "↓" } else { "↑" };
                                ui.monospace(arrow).on_hover_text(if self.descending {
                                    "sorted, largest first"
                                } else {
                                    "sorted, smallest first"
                                });
                            }
                        });
                    });
                }
            })
            .body(|body| {
                body.rows(row_height, order.len(), |mut row| {
                    let position = order[row.index()];
                    let op = &tree.operators[position];
                    row.set_selected(self.selected == Some(position));
                    row.col(|ui| {
                        let indent = if self.sort == PlanColumn::Operator {
                            "   ".repeat(op.depth)
                        } else {
                            String::new()
                        };
                        ui.label(format!("{indent}{}", op.title()));
                    });
                    let f = &op.figures;
                    let mark = match f.self_time {
                        SelfTime::Exact => "",
                        SelfTime::Clamped => " *",
                        SelfTime::Overlapping => " ~",
                    };
                    let cells = [
                        f.self_ms.map(|v| format!("{v:.3}{mark}")),
                        f.total_ms.map(|v| format!("{v:.3}")),
                        tree.share(position).map(|s| format!("{s:.1}%")),
                        f.rows.map(|v| format!("{}", v.round())),
                        f.scanned_rows.map(|v| format!("{}", v.round())),
                        f.executions.map(|v| v.to_string()),
                    ];
                    for cell in cells {
                        row.col(|ui| {
                            ui.monospace(cell.unwrap_or_else(|| "–".to_owned()));
                        });
                    }
                    if row.response().clicked() {
                        clicked = Some(position);
                    }
                });
            });
        self.rows_shown = order;
        if let Some(position) = clicked {
            self.selected = (self.selected != Some(position)).then_some(position);
        }
        if let Some(column) = resort {
            if self.sort == column {
                self.descending = !self.descending;
            } else {
                self.sort = column;
                self.descending = column != PlanColumn::Operator;
            }
        }
        ui.label(
            egui::RichText::new(
                "self = total minus the operator's children; * clamped at zero, ~ children run \
                 remotely or in parallel",
            )
            .small()
            .color(theme::MUTED),
        );
    }

    /// Operator positions in the table's order.
    fn order(&self, tree: &OperatorTree) -> Vec<usize> {
        let mut order: Vec<usize> = (0..tree.operators.len()).collect();
        let value = |p: usize| -> Option<f64> {
            let f = &tree.operators[p].figures;
            match self.sort {
                PlanColumn::Operator => Some(p as f64),
                PlanColumn::SelfMs => f.self_ms,
                PlanColumn::TotalMs => f.total_ms,
                PlanColumn::Share => tree.share(p),
                PlanColumn::Rows => f.rows,
                PlanColumn::Scanned => f.scanned_rows,
                PlanColumn::Executions => f.executions.map(|e| e as f64),
            }
        };
        order.sort_by(|&a, &b| {
            // Operators without the figure go last either way.
            let (x, y) = (value(a), value(b));
            let by = match (x, y) {
                (Some(x), Some(y)) if self.descending => y.total_cmp(&x),
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            };
            by.then(a.cmp(&b))
        });
        order
    }
}

/// Each operator's horizontal span: the root's is `[left, right]`; children split their
/// parent's in link order, each by its share of the parent's total (scaled down if they add up
/// to more), children without a total sharing what the others leave.
fn spans(tree: &OperatorTree, left: f32, right: f32) -> Vec<(f32, f32)> {
    let mut out = vec![(left, left); tree.operators.len()];
    if tree.operators.is_empty() {
        return out;
    }
    out[0] = (left, right);
    for (position, op) in tree.operators.iter().enumerate() {
        let (l, r) = out[position];
        let width = f64::from(r - l);
        let parent = op.figures.total_ms.filter(|t| *t > 0.0);
        let known: f64 = op
            .children
            .iter()
            .filter_map(|&c| tree.operators[c].figures.total_ms)
            .sum();
        let unknown = op
            .children
            .iter()
            .filter(|&&c| tree.operators[c].figures.total_ms.is_none())
            .count();
        let scale = match parent {
            Some(total) if known > 0.0 => width / total.max(known),
            _ if known > 0.0 => width / known,
            _ => 0.0,
        };
        let left_over = (width - known * scale).max(0.0);
        let each_unknown = if unknown > 0 {
            left_over / unknown as f64
        } else {
            0.0
        };
        let all_unknown = known <= 0.0 && !op.children.is_empty();
        let mut x = f64::from(l);
        for &child in &op.children {
            let w = match tree.operators[child].figures.total_ms {
                _ if all_unknown => width / op.children.len() as f64,
                Some(t) => t * scale,
                None => each_unknown,
            };
            out[child] = (x as f32, (x + w) as f32);
            x += w;
        }
    }
    out
}

/// From a cool grey-blue (no self time) to a hot orange-red (the most), by `heat` in 0..=1.
fn heat_colour(heat: Option<f32>) -> Color32 {
    let Some(h) = heat else {
        return Color32::from_rgb(0x70, 0x78, 0x86);
    };
    let h = h.clamp(0.0, 1.0);
    let mix = |a: u8, b: u8| (f32::from(a) + (f32::from(b) - f32::from(a)) * h) as u8;
    Color32::from_rgb(mix(0x9c, 0xf0), mix(0xc4, 0x5a), mix(0xe4, 0x3c))
}

/// Every figure of an operator, for its hover text.
fn tooltip(tree: &OperatorTree, position: usize) -> String {
    let op: &Operator = &tree.operators[position];
    let f = &op.figures;
    let ms = |x: Option<f64>| x.map_or_else(|| "not reported".to_owned(), crate::text::ms);
    let n =
        |x: Option<f64>| x.map_or_else(|| "not reported".to_owned(), |v| format!("{}", v.round()));
    let mut text = format!(
        "{} (plan node {})\nself {}{}\ntotal {}\nshare of server {}\ncpu {}\nrows {}\nscanned rows {}\nexecutions {}",
        op.title(),
        op.node,
        ms(f.self_ms),
        match f.self_time {
            SelfTime::Exact => "",
            SelfTime::Clamped => " (clamped at zero: its children report more)",
            SelfTime::Overlapping => " (its children run remotely or in parallel)",
        },
        ms(f.total_ms),
        tree.share(position)
            .map_or_else(|| "–".to_owned(), |s| format!("{s:.1}%")),
        ms(f.cpu_ms),
        n(f.rows),
        n(f.scanned_rows),
        f.executions
            .map_or_else(|| "not reported".to_owned(), |e| e.to_string()),
    );
    if !op.link.is_empty() {
        text.push_str(&format!("\nlinked as {}", op.link));
    }
    for t in &op.traits {
        text.push_str(&format!("\n{t}"));
    }
    for (kind, expression) in &op.conditions {
        text.push_str(&format!("\n{kind}: {expression}"));
    }
    text
}

/// A cached diff of two runs' main plans.
type CachedDiff = Arc<Option<(PlanDiff, String, String)>>;

/// The plan diff of two runs (`(id, report)` each) in the compare view: nothing when either kept
/// no plan. Computed once per pair and kept in egui's memory (runs never change).
pub fn diff_ui(ui: &mut egui::Ui, a: (RunId, &RunReport), b: (RunId, &RunReport)) {
    let key = egui::Id::unique(("plan-diff", a.0, b.0));
    let cached: Option<CachedDiff> = ui.data(|d| d.get_temp(key));
    let cached = cached.unwrap_or_else(|| {
        let main = |r: &RunReport| r.plan_aggregates(&BTreeSet::new()).into_iter().next();
        let computed: CachedDiff = Arc::new(match (main(a.1), main(b.1)) {
            (Some(pa), Some(pb)) => {
                Some((plan::diff(&pa.tree, &pb.tree), pa.signature, pb.signature))
            }
            _ => None,
        });
        ui.data_mut(|d| d.insert_temp(key, Arc::clone(&computed)));
        computed
    });
    let Some((d, fa, fb)) = cached.as_ref() else {
        return;
    };
    let (la, lb) = (&a.1.config.label, &b.1.config.label);
    let title = if d.is_same_plan() {
        format!("Plan: {lb} runs the same plan as {la} ({fb})")
    } else {
        format!(
            "Plan: {} operators differ between {la} ({fa}) and {lb} ({fb})",
            d.differences().count()
        )
    };
    egui::CollapsingHeader::new(egui::RichText::new(title).strong())
        .id_salt(("plan-diff-header", a.0, b.0))
        .default_open(!d.is_same_plan())
        .show(ui, |ui| {
            egui::ScrollArea::vertical()
                .id_salt(("plan-diff-rows", a.0, b.0))
                .max_height(180.0)
                .show(ui, |ui| {
                    egui::Grid::new(("plan-diff", a.0, b.0))
                        .striped(true)
                        .num_columns(5)
                        .spacing([12.0, 2.0])
                        .show(ui, |ui| {
                            for heading in ["", "operator", "Δ self ms", "Δ rows", "Δ scanned"] {
                                ui.label(egui::RichText::new(heading).strong());
                            }
                            ui.end_row();
                            for e in &d.entries {
                                let (mark, colour) = match e.kind {
                                    DiffKind::Same => ("=", theme::MUTED),
                                    DiffKind::Changed => ("~", theme::WARN),
                                    DiffKind::Added => ("+", theme::OK),
                                    DiffKind::Removed => ("-", theme::ERROR),
                                };
                                ui.colored_label(colour, mark);
                                let what = if e.kind == DiffKind::Same {
                                    e.title().to_owned()
                                } else {
                                    e.describe()
                                };
                                ui.colored_label(
                                    colour,
                                    format!("{}{what}", "   ".repeat(e.depth)),
                                );
                                let signed = |x: Option<f64>, digits: usize| {
                                    x.map_or_else(|| "–".to_owned(), |v| format!("{v:+.digits$}"))
                                };
                                ui.monospace(signed(e.self_delta_ms(), 3));
                                ui.monospace(signed(e.rows_delta(), 0));
                                ui.monospace(signed(e.scanned_delta(), 0));
                                ui.end_row();
                            }
                        });
                });
        });
}
