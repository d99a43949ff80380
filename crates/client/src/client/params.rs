//! Query parameters given as text (`name:TYPE=value`), checked and converted to the wire.

use crate::proto::google::spanner::v1 as pb;
use crate::wire::{Type, Value, decode_value, encode_value};

/// One query parameter.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Param {
    /// Its name, without `@`.
    pub name: String,
    /// Its Spanner type name (INT64, STRING, FLOAT64, BOOL, DATE, TIMESTAMP, NUMERIC, BYTES, JSON).
    pub type_name: String,
    /// Its value as text (BYTES as base64).
    pub value: String,
}

/// Why a parameter cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// Not `name=value` or `name:TYPE=value`.
    #[error("parameter {0:?}: expected name=value or name:TYPE=value")]
    Syntax(String),
    /// A type this command line does not take.
    #[error(
        "parameter {name}: unknown type {ty} (INT64, FLOAT64, BOOL, STRING, BYTES, DATE, TIMESTAMP, NUMERIC, JSON)"
    )]
    Type {
        /// The parameter.
        name: String,
        /// The type given.
        ty: String,
    },
    /// The value is not a value of the type.
    #[error("parameter {name}: {reason}")]
    Value {
        /// The parameter.
        name: String,
        /// Why.
        reason: String,
    },
}

impl Param {
    /// Parses `name=value` (a STRING) or `name:TYPE=value`.
    pub fn parse(text: &str) -> Result<Self, ParamError> {
        let (left, value) = text
            .split_once('=')
            .ok_or_else(|| ParamError::Syntax(text.to_owned()))?;
        let (name, type_name) = left.split_once(':').unwrap_or((left, "STRING"));
        let name = name.trim().trim_start_matches('@');
        if name.is_empty() {
            return Err(ParamError::Syntax(text.to_owned()));
        }
        let param = Param {
            name: name.to_owned(),
            type_name: type_name.trim().to_uppercase(),
            value: value.to_owned(),
        };
        param.typed()?;
        Ok(param)
    }

    fn ty(&self) -> Result<Type, ParamError> {
        Ok(match self.type_name.as_str() {
            "INT64" => Type::Int64,
            "FLOAT64" => Type::Float64,
            "BOOL" => Type::Bool,
            "STRING" => Type::String,
            "BYTES" => Type::Bytes,
            "DATE" => Type::Date,
            "TIMESTAMP" => Type::Timestamp,
            "NUMERIC" => Type::Numeric { pg: false },
            "JSON" => Type::Json { pg: false },
            _ => {
                return Err(ParamError::Type {
                    name: self.name.clone(),
                    ty: self.type_name.clone(),
                });
            }
        })
    }

    /// The typed value, checked by the same rules the decoder applies to the wire.
    pub fn typed(&self) -> Result<(Type, Value), ParamError> {
        let ty = self.ty()?;
        let wire = match ty {
            Type::Bool => match self.value.as_str() {
                "true" | "TRUE" => prost_types::Value {
                    kind: Some(prost_types::value::Kind::BoolValue(true)),
                },
                "false" | "FALSE" => prost_types::Value {
                    kind: Some(prost_types::value::Kind::BoolValue(false)),
                },
                _ => {
                    return Err(ParamError::Value {
                        name: self.name.clone(),
                        reason: format!("{:?} is not true or false", self.value),
                    });
                }
            },
            Type::Float64 => {
                let n: f64 = self.value.parse().map_err(|_| ParamError::Value {
                    name: self.name.clone(),
                    reason: format!("{:?} is not a number", self.value),
                })?;
                encode_value(&Value::Float64(n))
            }
            _ => prost_types::Value {
                kind: Some(prost_types::value::Kind::StringValue(self.value.clone())),
            },
        };
        let value = decode_value(&ty, wire).map_err(|e| ParamError::Value {
            name: self.name.clone(),
            reason: e.to_string(),
        })?;
        Ok((ty, value))
    }
}

/// Puts `params` on a request: values in `params`, types in `param_types`.
pub fn apply(params: &[Param], request: &mut pb::ExecuteSqlRequest) -> Result<(), ParamError> {
    if params.is_empty() {
        return Ok(());
    }
    let mut fields = std::collections::BTreeMap::new();
    for p in params {
        let (ty, value) = p.typed()?;
        fields.insert(p.name.clone(), encode_value(&value));
        request
            .param_types
            .insert(p.name.clone(), pb::Type::from(&ty));
    }
    request.params = Some(prost_types::Struct { fields });
    Ok(())
}

/// A parameter's value for one transaction (a load run's draw, or a profile's `--param`), bound
/// on each statement of the transaction that mentions it as `@name`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// Its name, without `@`.
    pub name: String,
    /// Its Spanner type, as the request declares it.
    pub ty: Type,
    /// Its value, of that type.
    pub value: Value,
}

impl Bound {
    /// A drawn value: an INT64 when it is one, a STRING otherwise (what a draw makes).
    pub fn drawn(name: String, value: Value) -> Bound {
        let ty = match value {
            Value::Int64(_) => Type::Int64,
            _ => Type::String,
        };
        Bound { name, ty, value }
    }

    /// `param` checked and typed, as a statement of a transaction carries it.
    pub fn of(param: &Param) -> Result<Bound, ParamError> {
        let (ty, value) = param.typed()?;
        Ok(Bound {
            name: param.name.clone(),
            ty,
            value,
        })
    }
}

/// Whether `sql` mentions `@name` (the name whole, compared as Spanner compares names, without
/// regard to case). A mention inside a string literal or a comment counts too: binding a
/// parameter a statement does not use is harmless.
pub fn mentions(sql: &str, name: &str) -> bool {
    let bytes = sql.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    bytes.iter().enumerate().any(|(i, &b)| {
        if b != b'@' {
            return false;
        }
        let start = i + 1;
        let end = start + name.len();
        end <= bytes.len()
            && bytes[start..end].eq_ignore_ascii_case(name.as_bytes())
            && bytes.get(end).is_none_or(|&next| !ident(next))
    })
}

/// The parameters of `bound` that `sql` mentions, as a request carries them: values and types.
pub fn bound_for(
    bound: &[Bound],
    sql: &str,
) -> Option<(
    prost_types::Struct,
    std::collections::HashMap<String, pb::Type>,
)> {
    let mut fields = std::collections::BTreeMap::new();
    let mut types = std::collections::HashMap::new();
    for b in bound.iter().filter(|b| mentions(sql, &b.name)) {
        fields.insert(b.name.clone(), encode_value(&b.value));
        types.insert(b.name.clone(), pb::Type::from(&b.ty));
    }
    (!fields.is_empty()).then_some((prost_types::Struct { fields }, types))
}

/// Puts the parameters of `bound` that the request's SQL mentions on it, beside any it has.
pub fn bind(bound: &[Bound], request: &mut pb::ExecuteSqlRequest) {
    if let Some((values, types)) = bound_for(bound, &request.sql) {
        let params = request.params.get_or_insert_with(Default::default);
        params.fields.extend(values.fields);
        request.param_types.extend(types);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_parse_with_and_without_a_type() {
        let p = Param::parse("id:INT64=42").expect("valid");
        assert_eq!(p.typed(), Ok((Type::Int64, Value::Int64(42))));
        let p = Param::parse("@name=Alice=Bob").expect("valid");
        assert_eq!(p.name, "name");
        assert_eq!(
            p.typed(),
            Ok((Type::String, Value::String("Alice=Bob".into())))
        );
        assert!(matches!(
            Param::parse("id:int64=4x"),
            Err(ParamError::Value { .. })
        ));
        assert!(matches!(
            Param::parse("id:DECIMAL=4"),
            Err(ParamError::Type { .. })
        ));
        assert!(matches!(
            Param::parse("novalue"),
            Err(ParamError::Syntax(_))
        ));
        assert!(matches!(
            Param::parse("flag:BOOL=yes"),
            Err(ParamError::Value { .. })
        ));
        assert!(Param::parse("d:DATE=2024-02-29").is_ok());
        assert!(Param::parse("d:DATE=2023-02-29").is_err());
    }

    #[test]
    fn a_drawn_parameter_goes_only_on_a_statement_that_names_it_whole() {
        assert!(mentions("SELECT 1 WHERE a = @id", "id"));
        assert!(mentions("WHERE a = @ID AND b = 2", "id"));
        assert!(!mentions("WHERE a = @idx", "id"));
        assert!(!mentions("WHERE a = id", "id"));
        assert!(!mentions("WHERE a = @i", "id"));
        let bound = [
            Bound::drawn("id".into(), Value::Int64(7)),
            Bound::drawn("who".into(), Value::String("x".into())),
        ];
        let mut request = pb::ExecuteSqlRequest {
            sql: "UPDATE T SET v = v + 1 WHERE k = @id".into(),
            ..Default::default()
        };
        bind(&bound, &mut request);
        let fields = &request.params.as_ref().expect("params").fields;
        assert_eq!(fields.len(), 1, "{fields:?}");
        assert_eq!(request.param_types["id"].code, pb::TypeCode::Int64 as i32);
        let mut none = pb::ExecuteSqlRequest {
            sql: "SELECT 1".into(),
            ..Default::default()
        };
        bind(&bound, &mut none);
        assert!(none.params.is_none() && none.param_types.is_empty());
    }

    #[test]
    fn parameters_go_on_the_request_with_their_types() {
        let mut request = pb::ExecuteSqlRequest::default();
        let params = [
            Param::parse("id:INT64=7").expect("valid"),
            Param::parse("x:FLOAT64=1.5").expect("valid"),
        ];
        apply(&params, &mut request).expect("applies");
        let fields = &request.params.as_ref().expect("params").fields;
        assert_eq!(fields.len(), 2);
        assert_eq!(request.param_types["id"].code, pb::TypeCode::Int64 as i32);
    }
}
