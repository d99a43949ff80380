//! An iteration in words: what a reader should notice about a run's iterations (the slow first
//! one, the outliers), its failures grouped by error, and the hover text of one iteration's bar,
//! each figure written as every other view writes it.

use crate::analysis;
use crate::report::{IterationRecord, Status};
use crate::text::{bytes, count, ms};

/// Something a reader should notice about an iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    /// The iteration's number.
    pub iteration: u32,
    /// What about it, in words.
    pub text: String,
}

/// The slow first iteration (in run order, warm-ups included) and the outlying timed iterations
/// (MAD rule on the total), as [`analysis::findings`] found them.
pub fn flags(records: &[IterationRecord]) -> Vec<Flag> {
    let found = analysis::findings(records);
    let slow = found.slow_start().map(|first| {
        let warmup = records
            .iter()
            .any(|r| r.iteration == first.iteration && r.warmup);
        // A warm-up is there to take the cold start: said so, not as if it were in the figures.
        let kept_out = if warmup {
            " (a warm-up: kept out of the figures)"
        } else {
            ""
        };
        Flag {
            iteration: first.iteration,
            text: format!(
                "#{} is a slow cold start: {}, {:.1}× the median of the rest{kept_out}",
                first.iteration,
                ms(first.total_ms),
                first.ratio
            ),
        }
    });
    let outliers = found.outliers.iter().map(|o| Flag {
        iteration: o.iteration,
        text: format!("#{} is an outlier: {}", o.iteration, ms(o.total_ms)),
    });
    slow.into_iter().chain(outliers).collect()
}

/// The failed iterations in words, one line per distinct error (the same error eleven times is
/// one line naming the iterations, not eleven lines).
pub fn failures(records: &[IterationRecord]) -> Vec<String> {
    let mut by_error: Vec<(&str, Vec<u32>)> = Vec::new();
    for r in records.iter().filter(|r| r.status() == Status::Error) {
        let error = r.error().unwrap_or("unknown error");
        match by_error.iter_mut().find(|(e, _)| *e == error) {
            Some((_, numbers)) => numbers.push(r.iteration),
            None => by_error.push((error, vec![r.iteration])),
        }
    }
    by_error
        .into_iter()
        .map(|(error, numbers)| {
            let mut named: Vec<String> = numbers.iter().take(4).map(|n| format!("#{n}")).collect();
            if numbers.len() > 4 {
                named.push(format!("{} more", numbers.len() - 4));
            }
            let verb = if numbers.len() == 1 {
                "failed"
            } else {
                "failed alike"
            };
            format!("{} {verb}: {error}", named.join(", "))
        })
        .collect()
}

/// The hover text of an iteration's bar: its total, its parts, the overlap beside them and what
/// the server reported, each written as every other view writes it.
pub fn tooltip(r: &IterationRecord) -> String {
    let a = r.accounting();
    // An iteration that ended ok: the total its parts add up to (to the microsecond), as the
    // summary and Compare sum it.
    let total = if r.status() == Status::Ok {
        a.parts.sum_ms()
    } else {
        r.total_ms
    };
    let mut text = format!(
        "#{}{} · {}\ntotal {}",
        r.iteration,
        if r.warmup { " (warm-up)" } else { "" },
        r.status().as_str(),
        ms(total)
    );
    if r.status() == Status::Ok {
        for (part, value) in a.parts.iter() {
            text.push_str(&format!("\n{} {}", part.label(), ms(value)));
        }
    }
    if let Some(overlap) = a.overlap_ms.filter(|o| *o > 0.0) {
        text.push_str(&format!(
            "\noverlap {} (the server working beside the client's decode: not added)",
            ms(overlap)
        ));
    }
    if let Some(elapsed) = r.query.server_elapsed_ms {
        text.push_str(&format!("\nthe server reports {} elapsed", ms(elapsed)));
        if let Some(wait) = r.query.server_client_wait_ms {
            text.push_str(&format!(", {} of it waiting on the client", ms(wait)));
        }
    }
    if let Some(ttfb) = r.query.ttfb_ms {
        text.push_str(&format!("\nfirst byte after {}", ms(ttfb)));
    }
    if r.status() == Status::Cancelled {
        // Stopped while it streamed: what had arrived by then (the run's last progress report,
        // so at least that many), not the counts of an answer it never finished.
        text.push_str(&format!(
            "\nstopped after {}: at least {} rows ({}) had arrived",
            ms(r.total_ms),
            count(r.answer.rows),
            bytes(r.answer.wire_bytes)
        ));
        return text;
    }
    text.push_str(&format!(
        "\n{} rows · {} messages · {}",
        count(r.answer.rows),
        count(r.answer.messages),
        bytes(r.answer.wire_bytes)
    ));
    if r.answer.resumes > 0 {
        text.push_str(&format!("\n{} resumes", r.answer.resumes));
    }
    if let Some(e) = r.error() {
        text.push_str(&format!("\n{e}"));
    }
    text
}
