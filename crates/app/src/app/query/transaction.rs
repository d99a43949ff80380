//! A read-write variant's transaction options in the query panel: isolation, lock mode, how it
//! begins, the retry policy and its most attempts, commit statistics, the max commit delay and the
//! transaction tag. Text fields are read with the client's own parsers, so the window and
//! `spanprof profile --read-write` take the same spellings and refuse the same mistakes.

use serde::{Deserialize, Serialize};

use crate::app::theme::form_row;
use crate::client::read_write::{
    BeginMode, Isolation, LockMode, MAX_COMMIT_DELAY, ReadWriteOptions, RetryPolicy,
};
use crate::engine::QueryMode;

/// The isolation levels the panel offers (the client's [`Isolation`], saved with the settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum IsolationChoice {
    /// The server's (serializable).
    #[default]
    Default,
    /// Serializable.
    Serializable,
    /// Repeatable read.
    RepeatableRead,
}

impl IsolationChoice {
    const ALL: [IsolationChoice; 3] = [
        IsolationChoice::Default,
        IsolationChoice::Serializable,
        IsolationChoice::RepeatableRead,
    ];

    fn word(self) -> &'static str {
        match self {
            IsolationChoice::Default => "default",
            IsolationChoice::Serializable => "serializable",
            IsolationChoice::RepeatableRead => "repeatable read",
        }
    }

    fn client(self) -> Isolation {
        match self {
            IsolationChoice::Default => Isolation::Default,
            IsolationChoice::Serializable => Isolation::Serializable,
            IsolationChoice::RepeatableRead => Isolation::RepeatableRead,
        }
    }
}

/// The read lock modes the panel offers (the client's [`LockMode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum LockChoice {
    /// The server's (pessimistic).
    #[default]
    Default,
    /// Reads lock as they run.
    Pessimistic,
    /// Reads are validated at commit.
    Optimistic,
}

impl LockChoice {
    const ALL: [LockChoice; 3] = [
        LockChoice::Default,
        LockChoice::Pessimistic,
        LockChoice::Optimistic,
    ];

    fn word(self) -> &'static str {
        match self {
            LockChoice::Default => "default",
            LockChoice::Pessimistic => "pessimistic",
            LockChoice::Optimistic => "optimistic",
        }
    }

    fn client(self) -> LockMode {
        match self {
            LockChoice::Default => LockMode::Default,
            LockChoice::Pessimistic => LockMode::Pessimistic,
            LockChoice::Optimistic => LockMode::Optimistic,
        }
    }
}

/// A read-write variant's transaction options as the panel edits them (text where the user
/// types).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TransactionSettings {
    /// The isolation level.
    pub isolation: IsolationChoice,
    /// The read lock mode.
    pub lock_mode: LockChoice,
    /// BeginTransaction first, instead of with the first statement.
    pub explicit_begin: bool,
    /// The retry policy as `--retry` spells it; honour-retry-info when empty.
    pub retry: String,
    /// Attempts at most, the first included.
    pub max_attempts: u32,
    /// Ask the commit for its statistics.
    pub commit_stats: bool,
    /// The commit's max_commit_delay, as `--max-commit-delay` spells it; none when empty.
    pub max_commit_delay: String,
    /// The transaction tag; none when empty.
    pub tag: String,
}

impl Default for TransactionSettings {
    fn default() -> Self {
        TransactionSettings {
            isolation: IsolationChoice::Default,
            lock_mode: LockChoice::Default,
            explicit_begin: false,
            retry: String::new(),
            max_attempts: ReadWriteOptions::default().max_attempts,
            commit_stats: false,
            max_commit_delay: String::new(),
            tag: String::new(),
        }
    }
}

impl TransactionSettings {
    /// The options, its statements asked in `mode`, checked, or what is wrong with them.
    pub fn to_options(&self, mode: QueryMode) -> Result<ReadWriteOptions, String> {
        let text = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        let retry = text(&self.retry)
            .map(|r| RetryPolicy::parse(&r))
            .transpose()?
            .unwrap_or_default();
        let max_commit_delay = text(&self.max_commit_delay)
            .map(|d| crate::client::timeouts::parse_duration(&d).map_err(|e| e.to_string()))
            .transpose()?;
        if max_commit_delay.is_some_and(|d| d > MAX_COMMIT_DELAY) {
            return Err("a max commit delay is between 0ms and 500ms".into());
        }
        let options = ReadWriteOptions {
            isolation: self.isolation.client(),
            lock_mode: self.lock_mode.client(),
            begin: if self.explicit_begin {
                BeginMode::Explicit
            } else {
                BeginMode::Inline
            },
            max_commit_delay,
            commit_stats: self.commit_stats,
            tag: text(&self.tag),
            retry,
            max_attempts: self.max_attempts,
            mode: crate::client::session::wire_mode(mode),
            ..ReadWriteOptions::default()
        };
        options.check()?;
        Ok(options)
    }

    /// How many options differ from the defaults, for the section's heading.
    pub fn count(&self) -> usize {
        let d = TransactionSettings::default();
        [
            self.isolation != d.isolation,
            self.lock_mode != d.lock_mode,
            self.explicit_begin,
            !self.retry.trim().is_empty(),
            self.max_attempts != d.max_attempts,
            self.commit_stats,
            !self.max_commit_delay.trim().is_empty(),
            !self.tag.trim().is_empty(),
        ]
        .iter()
        .filter(|set| **set)
        .count()
    }
}

/// The transaction's rows of the request options' grid: two columns, a label and its fields.
pub fn transaction_fields(ui: &mut egui::Ui, t: &mut TransactionSettings) {
    let isolation = ui.label("Isolation");
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt("txn-isolation")
            .selected_text(t.isolation.word())
            .width(112.0)
            .show_ui(ui, |ui| {
                for c in IsolationChoice::ALL {
                    ui.selectable_value(&mut t.isolation, c, c.word());
                }
            })
            .response
            .labelled_by(isolation.id)
            .on_hover_text("TransactionOptions.isolation_level (default: serializable)");
    });
    ui.end_row();
    let lock = ui.label("Lock mode");
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt("txn-lock-mode")
            .selected_text(t.lock_mode.word())
            .width(112.0)
            .show_ui(ui, |ui| {
                for c in LockChoice::ALL {
                    ui.selectable_value(&mut t.lock_mode, c, c.word());
                }
            })
            .response
            .labelled_by(lock.id)
            .on_hover_text("ReadWrite.read_lock_mode (default: pessimistic)");
    });
    ui.end_row();
    ui.label("Begin");
    ui.horizontal(|ui| {
        ui.selectable_value(&mut t.explicit_begin, false, "inline")
            .on_hover_text("With the first statement, as the official clients begin");
        ui.selectable_value(&mut t.explicit_begin, true, "explicit")
            .on_hover_text("BeginTransaction first: its call is the begin part");
    });
    ui.end_row();
    retry_and_commit(ui, t);
}

/// The Retry, Attempts, Commit and Tag rows: each narrow enough for the side panel at its least
/// width, so that none widens it.
fn retry_and_commit(ui: &mut egui::Ui, t: &mut TransactionSettings) {
    form_row(
        ui,
        "Retry",
        Some("After an abort: honour-retry-info (wait what the server asks), fixed:50ms, or none"),
        egui::TextEdit::singleline(&mut t.retry)
            .desired_width(130.0)
            .hint_text("honour-retry-info"),
    );
    form_row(
        ui,
        "Max attempts",
        Some("Attempts of one transaction at most, the first included"),
        egui::DragValue::new(&mut t.max_attempts).range(1..=1000),
    );
    ui.label("Commit");
    ui.horizontal(|ui| {
        ui.checkbox(&mut t.commit_stats, "stats")
            .on_hover_text("Ask the commit for its statistics (the mutation count)");
        ui.add(
            egui::TextEdit::singleline(&mut t.max_commit_delay)
                .desired_width(70.0)
                .hint_text("no delay"),
        )
        .on_hover_text("max_commit_delay, 0ms to 500ms: Spanner may hold the commit to batch it");
    });
    ui.end_row();
    form_row(
        ui,
        "Transaction tag",
        Some("RequestOptions.transaction_tag, on every request of the transaction"),
        egui::TextEdit::singleline(&mut t.tag)
            .desired_width(130.0)
            .hint_text("none"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_panel_reads_transaction_options_as_the_command_line_does() {
        let settings = TransactionSettings {
            isolation: IsolationChoice::RepeatableRead,
            lock_mode: LockChoice::Optimistic,
            explicit_begin: true,
            retry: "fixed:50ms".into(),
            max_attempts: 3,
            commit_stats: true,
            max_commit_delay: "10ms".into(),
            tag: "transfer".into(),
        };
        let options = settings.to_options(QueryMode::Profile).expect("valid");
        assert_eq!(
            options.describe(),
            "isolation repeatable-read, lock optimistic, begin explicit, retry fixed:50ms, \
             max attempts 3, max commit delay 10ms, commit stats, tag transfer"
        );
        assert_eq!(options.max_commit_delay, Some(Duration::from_millis(10)));
        assert_eq!(settings.count(), 8);
        let plain = TransactionSettings::default();
        assert_eq!(plain.count(), 0);
        let plain = plain.to_options(QueryMode::WithStats).expect("valid");
        assert_eq!(plain.retry, RetryPolicy::HonourRetryInfo);
        assert_eq!(plain.max_attempts, 10);
        for bad in [
            TransactionSettings {
                retry: "sometimes".into(),
                ..TransactionSettings::default()
            },
            TransactionSettings {
                max_commit_delay: "2s".into(),
                ..TransactionSettings::default()
            },
            TransactionSettings {
                tag: "t".repeat(51),
                ..TransactionSettings::default()
            },
        ] {
            assert!(bad.to_options(QueryMode::WithStats).is_err(), "{bad:?}");
        }
    }
}
