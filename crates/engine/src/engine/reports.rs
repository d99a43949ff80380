//! [`ReportCollector`]: a run's reports put together from its events. Each record is kept once,
//! as its `Iteration` event brought it, under its variant; `Finished` brings each variant's
//! [`ReportHead`] and the records are moved into their reports. The app, the command line and
//! the tests read a run's reports through it, so none of them assembles them another way.

use crate::report::{IterationRecord, ReportHead, RunReport};

use super::events::EngineEvent;

/// Each variant's records so far, in the order they ended.
#[derive(Debug, Default)]
pub struct ReportCollector {
    /// Indexed by the variant's place in the spec.
    records: Vec<Vec<IterationRecord>>,
}

impl ReportCollector {
    /// Keeps `record`, an iteration of the variant at `variant`.
    pub fn push(&mut self, variant: usize, record: IterationRecord) {
        if self.records.len() <= variant {
            self.records.resize_with(variant + 1, Vec::new);
        }
        self.records[variant].push(record);
    }

    /// The records of the variant at `variant` so far, in the order they ended.
    pub fn records(&self, variant: usize) -> &[IterationRecord] {
        self.records.get(variant).map_or(&[], Vec::as_slice)
    }

    /// The reports: each variant's head (the `Finished` event's, in the variants' order) with
    /// its records, moved there; the collector is empty after.
    pub fn finish(&mut self, heads: Vec<ReportHead>) -> Vec<RunReport> {
        let mut records = std::mem::take(&mut self.records).into_iter();
        heads
            .into_iter()
            .map(|head| head.with_records(records.next().unwrap_or_default()))
            .collect()
    }

    /// Takes one event in: an `Iteration`'s record is kept (a copy: the caller keeps the event);
    /// `Finished` gives the reports.
    pub fn take(&mut self, event: &EngineEvent) -> Option<Vec<RunReport>> {
        match event {
            EngineEvent::Iteration { variant, record } => {
                self.push(*variant, (**record).clone());
                None
            }
            EngineEvent::Finished(heads) => Some(self.finish(heads.clone())),
            _ => None,
        }
    }
}

/// The reports of a run's `events` (all of them, in order); `None` when they hold no `Finished`
/// (the run failed to start, or its events were cut short).
pub fn collect_reports<'a>(
    events: impl IntoIterator<Item = &'a EngineEvent>,
) -> Option<Vec<RunReport>> {
    let mut collector = ReportCollector::default();
    events.into_iter().find_map(|event| collector.take(event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunConfig;

    fn head(label: &str) -> ReportHead {
        ReportHead::new(
            RunConfig {
                label: label.into(),
                ..RunConfig::default()
            },
            "2026-12-04T05:00:00Z".into(),
        )
    }

    fn iteration(variant: usize, label: &str, iteration: u32) -> EngineEvent {
        EngineEvent::Iteration {
            variant,
            record: Box::new(IterationRecord::new(label, iteration, false, "")),
        }
    }

    /// A subject's own run may be labelled as spanprof's floor is: records go to their variant
    /// by its place, never by a label two variants share.
    #[test]
    fn records_go_to_their_variant_by_place_in_the_order_they_ended() {
        let events = [
            iteration(0, "wire floor", 0),
            iteration(1, "wire floor", 0),
            iteration(1, "wire floor", 1),
            iteration(0, "wire floor", 1),
            iteration(0, "wire floor", 2),
            EngineEvent::Finished(vec![head("wire floor"), head("wire floor"), head("none")]),
        ];
        let reports = collect_reports(&events).expect("a Finished event");
        let numbers: Vec<Vec<u32>> = reports
            .iter()
            .map(|r| r.iterations.iter().map(|i| i.iteration).collect())
            .collect();
        assert_eq!(numbers, [vec![0, 1, 2], vec![0, 1], vec![]]);
        assert_eq!(reports[2].config.label, "none");
        assert_eq!(collect_reports(&events[..5]), None);
    }

    #[test]
    fn finishing_moves_the_records_out() {
        let mut collector = ReportCollector::default();
        collector.push(0, IterationRecord::new("a", 0, true, ""));
        assert_eq!(collector.records(0).len(), 1);
        assert!(collector.records(3).is_empty());
        let reports = collector.finish(vec![head("a")]);
        assert_eq!(reports[0].iterations.len(), 1);
        assert!(collector.records(0).is_empty());
    }
}
