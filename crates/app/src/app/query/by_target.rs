//! The query mode a person had on each kind of target, so that switching target and back gives
//! them what they had: picking the emulator sets Profile (it returns query statistics in no other
//! mode), and going back to the local instance sets the mode they left it with. Every change a
//! switch makes is said in words in the status line. Kept with the settings, so a relaunch
//! remembers it too.

use serde::{Deserialize, Serialize};

use crate::app::TargetKind;
use crate::engine::QueryMode;

/// The mode last set on each kind of target (none for a kind not left yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ModesByTarget {
    local: Option<QueryMode>,
    emulator: Option<QueryMode>,
    cloud: Option<QueryMode>,
}

/// A switch's change of the mode: the mode to set and the words for the status line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeChange {
    /// The mode now set.
    pub mode: QueryMode,
    /// What changed and why.
    pub words: String,
}

impl ModesByTarget {
    fn slot(&mut self, kind: TargetKind) -> &mut Option<QueryMode> {
        match kind {
            TargetKind::Local => &mut self.local,
            TargetKind::Emulator => &mut self.emulator,
            TargetKind::Cloud => &mut self.cloud,
        }
    }

    /// The target switched from `from` to `to` with `mode` set; `statistics` is the mode `to`
    /// returns query statistics in by default (none while the panel's fields make no target).
    /// Remembers `mode` for `from`; returns the change to make, if any: the mode the person had on
    /// `to`, else (a kind not visited yet) the mode that returns statistics there when they had
    /// left it at the default.
    pub fn switched(
        &mut self,
        from: TargetKind,
        to: TargetKind,
        mode: QueryMode,
        statistics: Option<QueryMode>,
    ) -> Option<ModeChange> {
        *self.slot(from) = Some(mode);
        let wanted = match (*self.slot(to), statistics) {
            (Some(had), _) => had,
            (None, Some(statistics)) if mode == QueryMode::WithStats => statistics,
            (None, _) => mode,
        };
        if wanted == mode {
            return None;
        }
        let why = if self.slot(to).is_some() {
            format!("as you had it on {}", place(to))
        } else {
            format!(
                "{} returns query statistics only in profile mode",
                place(to)
            )
        };
        Some(ModeChange {
            mode: wanted,
            words: format!(
                "Mode set to {}: {why} (it was {})",
                mode_word(wanted),
                mode_word(mode)
            ),
        })
    }
}

/// A query mode in a word or two, as a sentence or a column names it.
pub fn mode_word(mode: QueryMode) -> &'static str {
    match mode {
        QueryMode::Normal => "Normal",
        QueryMode::WithStats => "With stats",
        QueryMode::Profile => "Profile",
    }
}

/// A kind of target as a sentence names it.
fn place(kind: TargetKind) -> &'static str {
    match kind {
        TargetKind::Local => "the local instance",
        TargetKind::Emulator => "the emulator",
        TargetKind::Cloud => "Cloud Spanner",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switching_target_and_back_restores_the_mode_and_says_so_each_time() {
        let mut modes = ModesByTarget::default();
        let (local, emulator) = (TargetKind::Local, TargetKind::Emulator);
        let there = modes
            .switched(
                local,
                emulator,
                QueryMode::WithStats,
                Some(QueryMode::Profile),
            )
            .expect("the emulator needs Profile");
        assert_eq!(there.mode, QueryMode::Profile);
        assert!(
            there.words.starts_with("Mode set to Profile") && there.words.contains("the emulator"),
            "{}",
            there.words
        );
        let back = modes
            .switched(
                emulator,
                local,
                QueryMode::Profile,
                Some(QueryMode::WithStats),
            )
            .expect("back to what the person had");
        assert_eq!(back.mode, QueryMode::WithStats);
        assert!(back.words.contains("the local instance"), "{}", back.words);
        // A mode the person chose on the emulator is theirs there next time.
        modes.switched(
            local,
            emulator,
            QueryMode::WithStats,
            Some(QueryMode::Profile),
        );
        modes.switched(
            emulator,
            local,
            QueryMode::Normal,
            Some(QueryMode::WithStats),
        );
        let again = modes.switched(
            local,
            emulator,
            QueryMode::WithStats,
            Some(QueryMode::Profile),
        );
        assert_eq!(again.map(|c| c.mode), Some(QueryMode::Normal));
        // A mode that is not the default is left alone on a kind not visited.
        let mut fresh = ModesByTarget::default();
        assert_eq!(
            fresh.switched(
                local,
                TargetKind::Cloud,
                QueryMode::Normal,
                Some(QueryMode::WithStats)
            ),
            None
        );
    }
}
