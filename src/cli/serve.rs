//! `spanprof serve`: run the built-in local instance until Ctrl-C, with its knobs changeable from stdin.

use std::io::{BufRead, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::server::{DEFAULT_SEED23_ROWS, KnobSettings, Knobs, LocalInstance, ServerConfig};

/// Arguments of `spanprof serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Loopback port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Rows in the Seed23 table.
    #[arg(long, default_value_t = DEFAULT_SEED23_ROWS)]
    pub rows: u64,
    /// Largest PartialResultSet to send, in bytes (at least 256); values are split to fit.
    #[arg(long, default_value_t = 1 << 20)]
    pub max_message_bytes: u64,
    /// Fail every K-th message with UNAVAILABLE, once per resume point (0: never).
    #[arg(long, default_value_t = 0)]
    pub fail_every: u64,
    /// Delay before the first message of each response, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub first_byte_delay_ms: u64,
    /// Delay before every message, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub message_delay_ms: u64,
    /// Cap on the sending rate, in bytes per second (0: none).
    #[arg(long = "bandwidth", default_value_t = 0)]
    pub bandwidth_bytes_per_s: u64,
}

impl ServeArgs {
    /// The knob settings these arguments ask for.
    pub fn knobs(&self) -> KnobSettings {
        KnobSettings {
            max_message_bytes: self.max_message_bytes,
            fail_every: self.fail_every,
            first_byte_delay_ms: self.first_byte_delay_ms,
            message_delay_ms: self.message_delay_ms,
            bandwidth_bytes_per_s: self.bandwidth_bytes_per_s,
        }
    }
}

/// Serves until Ctrl-C (or SIGTERM). Prints the address and the `SPANNER_EMULATOR_HOST` line first.
pub fn run_serve(args: &ServeArgs, mut out: impl Write) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("spanprof-serve")
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let config = ServerConfig {
            port: args.port,
            seed23_rows: args.rows,
            knobs: args.knobs(),
        };
        let instance = LocalInstance::start(config).await?;
        let host_port = instance.host_port();
        // One write: a reader that stops after the address line must not make a later line fail.
        let banner = format!(
            "spanprof local instance listening on {host_port} (Seed23: {} rows)\n\
             SPANNER_EMULATOR_HOST={host_port}\n\
             change a knob by typing e.g. `fail-every 3` or `max-message-bytes 16384`; `show` prints them\n",
            args.rows
        );
        out.write_all(banner.as_bytes())?;
        out.flush()?;
        watch_stdin(Arc::clone(instance.knobs()));
        shutdown_signal().await;
        instance.stop(Duration::from_secs(2)).await;
        anyhow::Ok(())
    })
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

/// Reads `knob value` lines from stdin on a named thread and applies them. Stops at end of input.
fn watch_stdin(knobs: Arc<Knobs>) {
    let spawned = std::thread::Builder::new()
        .name("spanprof-knobs".into())
        .spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                match apply_knob(&knobs, &line) {
                    Ok(settings) => eprintln!("knobs: {settings:?}"),
                    Err(e) => eprintln!("{e}"),
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("knobs cannot be changed from stdin: {e}");
    }
}

/// Applies one `knob value` line (or `show`), returning the settings now in force.
pub fn apply_knob(knobs: &Knobs, line: &str) -> Result<KnobSettings, String> {
    let mut s = knobs.get();
    let mut words = line.split_whitespace();
    let (Some(name), value) = (words.next(), words.next()) else {
        return Ok(s);
    };
    if name == "show" {
        return Ok(s);
    }
    let value: u64 = value
        .ok_or_else(|| format!("`{name}` needs a value"))?
        .parse()
        .map_err(|_| format!("`{name}` needs a whole number"))?;
    match name {
        "max-message-bytes" => s.max_message_bytes = value,
        "fail-every" => s.fail_every = value,
        "first-byte-delay-ms" => s.first_byte_delay_ms = value,
        "message-delay-ms" => s.message_delay_ms = value,
        "bandwidth" => s.bandwidth_bytes_per_s = value,
        other => {
            return Err(format!(
                "unknown knob `{other}`: max-message-bytes, fail-every, first-byte-delay-ms, message-delay-ms, bandwidth"
            ));
        }
    }
    knobs.set(s);
    Ok(knobs.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knob_lines_change_the_live_knobs() {
        let knobs = Knobs::new(KnobSettings::default());
        assert_eq!(
            apply_knob(&knobs, "fail-every 3").map(|s| s.fail_every),
            Ok(3)
        );
        assert_eq!(knobs.get().fail_every, 3);
        assert!(apply_knob(&knobs, "fail-every").is_err());
        assert!(apply_knob(&knobs, "fail-every x").is_err());
        assert!(apply_knob(&knobs, "speed 3").is_err());
        assert_eq!(apply_knob(&knobs, "show").map(|s| s.fail_every), Ok(3));
    }
}
