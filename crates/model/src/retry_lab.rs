//! The retry lab's plain data (`spanprof client --read-write`): what the local instance saw of a
//! subject's read-write calls ([`RwRequest`], from the server's read-write tap), and what the
//! retry check made of them ([`RetryCheck`]): a verdict per rule of a correct retry, the
//! amplification (attempts per transaction), and the transactions that starved.

use serde::{Deserialize, Serialize};

/// The RPC of a read-write call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RwRpc {
    /// BeginTransaction.
    Begin,
    /// ExecuteSql.
    ExecuteSql,
    /// ExecuteStreamingSql.
    ExecuteStreamingSql,
    /// ExecuteBatchDml.
    ExecuteBatchDml,
    /// Read or StreamingRead.
    Read,
    /// Commit.
    Commit,
    /// Rollback.
    Rollback,
}

impl RwRpc {
    /// The RPC's name.
    pub fn label(self) -> &'static str {
        match self {
            RwRpc::Begin => "BeginTransaction",
            RwRpc::ExecuteSql => "ExecuteSql",
            RwRpc::ExecuteStreamingSql => "ExecuteStreamingSql",
            RwRpc::ExecuteBatchDml => "ExecuteBatchDml",
            RwRpc::Read => "Read",
            RwRpc::Commit => "Commit",
            RwRpc::Rollback => "Rollback",
        }
    }
}

/// A transaction a call began (explicitly or inline).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RwBegan {
    /// The transaction (its id's eight bytes).
    pub txn: u64,
    /// Whether its session is multiplexed.
    pub multiplexed: bool,
    /// The transaction named in `multiplexed_session_previous_transaction_id`.
    pub previous_named: Option<u64>,
    /// The aborted attempt whose age the instance let it keep.
    pub previous_kept: Option<u64>,
}

/// One call of a read-write transaction as the local instance saw it; times in milliseconds
/// from when the lab started watching.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RwRequest {
    /// Its RPC.
    pub rpc: RwRpc,
    /// Its session.
    pub session: String,
    /// The transaction it named by id.
    pub named: Option<u64>,
    /// The transaction it began.
    pub began: Option<RwBegan>,
    /// Its transaction tag.
    pub tag: String,
    /// A commit's precommit token's sequence number.
    pub token_sent: Option<i32>,
    /// At a commit, the latest precommit token its transaction had handed out (0: none).
    pub token_latest: Option<i32>,
    /// The gRPC code it was answered with (0: OK).
    pub code: i32,
    /// The delay its answer's RetryInfo asked for.
    pub retry_delay_ms: Option<f64>,
    /// When it arrived.
    pub arrived_ms: f64,
    /// When it was answered.
    pub answered_ms: f64,
}

/// The gRPC code ABORTED.
pub const ABORTED: i32 = 10;

/// One rule of a correct retry (SPANNER_WIRE.md, "A correct retry").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// On a regular session, the retry runs on the aborted attempt's session.
    SameSession,
    /// On a multiplexed session, the retry's begin names the aborted attempt.
    PreviousTransaction,
    /// The same transaction tag on every request of the transaction.
    SameTag,
    /// A multiplexed commit carries the latest precommit token its attempt was given.
    LatestToken,
    /// The next attempt waits at least the RetryInfo delay after the ABORTED.
    RetryDelay,
    /// A Rollback after a failure other than ABORTED.
    RollbackAfterFailure,
}

impl Rule {
    /// Every rule, in the order they are printed.
    pub const ALL: [Rule; 6] = [
        Rule::SameSession,
        Rule::PreviousTransaction,
        Rule::SameTag,
        Rule::LatestToken,
        Rule::RetryDelay,
        Rule::RollbackAfterFailure,
    ];

    /// What the rule asks, in a few words.
    pub fn text(self) -> &'static str {
        match self {
            Rule::SameSession => "a retry on a regular session runs on the same session",
            Rule::PreviousTransaction => {
                "a retry on a multiplexed session names the aborted attempt (previous transaction id)"
            }
            Rule::SameTag => "the same transaction tag on every request, BeginTransaction included",
            Rule::LatestToken => "a multiplexed commit carries the latest precommit token",
            Rule::RetryDelay => "the next attempt waits the RetryInfo delay",
            Rule::RollbackAfterFailure => "a Rollback after a failure other than ABORTED",
        }
    }
}

/// The first evidence against a rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// The logical transaction (from 1, in the order their first attempts began).
    pub transaction: u32,
    /// The attempt within it (from 1).
    pub attempt: u32,
    /// The request: its RPC and when it arrived.
    pub request: String,
    /// What the rule expected.
    pub expected: String,
    /// What the server saw.
    pub seen: String,
}

/// A rule's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Every case of it held.
    Pass {
        /// The cases checked.
        checked: u32,
    },
    /// A case broke it: the first.
    Fail {
        /// The cases checked.
        checked: u32,
        /// The first that broke it.
        evidence: Evidence,
    },
    /// Nothing the program did put it to the test.
    NotExercised {
        /// Why.
        why: String,
    },
}

/// One rule and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleVerdict {
    /// The rule.
    pub rule: Rule,
    /// Its verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// How many attempts the server saw for the transactions the program ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Amplification {
    /// Logical transactions (an attempt and its retries).
    pub transactions: u32,
    /// Of those, the ones whose last attempt committed.
    pub committed: u32,
    /// Attempts, all told.
    pub attempts: u32,
    /// Attempts per logical transaction.
    pub attempts_per_transaction: f64,
    /// Attempts per committed transaction (none when nothing committed).
    pub attempts_per_commit: Option<f64>,
    /// The most attempts one transaction took.
    pub max_attempts: u32,
}

/// A transaction that kept losing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Starved {
    /// The logical transaction.
    pub transaction: u32,
    /// Its first attempt's transaction tag.
    pub tag: String,
    /// Its attempts.
    pub attempts: u32,
    /// Whether it committed in the end.
    pub committed: bool,
    /// Whether every retry kept the age of its first attempt.
    pub kept_age: bool,
    /// What the lab says of it.
    pub note: String,
}

/// What the retry check made of a subject's read-write calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetryCheck {
    /// A verdict per rule, in [`Rule::ALL`]'s order.
    pub rules: Vec<RuleVerdict>,
    /// Attempts per transaction.
    pub amplification: Amplification,
    /// Transactions that took [`STARVED_ATTEMPTS`] attempts or more.
    pub starved: Vec<Starved>,
    /// The read-write calls seen.
    pub requests: usize,
    /// Whether more calls came than the instance keeps (the verdicts cover the first).
    pub overflow: bool,
}

/// Attempts from which a transaction counts as starved.
pub const STARVED_ATTEMPTS: u32 = 10;

impl RetryCheck {
    /// Whether no rule failed and nothing starved.
    pub fn passed(&self) -> bool {
        self.starved.is_empty()
            && self
                .rules
                .iter()
                .all(|r| !matches!(r.verdict, Verdict::Fail { .. }))
    }

    /// The verdict of `rule`.
    pub fn verdict(&self, rule: Rule) -> Option<&Verdict> {
        self.rules
            .iter()
            .find(|r| r.rule == rule)
            .map(|r| &r.verdict)
    }
}
