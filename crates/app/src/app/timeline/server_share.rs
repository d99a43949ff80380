//! The server's reported time as an iteration's accounting splits it, said beside its timeline
//! and on the hover of its server band.

use crate::report::IterationRecord;

/// The server's reported time as the iteration's accounting splits it: its work while the client
/// waited (the `server` part), its work beside the client's own (the overlap), and its wait on
/// the client where it reported one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerShare {
    /// Its reported elapsed time, ms.
    pub elapsed: f64,
    /// The `server` part, ms.
    pub in_waits: f64,
    /// The overlap, ms.
    pub overlap: f64,
    /// Its reported wait on the client, ms.
    pub waiting_on_client: Option<f64>,
    /// Whether the split is an estimate.
    pub estimated: bool,
}

impl ServerShare {
    /// The share of `record`, when it has a server time.
    pub fn of(record: &IterationRecord) -> Option<ServerShare> {
        let a = record.accounting();
        Some(ServerShare {
            elapsed: record.query.server_elapsed_ms?,
            in_waits: a.parts.ms(crate::part::Part::Server),
            overlap: a.overlap_ms?,
            waiting_on_client: record.query.server_client_wait_ms,
            estimated: a.split == crate::part::Split::Estimated,
        })
    }
}

impl std::fmt::Display for ServerShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use crate::text::ms;
        write!(
            f,
            "the server reports {} elapsed: {} of its work while the client waited (server), {} beside the client's own work (overlap)",
            ms(self.elapsed),
            ms(self.in_waits),
            ms(self.overlap)
        )?;
        if let Some(wait) = self.waiting_on_client {
            write!(f, ", {} waiting on the client", ms(wait))?;
        }
        if self.estimated {
            f.write_str(" (an estimate: the server did not say how long it waited on the client)")?;
        }
        Ok(())
    }
}
