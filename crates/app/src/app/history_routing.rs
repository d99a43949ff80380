//! What the History view's events do in the app: stored runs to compare join the run list (once
//! each) and the Compare tab shows them picked; an import opens the file dialog, whose answer
//! goes back to the view; notices go to the status bar.

use super::SpanprofApp;
use super::files::DialogPurpose;
use super::history::HistoryEvent;
use super::settings::Tab;

impl SpanprofApp {
    /// Takes in what the History view's reader answered since the last frame.
    pub(super) fn drain_history_view(&mut self) {
        for event in self.history_view.drain() {
            match event {
                HistoryEvent::Compare(runs) => self.compare_stored(runs),
                HistoryEvent::Import => self.open_dialog(DialogPurpose::ImportHistory),
                HistoryEvent::Notice(words) => self.notice = Some(words),
            }
        }
    }

    /// Adds the stored runs (those not in the list yet) and compares them.
    fn compare_stored(&mut self, runs: Vec<(String, crate::report::RunReport)>) {
        let ids = self.runs.add_stored(runs);
        self.compare.pick_only(&ids);
        self.runs.list_mut().show(ids.first().copied());
        self.settings.tab = Tab::Compare;
    }
}
