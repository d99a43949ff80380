//! `max_commit_delay`, modelled: commits that may wait are gathered into batches applied together.
//!
//! The model, exactly: a commit without a delay (none, or zero) is applied at once, on its own. A
//! commit with a delay `d` joins the open batch if there is one, else opens one; the batch is due
//! at the earliest of its commits' arrival plus delay, so no commit waits longer than it allowed.
//! When the batch is due, its commits are applied in arrival order under one hold of the
//! read-write connection (`Writer::commit_all`: each validated and applied in its own SQLite
//! transaction, so one's failure is its own) and they share one commit timestamp. A batch holds
//! at most one commit per open transaction, which the transactions' own bounds limit.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{Notify, oneshot};
use tonic::Status;

use crate::server::txn::write::{CommitWork, WriteBounds, Writer};

/// The longest `max_commit_delay` production accepts.
pub const MAX_COMMIT_DELAY: Duration = Duration::from_millis(500);

/// A commit's outcome: its timestamp, or why nothing of it was applied.
pub type Outcome = Result<prost_types::Timestamp, Status>;

/// The batch of commits waiting for their delay, if one is open.
#[derive(Debug, Default)]
pub struct Batches {
    open: Mutex<Option<Open>>,
    /// Wakes the batch's task when a newcomer brings its due time forward.
    sooner: Arc<Notify>,
}

#[derive(Debug)]
struct Open {
    due: Instant,
    works: Vec<(CommitWork, oneshot::Sender<Outcome>)>,
}

impl Batches {
    /// Applies `work` through `writer`: at once without a delay, else with the batch it joins
    /// or opens, when that batch is due.
    pub async fn commit(
        self: &Arc<Self>,
        writer: &Arc<Writer>,
        work: CommitWork,
        delay: Duration,
        bounds: WriteBounds,
    ) -> Outcome {
        if delay.is_zero() {
            return apply(Arc::clone(writer), vec![work], bounds)
                .await
                .pop()
                .unwrap_or_else(|| Err(Status::internal("the commit was lost")));
        }
        let (tx, rx) = oneshot::channel();
        let opened = {
            let mut open = self.lock();
            let due = Instant::now() + delay;
            match open.as_mut() {
                Some(batch) => {
                    batch.works.push((work, tx));
                    if due < batch.due {
                        batch.due = due;
                        self.sooner.notify_one();
                    }
                    false
                }
                None => {
                    *open = Some(Open {
                        due,
                        works: vec![(work, tx)],
                    });
                    true
                }
            }
        };
        if opened {
            let (batches, writer) = (Arc::clone(self), Arc::clone(writer));
            tokio::spawn(async move { batches.run_when_due(writer, bounds).await });
        }
        rx.await
            .unwrap_or_else(|_| Err(Status::internal("the commit's batch was lost")))
    }

    /// The open batch's task: waits until it is due (sooner if a newcomer asks), takes it, and
    /// applies it.
    async fn run_when_due(&self, writer: Arc<Writer>, bounds: WriteBounds) {
        loop {
            let due = match self.lock().as_ref() {
                Some(batch) => batch.due,
                None => return,
            };
            if Instant::now() >= due {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep_until(due.into()) => {}
                () = self.sooner.notified() => {}
            }
        }
        let Some(batch) = self.lock().take() else {
            return;
        };
        let (works, senders): (Vec<CommitWork>, Vec<_>) = batch.works.into_iter().unzip();
        let outcomes = apply(writer, works, bounds).await;
        for (tx, outcome) in senders.into_iter().zip(outcomes) {
            // A client that left no longer waits for its outcome.
            let _ = tx.send(outcome);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Open>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Applies `works` together on a blocking thread; each gets the batch's timestamp or its error.
async fn apply(writer: Arc<Writer>, works: Vec<CommitWork>, bounds: WriteBounds) -> Vec<Outcome> {
    let n = works.len();
    let applied = tokio::task::spawn_blocking(move || writer.commit_all(&works, bounds)).await;
    let timestamp = now();
    match applied {
        Ok(each) => each.into_iter().map(|r| r.map(|()| timestamp)).collect(),
        Err(e) => (0..n)
            .map(|_| Err(Status::internal(format!("the commit's thread failed: {e}"))))
            .collect(),
    }
}

/// Now, as a protobuf timestamp.
pub fn now() -> prost_types::Timestamp {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    prost_types::Timestamp {
        seconds: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(d.subsec_nanos()).unwrap_or(0),
    }
}
