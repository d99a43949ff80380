//! The official clients' optional headers on the command line: `--no-afe-timing` and
//! `--end-to-end-tracing`, read into the client's [`HeaderOptions`].

use std::fmt::Write as _;

use crate::client::HeaderOptions;
use crate::report::{RunReport, printable};

/// What every call says besides the query.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct HeaderArgs {
    /// Leave out `x-goog-spanner-enable-afe-server-timing: true` (sent on every call by default,
    /// as the official clients do): Cloud Spanner's API front end then reports no `afe` time.
    #[arg(long)]
    pub no_afe_timing: bool,
    /// Send `x-goog-spanner-end-to-end-tracing: true` and a W3C `traceparent` on every query, a
    /// new trace per iteration: Cloud Trace shows Spanner's own spans under the trace id (the
    /// `trace_id` column; each is printed after the summary).
    #[arg(long)]
    pub end_to_end_tracing: bool,
}

impl HeaderArgs {
    /// The headers these arguments ask for.
    pub fn options(&self) -> HeaderOptions {
        HeaderOptions {
            afe_timing: !self.no_afe_timing,
            end_to_end_tracing: self.end_to_end_tracing,
        }
    }
}

/// Each traced iteration's trace id (and request id), for finding the server's spans in Cloud
/// Trace; empty when no iteration of `report` was traced.
pub fn traces(report: &RunReport) -> String {
    let traced: Vec<_> = report
        .iterations
        .iter()
        .filter_map(|r| Some((r, r.ids.trace_id.as_deref()?)))
        .collect();
    if traced.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nEnd-to-end traces (Cloud Trace, by trace id):\n");
    for (record, trace) in traced {
        let warmup = if record.warmup { " (warm-up)" } else { "" };
        let request = record
            .ids
            .request_id
            .as_deref()
            .map(|id| format!(", request {}", printable(id)))
            .unwrap_or_default();
        // Writing to a String cannot fail.
        let _ = writeln!(
            out,
            "  iteration {}{warmup}: trace {}{request}",
            record.iteration,
            printable(trace)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_afe_opt_in_is_on_unless_told_otherwise() {
        assert_eq!(HeaderArgs::default().options(), HeaderOptions::default());
        let off = HeaderArgs {
            no_afe_timing: true,
            end_to_end_tracing: true,
        };
        assert_eq!(
            off.options(),
            HeaderOptions {
                afe_timing: false,
                end_to_end_tracing: true
            }
        );
    }

    #[test]
    fn traced_iterations_are_listed_with_their_request_ids() {
        let mut report = RunReport::with_totals("run", &[1.0, 2.0]);
        assert_eq!(traces(&report), "");
        report.iterations[1] = {
            let mut r = report.iterations[1].clone();
            r.ids.trace_id = Some("4bf92f3577b34da6a3ce929d0e0e4736".into());
            r.ids.request_id = Some("1.0123456789abcdef.1.1.3.1".into());
            r
        };
        assert_eq!(
            traces(&report),
            "\nEnd-to-end traces (Cloud Trace, by trace id):\n  iteration 1: trace \
             4bf92f3577b34da6a3ce929d0e0e4736, request 1.0123456789abcdef.1.1.3.1\n"
        );
    }
}
