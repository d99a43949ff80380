//! A script's READ in an attempt: a StreamingRead of rows by key in the transaction (it may begin
//! it inline), with the READ's lock hint and the transaction tag, its keys' `@name`s taken from
//! the parameters bound for the transaction; its rows decoded and timed as a query's, and its wait
//! for locks, when the answer's headers give one (the local instance's), kept on its action.

use super::options::ReadWriteOptions;
use super::timing::ActionCall;
use super::{Broke, Running};
use crate::client::iteration::{Decoding, Streamed, run_streamed};
use crate::client::params::Bound;
use crate::client::resume::ResumePolicy;
use crate::client::session::Session;
use crate::client::timing::IterationError;
use crate::proto::google::spanner::v1 as pb;
use crate::script::{KeyRead, KeyValue, ReadLock};
use crate::wire::{DecoderKind, RowsView, encode_value};

impl Session {
    /// Runs READ `read`, the script's `index`-th step, in the attempt.
    pub(super) async fn read(
        &self,
        run: &mut Running<'_, '_>,
        index: u32,
        read: &KeyRead,
        (options, decoder, previous): (&ReadWriteOptions, DecoderKind, Option<&[u8]>),
    ) -> Result<(), Broke> {
        let key_set = key_set(read, run.bound).map_err(|s| Broke::Status(ActionCall::Read, s))?;
        let request = pb::ReadRequest {
            session: run.session.to_owned(),
            transaction: Some(run.selector(options, previous)),
            table: read.table.clone(),
            columns: read.columns.clone(),
            key_set: Some(key_set),
            request_options: options.request_options(),
            lock_hint: lock_hint(read.lock) as i32,
            ..Default::default()
        };
        let began = run.start(ActionCall::Read, index);
        let mut ignore = |_: RowsView<'_>, _: usize| {};
        let metadata = run.next_call();
        let timing = run_streamed(
            run.channel.clone(),
            Streamed::Read(request),
            metadata,
            // A read in a read-write transaction is not resumed, as its statements are not.
            ResumePolicy::never(),
            self.timeouts(),
            Decoding::new(decoder, &mut ignore),
        )
        .await
        .map_err(|e| Broke::Error(ActionCall::Read, e))?;
        if run.id.is_none() {
            let Some(id) = timing.transaction_id.clone() else {
                return Err(Broke::Error(
                    ActionCall::Read,
                    IterationError::Unsupported(
                        "the server began no transaction for the first read (no transaction id in its answer)",
                    ),
                ));
            };
            run.id = Some(id);
        }
        run.keep_token(timing.precommit_token.clone());
        let waited = timing.server_lock_wait.clone();
        let step = run.push(ActionCall::Read, index, began);
        step.rows = Some(timing.rows);
        // The waits it names are read from its timing's headers, as a NORMAL-mode statement's.
        step.server_lock_wait = waited.map(|w| w.waited);
        step.statement = Some(timing);
        Ok(())
    }
}

/// The hint a READ's `LOCK` clause asks.
fn lock_hint(lock: ReadLock) -> pb::read_request::LockHint {
    match lock {
        ReadLock::Default => pb::read_request::LockHint::Unspecified,
        ReadLock::Shared => pb::read_request::LockHint::Shared,
        ReadLock::Exclusive => pb::read_request::LockHint::Exclusive,
    }
}

/// The READ's keys as a request carries them, each `@name` the value `bound` holds for it (the
/// name compared without regard to case); a name nothing binds is INVALID_ARGUMENT, sent nowhere.
fn key_set(read: &KeyRead, bound: &[Bound]) -> Result<pb::KeySet, tonic::Status> {
    let value = |v: &KeyValue| match v {
        KeyValue::Literal(value) => Ok(value.clone()),
        KeyValue::Param(name) => bound
            .iter()
            .find(|b| b.name.eq_ignore_ascii_case(name))
            .map(|b| encode_value(&b.value))
            .ok_or_else(|| {
                tonic::Status::invalid_argument(format!(
                    "READ on line {}: no parameter @{name} is bound (give it with --param, or \
                     draw it in a load run)",
                    read.line
                ))
            }),
    };
    let keys = read
        .keys
        .iter()
        .map(|key| {
            let values = key.iter().map(value).collect::<Result<_, _>>()?;
            Ok(prost_types::ListValue { values })
        })
        .collect::<Result<_, tonic::Status>>()?;
    Ok(pb::KeySet {
        keys,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Value;

    #[test]
    fn a_reads_keys_take_their_parameters_from_the_bound_values_and_an_unbound_one_is_refused() {
        let script = crate::script::parse("READ Accounts (Balance) KEY (@id), (7) LOCK EXCLUSIVE")
            .expect("parses");
        let crate::script::Step::Read(read) = &script.steps[0] else {
            panic!("{script:?}");
        };
        assert_eq!(lock_hint(read.lock), pb::read_request::LockHint::Exclusive);
        let bound = [Bound::drawn("ID".into(), Value::Int64(42))];
        let keys = key_set(read, &bound).expect("bound").keys;
        let int = |n: &str| prost_types::Value {
            kind: Some(prost_types::value::Kind::StringValue(n.into())),
        };
        assert_eq!(keys[0].values, [int("42")]);
        assert_eq!(keys[1].values, [int("7")]);
        let unbound = key_set(read, &[]).expect_err("nothing binds @id");
        assert_eq!(unbound.code(), tonic::Code::InvalidArgument);
        assert!(unbound.message().contains("@id"), "{unbound:?}");
    }
}
