//! How a read-write transaction runs: its isolation, lock mode, begin, commit options, tag and
//! retry policy, as the command line and the window state them, and the wire options they become.

use std::time::Duration;

use crate::proto::google::spanner::v1 as pb;

/// How a read-write transaction is isolated from others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// The server's default (serializable).
    #[default]
    Default,
    /// Serializable.
    Serializable,
    /// Repeatable read.
    RepeatableRead,
}

/// How a read-write transaction's reads lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockMode {
    /// The server's default (pessimistic).
    #[default]
    Default,
    /// Reads take locks as they run.
    Pessimistic,
    /// Reads are lock-free at a snapshot, validated at commit.
    Optimistic,
}

/// How a transaction begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BeginMode {
    /// With its first statement (what the official clients do by default).
    #[default]
    Inline,
    /// With a BeginTransaction call first.
    Explicit,
}

/// How long to wait before running an aborted transaction again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RetryPolicy {
    /// The server's RetryInfo, as asked; without one, 10 ms doubling per abort up to 1 s.
    #[default]
    HonourRetryInfo,
    /// Always this long, whatever the server asked.
    Fixed(Duration),
    /// Never: an abort ends the transaction.
    None,
}

impl RetryPolicy {
    /// The policy `text` names: `honour-retry-info`, `fixed:DUR` (`fixed:50ms`) or `none`.
    pub fn parse(text: &str) -> Result<RetryPolicy, String> {
        let text = text.trim();
        match text {
            "honour-retry-info" | "honor-retry-info" => Ok(RetryPolicy::HonourRetryInfo),
            "none" => Ok(RetryPolicy::None),
            _ => match text.strip_prefix("fixed:") {
                Some(d) => crate::client::timeouts::parse_duration(d)
                    .map(RetryPolicy::Fixed)
                    .map_err(|e| e.to_string()),
                None => Err(format!(
                    "{text:?} is not a retry policy: honour-retry-info, fixed:DUR (fixed:50ms) or none"
                )),
            },
        }
    }

    /// Its name, as [`RetryPolicy::parse`] reads it.
    pub fn describe(self) -> String {
        match self {
            RetryPolicy::HonourRetryInfo => "honour-retry-info".into(),
            RetryPolicy::Fixed(d) => format!("fixed:{}ms", d.as_millis()),
            RetryPolicy::None => "none".into(),
        }
    }

    /// The back-off before attempt `next` (from 2) after an abort that asked for `asked`.
    pub(super) fn backoff(self, asked: Option<Duration>, next: u32) -> Option<Duration> {
        match self {
            RetryPolicy::None => None,
            RetryPolicy::Fixed(d) => Some(d),
            RetryPolicy::HonourRetryInfo => Some(asked.unwrap_or_else(|| {
                let doublings = next.saturating_sub(2).min(7);
                (Duration::from_millis(10) * (1u32 << doublings)).min(Duration::from_secs(1))
            })),
        }
    }
}

/// How a read-write transaction runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadWriteOptions {
    /// Its isolation level.
    pub isolation: Isolation,
    /// Its read lock mode.
    pub lock_mode: LockMode,
    /// How it begins.
    pub begin: BeginMode,
    /// The commit's max_commit_delay (0 to 500 ms), when set.
    pub max_commit_delay: Option<Duration>,
    /// Whether the commit asks for its statistics (the mutation count).
    pub commit_stats: bool,
    /// The transaction tag every request carries.
    pub tag: Option<String>,
    /// What an abort leads to.
    pub retry: RetryPolicy,
    /// Attempts at most, the first included.
    pub max_attempts: u32,
    /// The whole transaction's time at most, back-offs included: no attempt starts past it.
    pub deadline: Duration,
    /// The statements' query mode.
    pub mode: pb::execute_sql_request::QueryMode,
}

impl Default for ReadWriteOptions {
    fn default() -> Self {
        ReadWriteOptions {
            isolation: Isolation::Default,
            lock_mode: LockMode::Default,
            begin: BeginMode::Inline,
            max_commit_delay: None,
            commit_stats: false,
            tag: None,
            retry: RetryPolicy::HonourRetryInfo,
            max_attempts: 10,
            deadline: Duration::from_secs(120),
            mode: pb::execute_sql_request::QueryMode::Profile,
        }
    }
}

/// The longest max_commit_delay Spanner takes.
pub const MAX_COMMIT_DELAY: Duration = Duration::from_millis(500);

impl ReadWriteOptions {
    /// The options in words, as a report records them: `isolation serializable, lock pessimistic,
    /// begin inline, retry honour-retry-info, max attempts 10`, and what else was asked.
    pub fn describe(&self) -> String {
        let mut words = vec![
            format!(
                "isolation {}",
                match self.isolation {
                    Isolation::Default => "default",
                    Isolation::Serializable => "serializable",
                    Isolation::RepeatableRead => "repeatable-read",
                }
            ),
            format!(
                "lock {}",
                match self.lock_mode {
                    LockMode::Default => "default",
                    LockMode::Pessimistic => "pessimistic",
                    LockMode::Optimistic => "optimistic",
                }
            ),
            format!(
                "begin {}",
                match self.begin {
                    BeginMode::Inline => "inline",
                    BeginMode::Explicit => "explicit",
                }
            ),
            format!("retry {}", self.retry.describe()),
            format!("max attempts {}", self.max_attempts),
        ];
        if let Some(d) = self.max_commit_delay {
            words.push(format!("max commit delay {}ms", d.as_millis()));
        }
        if self.commit_stats {
            words.push("commit stats".into());
        }
        if let Some(tag) = &self.tag {
            words.push(format!("tag {tag}"));
        }
        words.join(", ")
    }

    /// What is wrong with them, if anything.
    pub fn check(&self) -> Result<(), String> {
        if self.max_commit_delay.is_some_and(|d| d > MAX_COMMIT_DELAY) {
            return Err("--max-commit-delay must be between 0 and 500ms".into());
        }
        if self.max_attempts == 0 {
            return Err("--max-attempts must be at least 1".into());
        }
        if self.tag.as_deref().is_some_and(|t| t.len() > 50) {
            return Err("a transaction tag is at most 50 characters".into());
        }
        Ok(())
    }

    pub(super) fn transaction_options(&self, previous: Option<&[u8]>) -> pb::TransactionOptions {
        use pb::transaction_options::{IsolationLevel, Mode, ReadWrite, read_write::ReadLockMode};
        pb::TransactionOptions {
            mode: Some(Mode::ReadWrite(ReadWrite {
                read_lock_mode: match self.lock_mode {
                    LockMode::Default => ReadLockMode::Unspecified,
                    LockMode::Pessimistic => ReadLockMode::Pessimistic,
                    LockMode::Optimistic => ReadLockMode::Optimistic,
                } as i32,
                multiplexed_session_previous_transaction_id: previous
                    .map(<[u8]>::to_vec)
                    .unwrap_or_default(),
            })),
            exclude_txn_from_change_streams: false,
            isolation_level: match self.isolation {
                Isolation::Default => IsolationLevel::Unspecified,
                Isolation::Serializable => IsolationLevel::Serializable,
                Isolation::RepeatableRead => IsolationLevel::RepeatableRead,
            } as i32,
        }
    }

    pub(super) fn request_options(&self) -> Option<pb::RequestOptions> {
        self.tag.as_ref().map(|tag| pb::RequestOptions {
            transaction_tag: tag.clone(),
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_policy_is_named_as_the_command_line_takes_it() {
        assert_eq!(
            RetryPolicy::parse("honour-retry-info"),
            Ok(RetryPolicy::HonourRetryInfo)
        );
        assert_eq!(RetryPolicy::parse("none"), Ok(RetryPolicy::None));
        assert_eq!(
            RetryPolicy::parse("fixed:50ms"),
            Ok(RetryPolicy::Fixed(Duration::from_millis(50)))
        );
        assert!(RetryPolicy::parse("fixed:soon").is_err());
        assert!(RetryPolicy::parse("sometimes").is_err());
    }

    #[test]
    fn the_server_s_delay_is_honoured_as_asked_and_without_one_the_back_off_doubles() {
        let honour = RetryPolicy::HonourRetryInfo;
        assert_eq!(
            honour.backoff(Some(Duration::from_millis(20)), 2),
            Some(Duration::from_millis(20))
        );
        assert_eq!(honour.backoff(None, 2), Some(Duration::from_millis(10)));
        assert_eq!(honour.backoff(None, 4), Some(Duration::from_millis(40)));
        assert_eq!(honour.backoff(None, 40), Some(Duration::from_secs(1)));
        let fixed = RetryPolicy::Fixed(Duration::from_millis(5));
        assert_eq!(
            fixed.backoff(Some(Duration::from_millis(20)), 2),
            Some(Duration::from_millis(5))
        );
        assert_eq!(RetryPolicy::None.backoff(None, 2), None);
    }

    #[test]
    fn options_out_of_range_are_refused() {
        let delay = ReadWriteOptions {
            max_commit_delay: Some(Duration::from_millis(501)),
            ..ReadWriteOptions::default()
        };
        assert!(delay.check().is_err());
        let attempts = ReadWriteOptions {
            max_attempts: 0,
            ..ReadWriteOptions::default()
        };
        assert!(attempts.check().is_err());
        assert!(ReadWriteOptions::default().check().is_ok());
    }

    #[test]
    fn every_option_goes_in_its_field() {
        use pb::transaction_options::Mode;
        let options = ReadWriteOptions {
            isolation: Isolation::RepeatableRead,
            lock_mode: LockMode::Optimistic,
            ..ReadWriteOptions::default()
        };
        let wire = options.transaction_options(Some(b"prev"));
        assert_eq!(wire.isolation_level, 2);
        match wire.mode {
            Some(Mode::ReadWrite(rw)) => {
                assert_eq!(rw.read_lock_mode, 2);
                assert_eq!(rw.multiplexed_session_previous_transaction_id, b"prev");
            }
            other => panic!("{other:?}"),
        }
    }
}
