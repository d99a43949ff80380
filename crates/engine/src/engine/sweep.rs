//! Sweeps: one variant per value of a query parameter (`--sweep n:INT64=100,1000,10000`), each
//! holding its point, so a report's runs say which value they ran and the analysis can fit how each
//! phase grows with the answer.

use super::Variant;
use crate::client::{Param, ParamError};
use crate::report::SweepPoint;

/// A sweep of one query parameter: `NAME:TYPE=v1,v2,...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepSpec {
    /// The parameter, without `@`.
    pub name: String,
    /// Its Spanner type name.
    pub type_name: String,
    /// Its values, each a valid value of the type.
    pub values: Vec<String>,
}

/// How a sweep is written, for its errors.
const HOW: &str = "write it as NAME:TYPE=v1,v2,... (e.g. n:INT64=100,1000,10000)";

/// Why a sweep's text is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// No `=` between the parameter and its values.
    #[error("{text:?}: {HOW}")]
    NotASweep {
        /// The text as given.
        text: String,
    },
    /// No `:TYPE` after the parameter's name.
    #[error("{text:?} names no type: {HOW}")]
    NoType {
        /// The text as given.
        text: String,
    },
    /// Fewer than two values, or an empty one.
    #[error("{text:?}: a sweep needs two values or more; {HOW}")]
    TooFewValues {
        /// The text as given.
        text: String,
    },
    /// A value the parameter's type does not take.
    #[error(transparent)]
    Value(#[from] ParamError),
    /// The query already has a parameter of the swept name: one of the two would be ignored.
    #[error(
        "the sweep and a parameter are both named @{name}: sweep it, or set it, not both (remove the \
         parameter or rename one of them)"
    )]
    ClashesWithParam {
        /// The parameter's name, without `@`.
        name: String,
    },
}

/// Reads `NAME:TYPE=v1,v2,...` (at least two values, each one the type takes).
pub fn parse_sweep(text: &str) -> Result<SweepSpec, SweepError> {
    let (left, values) = text.split_once('=').ok_or_else(|| SweepError::NotASweep {
        text: text.to_owned(),
    })?;
    let (name, type_name) = left.split_once(':').ok_or_else(|| SweepError::NoType {
        text: text.to_owned(),
    })?;
    let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
    if values.len() < 2 || values.iter().any(String::is_empty) {
        return Err(SweepError::TooFewValues {
            text: text.to_owned(),
        });
    }
    let name = name.trim().trim_start_matches('@').to_owned();
    let type_name = type_name.trim().to_uppercase();
    for value in &values {
        Param::parse(&format!("{name}:{type_name}={value}"))?;
    }
    Ok(SweepSpec {
        name,
        type_name,
        values,
    })
}

impl SweepSpec {
    /// One variant per value of `base`, labelled `n=100` (or `LABEL n=100` when the base had a
    /// label of its own), with the parameter set; refused when `base` already sets a parameter of
    /// that name (which of the two the user meant cannot be told).
    pub fn expand(&self, base: &Variant, own_label: bool) -> Result<Vec<Variant>, SweepError> {
        if base.params.iter().any(|p| p.name == self.name) {
            return Err(SweepError::ClashesWithParam {
                name: self.name.clone(),
            });
        }
        Ok(self
            .values
            .iter()
            .map(|value| {
                let point = format!("{}={value}", self.name);
                let mut params = base.params.clone();
                params.push(Param {
                    name: self.name.clone(),
                    type_name: self.type_name.clone(),
                    value: value.clone(),
                });
                Variant {
                    label: if own_label {
                        format!("{} {point}", base.label)
                    } else {
                        point
                    },
                    params,
                    sweep: Some(SweepPoint {
                        param: self.name.clone(),
                        type_name: self.type_name.clone(),
                        value: value.clone(),
                    }),
                    ..base.clone()
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_spec_is_checked_value_by_value() {
        for bad in [
            "n=1,2",
            "n:INT64=1",
            "n:INT64=1,x",
            "n:FLOAT=1,2",
            "n:INT64=1,,2",
        ] {
            assert!(parse_sweep(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_sweep("@d:DATE=2026-01-01,2026-02-01")
                .expect("valid")
                .name,
            "d"
        );
    }

    #[test]
    fn a_sweep_of_a_parameter_the_query_already_sets_is_refused() {
        let sweep = parse_sweep("n:INT64=10,20").expect("valid");
        let base = Variant {
            params: vec![Param::parse("n:INT64=1").expect("valid")],
            ..Variant::new("scan", "SELECT * FROM Seed23 LIMIT @n")
        };
        let err = sweep
            .expand(&base, true)
            .expect_err("n is both swept and set");
        assert_eq!(
            err,
            SweepError::ClashesWithParam {
                name: "n".to_owned()
            }
        );
        assert!(err.to_string().contains("@n"), "{err}");
    }

    #[test]
    fn each_value_makes_a_variant_with_the_parameter_set_and_its_point() {
        let sweep = parse_sweep("n:INT64=10,20").expect("valid");
        let base = Variant {
            params: vec![Param::parse("x=a").expect("valid")],
            ..Variant::new("scan", "SELECT * FROM Seed23 LIMIT @n")
        };
        let points = sweep.expand(&base, true).expect("no clash");
        assert_eq!(points[1].label, "scan n=20");
        let n: Vec<&str> = points[1]
            .params
            .iter()
            .filter(|p| p.name == "n")
            .map(|p| p.value.as_str())
            .collect();
        assert_eq!(n, ["20"], "the swept value is set");
        assert_eq!(points[1].params.len(), 2);
        assert_eq!(
            points[0].sweep.as_ref().map(|p| p.value.as_str()),
            Some("10")
        );
    }
}
