//! The client's timeouts in the connection panel (connect, call, first response, iteration), as
//! the command line's `--connect-timeout`, `--call-timeout`, `--first-response-timeout` and
//! `--timeout` take them: text like `10s` or `250ms`, read with the command line's parser, and
//! persisted with the connection settings.

use serde::{Deserialize, Serialize};

use crate::app::theme::form_row;
use crate::client::{Readable, Timeouts, parse_duration};

/// The four timeouts as the user wrote them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimeoutSettings {
    /// Connecting: TCP (and TLS) plus the HTTP/2 handshake.
    pub connect: String,
    /// A unary call's answer (sessions, transactions, admin calls).
    pub call: String,
    /// A query's first message.
    pub first_response: String,
    /// A whole iteration, resumes included.
    pub iteration: String,
}

impl Default for TimeoutSettings {
    fn default() -> Self {
        TimeoutSettings::from(Timeouts::DEFAULT)
    }
}

impl From<Timeouts> for TimeoutSettings {
    fn from(t: Timeouts) -> Self {
        let text = |d| Readable(d).to_string();
        TimeoutSettings {
            connect: text(t.connect),
            call: text(t.call),
            first_response: text(t.first_response),
            iteration: text(t.iteration),
        }
    }
}

impl TimeoutSettings {
    /// The client's timeouts, or which one cannot be read and why.
    pub fn timeouts(&self) -> Result<Timeouts, String> {
        let read = |name: &str, text: &str| match parse_duration(text) {
            Ok(d) if d.is_zero() => Err(format!("the {name} timeout must be more than zero")),
            Ok(d) => Ok(d),
            Err(e) => Err(format!("the {name} timeout: {e}")),
        };
        Ok(Timeouts {
            connect: read("connect", &self.connect)?,
            call: read("call", &self.call)?,
            first_response: read("first response", &self.first_response)?,
            iteration: read("iteration", &self.iteration)?,
        })
    }

    /// The four fields, each a row of the panel's grid; one that cannot be read is said below.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        egui::Grid::new("timeouts")
            .num_columns(2)
            .spacing([8.0, 4.0])
            .show(ui, |ui| {
                for (label, hover, value) in [
                    (
                        "Connect timeout",
                        "TCP, TLS and the HTTP/2 handshake (--connect-timeout)",
                        &mut self.connect,
                    ),
                    (
                        "Call timeout",
                        "A unary call's answer: sessions, transactions (--call-timeout)",
                        &mut self.call,
                    ),
                    (
                        "First response timeout",
                        "A query's first message, each resume's too (--first-response-timeout)",
                        &mut self.first_response,
                    ),
                    (
                        "Iteration timeout",
                        "A whole iteration, resumes included (--timeout)",
                        &mut self.iteration,
                    ),
                ] {
                    form_row(
                        ui,
                        label,
                        Some(hover),
                        egui::TextEdit::singleline(value).desired_width(80.0),
                    );
                }
            });
        if let Err(message) = self.timeouts() {
            ui.colored_label(crate::app::theme::ERROR, message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_defaults_read_back_as_the_client_s_defaults_and_bad_text_is_named() {
        let settings = TimeoutSettings::default();
        assert_eq!(settings.timeouts(), Ok(Timeouts::DEFAULT));
        let changed = TimeoutSettings {
            first_response: "250ms".into(),
            ..TimeoutSettings::default()
        };
        assert_eq!(
            changed.timeouts().map(|t| t.first_response),
            Ok(Duration::from_millis(250))
        );
        let bad = TimeoutSettings {
            call: "soon".into(),
            ..TimeoutSettings::default()
        };
        let error = bad.timeouts().err().unwrap_or_default();
        assert!(error.starts_with("the call timeout: \"soon\""), "{error}");
    }
}
