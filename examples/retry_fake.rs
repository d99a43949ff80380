//! A fake Spanner client that runs read-write transactions over gRPC and retries them, following
//! every rule of a correct retry or breaking exactly one, so that the retry lab
//! (`spanprof client --read-write`) can be shown to catch each. A real program on the wire (the
//! generated stubs over tonic), not a mock.
//!
//! usage: retry_fake MODE [--transactions N] [--seconds S] [--key K] [--think-ms MS] [--tag T]
//!        [--multiplexed | --regular] [--inline]
//!
//! MODE: `follow` (every rule: N transactions on a regular session, N on a multiplexed one, and
//! one that fails and is rolled back), or the rule it breaks: `other-session` (a regular session's
//! retry on a new session), `no-previous` (a multiplexed retry naming no previous transaction),
//! `no-tag` (a commit without the transaction's tag), `stale-token` (a multiplexed commit with the
//! first precommit token, not the latest), `no-wait` (a retry at once, whatever RetryInfo asked),
//! `no-rollback` (a failed transaction left open). Each transaction reads and increments
//! `Accounts` row K (1), thinking `--think-ms` between; `--seconds` runs transactions until then
//! instead of N; `--inline` begins each attempt with its read (an inline begin) instead of
//! BeginTransaction. Finds the instance through SPANNER_EMULATOR_HOST and SPANPROF_PROJECT,
//! SPANPROF_INSTANCE and SPANPROF_DATABASE; prints `N committed in M attempts` on stderr.

use std::time::{Duration, Instant};

use pb::transaction_selector::Selector;
use prost::Message as _;
use spanprof::proto::google::rpc;
use spanprof::proto::google::spanner::v1 as pb;
use spanprof::proto::google::spanner::v1::spanner_client::SpannerClient;
use tonic::transport::Channel;
use tonic::{Code, Status};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Follow,
    OtherSession,
    NoPrevious,
    NoTag,
    StaleToken,
    NoWait,
    NoRollback,
}

struct Options {
    mode: Mode,
    transactions: u32,
    seconds: Option<f64>,
    key: i64,
    think: Duration,
    tag: String,
    multiplexed: Option<bool>,
    inline: bool,
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mode = match args.next().as_deref() {
        Some("follow") => Mode::Follow,
        Some("other-session") => Mode::OtherSession,
        Some("no-previous") => Mode::NoPrevious,
        Some("no-tag") => Mode::NoTag,
        Some("stale-token") => Mode::StaleToken,
        Some("no-wait") => Mode::NoWait,
        Some("no-rollback") => Mode::NoRollback,
        other => return Err(format!("unknown mode {other:?}")),
    };
    let mut o = Options {
        mode,
        transactions: 4,
        seconds: None,
        key: 1,
        think: Duration::ZERO,
        tag: "retry-fake".into(),
        multiplexed: None,
        inline: false,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--transactions" => o.transactions = value()?.parse().map_err(|e| format!("{e}"))?,
            "--seconds" => o.seconds = Some(value()?.parse().map_err(|e| format!("{e}"))?),
            "--key" => o.key = value()?.parse().map_err(|e| format!("{e}"))?,
            "--think-ms" => {
                o.think = Duration::from_millis(value()?.parse().map_err(|e| format!("{e}"))?)
            }
            "--tag" => o.tag = value()?,
            "--multiplexed" => o.multiplexed = Some(true),
            "--regular" => o.multiplexed = Some(false),
            "--inline" => o.inline = true,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(o)
}

struct Fake {
    client: SpannerClient<Channel>,
    database: String,
    o: Options,
    attempts: u32,
    committed: u32,
}

/// How one attempt ended.
enum Ended {
    Committed,
    Aborted { txn: Vec<u8>, delay: Duration },
    Failed(Status),
}

fn retry_delay(status: &Status) -> Duration {
    let info = rpc::Status::decode(status.details())
        .ok()
        .and_then(|s| {
            s.details
                .into_iter()
                .find(|a| a.type_url.ends_with("RetryInfo"))
        })
        .and_then(|a| rpc::RetryInfo::decode(a.value.as_slice()).ok())
        .and_then(|i| i.retry_delay);
    info.map_or(Duration::ZERO, |d| {
        Duration::from_secs(d.seconds.max(0) as u64) + Duration::from_nanos(d.nanos.max(0) as u64)
    })
}

impl Fake {
    async fn session(&mut self, multiplexed: bool) -> Result<String, Status> {
        let request = pb::CreateSessionRequest {
            database: self.database.clone(),
            session: Some(pb::Session {
                multiplexed,
                ..Default::default()
            }),
        };
        Ok(self.client.create_session(request).await?.into_inner().name)
    }

    fn request_options(&self, tagged: bool) -> Option<pb::RequestOptions> {
        Some(pb::RequestOptions {
            transaction_tag: if tagged {
                self.o.tag.clone()
            } else {
                String::new()
            },
            ..Default::default()
        })
    }

    async fn sql(
        &mut self,
        session: &str,
        txn: &[u8],
        sql: &str,
        seqno: i64,
    ) -> Result<pb::ResultSet, Status> {
        self.sql_in(session, Selector::Id(txn.to_vec()), sql, seqno)
            .await
    }

    async fn sql_in(
        &mut self,
        session: &str,
        selector: Selector,
        sql: &str,
        seqno: i64,
    ) -> Result<pb::ResultSet, Status> {
        let request = pb::ExecuteSqlRequest {
            session: session.to_owned(),
            transaction: Some(pb::TransactionSelector {
                selector: Some(selector),
            }),
            sql: sql.to_owned(),
            seqno,
            request_options: self.request_options(true),
            ..Default::default()
        };
        Ok(self.client.execute_sql(request).await?.into_inner())
    }

    /// One attempt: begin (naming `previous`), read, think, write, commit.
    async fn attempt(&mut self, session: &str, previous: Vec<u8>, fail: bool) -> Ended {
        self.attempts += 1;
        match self.try_attempt(session, previous, fail).await {
            Ok(()) => Ended::Committed,
            Err((txn, status)) if status.code() == Code::Aborted => Ended::Aborted {
                txn,
                delay: retry_delay(&status),
            },
            Err((_, status)) => Ended::Failed(status),
        }
    }

    async fn try_attempt(
        &mut self,
        session: &str,
        previous: Vec<u8>,
        fail: bool,
    ) -> Result<(), (Vec<u8>, Status)> {
        let options = pb::TransactionOptions {
            mode: Some(pb::transaction_options::Mode::ReadWrite(
                pb::transaction_options::ReadWrite {
                    multiplexed_session_previous_transaction_id: previous,
                    ..Default::default()
                },
            )),
            ..Default::default()
        };
        let key = self.o.key;
        let read = format!("SELECT Balance FROM Accounts WHERE AccountId = {key}");
        let (id, mut tokens) = if self.o.inline {
            // The read begins it: its id comes back in the answer's metadata.
            let answer = self
                .sql_in(session, Selector::Begin(options), &read, 1)
                .await
                .map_err(|s| (Vec::new(), s))?;
            let id = answer.metadata.and_then(|m| m.transaction).map(|t| t.id);
            let tokens: Vec<_> = answer.precommit_token.into_iter().collect();
            (id.unwrap_or_default(), tokens)
        } else {
            let begin = pb::BeginTransactionRequest {
                session: session.to_owned(),
                options: Some(options),
                request_options: self.request_options(true),
                ..Default::default()
            };
            let txn = self.client.begin_transaction(begin).await;
            let txn = txn.map_err(|s| (Vec::new(), s))?.into_inner();
            let mut tokens: Vec<_> = txn.precommit_token.into_iter().collect();
            let answer = self.sql(session, &txn.id, &read, 1).await;
            tokens.extend(answer.map_err(|s| (txn.id.clone(), s))?.precommit_token);
            (txn.id, tokens)
        };
        let on = |s: Status| (id.clone(), s);
        tokio::time::sleep(self.o.think).await;
        if fail {
            let failed = self
                .sql(
                    session,
                    &id,
                    "UPDATE NoSuchTable SET Balance = 0 WHERE AccountId = 1",
                    2,
                )
                .await;
            let status = failed
                .err()
                .unwrap_or_else(|| Status::internal("the bad statement ran"));
            if self.o.mode != Mode::NoRollback {
                let rollback = pb::RollbackRequest {
                    session: session.to_owned(),
                    transaction_id: id.clone(),
                };
                self.client.rollback(rollback).await.map_err(on)?;
            }
            return Err((id, status));
        }
        let write = format!("UPDATE Accounts SET Balance = Balance + 1 WHERE AccountId = {key}");
        let written = self.sql(session, &id, &write, 3).await;
        tokens.extend(written.map_err(on)?.precommit_token);
        tokens.sort_by_key(|t| t.seq_num);
        let token = match self.o.mode {
            Mode::StaleToken => tokens.first().cloned(),
            _ => tokens.last().cloned(),
        };
        self.commit(session, &id, token).await.map_err(on)
    }

    async fn commit(
        &mut self,
        session: &str,
        id: &[u8],
        mut token: Option<pb::MultiplexedSessionPrecommitToken>,
    ) -> Result<(), Status> {
        use pb::commit_response::MultiplexedSessionRetry;
        for _ in 0..3 {
            let commit = pb::CommitRequest {
                session: session.to_owned(),
                transaction: Some(pb::commit_request::Transaction::TransactionId(id.to_vec())),
                request_options: self.request_options(self.o.mode != Mode::NoTag),
                precommit_token: token.take(),
                ..Default::default()
            };
            let answer = self.client.commit(commit).await?.into_inner();
            match answer.multiplexed_session_retry {
                Some(MultiplexedSessionRetry::PrecommitToken(again)) => token = Some(again),
                None => return Ok(()),
            }
        }
        Err(Status::internal("the commit kept asking to be retried"))
    }

    /// One logical transaction, retried after each ABORTED as the mode says.
    async fn transaction(&mut self, multiplexed: bool, fail: bool) -> Result<(), Status> {
        let mut session = self.session(multiplexed).await?;
        let mut previous = Vec::new();
        loop {
            match self.attempt(&session, previous, fail).await {
                Ended::Committed => {
                    self.committed += 1;
                    return Ok(());
                }
                Ended::Failed(status) => {
                    eprintln!("a transaction failed: {}", status.message());
                    return Ok(());
                }
                Ended::Aborted { txn, delay } => {
                    if self.o.mode != Mode::NoWait {
                        tokio::time::sleep(delay).await;
                    }
                    previous = match (multiplexed, self.o.mode) {
                        (true, Mode::NoPrevious) | (false, _) => Vec::new(),
                        (true, _) => txn,
                    };
                    if self.o.mode == Mode::OtherSession {
                        session = self.session(multiplexed).await?;
                    }
                }
            }
        }
    }

    async fn run(&mut self) -> Result<(), Status> {
        let kinds: Vec<bool> = match (self.o.multiplexed, self.o.mode) {
            (Some(m), _) => vec![m],
            (None, Mode::Follow) => vec![false, true],
            (None, Mode::NoPrevious | Mode::StaleToken) => vec![true],
            (None, _) => vec![false],
        };
        let until = self
            .o
            .seconds
            .map(|s| Instant::now() + Duration::from_secs_f64(s));
        for multiplexed in kinds {
            let mut n = 0;
            while until.map_or(n < self.o.transactions, |u| Instant::now() < u) {
                self.transaction(multiplexed, false).await?;
                n += 1;
            }
        }
        if matches!(self.o.mode, Mode::Follow | Mode::NoRollback) && until.is_none() {
            self.transaction(false, true).await?;
        }
        Ok(())
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let o = options()?;
    let var =
        |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let host = std::env::var("SPANNER_EMULATOR_HOST")?;
    let database = format!(
        "projects/{}/instances/{}/databases/{}",
        var("SPANPROF_PROJECT", "test-project"),
        var("SPANPROF_INSTANCE", "test-instance"),
        var("SPANPROF_DATABASE", "test-db"),
    );
    let client = SpannerClient::connect(format!("http://{host}")).await?;
    let mut fake = Fake {
        client,
        database,
        o,
        attempts: 0,
        committed: 0,
    };
    let ran = fake.run().await;
    eprintln!("{} committed in {} attempts", fake.committed, fake.attempts);
    ran?;
    Ok(())
}
