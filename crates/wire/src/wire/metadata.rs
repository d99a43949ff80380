//! The columns a stream declares: taken from the first message's metadata, checked against later ones.
//! Shared by both decoders so that they accept and reject exactly the same metadata.

use std::sync::Arc;

use super::error::{ColumnRef, DecodeErrorKind};
use super::types::{Field, Type, fields_from_wire};
use super::value::Timestamp;
use crate::proto::google::spanner::v1 as pb;

/// What the first message's metadata declared.
#[derive(Debug, Default)]
pub(super) struct Header {
    columns: Option<Arc<[Field]>>,
    /// The row type exactly as the first message sent it, to compare later metadata against.
    wire_row_type: Option<pb::StructType>,
    read_timestamp: Option<prost_types::Timestamp>,
    /// The id of the transaction the request began (an inline begin), when the metadata named one.
    transaction_id: Option<Vec<u8>>,
}

impl Header {
    /// Takes the metadata of the next message: the first must declare the row type; later ones may
    /// repeat it or send an empty one, never change it.
    pub(super) fn take(
        &mut self,
        metadata: Option<&pb::ResultSetMetadata>,
    ) -> Result<(), (DecodeErrorKind, Option<ColumnRef>)> {
        let row_type = metadata.and_then(|m| m.row_type.as_ref());
        match (&self.wire_row_type, row_type) {
            (None, Some(row_type)) => {
                let fields = fields_from_wire(row_type).map_err(|(column, e)| {
                    let name = row_type.fields[column].name.clone();
                    (
                        DecodeErrorKind::from(e),
                        Some(ColumnRef {
                            index: column,
                            name,
                        }),
                    )
                })?;
                self.columns = Some(fields.into());
                self.wire_row_type = Some(row_type.clone());
                let transaction = metadata.and_then(|m| m.transaction.as_ref());
                self.read_timestamp = transaction.and_then(|t| t.read_timestamp);
                self.transaction_id = transaction
                    .map(|t| t.id.clone())
                    .filter(|id| !id.is_empty());
            }
            (None, None) => return Err((DecodeErrorKind::NoMetadata, None)),
            // A repeat of the first row type, or an empty one, declares nothing new.
            (Some(first), Some(later)) if later != first && !later.fields.is_empty() => {
                let kind = DecodeErrorKind::MetadataChanged {
                    before: describe_columns(first),
                    after: describe_columns(later),
                };
                return Err((kind, None));
            }
            (Some(_), _) => {}
        }
        Ok(())
    }

    /// Whether a stream of `messages` messages ended cleanly: columns declared, no value left chunked
    /// (`pending`: the chunked value's column), no row begun and not completed (`partial_row` values).
    pub(super) fn check_end(
        &self,
        messages: u64,
        pending: Option<usize>,
        partial_row: usize,
    ) -> Result<(), (DecodeErrorKind, Option<ColumnRef>)> {
        let columns = match (&self.columns, messages) {
            (Some(columns), _) => columns,
            (None, 0) => return Err((DecodeErrorKind::NoMessages, None)),
            (None, _) => return Err((DecodeErrorKind::NoMetadata, None)),
        };
        if let Some(column) = pending {
            let column = ColumnRef::of(columns, column);
            return Err((DecodeErrorKind::EndedInChunk, Some(column)));
        }
        if partial_row > 0 {
            let kind = DecodeErrorKind::EndedMidRow {
                have: partial_row,
                want: columns.len(),
            };
            return Err((kind, Some(ColumnRef::of(columns, partial_row))));
        }
        Ok(())
    }

    /// The columns, once the first message has arrived.
    pub(super) fn columns(&self) -> Option<&Arc<[Field]>> {
        self.columns.as_ref()
    }

    /// The id of the transaction the request began, when the first metadata named one.
    pub(super) fn transaction_id(&self) -> Option<&[u8]> {
        self.transaction_id.as_deref()
    }

    /// The read timestamp of the transaction, when the metadata carried a valid one.
    pub(super) fn read_timestamp(&self) -> Option<Timestamp> {
        let t = self.read_timestamp.as_ref()?;
        Timestamp::new(t.seconds, u32::try_from(t.nanos).ok()?)
    }
}

fn describe_columns(row_type: &pb::StructType) -> String {
    match fields_from_wire(row_type) {
        Ok(fields) => Type::Struct(fields).to_string(),
        Err(_) => format!("{} columns", row_type.fields.len()),
    }
}
