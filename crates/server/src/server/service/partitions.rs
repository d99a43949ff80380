//! PartitionQuery: the call that splits a query into key ranges (planned by the SQLite room's
//! `partition.rs`), the partition tokens that carry a range to each partition's
//! ExecuteStreamingSql, and the check of a token when a partition is read. Tokens are
//! authenticated like resume tokens (`stream/token.rs`): one fixed length, an HMAC tag under the
//! process's key, checked before any field is used.

use std::sync::Arc;

use ring::hmac;
use tonic::{Request, Response, Status};

use super::request::{params, query_key};
use super::{LocalSpanner, caller};
use crate::demo;
use crate::proto::google::spanner::v1 as pb;
use crate::server::knobs::KnobSettings;
use crate::server::sqlite::db::KeyRange;
use crate::server::sqlite::partition;
use crate::server::stream::token;

pub(super) async fn partition_query(
    spanner: &LocalSpanner,
    request: Request<pb::PartitionQueryRequest>,
) -> Result<Response<pb::PartitionResponse>, Status> {
    use pb::transaction_selector::Selector;
    let via = caller(&request);
    let r = request.into_inner();
    let knobs = spanner.knobs.get();
    if r.sql.len() as u64 > knobs.max_sql_bytes {
        return Err(Status::invalid_argument(format!(
            "the SQL text is {} bytes, more than the {} allowed (max_sql_bytes)",
            r.sql.len(),
            knobs.max_sql_bytes
        )));
    }
    spanner.sessions.touch(&r.session, via.as_ref(), &knobs)?;
    let transaction = match r.transaction.as_ref().and_then(|t| t.selector.as_ref()) {
        Some(Selector::Begin(options)) => {
            if !matches!(
                options.mode,
                Some(pb::transaction_options::Mode::ReadOnly(_))
            ) {
                return Err(Status::invalid_argument(
                    "PartitionQuery reads in a read-only transaction",
                ));
            }
            spanner.begin_read_only(&r.session, options, &knobs)?
        }
        Some(Selector::Id(id)) => {
            if !spanner
                .sessions
                .has_transaction(&r.session, id, false, &knobs)?
            {
                return Err(Status::not_found("Transaction not found"));
            }
            pb::Transaction {
                id: id.clone(),
                ..Default::default()
            }
        }
        Some(Selector::SingleUse(_)) | None => {
            return Err(Status::invalid_argument(
                "PartitionQuery needs a read-only transaction that outlives the call: begin one \
                 (TransactionSelector.begin) or name it (id), not a single-use one",
            ));
        }
    };
    let id: [u8; 8] = transaction
        .id
        .as_slice()
        .try_into()
        .map_err(|_| Status::not_found("Transaction not found"))?;
    let ranges = spanner.partitions(&r, &knobs).await?;
    let request_key = query_key(&r.sql, r.params.as_ref(), &r.param_types);
    let partitions = ranges
        .into_iter()
        .map(|range| pb::Partition {
            partition_token: PartitionToken {
                request_key,
                transaction: id,
                range,
            }
            .encode(),
        })
        .collect();
    Ok(Response::new(pb::PartitionResponse {
        partitions,
        transaction: Some(transaction),
    }))
}

impl LocalSpanner {
    /// The key range a request for one partition reads: its token checked (authentic, issued for
    /// this query and this transaction) before anything in it is used.
    pub(super) fn partition_of(
        &self,
        request: &pb::ExecuteSqlRequest,
    ) -> Result<Option<KeyRange>, Status> {
        use pb::transaction_selector::Selector;
        if request.partition_token.is_empty() {
            return Ok(None);
        }
        let token = PartitionToken::decode(&request.partition_token)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let selected = request
            .transaction
            .as_ref()
            .and_then(|t| t.selector.as_ref());
        if !matches!(selected, Some(Selector::Id(id)) if id.as_slice() == token.transaction) {
            return Err(Status::invalid_argument(
                "a partition is read in the transaction its PartitionQuery began: name it by id",
            ));
        }
        let request_key = query_key(&request.sql, request.params.as_ref(), &request.param_types);
        if token.request_key != request_key {
            return Err(Status::invalid_argument(
                "the partition token was issued for another query (its SQL or parameters differ)",
            ));
        }
        Ok(Some(token.range))
    }

    /// Splits a query into partitions: off the runtime, holding a query's slot while SQLite plans.
    async fn partitions(
        &self,
        request: &pb::PartitionQueryRequest,
        knobs: &KnobSettings,
    ) -> Result<Vec<KeyRange>, Status> {
        let max = match request.partition_options.as_ref().map(|o| o.max_partitions) {
            None | Some(0) => None,
            Some(n) if n < 0 => {
                return Err(Status::invalid_argument(format!(
                    "max_partitions must not be negative: {n}"
                )));
            }
            Some(n) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        };
        let slot = self
            .slots
            .take(knobs.max_concurrent_queries)
            .ok_or_else(|| {
                Status::resource_exhausted("the local instance is running its limit of queries")
            })?;
        let db = Arc::clone(&self.db);
        let sql = request.sql.clone();
        let params = params(request.params.as_ref(), &request.param_types)?;
        let limits = knobs.sql_limits();
        tokio::task::spawn_blocking(move || {
            let _slot = slot;
            partition::key_ranges(&db, &sql, &params, max, limits)
        })
        .await
        .map_err(|e| Status::internal(format!("the partition planner failed: {e}")))?
    }
}

/// What a partition token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionToken {
    /// The query's key (SQL, parameters and their types), so a token serves one query.
    pub request_key: u64,
    /// The read-only transaction the partitions read in.
    pub transaction: [u8; 8],
    /// The range it reads.
    pub range: KeyRange,
}

const MAGIC: &[u8; 4] = b"SPP1";
/// magic, request_key, transaction, table index, lo, hi.
const BODY_BYTES: usize = 4 + 8 + 8 + 1 + 8 + 8;
const TAG_BYTES: usize = 16;
/// The length of every partition token.
pub const PARTITION_TOKEN_BYTES: usize = BODY_BYTES + TAG_BYTES;

/// Why a partition token was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PartitionTokenError {
    /// Not a token this process issued (length, tag or contents).
    #[error("the partition token is not one this instance issued")]
    Forged,
}

impl PartitionToken {
    /// The token's bytes: its fields, then their tag.
    pub fn encode(&self) -> Vec<u8> {
        let table = demo::tables()
            .iter()
            .position(|t| t.name == self.range.table)
            .unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity(PARTITION_TOKEN_BYTES);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.request_key.to_be_bytes());
        out.extend_from_slice(&self.transaction);
        out.push(u8::try_from(table).unwrap_or(u8::MAX));
        out.extend_from_slice(&self.range.lo.to_be_bytes());
        out.extend_from_slice(&self.range.hi.to_be_bytes());
        let tag = hmac::sign(token::key(), &out);
        out.extend_from_slice(&tag.as_ref()[..TAG_BYTES]);
        out
    }

    /// Reads a token this process issued: length, then tag, then fields.
    pub fn decode(bytes: &[u8]) -> Result<Self, PartitionTokenError> {
        let forged = PartitionTokenError::Forged;
        let bytes: &[u8; PARTITION_TOKEN_BYTES] = bytes.try_into().map_err(|_| forged)?;
        let (body, tag) = bytes.split_at(BODY_BYTES);
        let want = hmac::sign(token::key(), body);
        if !token::same_bytes(&want.as_ref()[..TAG_BYTES], tag) {
            return Err(forged);
        }
        let rest = body.strip_prefix(MAGIC).ok_or(forged)?;
        let (request_key, rest) = rest.split_first_chunk::<8>().ok_or(forged)?;
        let (transaction, rest) = rest.split_first_chunk::<8>().ok_or(forged)?;
        let (table, rest) = rest.split_first().ok_or(forged)?;
        let (lo, rest) = rest.split_first_chunk::<8>().ok_or(forged)?;
        let hi: &[u8; 8] = rest.try_into().map_err(|_| forged)?;
        let table = demo::tables()
            .get(usize::from(*table))
            .map(|t| t.name)
            .ok_or(forged)?;
        let (lo, hi) = (i64::from_be_bytes(*lo), i64::from_be_bytes(*hi));
        if lo > hi {
            return Err(forged);
        }
        Ok(PartitionToken {
            request_key: u64::from_be_bytes(*request_key),
            transaction: *transaction,
            range: KeyRange { table, lo, hi },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> PartitionToken {
        PartitionToken {
            request_key: 42,
            transaction: [1, 2, 3, 4, 5, 6, 7, 8],
            range: KeyRange {
                table: "Singers",
                lo: 10,
                hi: 20,
            },
        }
    }

    #[test]
    fn partition_tokens_round_trip_and_every_bit_flip_is_refused() {
        let bytes = token().encode();
        assert_eq!(bytes.len(), PARTITION_TOKEN_BYTES);
        assert_eq!(PartitionToken::decode(&bytes), Ok(token()));
        for bit in 0..bytes.len() * 8 {
            let mut bad = bytes.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(PartitionToken::decode(&bad).is_err(), "bit {bit}");
        }
        assert!(PartitionToken::decode(&bytes[1..]).is_err());
        assert!(PartitionToken::decode(&[]).is_err());
    }
}
