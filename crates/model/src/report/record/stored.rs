//! A record as reports keep it: flat, under the names (and in the order) reports have always
//! written, with the older spellings read too. Written from a borrowed view of the typed record
//! and read into it, so the typed record is the only one code builds.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::kind::SessionKind;
use crate::part::ColdStep;
use crate::report::outcome::{Outcome, Status};
use crate::report::timeline::Timeline;
use crate::report::transaction::{Attempt, TransactionRecord};

use super::{
    Answer, Check, ColdSteps, GoogleFigures, IterationRecord, QueryTimings, RequestIds,
    SubjectTimings,
};

/// The stored form. Strings, the attempts' times and the timeline are borrowed when written and
/// owned when read.
#[derive(Serialize, Deserialize)]
struct Stored<'a> {
    run: Cow<'a, str>,
    iteration: u32,
    warmup: bool,
    status: Status,
    started_at: Cow<'a, str>,
    total_ms: f64,
    ttfb_ms: Option<f64>,
    #[serde(rename = "stream_wait_ms", alias = "network_ms")]
    stream_wait_ms: Option<f64>,
    #[serde(rename = "server_elapsed_ms", alias = "server_ms")]
    server_elapsed_ms: Option<f64>,
    server_cpu_ms: Option<f64>,
    gfe_ms: Option<f64>,
    afe_ms: Option<f64>,
    #[serde(rename = "wire_decode_wall_ms", alias = "wire_decode_ms")]
    wire_decode_wall_ms: Option<f64>,
    #[serde(rename = "row_decode_wall_ms", alias = "row_decode_ms")]
    row_decode_wall_ms: Option<f64>,
    #[serde(rename = "outside_wait_and_decode_ms", alias = "other_ms")]
    outside_wait_and_decode_ms: Option<f64>,
    rows: u64,
    server_rows: Option<u64>,
    messages: u64,
    chunked_values: u64,
    wire_bytes: u64,
    resumes: u32,
    error: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    seq: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    startup_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_byte_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transfer_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blocked_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tail_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    check: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wire_decode_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    row_decode_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    descheduled_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_id: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace_id: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    operation_ms: Option<f64>,
    /// The RPC attempts of the query call (Google's attempt count), written as `rpc_attempts`;
    /// older reports wrote it as a number under `attempts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rpc_attempts: Option<u32>,
    /// A read-write transaction's attempts (a list), or an older report's RPC attempt count (a
    /// number).
    #[serde(default, skip_serializing_if = "Attempts::is_none")]
    attempts: Attempts<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    commit_timestamp: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mutation_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    transaction_tag: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "<[f64]>::is_empty")]
    attempt_ms: Cow<'a, [f64]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeline: Option<Cow<'a, Timeline>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    dns_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tcp_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tls_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http2_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    token_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_ms: Option<f64>,
    #[serde(
        default,
        with = "crate::kind::session_text",
        skip_serializing_if = "Option::is_none"
    )]
    session_kind: Option<SessionKind>,
    #[serde(
        default,
        rename = "client_work_wall_ms",
        alias = "client_work_ms",
        skip_serializing_if = "Option::is_none"
    )]
    client_work_wall_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_work_cpu_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backoff_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partition_query_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error_code: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_client_wait_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_queue_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_lock_wait_ms: Option<f64>,
}

/// What `attempts` holds: nothing, a transaction's attempts, or (older reports) a query call's RPC
/// attempt count.
#[derive(Serialize, Deserialize, Default)]
#[serde(untagged)]
enum Attempts<'a> {
    #[default]
    None,
    Count(u32),
    Transaction(Cow<'a, [Attempt]>),
}

impl Attempts<'_> {
    fn is_none(&self) -> bool {
        matches!(self, Attempts::None)
    }
}

fn borrowed(text: &Option<String>) -> Option<Cow<'_, str>> {
    text.as_deref().map(Cow::Borrowed)
}

impl<'a> From<&'a IterationRecord> for Stored<'a> {
    fn from(r: &'a IterationRecord) -> Self {
        let (q, a, g) = (&r.query, &r.answer, &r.google);
        let s = r.subject.unwrap_or_default();
        let cold = |step: ColdStep| r.cold.map(|c| c.ms(step));
        Stored {
            run: Cow::Borrowed(&r.run),
            iteration: r.iteration,
            warmup: r.warmup,
            status: r.status(),
            started_at: Cow::Borrowed(&r.started_at),
            total_ms: r.total_ms,
            ttfb_ms: q.ttfb_ms,
            stream_wait_ms: q.stream_wait_ms,
            server_elapsed_ms: q.server_elapsed_ms,
            server_cpu_ms: q.server_cpu_ms,
            gfe_ms: g.gfe_ms,
            afe_ms: g.afe_ms,
            wire_decode_wall_ms: q.wire_decode_wall_ms,
            row_decode_wall_ms: q.row_decode_wall_ms,
            outside_wait_and_decode_ms: q.outside_wait_and_decode_ms,
            rows: a.rows,
            server_rows: a.server_rows,
            messages: a.messages,
            chunked_values: a.chunked_values,
            wire_bytes: a.wire_bytes,
            resumes: a.resumes,
            error: r.error().map(Cow::Borrowed),
            seq: r.seq,
            startup_ms: s.startup_ms,
            first_byte_ms: s.first_byte_ms,
            transfer_ms: s.transfer_ms,
            blocked_ms: s.blocked_ms,
            tail_ms: s.tail_ms,
            check: s.check.map(|c| Cow::Borrowed(c.as_str())),
            wire_decode_cpu_ms: q.wire_decode_cpu_ms,
            row_decode_cpu_ms: q.row_decode_cpu_ms,
            descheduled_ms: q.descheduled_ms,
            request_id: borrowed(&r.ids.request_id),
            trace_id: borrowed(&r.ids.trace_id),
            operation_ms: g.operation_ms,
            rpc_attempts: g.attempts,
            attempts: r.transaction.as_ref().map_or(Attempts::None, |t| {
                Attempts::Transaction(Cow::Borrowed(&t.attempts))
            }),
            commit_timestamp: r
                .transaction
                .as_ref()
                .and_then(|t| t.commit_timestamp.as_deref())
                .map(Cow::Borrowed),
            mutation_count: r.transaction.as_ref().and_then(|t| t.mutation_count),
            transaction_tag: r
                .transaction
                .as_ref()
                .and_then(|t| t.tag.as_deref())
                .map(Cow::Borrowed),
            attempt_ms: Cow::Borrowed(&g.attempt_ms),
            timeline: r.timeline.as_ref().map(Cow::Borrowed),
            dns_ms: cold(ColdStep::Dns),
            tcp_ms: cold(ColdStep::Tcp),
            tls_ms: cold(ColdStep::Tls),
            http2_ms: cold(ColdStep::Http2),
            token_ms: cold(ColdStep::Token),
            session_ms: cold(ColdStep::Session),
            session_kind: r.session_kind,
            client_work_wall_ms: q.client_work_wall_ms,
            client_work_cpu_ms: q.client_work_cpu_ms,
            backoff_ms: q.backoff_ms,
            partition_query_ms: q.partition_query_ms,
            error_code: r.outcome.code().map(|c| Cow::Borrowed(c.as_str())),
            server_client_wait_ms: q.server_client_wait_ms,
            server_queue_ms: q.server_queue_ms,
            server_lock_wait_ms: q.server_lock_wait_ms,
        }
    }
}

impl From<Stored<'_>> for IterationRecord {
    fn from(s: Stored<'_>) -> Self {
        let steps = [
            s.dns_ms,
            s.tcp_ms,
            s.tls_ms,
            s.http2_ms,
            s.token_ms,
            s.session_ms,
        ];
        // A cold start wrote all six steps; a step missing beside the others took no time.
        let cold = steps
            .iter()
            .any(Option::is_some)
            .then(|| ColdSteps::new(steps.map(|ms| ms.unwrap_or(0.0))));
        let subject = SubjectTimings {
            startup_ms: s.startup_ms,
            first_byte_ms: s.first_byte_ms,
            transfer_ms: s.transfer_ms,
            blocked_ms: s.blocked_ms,
            tail_ms: s.tail_ms,
            check: s.check.as_deref().and_then(Check::parse),
        };
        let (rpc_attempts, transaction) = match s.attempts {
            Attempts::None => (s.rpc_attempts, None),
            Attempts::Count(n) => (s.rpc_attempts.or(Some(n)), None),
            Attempts::Transaction(attempts) => (
                s.rpc_attempts,
                Some(TransactionRecord {
                    attempts: attempts.into_owned(),
                    commit_timestamp: s.commit_timestamp.map(Cow::into_owned),
                    mutation_count: s.mutation_count,
                    tag: s.transaction_tag.map(Cow::into_owned),
                }),
            ),
        };
        IterationRecord {
            transaction,
            outcome: Outcome::from_stored(
                s.status,
                s.error.map(Cow::into_owned),
                s.error_code.as_deref(),
            ),
            run: s.run.into_owned(),
            iteration: s.iteration,
            warmup: s.warmup,
            seq: s.seq,
            started_at: s.started_at.into_owned(),
            total_ms: s.total_ms,
            session_kind: s.session_kind,
            answer: Answer {
                rows: s.rows,
                server_rows: s.server_rows,
                messages: s.messages,
                chunked_values: s.chunked_values,
                wire_bytes: s.wire_bytes,
                resumes: s.resumes,
            },
            query: QueryTimings {
                ttfb_ms: s.ttfb_ms,
                stream_wait_ms: s.stream_wait_ms,
                server_elapsed_ms: s.server_elapsed_ms,
                server_cpu_ms: s.server_cpu_ms,
                server_client_wait_ms: s.server_client_wait_ms,
                server_queue_ms: s.server_queue_ms,
                server_lock_wait_ms: s.server_lock_wait_ms,
                wire_decode_wall_ms: s.wire_decode_wall_ms,
                wire_decode_cpu_ms: s.wire_decode_cpu_ms,
                row_decode_wall_ms: s.row_decode_wall_ms,
                row_decode_cpu_ms: s.row_decode_cpu_ms,
                client_work_wall_ms: s.client_work_wall_ms,
                client_work_cpu_ms: s.client_work_cpu_ms,
                descheduled_ms: s.descheduled_ms,
                outside_wait_and_decode_ms: s.outside_wait_and_decode_ms,
                backoff_ms: s.backoff_ms,
                partition_query_ms: s.partition_query_ms,
            },
            google: GoogleFigures {
                gfe_ms: s.gfe_ms,
                afe_ms: s.afe_ms,
                operation_ms: s.operation_ms,
                attempts: rpc_attempts,
                attempt_ms: s.attempt_ms.into_owned(),
            },
            ids: RequestIds {
                request_id: s.request_id.map(Cow::into_owned),
                trace_id: s.trace_id.map(Cow::into_owned),
            },
            cold,
            subject: (subject != SubjectTimings::default()).then_some(subject),
            timeline: s.timeline.map(Cow::into_owned),
        }
    }
}

impl Serialize for IterationRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Stored::from(self).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for IterationRecord {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Stored::deserialize(deserializer).map(IterationRecord::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full() -> IterationRecord {
        let mut r = IterationRecord::new("r", 3, false, "2026-01-02T03:04:05Z");
        r.seq = Some(7);
        r.total_ms = 12.5;
        r.outcome = Outcome::failed(
            "Table not found",
            Some(crate::report::outcome::Code::NotFound),
        );
        r.session_kind = Some(SessionKind::Multiplexed);
        r.answer.rows = 4;
        r.answer.server_rows = Some(4);
        r.query.stream_wait_ms = Some(6.0);
        r.query.client_work_wall_ms = Some(0.5);
        r.google.attempt_ms = vec![1.0, 2.0];
        r.ids.request_id = Some("1.2.3.4.5.1".into());
        r.cold = Some(ColdSteps::new([1.0, 2.0, 0.0, 3.0, 0.0, 4.0]));
        r.subject = Some(SubjectTimings {
            startup_ms: Some(9.0),
            check: Some(Check::Count),
            ..SubjectTimings::default()
        });
        r
    }

    #[test]
    fn a_record_reads_back_as_written() -> Result<(), serde_json::Error> {
        for record in [full(), IterationRecord::new("plain", 0, true, "t")] {
            let json = serde_json::to_string(&record)?;
            assert_eq!(
                serde_json::from_str::<IterationRecord>(&json)?,
                record,
                "{json}"
            );
        }
        Ok(())
    }

    #[test]
    fn the_stored_names_are_the_ones_reports_always_wrote() -> Result<(), serde_json::Error> {
        let json = serde_json::to_string(&full())?;
        for name in [
            "\"status\":\"error\"",
            "\"error\":\"Table not found\"",
            "\"error_code\":\"NotFound\"",
            "\"stream_wait_ms\":6.0",
            "\"client_work_wall_ms\":0.5",
            "\"dns_ms\":1.0",
            "\"session_ms\":4.0",
            "\"session_kind\":\"multiplexed\"",
            "\"check\":\"count\"",
            "\"startup_ms\":9.0",
        ] {
            assert!(json.contains(name), "{name} in {json}");
        }
        Ok(())
    }

    #[test]
    fn a_transaction_s_attempts_round_trip_and_an_older_report_s_attempt_count_reads_back()
    -> Result<(), serde_json::Error> {
        use crate::report::{ActionKind, Attempt, AttemptOutcome, TransactionRecord};
        let mut r = full();
        r.google.attempts = Some(3);
        let mut aborted = Attempt::new(AttemptOutcome::Aborted);
        aborted.ended_at = Some(ActionKind::Commit);
        aborted.retry_delay_ms = Some(20.0);
        aborted.retry_info_from = Some("details".into());
        aborted.backoff_ms = Some(20.2);
        r.transaction = Some(TransactionRecord {
            attempts: vec![aborted, Attempt::new(AttemptOutcome::Committed)],
            commit_timestamp: Some("2026-12-05T00:00:00.000001Z".into()),
            mutation_count: Some(4),
            tag: Some("transfer".into()),
        });
        let text = serde_json::to_string(&r)?;
        assert!(text.contains("\"rpc_attempts\":3"), "{text}");
        assert!(
            text.contains("\"attempts\":[{\"outcome\":\"aborted\""),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<IterationRecord>(&text)?, r);
        // A report written before transactions kept the RPC attempt count under `attempts`.
        r.transaction = None;
        let older = serde_json::to_string(&r)?.replace("\"rpc_attempts\":", "\"attempts\":");
        let read: IterationRecord = serde_json::from_str(&older)?;
        assert_eq!(read.google.attempts, Some(3), "{older}");
        assert!(read.transaction.is_none());
        Ok(())
    }

    #[test]
    fn an_older_report_reads_under_its_old_names() -> Result<(), serde_json::Error> {
        let old = r#"{"run":"r","iteration":0,"warmup":false,"status":"cancelled","started_at":"t",
            "total_ms":2.0,"ttfb_ms":null,"network_ms":1.5,"server_ms":0.5,"server_cpu_ms":null,
            "gfe_ms":null,"afe_ms":null,"wire_decode_ms":0.1,"row_decode_ms":0.2,"other_ms":0.3,
            "rows":1,"server_rows":null,"messages":1,"chunked_values":0,"wire_bytes":10,
            "resumes":0,"error":"cancelled","client_work_ms":0.05}"#;
        let r: IterationRecord = serde_json::from_str(old)?;
        assert_eq!(r.outcome, Outcome::cancelled());
        assert_eq!(r.query.stream_wait_ms, Some(1.5));
        assert_eq!(r.query.server_elapsed_ms, Some(0.5));
        assert_eq!(r.query.outside_wait_and_decode_ms, Some(0.3));
        assert_eq!(r.query.client_work_wall_ms, Some(0.05));
        assert_eq!((r.cold, r.subject), (None, None));
        Ok(())
    }
}
