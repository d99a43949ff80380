//! The optimizer a query asks for (`QueryOptions`), checked, as its statistics name it.

use tonic::Status;

use crate::proto::google::spanner::v1 as pb;

/// The optimizer a query asked for, as its statistics name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Optimizer {
    /// `optimizer_version`: the version asked for, or the latest.
    pub version: String,
    /// `optimizer_statistics_package`, when one was asked for.
    pub statistics_package: Option<String>,
}

impl Optimizer {
    /// The newest optimizer version the local instance answers to (production's are 1 and up).
    pub const LATEST: u32 = 7;

    /// The optimizer `options` ask for: empty or `latest` for the latest version, else a version
    /// from 1 to [`Optimizer::LATEST`]; a statistics package name of letters, digits and `_`.
    pub fn of(
        options: Option<&pb::execute_sql_request::QueryOptions>,
    ) -> Result<Optimizer, Status> {
        let version = options.map_or("", |o| o.optimizer_version.as_str());
        let version = match version {
            "" | "latest" => Self::LATEST,
            v => match v.parse::<u32>() {
                Ok(n) if (1..=Self::LATEST).contains(&n) => n,
                _ => {
                    return Err(Status::invalid_argument(format!(
                        "Query optimizer version: {} is not supported (1 to {} or latest)",
                        crate::report::printable(&v.chars().take(32).collect::<String>()),
                        Self::LATEST
                    )));
                }
            },
        };
        let package = options
            .map(|o| o.optimizer_statistics_package.as_str())
            .filter(|p| !p.is_empty());
        if let Some(p) = package
            && (p.len() > 128 || !p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(Status::invalid_argument(
                "an optimizer statistics package is a name of letters, digits and '_'",
            ));
        }
        Ok(Optimizer {
            version: version.to_string(),
            statistics_package: package.map(str::to_owned),
        })
    }
}
