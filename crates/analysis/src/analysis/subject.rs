//! A subject's verdict (`spanprof client`): the program's time for the query against
//! spanprof's own decoder and the wire floor, read the same way for all three (from the first
//! query request to the end, at the server), and how much of what the program adds the server
//! spent waiting for it to read.

use std::fmt;

use crate::report::{IterationRecord, Reader, RunReport};
use crate::stats::median;

/// Medians of the timed iterations of a subject's profile's runs.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectComparison {
    /// The subject's run label.
    pub subject: String,
    /// The subject: first query request to exit, median, ms.
    pub subject_ms: f64,
    /// Of it, the server blocked on the program not reading, median, ms.
    pub blocked_ms: f64,
    /// spanprof's decoder: first request to last row decoded, median, ms.
    pub spanprof_ms: Option<f64>,
    /// The bytes-only read: first request to last byte received, median, ms.
    pub floor_ms: Option<f64>,
}

impl SubjectComparison {
    /// What the program adds over the wire floor (over spanprof's decoder when there is no
    /// floor), ms.
    pub fn adds_ms(&self) -> Option<f64> {
        self.floor_ms
            .or(self.spanprof_ms)
            .map(|base| self.subject_ms - base)
    }
}

/// The median of `value` over `report`'s timed iterations, when every one measured it.
fn median_of(report: &RunReport, value: fn(&IterationRecord) -> Option<f64>) -> Option<f64> {
    let mut samples = report.timed().map(value).collect::<Option<Vec<f64>>>()?;
    median(&mut samples)
}

/// The comparison of a subject's profile's `reports`: `None` unless one of them is a program's run
/// (it has a command) with its phases measured in every timed iteration.
pub fn subject_comparison(reports: &[RunReport]) -> Option<SubjectComparison> {
    let subject = reports.iter().find(|r| !r.config.command.is_empty())?;
    let others = || reports.iter().filter(|r| r.config.command.is_empty());
    let floor = others().find(|r| r.config.decoder == Reader::BytesOnly);
    let spanprof = others().find(|r| r.config.decoder != Reader::BytesOnly);
    Some(SubjectComparison {
        subject: subject.config.label.clone(),
        subject_ms: median_of(subject, IterationRecord::request_to_end_ms)?,
        blocked_ms: median_of(subject, |r| r.subject?.blocked_ms)?,
        spanprof_ms: spanprof.and_then(|r| median_of(r, IterationRecord::request_to_end_ms)),
        floor_ms: floor.and_then(|r| median_of(r, IterationRecord::request_to_end_ms)),
    })
}

impl fmt::Display for SubjectComparison {
    /// `python3 python_client.py 783 ms; spanprof 30.0 ms; wire floor 15.0 ms: the client adds 768 ms,
    /// 745 ms of it while the server waited on it`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let subject = crate::report::printable(&self.subject);
        use crate::text::ms;
        write!(f, "{subject} {}", ms(self.subject_ms))?;
        if let Some(x) = self.spanprof_ms {
            write!(f, "; spanprof {}", ms(x))?;
        }
        if let Some(x) = self.floor_ms {
            write!(f, "; wire floor {}", ms(x))?;
        }
        match self.adds_ms() {
            Some(adds) => write!(
                f,
                ": the client adds {}, {} of it while the server waited on it",
                ms(adds),
                ms(self.blocked_ms)
            ),
            None => write!(
                f,
                ", {} of it while the server waited on it",
                ms(self.blocked_ms)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::RunConfig;

    fn record(first_byte: f64, transfer: f64, tail: f64, blocked: f64) -> IterationRecord {
        {
            let mut r = IterationRecord::new("r", 1, false, String::new());
            r.outcome = crate::report::Outcome::Ok;
            r.subject_mut().first_byte_ms = Some(first_byte);
            r.subject_mut().transfer_ms = Some(transfer);
            r.subject_mut().tail_ms = Some(tail);
            r.subject_mut().blocked_ms = Some(blocked);
            r
        }
    }

    fn report(
        label: &str,
        decoder: &str,
        command: bool,
        records: Vec<IterationRecord>,
    ) -> RunReport {
        RunReport {
            config: RunConfig {
                label: label.into(),
                decoder: Reader::parse(decoder),
                command: if command {
                    vec!["python3".into()]
                } else {
                    vec![]
                },
                ..RunConfig::default()
            },
            started_at: String::new(),
            iterations: records,
            plans: Default::default(),
            stopped: None,
        }
    }

    #[test]
    fn the_subject_is_measured_against_the_floor_with_its_blocked_time() {
        let reports = vec![
            report(
                "python3 python_client.py",
                "the command",
                true,
                vec![
                    record(3.0, 700.0, 80.0, 745.0),
                    record(3.0, 690.0, 90.0, 700.0),
                    record(3.0, 900.0, 80.0, 800.0),
                ],
            ),
            report("spanprof", "fast", false, vec![record(2.0, 20.0, 8.0, 0.0)]),
            report(
                "wire floor",
                Reader::BytesOnly.as_str(),
                false,
                vec![record(2.0, 12.0, 1.0, 0.0)],
            ),
        ];
        let c = subject_comparison(&reports).expect("a subject's profile");
        assert_eq!(c.subject_ms, 783.0);
        assert_eq!(c.blocked_ms, 745.0);
        assert_eq!(c.spanprof_ms, Some(30.0));
        assert_eq!(c.floor_ms, Some(15.0));
        assert_eq!(
            c.to_string(),
            "python3 python_client.py 783 ms; spanprof 30.0 ms; wire floor 15.0 ms: the client \
             adds 768 ms, 745 ms of it while the server waited on it"
        );
    }

    #[test]
    fn no_verdict_without_a_program_or_its_phases() {
        let ours = report("spanprof", "fast", false, vec![record(1.0, 1.0, 1.0, 0.0)]);
        assert_eq!(subject_comparison(std::slice::from_ref(&ours)), None);
        let mut unmeasured = record(1.0, 1.0, 1.0, 0.0);
        unmeasured.subject_mut().tail_ms = None;
        let subject = report("c", "the command", true, vec![unmeasured]);
        assert_eq!(subject_comparison(&[subject, ours]), None);
    }
}
