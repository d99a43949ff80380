//! A variant's request options in the query panel: priority, request tag, staleness, optimizer
//! version and statistics package, directed reads, and a partitioned read with Data Boost. They are
//! read with the command line's own parsers, so the window and `spanprof profile` take the same
//! spellings and refuse the same mistakes.

use serde::{Deserialize, Serialize};

use super::transaction::{TransactionSettings, transaction_fields};
use crate::app::theme::form_row;
use crate::client::{DirectedReads, Partitioned, Priority, RequestOptions, SessionKind};

/// Which replicas a variant's reads may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum Replicas {
    /// Any (no directed reads).
    #[default]
    Any,
    /// Only the listed ones.
    Include,
    /// Any but the listed ones.
    Exclude,
}

/// A variant's request options as the panel edits them (text where the user types).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct OptionSettings {
    /// RequestOptions.priority; none when `None`.
    pub priority: Option<Priority>,
    /// RequestOptions.request_tag; none when empty.
    pub request_tag: String,
    /// The staleness, as `--staleness` spells it; strong (no bound sent) when empty.
    pub staleness: String,
    /// QueryOptions.optimizer_version; the server's default when empty.
    pub optimizer_version: String,
    /// QueryOptions.optimizer_statistics_package; the default when empty.
    pub statistics_package: String,
    /// Directed reads.
    pub replicas: Replicas,
    /// The replicas, `LOC[:READ_ONLY|READ_WRITE],...`.
    pub replica_list: String,
    /// Read as partitions.
    pub partitioned: bool,
    /// With Data Boost.
    pub data_boost: bool,
    /// The most partitions to ask for; no limit when 0.
    pub max_partitions: u32,
    /// Every iteration a cold start (`--cold`): a new connection, token source and session.
    pub cold: bool,
    /// The kind of session to ask for (`--session`); the default kind when `None`.
    pub session: Option<SessionChoice>,
}

/// The kinds of session the panel offers (the client's [`SessionKind`], saved with the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionChoice {
    /// A regular session.
    Regular,
    /// A multiplexed session.
    Multiplexed,
}

impl SessionChoice {
    /// The client's kind.
    pub fn kind(self) -> SessionKind {
        match self {
            SessionChoice::Regular => SessionKind::Regular,
            SessionChoice::Multiplexed => SessionKind::Multiplexed,
        }
    }
}

impl OptionSettings {
    /// The options, checked, or what is wrong with them.
    pub fn to_options(&self) -> Result<RequestOptions, String> {
        let text = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        let directed_reads = match self.replicas {
            Replicas::Any => None,
            Replicas::Include => Some(DirectedReads::parse(&self.replica_list, false)),
            Replicas::Exclude => Some(DirectedReads::parse(&self.replica_list, true)),
        }
        .transpose()
        .map_err(|e| e.to_string())?;
        let options = RequestOptions {
            priority: self.priority,
            request_tag: text(&self.request_tag),
            staleness: text(&self.staleness)
                .map(|s| s.parse())
                .transpose()
                .map_err(|e: crate::client::OptionError| e.to_string())?,
            optimizer_version: text(&self.optimizer_version),
            optimizer_statistics_package: text(&self.statistics_package),
            directed_reads,
            partitioned: self.partitioned.then_some(Partitioned {
                data_boost: self.data_boost,
                max_partitions: (self.max_partitions > 0).then_some(self.max_partitions),
            }),
        };
        options.check().map_err(|e| e.to_string())?;
        Ok(options)
    }

    /// How many options are set, for the section's heading.
    fn count(&self) -> usize {
        [
            self.priority.is_some(),
            !self.request_tag.trim().is_empty(),
            !self.staleness.trim().is_empty(),
            !self.optimizer_version.trim().is_empty(),
            !self.statistics_package.trim().is_empty(),
            self.replicas != Replicas::Any,
            self.partitioned,
            self.cold,
            self.session.is_some(),
        ]
        .iter()
        .filter(|set| **set)
        .count()
    }
}

/// The request options of the variant being edited, in a section closed by default; a read-write
/// variant's are its transaction's (and the kind of session), the query's own not applying.
pub fn options_ui(
    ui: &mut egui::Ui,
    options: &mut OptionSettings,
    mut transaction: Option<&mut TransactionSettings>,
) {
    let (title, set) = match transaction.as_deref() {
        Some(t) => (
            "Transaction options",
            t.count() + usize::from(options.session.is_some()),
        ),
        None => ("Request options", options.count()),
    };
    let heading = match set {
        0 => title.to_owned(),
        n => format!("{title} ({n} set)"),
    };
    egui::CollapsingHeader::new(heading)
        .id_salt("request-options")
        .show(ui, |ui| {
            egui::Grid::new("request-options-grid")
                .num_columns(2)
                .spacing([8.0, 4.0])
                .show(ui, |ui| match transaction.as_deref_mut() {
                    Some(t) => {
                        transaction_fields(ui, t);
                        session_field(ui, options);
                    }
                    None => fields(ui, options),
                });
            let error = match transaction.as_deref() {
                Some(t) => t.to_options(crate::engine::QueryMode::default()).err(),
                None => options.to_options().err(),
            };
            if let Some(e) = error {
                ui.colored_label(ui.visuals().warn_fg_color, e);
            }
        });
}

fn single<'t>(text: &'t mut String, hint: &'static str) -> egui::TextEdit<'t> {
    egui::TextEdit::singleline(text)
        .desired_width(150.0)
        .hint_text(hint)
}

fn fields(ui: &mut egui::Ui, options: &mut OptionSettings) {
    let priority = ui.label("Priority");
    egui::ComboBox::from_id_salt("priority")
        .selected_text(options.priority.map_or("default", Priority::as_str))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut options.priority, None, "default");
            for p in Priority::ALL {
                ui.selectable_value(&mut options.priority, Some(p), p.as_str());
            }
        })
        .response
        .labelled_by(priority.id);
    ui.end_row();
    form_row(
        ui,
        "Request tag",
        Some("RequestOptions.request_tag: at most 50 printable ASCII characters"),
        single(&mut options.request_tag, "none"),
    );
    form_row(
        ui,
        "Staleness",
        Some("strong, exact:10s, max:10s, read:RFC3339 or min-read:RFC3339"),
        single(&mut options.staleness, "strong"),
    );
    form_row(
        ui,
        "Optimizer version",
        Some("QueryOptions.optimizer_version: a number, or latest"),
        single(&mut options.optimizer_version, "default"),
    );
    form_row(
        ui,
        "Statistics package",
        Some("QueryOptions.optimizer_statistics_package"),
        single(&mut options.statistics_package, "default"),
    );
    let replicas = ui.label("Replicas");
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt("replicas")
            .selected_text(match options.replicas {
                Replicas::Any => "any",
                Replicas::Include => "only",
                Replicas::Exclude => "all but",
            })
            .width(70.0)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut options.replicas, Replicas::Any, "any");
                ui.selectable_value(&mut options.replicas, Replicas::Include, "only");
                ui.selectable_value(&mut options.replicas, Replicas::Exclude, "all but");
            })
            .response
            .labelled_by(replicas.id);
        if options.replicas != Replicas::Any {
            ui.add(
                egui::TextEdit::singleline(&mut options.replica_list)
                    .desired_width(120.0)
                    .hint_text("us-east1:READ_ONLY"),
            );
        }
    });
    ui.end_row();
    ui.label("Partitioned");
    ui.horizontal(|ui| {
        ui.checkbox(&mut options.partitioned, "")
            .on_hover_text("PartitionQuery, then every partition streamed at once");
        ui.add_enabled_ui(options.partitioned, |ui| {
            ui.checkbox(&mut options.data_boost, "Data Boost");
            ui.label("max");
            ui.add(egui::DragValue::new(&mut options.max_partitions).range(0..=64))
                .on_hover_text("The most partitions to ask for (0: the server's choice)");
        });
    });
    ui.end_row();
    connection_fields(ui, options);
}

/// The cold-start toggle and the kind of session.
fn connection_fields(ui: &mut egui::Ui, options: &mut OptionSettings) {
    ui.label("Cold start");
    ui.checkbox(&mut options.cold, "").on_hover_text(
        "Every iteration on a new connection, token and session: dns, tcp, tls, http2, token and \
         session timed before the query",
    );
    ui.end_row();
    session_field(ui, options);
}

/// The kind of session (a read-write transaction's default is regular).
fn session_field(ui: &mut egui::Ui, options: &mut OptionSettings) {
    let session = ui.label("Session");
    egui::ComboBox::from_id_salt("session-kind")
        .selected_text(options.session.map_or("default", |c| c.kind().as_str()))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut options.session, None, "default");
            for choice in [SessionChoice::Regular, SessionChoice::Multiplexed] {
                ui.selectable_value(&mut options.session, Some(choice), choice.kind().as_str());
            }
        })
        .response
        .on_hover_text(
            "default: multiplexed, regular for a partitioned read or a read-write transaction",
        )
        .labelled_by(session.id);
    ui.end_row();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_panel_reads_options_as_the_command_line_does() {
        let settings = OptionSettings {
            priority: Some(Priority::High),
            request_tag: "nightly".into(),
            staleness: "exact:15s".into(),
            replicas: Replicas::Include,
            replica_list: "us-east1:READ_ONLY".into(),
            partitioned: true,
            max_partitions: 3,
            ..OptionSettings::default()
        };
        let options = settings.to_options().expect("valid");
        let described: Vec<String> = options
            .describe()
            .into_iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        assert_eq!(
            described,
            [
                "priority=high",
                "request-tag=nightly",
                "staleness=exact:15s",
                "include-replicas=us-east1:READ_ONLY",
                "partitioned=true",
                "max-partitions=3"
            ]
        );
        assert_eq!(
            OptionSettings::default().to_options(),
            Ok(RequestOptions::default())
        );
        let bad = OptionSettings {
            staleness: "max:10s".into(),
            partitioned: true,
            ..OptionSettings::default()
        };
        assert!(bad.to_options().is_err_and(|e| e.contains("single-use")));
    }
}
