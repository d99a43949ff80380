//! Column types: our own description of a Spanner `Type`, checked once when metadata arrives.

use std::fmt;

use crate::proto::google::spanner::v1 as pb;

/// The type of a column or of an array element, as the decoder understands it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    /// `BOOL`.
    Bool,
    /// `INT64` (also PostgreSQL `oid`).
    Int64,
    /// `FLOAT32`.
    Float32,
    /// `FLOAT64`.
    Float64,
    /// `NUMERIC`; `pg` is true for PostgreSQL's `numeric`, which also allows `NaN`.
    Numeric {
        /// Annotated `PG_NUMERIC`.
        pg: bool,
    },
    /// `STRING`.
    String,
    /// `BYTES`.
    Bytes,
    /// `JSON`; `pg` is true for PostgreSQL's `jsonb`.
    Json {
        /// Annotated `PG_JSONB`.
        pg: bool,
    },
    /// `DATE`.
    Date,
    /// `TIMESTAMP`.
    Timestamp,
    /// `ARRAY<element>`.
    Array(Box<Type>),
    /// `STRUCT<fields>`.
    Struct(Vec<Field>),
    /// `PROTO<fqn>`: a serialized protocol buffer message.
    Proto(String),
    /// `ENUM<fqn>`: a protocol buffer enum number.
    Enum(String),
    /// `INTERVAL`.
    Interval,
    /// `UUID`.
    Uuid,
}

/// A named, typed column of a result set or field of a struct. The name may be empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The column or field name, as the server sent it.
    pub name: String,
    /// Its type.
    pub ty: Type,
}

/// Why a wire `Type` cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeError {
    /// The type code is 0 or one this decoder does not know.
    #[error("unsupported type code {0}")]
    UnknownCode(i32),
    /// An ARRAY without `array_element_type`.
    #[error("ARRAY type without an element type")]
    ArrayWithoutElement,
    /// A STRUCT without `struct_type`.
    #[error("STRUCT type without a struct_type")]
    StructWithoutFields,
}

impl TryFrom<&pb::Type> for Type {
    type Error = TypeError;

    fn try_from(ty: &pb::Type) -> Result<Self, TypeError> {
        use pb::TypeAnnotationCode as Ann;
        use pb::TypeCode as Code;
        let code = Code::try_from(ty.code).map_err(|_| TypeError::UnknownCode(ty.code))?;
        let annotation = Ann::try_from(ty.type_annotation).unwrap_or(Ann::Unspecified);
        Ok(match code {
            Code::Bool => Type::Bool,
            Code::Int64 => Type::Int64,
            Code::Float32 => Type::Float32,
            Code::Float64 => Type::Float64,
            Code::Numeric => Type::Numeric {
                pg: annotation == Ann::PgNumeric,
            },
            Code::String => Type::String,
            Code::Bytes => Type::Bytes,
            Code::Json => Type::Json {
                pg: annotation == Ann::PgJsonb,
            },
            Code::Date => Type::Date,
            Code::Timestamp => Type::Timestamp,
            Code::Array => {
                let element = ty
                    .array_element_type
                    .as_deref()
                    .ok_or(TypeError::ArrayWithoutElement)?;
                Type::Array(Box::new(Type::try_from(element)?))
            }
            Code::Struct => {
                let st = ty
                    .struct_type
                    .as_ref()
                    .ok_or(TypeError::StructWithoutFields)?;
                Type::Struct(fields_from_wire(st)?)
            }
            Code::Proto => Type::Proto(ty.proto_type_fqn.clone()),
            Code::Enum => Type::Enum(ty.proto_type_fqn.clone()),
            Code::Interval => Type::Interval,
            Code::Uuid => Type::Uuid,
            Code::Unspecified => return Err(TypeError::UnknownCode(ty.code)),
        })
    }
}

/// The fields of a wire `StructType`, each type checked.
pub(crate) fn fields_from_wire(st: &pb::StructType) -> Result<Vec<Field>, (usize, TypeError)> {
    st.fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ty = f
                .r#type
                .as_ref()
                .ok_or((i, TypeError::UnknownCode(0)))
                .and_then(|t| Type::try_from(t).map_err(|e| (i, e)))?;
            Ok(Field {
                name: f.name.clone(),
                ty,
            })
        })
        .collect()
}

impl From<(usize, TypeError)> for TypeError {
    fn from((_, e): (usize, TypeError)) -> Self {
        e
    }
}

impl From<&Type> for pb::Type {
    fn from(ty: &Type) -> Self {
        use pb::TypeAnnotationCode as Ann;
        use pb::TypeCode as Code;
        let mut out = pb::Type::default();
        let (code, annotation) = match ty {
            Type::Bool => (Code::Bool, Ann::Unspecified),
            Type::Int64 => (Code::Int64, Ann::Unspecified),
            Type::Float32 => (Code::Float32, Ann::Unspecified),
            Type::Float64 => (Code::Float64, Ann::Unspecified),
            Type::Numeric { pg } => (Code::Numeric, pg_annotation(*pg, Ann::PgNumeric)),
            Type::String => (Code::String, Ann::Unspecified),
            Type::Bytes => (Code::Bytes, Ann::Unspecified),
            Type::Json { pg } => (Code::Json, pg_annotation(*pg, Ann::PgJsonb)),
            Type::Date => (Code::Date, Ann::Unspecified),
            Type::Timestamp => (Code::Timestamp, Ann::Unspecified),
            Type::Array(element) => {
                out.array_element_type = Some(Box::new(pb::Type::from(element.as_ref())));
                (Code::Array, Ann::Unspecified)
            }
            Type::Struct(fields) => {
                out.struct_type = Some(struct_type(fields));
                (Code::Struct, Ann::Unspecified)
            }
            Type::Proto(fqn) => {
                out.proto_type_fqn = fqn.clone();
                (Code::Proto, Ann::Unspecified)
            }
            Type::Enum(fqn) => {
                out.proto_type_fqn = fqn.clone();
                (Code::Enum, Ann::Unspecified)
            }
            Type::Interval => (Code::Interval, Ann::Unspecified),
            Type::Uuid => (Code::Uuid, Ann::Unspecified),
        };
        out.code = code as i32;
        out.type_annotation = annotation as i32;
        out
    }
}

fn pg_annotation(pg: bool, ann: pb::TypeAnnotationCode) -> pb::TypeAnnotationCode {
    if pg {
        ann
    } else {
        pb::TypeAnnotationCode::Unspecified
    }
}

/// The wire `StructType` describing `fields`.
pub fn struct_type(fields: &[Field]) -> pb::StructType {
    pb::StructType {
        fields: fields
            .iter()
            .map(|f| pb::struct_type::Field {
                name: f.name.clone(),
                r#type: Some(pb::Type::from(&f.ty)),
            })
            .collect(),
    }
}

impl fmt::Display for Type {
    /// GoogleSQL spelling: `ARRAY<STRUCT<a INT64, b STRING>>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Bool => f.write_str("BOOL"),
            Type::Int64 => f.write_str("INT64"),
            Type::Float32 => f.write_str("FLOAT32"),
            Type::Float64 => f.write_str("FLOAT64"),
            Type::Numeric { pg: false } => f.write_str("NUMERIC"),
            Type::Numeric { pg: true } => f.write_str("PG.NUMERIC"),
            Type::String => f.write_str("STRING"),
            Type::Bytes => f.write_str("BYTES"),
            Type::Json { pg: false } => f.write_str("JSON"),
            Type::Json { pg: true } => f.write_str("PG.JSONB"),
            Type::Date => f.write_str("DATE"),
            Type::Timestamp => f.write_str("TIMESTAMP"),
            Type::Array(element) => write!(f, "ARRAY<{element}>"),
            Type::Struct(fields) => {
                f.write_str("STRUCT<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if field.name.is_empty() {
                        write!(f, "{}", field.ty)?;
                    } else {
                        write!(f, "{} {}", field.name, field.ty)?;
                    }
                }
                f.write_str(">")
            }
            Type::Proto(fqn) => write!(f, "PROTO<{fqn}>"),
            Type::Enum(fqn) => write!(f, "ENUM<{fqn}>"),
            Type::Interval => f.write_str("INTERVAL"),
            Type::Uuid => f.write_str("UUID"),
        }
    }
}
