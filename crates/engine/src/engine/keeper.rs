//! The built-in local instance kept running across runs ([`LocalKeeper`]), for a holder that
//! starts run after run (the window): a run of [`Target::Kept`](super::Target::Kept) reaches the
//! instance already serving instead of building its database again (100,000 Seed23 rows, some
//! 25 MB through the C library's allocator, which kept a share of every run's). The instance is
//! started by the first run that asks for it and again when a run asks for another configuration
//! (other knobs, rows or limits); the one before stops once no run holds it. Its server runs on a
//! runtime of its own, as each run's runtime ends with its run. Why the local instance could not
//! start, kept or not, is a [`StartLocalError`].

use std::sync::Arc;

use tokio::sync::Mutex;

use crate::server::{LocalInstance, ServerConfig, StartError};

/// The name of the threads the kept instance serves on: `spanprof-…`, so the window does not count
/// them as its own CPU.
const THREADS: &str = "spanprof-local-io";

/// The built-in local instance could not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("cannot start the local instance: {0}")]
pub struct StartLocalError(pub Arc<StartError>);

impl From<StartError> for StartLocalError {
    fn from(e: StartError) -> Self {
        StartLocalError(Arc::new(e))
    }
}

/// Keeps one local instance serving across runs; cheap to clone (every clone keeps the same one).
/// Dropping the last clone, and the last run that holds the instance, stops it.
#[derive(Debug, Clone, Default)]
pub struct LocalKeeper(Arc<Mutex<Option<Arc<Kept>>>>);

/// A kept instance and the runtime it serves on.
#[derive(Debug)]
pub struct Kept {
    config: ServerConfig,
    instance: LocalInstance,
    /// Dropped after the instance (fields drop in order), ending its tasks.
    _runtime: Background,
}

/// A runtime that ends without waiting when dropped: a runtime may not be dropped where a task
/// runs, and the kept one is let go from a run's task (a run cancelled while it starts, the last
/// run holding a replaced instance), so neither a run's end nor the window's close waits for a
/// connection to wind down.
#[derive(Debug)]
struct Background(Option<tokio::runtime::Runtime>);

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Kept {
    /// The instance.
    pub fn instance(&self) -> &LocalInstance {
        &self.instance
    }
}

impl LocalKeeper {
    /// The instance serving `config`: the one kept when it was started with the same
    /// configuration, else a new one (the one before stops once the runs holding it end).
    pub async fn instance(&self, config: &ServerConfig) -> Result<Arc<Kept>, StartLocalError> {
        let mut slot = self.0.lock().await;
        if let Some(kept) = slot.as_ref().filter(|k| k.config == *config) {
            return Ok(Arc::clone(kept));
        }
        *slot = None;
        let built = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name(THREADS)
            .enable_all()
            .build()
            .map_err(StartError::Threads)?;
        let handle = built.handle().clone();
        let runtime = Background(Some(built));
        // A run cancelled here drops this future, and the runtime with it, without waiting.
        let instance = handle
            .spawn(LocalInstance::start(config.clone()))
            .await
            .map_err(StartError::Setup)??;
        let kept = Arc::new(Kept {
            config: config.clone(),
            instance,
            _runtime: runtime,
        });
        *slot = Some(Arc::clone(&kept));
        Ok(kept)
    }

    /// Where the kept instance serves, if one is and no run is starting it this moment (never
    /// waits: a window's frame may ask).
    pub fn address(&self) -> Option<std::net::SocketAddr> {
        let slot = self.0.try_lock().ok()?;
        slot.as_ref().map(|kept| kept.instance.addr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(rows: u64) -> ServerConfig {
        ServerConfig {
            seed23_rows: rows,
            ..ServerConfig::default()
        }
    }

    fn address(kept: &Kept) -> std::net::SocketAddr {
        kept.instance().addr()
    }

    #[tokio::test]
    async fn the_same_configuration_reaches_the_same_instance_and_another_starts_a_new_one() {
        let keeper = LocalKeeper::default();
        assert_eq!(keeper.address(), None);
        let first = keeper.instance(&small(10)).await.expect("starts");
        let again = keeper.instance(&small(10)).await.expect("kept");
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(address(&first), address(&again));
        assert_eq!(keeper.address(), Some(address(&first)));
        let other = keeper.instance(&small(20)).await.expect("starts anew");
        assert!(!Arc::ptr_eq(&first, &other));
        assert_ne!(address(&first), address(&other));
        // The one before serves the runs that still hold it, and stops with the last of them.
        assert!(
            tokio::net::TcpStream::connect(address(&first))
                .await
                .is_ok()
        );
        let before = address(&first);
        drop((first, again));
        let mut refused = false;
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(before).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(refused, "the replaced instance still listens on {before}");
        assert!(
            tokio::net::TcpStream::connect(address(&other))
                .await
                .is_ok()
        );
    }

    /// A run cancelled while the instance starts drops the start, and the runtime it made, from
    /// its task: nothing is kept, nothing panics, and the next run starts one.
    #[tokio::test]
    async fn a_start_abandoned_midway_keeps_nothing_and_the_next_one_starts() {
        let keeper = LocalKeeper::default();
        let config = small(5_000);
        let abandoned = tokio::time::timeout(
            std::time::Duration::from_micros(50),
            keeper.instance(&config),
        )
        .await;
        assert!(abandoned.is_err(), "the database is not built in 50 µs");
        assert_eq!(keeper.address(), None);
        let kept = keeper.instance(&config).await.expect("starts");
        assert!(tokio::net::TcpStream::connect(address(&kept)).await.is_ok());
    }

    #[tokio::test]
    async fn a_port_already_taken_is_said_and_nothing_is_kept() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = taken.local_addr().expect("bound").port();
        let keeper = LocalKeeper::default();
        let config = ServerConfig { port, ..small(10) };
        let error = keeper.instance(&config).await.expect_err("taken");
        assert!(error.to_string().contains("cannot listen"), "{error}");
        assert_eq!(keeper.address(), None);
    }
}
