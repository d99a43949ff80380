//! Where a query thread's rows go: batches of encoded values (unary ExecuteSql), or finished
//! PartialResultSets cut on the thread (streaming), sent over the bounded channel to the service;
//! and what the thread reports on that channel ([`QueryEvent`]).

use std::sync::Arc;

use prost::bytes::Bytes;
use tokio::sync::mpsc;
use tonic::Status;

use super::budget::SendBudget;
use super::builder::{self, MessageBuilder, TokenStamp};
use crate::proto::google::spanner::v1 as pb;
use crate::server::encoded::EncodedValues;
use crate::server::result_stats::QueryTotals;
use crate::wire::Field;

/// How the query thread hands its rows over.
#[derive(Debug, Clone, Default)]
pub enum Output {
    /// Batches of encoded values ([`QueryEvent::Rows`]), for a caller that builds a ResultSet.
    #[default]
    Values,
    /// Finished PartialResultSets ([`QueryEvent::Messages`]), cut on this thread by a builder made
    /// from the columns, this transaction and this token stamp, so that the stream task only sends
    /// them. The builder is handed back ([`QueryEvent::Built`]) before [`QueryEvent::Done`], for the
    /// stream to close with the statistics.
    Messages {
        /// The transaction the metadata names.
        transaction: Option<pb::Transaction>,
        /// What every resume token carries.
        stamp: TokenStamp,
        /// How far the query may run ahead of its client.
        budget: Arc<SendBudget>,
    },
}

impl Output {
    /// The stream's budget, when it has one.
    pub fn budget(&self) -> Option<&Arc<SendBudget>> {
        match self {
            Output::Values => None,
            Output::Messages { budget, .. } => Some(budget),
        }
    }
}

/// What the query thread reports, in this order: columns, rows in batches, totals.
#[derive(Debug)]
pub enum QueryEvent {
    /// The result's columns.
    Columns(Vec<Field>),
    /// The values of whole rows, row after row, each encoded as a `google.protobuf.Value`
    /// ([`Output::Values`]).
    Rows(EncodedValues),
    /// Finished PartialResultSets, in order ([`Output::Messages`]).
    Messages(Vec<Bytes>),
    /// The message builder, holding the last message, once every row is in ([`Output::Messages`]).
    Built(Box<MessageBuilder>),
    /// The query finished.
    Done(QueryTotals),
}

/// Where the query thread reports.
pub type Events = mpsc::Sender<Result<QueryEvent, Status>>;

/// Rows per batch sent to the stream.
pub const BATCH_ROWS: usize = 128;
/// The receiver went away: stop quietly.
pub struct Gone;

/// Where the rows go: batches of values sent `BATCH_ROWS` rows at a time, or messages sent as soon
/// as the builder has finished one.
pub enum Sink<'a> {
    Values {
        events: &'a Events,
        width: usize,
        batch: EncodedValues,
        rows: usize,
    },
    Messages {
        events: &'a Events,
        budget: Arc<SendBudget>,
        builder: MessageBuilder,
        /// Where a value is encoded before the builder copies it in.
        scratch: Vec<u8>,
    },
}

impl<'a> Sink<'a> {
    pub fn new(events: &'a Events, output: &Output, columns: &[Field]) -> Self {
        match output {
            Output::Values => Sink::Values {
                events,
                width: columns.len(),
                batch: Self::empty(columns.len()),
                rows: 0,
            },
            Output::Messages {
                transaction,
                stamp,
                budget,
            } => Sink::Messages {
                events,
                budget: Arc::clone(budget),
                builder: message_builder(columns, transaction, *stamp),
                scratch: Vec::new(),
            },
        }
    }

    fn empty(width: usize) -> EncodedValues {
        EncodedValues::with_capacity(BATCH_ROWS * width, BATCH_ROWS * 1024)
    }

    /// Appends a value already encoded (the body of a `google.protobuf.Value`).
    #[inline]
    pub fn push_encoded(&mut self, body: &[u8]) {
        match self {
            Sink::Values { batch, .. } => batch.push_encoded(body),
            Sink::Messages { builder, .. } => builder.push_encoded(body),
        }
    }

    /// Appends a value `encode` writes.
    #[inline]
    pub fn push_with<E>(
        &mut self,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Sink::Values { batch, .. } => batch.push_with(encode),
            Sink::Messages {
                builder, scratch, ..
            } => {
                scratch.clear();
                encode(scratch)?;
                builder.push_encoded(scratch);
                Ok(())
            }
        }
    }

    /// A row is complete: sends a full batch, or the messages it finished.
    pub fn end_row(&mut self) -> Result<(), Gone> {
        match self {
            Sink::Values {
                events,
                width,
                batch,
                rows,
            } => {
                *rows += 1;
                if *rows >= BATCH_ROWS {
                    let full = std::mem::replace(batch, Self::empty(*width));
                    send(events, QueryEvent::Rows(full))?;
                    *rows = 0;
                }
                Ok(())
            }
            Sink::Messages {
                events,
                builder,
                budget,
                ..
            } => {
                builder.end_row();
                send_ready(events, builder, budget)
            }
        }
    }

    /// Sends what is left: the last values, or the finished messages and then the builder.
    pub fn finish(self) -> Result<(), Gone> {
        match self {
            Sink::Values { events, batch, .. } if !batch.is_empty() => {
                send(events, QueryEvent::Rows(batch))
            }
            Sink::Values { .. } => Ok(()),
            Sink::Messages {
                events,
                mut builder,
                budget,
                ..
            } => {
                send_ready(events, &mut builder, &budget)?;
                send(events, QueryEvent::Built(Box::new(builder)))
            }
        }
    }
}

/// The builder of a stream of `columns` read in `transaction`.
fn message_builder(
    columns: &[Field],
    transaction: &Option<pb::Transaction>,
    stamp: TokenStamp,
) -> MessageBuilder {
    MessageBuilder::new(builder::metadata(columns, transaction.clone()), stamp)
}

/// Sends the messages `builder` has finished, if any, once they fit in the stream's budget.
fn send_ready(
    events: &Events,
    builder: &mut MessageBuilder,
    budget: &SendBudget,
) -> Result<(), Gone> {
    let ready: Vec<Bytes> = std::iter::from_fn(|| builder.pop()).collect();
    if ready.is_empty() {
        return Ok(());
    }
    budget
        .acquire(ready.iter().map(Bytes::len).sum())
        .map_err(|_| Gone)?;
    // A full channel means the stream is not taking messages: wait without a slot.
    match events.try_send(Ok(QueryEvent::Messages(ready))) {
        Ok(()) => Ok(()),
        Err(mpsc::error::TrySendError::Full(event)) => budget
            .paused(|| events.blocking_send(event).is_ok())
            .then_some(())
            .ok_or(Gone),
        Err(mpsc::error::TrySendError::Closed(_)) => Err(Gone),
    }
}

/// Sends one event; the receiver is gone if it fails.
pub fn send(events: &Events, event: QueryEvent) -> Result<(), Gone> {
    events.blocking_send(Ok(event)).map_err(|_| Gone)
}
