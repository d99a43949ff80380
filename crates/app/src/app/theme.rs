//! The app's colours and visuals: a dark theme; each part's colour comes from `crate::part`, so
//! the window, the exports and the report draw a part alike.

use egui::Color32;

use crate::part::Part;

/// A part's colour.
pub fn part(part: Part) -> Color32 {
    let [r, g, b] = part.colour();
    Color32::from_rgb(r, g, b)
}

/// The overlap of the server's work with the client's, outlined over the decode.
pub const OVERLAP: Color32 = Color32::from_rgb(0xcf, 0xe8, 0xff);

/// Success.
pub const OK: Color32 = Color32::from_rgb(0x4c, 0xc3, 0x8a);
/// Errors.
pub const ERROR: Color32 = Color32::from_rgb(0xf0, 0x5a, 0x5a);
/// Warnings and flags.
pub const WARN: Color32 = Color32::from_rgb(0xf0, 0xc0, 0x40);
/// The hairline between stacked segments: the plot's dark, so a segment's edge is seen whatever
/// the reader makes of its hue.
pub const SEPARATOR: Color32 = Color32::from_rgb(0x10, 0x10, 0x10);
/// The outline of selected bars.
pub const SELECTED: Color32 = Color32::from_rgb(0xff, 0xff, 0xff);
/// The outline of the widget with the keyboard's focus.
pub const FOCUS: Color32 = Color32::from_rgb(0xff, 0xd2, 0x4d);
/// The primary action's fill (Run): apart from every other button's grey, and from the
/// parts' and the status colours; white text on it reads at 5.2:1.
pub const ACCENT: Color32 = Color32::from_rgb(0x1f, 0x6f, 0xc5);
/// Secondary text.
pub const MUTED: Color32 = Color32::from_rgb(0x9a, 0xa0, 0xaa);
/// A cold start's steps in a timeline: apart from every phase's colour, and from a resume's red.
pub const SETUP: Color32 = Color32::from_rgb(0x3c, 0xc8, 0xd2);

/// The colour of the `k`th run in the compare view.
pub fn run_color(k: usize) -> Color32 {
    let [r, g, b] = crate::part::RUN_COLOURS[k % crate::part::RUN_COLOURS.len()];
    Color32::from_rgb(r, g, b)
}

/// Applies the app's visuals to `ctx`.
pub fn apply(ctx: &egui::Context) {
    ctx.set_theme(egui::Theme::Dark);
    // Rows carry any text (Seed23 has CJK); a glyph no font has is drawn as a box, never a panic.
    ctx.set_missing_glyph_policy(egui::epaint::text::MissingGlyphPolicy::Tofu);
    ctx.all_styles_mut(|style| {
        style.spacing.item_spacing = egui::vec2(8.0, 5.0);
        style.spacing.button_padding = egui::vec2(8.0, 3.0);
        // Keyboard focus draws a widget as pressed: a clear outline, so it can be followed.
        style.visuals.widgets.active.bg_stroke = egui::Stroke::new(2.0, FOCUS);
    });
}

/// The primary action's button (Run, Run load), `size` at least: filled with [`ACCENT`] and its
/// label white while it can be pressed, grey as every other button while it cannot.
pub fn primary_button(label: &str, ready: bool, size: egui::Vec2) -> egui::Button<'static> {
    let text = egui::RichText::new(label).strong();
    let button = match ready {
        true => egui::Button::new(text.color(Color32::WHITE)).fill(ACCENT),
        false => egui::Button::new(text),
    };
    button.min_size(size)
}

/// A plot's legend as a row of its own (above the plot, so it never covers data): a swatch of
/// each item's colour and its name, wrapped when the row is full (between items, never inside
/// one: a name is not cut from its swatch).
pub fn legend<'a>(ui: &mut egui::Ui, items: impl IntoIterator<Item = (&'a str, Color32)>) {
    ui.horizontal_wrapped(|ui| {
        let row_start = ui.max_rect().left();
        for (name, color) in items {
            // 12.5 points: readable (the small style's 9 were not), a step below body text.
            let text = egui::WidgetText::from(egui::RichText::new(name).size(12.5)).into_galley(
                ui,
                Some(egui::TextWrapMode::Extend),
                f32::INFINITY,
                egui::TextStyle::Body,
            );
            let size = egui::vec2(10.0, 10.0);
            let width = size.x + ui.spacing().item_spacing.x + text.size().x;
            if width > ui.available_size_before_wrap().x && ui.cursor().left() > row_start + 1.0 {
                ui.end_row();
            }
            let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
            ui.painter().rect_filled(rect, 2.0, color);
            ui.label(text);
            ui.add_space(6.0);
        }
    });
}

/// One row of a two-column form grid: `label`, then `widget` named by it (for screen readers and
/// tests), with `hover` as the label's tooltip when given.
pub fn form_row(
    ui: &mut egui::Ui,
    label: &str,
    hover: Option<&str>,
    widget: impl egui::Widget,
) -> egui::Response {
    let mut name = ui.label(label);
    if let Some(hover) = hover {
        name = name.on_hover_text(hover);
    }
    let response = ui.add(widget).labelled_by(name.id);
    ui.end_row();
    response
}
