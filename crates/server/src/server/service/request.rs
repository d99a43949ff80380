//! What makes a query request what it is: its parameters typed by their declared types, and its
//! keys (the same query, the same rows), stable across runs (FNV-1a, `crate::fnv`).

use std::collections::HashMap;

use tonic::Status;

use crate::proto::google::spanner::v1 as pb;
use crate::server::sqlite::columns::Param;
use crate::wire::Type;

/// Parameters converted by their declared types.
pub(super) fn params(
    params: Option<&prost_types::Struct>,
    types: &HashMap<String, pb::Type>,
) -> Result<HashMap<String, Param>, Status> {
    let Some(params) = params else {
        return Ok(HashMap::new());
    };
    params
        .fields
        .iter()
        .map(|(name, value)| {
            let ty = match types.get(name) {
                Some(t) => Some(
                    Type::try_from(t)
                        .map_err(|e| Status::invalid_argument(format!("parameter {name}: {e}")))?,
                ),
                None => None,
            };
            let param = Param::from_wire(ty.as_ref(), value.clone())
                .map_err(|e| Status::invalid_argument(format!("parameter {name}: {e}")))?;
            Ok((name.clone(), param))
        })
        .collect()
}

/// What makes two requests the same query: SQL, parameters and their types, and the mode.
pub(super) fn request_key(request: &pb::ExecuteSqlRequest) -> u64 {
    hash_key(
        &request.sql,
        request.params.as_ref(),
        &request.param_types,
        &request.query_mode.to_le_bytes(),
    )
}

/// What makes two requests ask the same rows: SQL, parameters and their types (a partition token
/// is issued by PartitionQuery, which has no mode).
pub(super) fn query_key(
    sql: &str,
    params: Option<&prost_types::Struct>,
    types: &HashMap<String, pb::Type>,
) -> u64 {
    hash_key(sql, params, types, b"rows")
}

fn hash_key(
    sql: &str,
    params: Option<&prost_types::Struct>,
    types: &HashMap<String, pb::Type>,
    extra: &[u8],
) -> u64 {
    use prost::Message as _;
    let mut params: Vec<(&String, Vec<u8>)> = params
        .iter()
        .flat_map(|p| p.fields.iter())
        .map(|(k, v)| (k, v.encode_to_vec()))
        .collect();
    params.sort();
    let mut types: Vec<(&String, Vec<u8>)> =
        types.iter().map(|(k, v)| (k, v.encode_to_vec())).collect();
    types.sort();
    let mut parts: Vec<&[u8]> = vec![sql.as_bytes(), extra];
    for (k, v) in params.iter().chain(&types) {
        parts.push(k.as_bytes());
        parts.push(v);
    }
    crate::fnv::of_parts(&parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_depend_on_sql_params_and_mode() {
        let base = pb::ExecuteSqlRequest {
            sql: "SELECT 1".into(),
            ..Default::default()
        };
        let other_sql = pb::ExecuteSqlRequest {
            sql: "SELECT 2".into(),
            ..base.clone()
        };
        let other_mode = pb::ExecuteSqlRequest {
            query_mode: 3,
            ..base.clone()
        };
        let resumed = pb::ExecuteSqlRequest {
            resume_token: vec![1, 2, 3],
            seqno: 9,
            ..base.clone()
        };
        let f = request_key;
        assert_ne!(f(&base), f(&other_sql));
        assert_ne!(f(&base), f(&other_mode));
        assert_eq!(
            f(&base),
            f(&resumed),
            "the token and seqno are not part of the query"
        );
    }
}
