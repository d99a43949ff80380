//! How an iteration ended, typed: ok, failed (the server's status code when it answered with one,
//! and whether a retry could succeed), or cancelled. The one place that knows the words reports
//! write for it (`ok`, `error`, `cancelled`, the code's name) and which codes fail for good: no
//! view or command compares those strings.

use serde::{Deserialize, Serialize};

/// How an iteration ended, as every export writes it (`status`): the kind of [`Outcome`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The query ran to its last row.
    Ok,
    /// The query failed; the iteration's error says why.
    Error,
    /// The user or a deadline stopped the query before its last row.
    Cancelled,
}

impl Status {
    /// The lowercase name used in every export: `ok`, `error` or `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Cancelled => "cancelled",
        }
    }
}

/// How an iteration ended.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Outcome {
    /// It ran to its last row (a subject: its rows checked).
    #[default]
    Ok,
    /// It failed.
    Failed(Failure),
    /// It was stopped before it ended (a press of Cancel, a signal, a run's end), and what
    /// stopped it ([`Outcome::cancelled`] says `cancelled`).
    Cancelled(String),
}

/// Why an iteration failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// What went wrong, on one line, as the client or server said it.
    pub message: String,
    /// The gRPC status code the server answered with; `None` when it did not answer with one (a
    /// connection that failed, rows that did not match, a program that crashed).
    pub code: Option<Code>,
}

impl Outcome {
    /// Cancelled, by the user or the run's end: what every export writes as its error.
    pub fn cancelled() -> Outcome {
        Outcome::Cancelled("cancelled".to_owned())
    }

    /// A failure with `message` and the server's `code`, if it answered with one.
    pub fn failed(message: impl Into<String>, code: Option<Code>) -> Outcome {
        Outcome::Failed(Failure {
            message: message.into(),
            code,
        })
    }

    /// The kind of ending, as exports write it.
    pub fn status(&self) -> Status {
        match self {
            Outcome::Ok => Status::Ok,
            Outcome::Failed(_) => Status::Error,
            Outcome::Cancelled(_) => Status::Cancelled,
        }
    }

    /// Whether it ran to its end.
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok)
    }

    /// Whether it was cancelled.
    pub fn is_cancelled(&self) -> bool {
        matches!(self, Outcome::Cancelled(_))
    }

    /// Why it did not end ok, in the words exports write (`cancelled` for a cancelled one).
    pub fn error(&self) -> Option<&str> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed(failure) => Some(&failure.message),
            Outcome::Cancelled(why) => Some(why),
        }
    }

    /// Why it did not end ok, to rewrite (a redacted report scrubs it).
    pub fn error_mut(&mut self) -> Option<&mut String> {
        match self {
            Outcome::Ok => None,
            Outcome::Failed(failure) => Some(&mut failure.message),
            Outcome::Cancelled(why) => Some(why),
        }
    }

    /// The server's status code of a failure.
    pub fn code(&self) -> Option<Code> {
        match self {
            Outcome::Failed(failure) => failure.code,
            _ => None,
        }
    }

    /// Whether it failed with an error no retry can fix: the server refused the query itself
    /// (bad SQL, a table not found, no permission, a failed precondition), so every later
    /// iteration would fail alike. A session the server no longer knows is not one: the official
    /// clients make a new session and try again.
    pub fn failed_for_good(&self) -> bool {
        let Outcome::Failed(failure) = self else {
            return false;
        };
        let session_gone = failure.message.contains("Session not found");
        !session_gone && failure.code.is_some_and(Code::is_final)
    }

    /// The outcome a report's `status`, `error` and `error_code` describe (a code reports did not
    /// know is kept out, never guessed).
    pub fn from_stored(status: Status, error: Option<String>, code: Option<&str>) -> Outcome {
        match status {
            Status::Ok => Outcome::Ok,
            Status::Cancelled => {
                Outcome::Cancelled(error.unwrap_or_else(|| "cancelled".to_owned()))
            }
            Status::Error => Outcome::failed(error.unwrap_or_default(), code.and_then(Code::parse)),
        }
    }
}

/// A gRPC status code, named as tonic and reports name them (`InvalidArgument`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// Not an error (a status that carried one is never a failure's).
    Ok,
    /// The operation was cancelled.
    Cancelled,
    /// An unknown error.
    Unknown,
    /// The request was refused as it stood: bad SQL, a bad parameter.
    InvalidArgument,
    /// The deadline passed first.
    DeadlineExceeded,
    /// Something named was not found: a table, a database, a session.
    NotFound,
    /// What was to be created exists.
    AlreadyExists,
    /// The caller may not do it.
    PermissionDenied,
    /// A resource ran out: a quota, memory, a limit.
    ResourceExhausted,
    /// The system is not in a state the operation needs.
    FailedPrecondition,
    /// The operation was aborted (a transaction's conflict).
    Aborted,
    /// A value outside its range.
    OutOfRange,
    /// The server does not do it.
    Unimplemented,
    /// The server broke an invariant.
    Internal,
    /// The service could not be reached for now.
    Unavailable,
    /// Data was lost.
    DataLoss,
    /// No valid credentials.
    Unauthenticated,
}

impl Code {
    /// Every code, numbered as gRPC numbers them (its place here is its number).
    pub const ALL: [Code; 17] = [
        Code::Ok,
        Code::Cancelled,
        Code::Unknown,
        Code::InvalidArgument,
        Code::DeadlineExceeded,
        Code::NotFound,
        Code::AlreadyExists,
        Code::PermissionDenied,
        Code::ResourceExhausted,
        Code::FailedPrecondition,
        Code::Aborted,
        Code::OutOfRange,
        Code::Unimplemented,
        Code::Internal,
        Code::Unavailable,
        Code::DataLoss,
        Code::Unauthenticated,
    ];

    /// The code gRPC numbers `number`.
    pub fn from_number(number: i32) -> Option<Code> {
        usize::try_from(number)
            .ok()
            .and_then(|i| Code::ALL.get(i).copied())
    }

    /// Its name as reports write it (`InvalidArgument`).
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Ok => "Ok",
            Code::Cancelled => "Cancelled",
            Code::Unknown => "Unknown",
            Code::InvalidArgument => "InvalidArgument",
            Code::DeadlineExceeded => "DeadlineExceeded",
            Code::NotFound => "NotFound",
            Code::AlreadyExists => "AlreadyExists",
            Code::PermissionDenied => "PermissionDenied",
            Code::ResourceExhausted => "ResourceExhausted",
            Code::FailedPrecondition => "FailedPrecondition",
            Code::Aborted => "Aborted",
            Code::OutOfRange => "OutOfRange",
            Code::Unimplemented => "Unimplemented",
            Code::Internal => "Internal",
            Code::Unavailable => "Unavailable",
            Code::DataLoss => "DataLoss",
            Code::Unauthenticated => "Unauthenticated",
        }
    }

    /// Its name as Spanner's documentation and load reports spell it (`RESOURCE_EXHAUSTED`).
    pub fn spanner_name(self) -> String {
        let mut name = String::with_capacity(self.as_str().len() + 4);
        for (i, c) in self.as_str().chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                name.push('_');
            }
            name.push(c.to_ascii_uppercase());
        }
        name
    }

    /// The code a report names.
    pub fn parse(name: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// Whether the server refused the request itself, so that the same request fails alike
    /// every time: bad SQL, a table not found, no permission or credentials, a failed
    /// precondition, something the server does not do, a value out of range.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Code::InvalidArgument
                | Code::NotFound
                | Code::PermissionDenied
                | Code::FailedPrecondition
                | Code::Unauthenticated
                | Code::Unimplemented
                | Code::OutOfRange
        )
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_query_fails_for_good_and_a_lost_session_or_an_outage_does_not() {
        let failed = |code: Code, error: &str| Outcome::failed(error, Some(code));
        assert!(failed(Code::InvalidArgument, "Unrecognized name: Nme").failed_for_good());
        assert!(failed(Code::NotFound, "Table not found: Nope").failed_for_good());
        assert!(
            !failed(
                Code::NotFound,
                "Session not found: projects/p/.../sessions/s"
            )
            .failed_for_good()
        );
        assert!(!failed(Code::Unavailable, "connection reset").failed_for_good());
        assert!(!failed(Code::DeadlineExceeded, "deadline").failed_for_good());
        assert!(!Outcome::failed("no code", None).failed_for_good());
        assert!(!Outcome::cancelled().failed_for_good());
    }

    #[test]
    fn codes_are_numbered_and_named_as_grpc_and_reports_do() {
        for (number, code) in Code::ALL.into_iter().enumerate() {
            assert_eq!(Code::from_number(number as i32), Some(code));
            assert_eq!(Code::parse(code.as_str()), Some(code));
        }
        assert_eq!(Code::from_number(3), Some(Code::InvalidArgument));
        assert_eq!(Code::from_number(10), Some(Code::Aborted));
        assert_eq!(Code::from_number(16), Some(Code::Unauthenticated));
        assert_eq!(Code::from_number(17), None);
        assert_eq!(Code::from_number(-1), None);
        assert_eq!(Code::parse("invalid_argument"), None);
        assert_eq!(Code::ResourceExhausted.spanner_name(), "RESOURCE_EXHAUSTED");
        assert_eq!(Code::Ok.spanner_name(), "OK");
    }

    #[test]
    fn an_outcome_reads_back_from_what_reports_write() {
        for outcome in [
            Outcome::Ok,
            Outcome::cancelled(),
            Outcome::Cancelled("stopped by a signal".into()),
            Outcome::failed("Table not found: T", Some(Code::NotFound)),
            Outcome::failed("rows differ", None),
        ] {
            let back = Outcome::from_stored(
                outcome.status(),
                outcome.error().map(str::to_owned),
                outcome.code().map(Code::as_str),
            );
            assert_eq!(back, outcome);
        }
        assert_eq!(Outcome::cancelled().error(), Some("cancelled"));
        // A code a later release wrote is left out rather than read as another.
        assert_eq!(
            Outcome::from_stored(Status::Error, Some("x".into()), Some("Novel")),
            Outcome::failed("x", None)
        );
    }

    #[test]
    fn status_serializes_lowercase() -> Result<(), serde_json::Error> {
        for status in [Status::Ok, Status::Error, Status::Cancelled] {
            let json = serde_json::to_string(&status)?;
            assert_eq!(json, format!("\"{}\"", status.as_str()));
            assert_eq!(serde_json::from_str::<Status>(&json)?, status);
        }
        Ok(())
    }
}
