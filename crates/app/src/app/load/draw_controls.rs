//! The Load tab's controls for what each request draws and what a read-write run reads after its
//! last step: the parameters drawn over a key space (the text `load --param` takes, read by the
//! engine's parser), their seed, what is wrong with them said under the field before Run; and,
//! with the query panel's read-write switch on, reading the target's own lock statistics after the
//! run, with the built-in instance's interval. The parameters are read again only when their text
//! or seed changes ([`DrawCheck`]), not each frame.

use super::settings::{LoadSettings, TargetStatsSettings};
use crate::app::theme::{self, form_row};
use crate::engine::load::DEFAULT_STATS_WAIT;

/// The parameters' field.
pub const DRAW_PARAMETERS: &str = "Draw parameters";
/// The built-in instance's interval's field.
pub const STATS_INTERVAL: &str = "Statistics interval";
/// The statistics' checkbox.
pub const READ_TARGET_STATS: &str = "Read the target's own lock statistics after the run";

/// What the parameters' hover says.
const DRAW_HOVER: &str = "Each request binds these parameters, drawn afresh for it: \
    NAME=zipf:LO..HI[:S] (LO the hottest key, S the skew, default 0.99), NAME=uniform:LO..HI, or a \
    constant NAME=int:V, NAME=string:TEXT, NAME:TYPE=VALUE; one a line, or separated by commas. A \
    statement binds those it mentions as @NAME; a transaction binds the same values in each of its \
    statements and retries. Empty: each request binds only the query panel's parameters";

/// The draw settings as last read: the text and seed they were read from, and what was wrong, or
/// what each request draws in words.
#[derive(Debug, Clone, Default)]
pub struct DrawCheck {
    read: Option<(String, u64)>,
    error: Option<String>,
    words: Option<String>,
}

impl DrawCheck {
    /// Reads `settings`' parameters again if their text or seed changed since the last time.
    pub fn refresh(&mut self, settings: &LoadSettings) {
        let current = (settings.params.as_str(), settings.seed);
        if self
            .read
            .as_ref()
            .is_some_and(|(t, s)| (t.as_str(), *s) == current)
        {
            return;
        }
        self.read = Some((settings.params.clone(), settings.seed));
        (self.error, self.words) = match settings.drawing() {
            Ok(drawing) => (
                None,
                drawing.draws.draws.map(|d| {
                    let params: Vec<String> = d.params.iter().map(|p| p.describe()).collect();
                    format!("each request draws {} (seed {})", params.join(", "), d.seed)
                }),
            ),
            Err(why) => (Some(why), None),
        };
    }

    /// What is wrong with the parameters, as last read.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
}

/// The parameters and their seed (a grid's row: the seed beside the field, so that the charts
/// move down by one row only), what is wrong with them or what they draw under them.
pub fn draws_rows(ui: &mut egui::Ui, settings: &mut LoadSettings, check: &DrawCheck) {
    let name = ui.label(DRAW_PARAMETERS).on_hover_text(DRAW_HOVER);
    ui.horizontal(|ui| {
        ui.add(
            egui::TextEdit::multiline(&mut settings.params)
                .desired_rows(1)
                .desired_width(260.0)
                .hint_text("id=zipf:1..100"),
        )
        .labelled_by(name.id);
        let seed = ui.label("seed").on_hover_text(
            "The draws are fixed by it: one seed draws the same values for the same requests, \
             in the same order, however they interleave",
        );
        ui.add(egui::DragValue::new(&mut settings.seed))
            .labelled_by(seed.id);
    });
    ui.end_row();
    // An error in the body's size (it stops the run); what is drawn small, as a hint.
    let said = match (check.error(), &check.words) {
        (Some(error), _) => egui::RichText::new(error).color(theme::ERROR),
        (None, Some(words)) => egui::RichText::new(words).small().color(theme::MUTED),
        (None, None) => return,
    };
    ui.label("");
    ui.add(egui::Label::new(said).wrap());
    ui.end_row();
}

/// With the query panel's read-write switch on, a grid's rows: whether to read the target's
/// statistics after the run, and (on the built-in instance, `local`) its interval.
pub fn target_stats_rows(ui: &mut egui::Ui, stats: &mut TargetStatsSettings, local: bool) {
    ui.label("");
    ui.checkbox(&mut stats.read, READ_TARGET_STATS)
        .on_hover_text(format!(
            "The run's transactions carry a tag; after the last step the run waits for the \
             target's statistics interval holding its end to close (up to {} s; production's \
             interval is a minute), then reads SPANNER_SYS's LOCK_STATS and TXN_STATS and shows \
             them beside the run's own figures. Cancel ends the wait and keeps the run",
            DEFAULT_STATS_WAIT.as_secs()
        ));
    ui.end_row();
    if stats.read && local {
        form_row(
            ui,
            STATS_INTERVAL,
            Some(
                "How long each of the built-in instance's statistics intervals lasts (its \
                 _MINUTE tables'): production's is a minute; a shorter one closes sooner after \
                 the run",
            ),
            egui::DragValue::new(&mut stats.interval_s)
                .range(1..=TargetStatsSettings::MAX_INTERVAL_S)
                .suffix(" s"),
        );
    }
}
