//! What each request of a load run draws (`load --param NAME=DIST`, `--mix`): request `n` of the
//! run (numbered as requests start, across the steps) takes the drawer's `n`-th draw, so a run's
//! keys are fixed by its seed whatever the interleaving; the warm-up draws apart
//! ([`crate::load::draw::WARM_UP`]). A transaction binds its draw in every attempt.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::client::Bound;
use crate::load::{Drawer, Draws};
use crate::script::Script;

/// One script of a mix, named by its file's stem.
#[derive(Debug, Clone, PartialEq)]
pub struct MixScript {
    /// Its name.
    pub name: String,
    /// Its steps.
    pub script: Script,
}

/// What a load run's requests draw: the seed, the parameters and the mix's weights (`None`: each
/// request binds nothing and runs the variant's one script), and the mix's scripts in its order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadDraws {
    /// The seed, the parameters and the mix, as the report keeps them.
    pub draws: Option<Draws>,
    /// A read-write run's mix of scripts (empty: the variant's script).
    pub scripts: Vec<MixScript>,
}

/// The run's drawer and the number of the next request.
pub(super) struct RequestDraws {
    drawer: Drawer,
    names: Vec<String>,
    next: AtomicU64,
}

/// One request's draw: its script's place in the mix and its parameters.
pub(super) struct RequestDraw {
    pub(super) script: usize,
    pub(super) bound: Vec<Bound>,
}

impl RequestDraws {
    /// Draws for `draws`, the first request numbered 0.
    pub(super) fn new(draws: &Draws) -> Self {
        RequestDraws {
            drawer: Drawer::new(draws),
            names: draws.params.iter().map(|p| p.name.clone()).collect(),
            next: AtomicU64::new(0),
        }
    }

    /// The next request's draw.
    pub(super) fn next(&self) -> RequestDraw {
        self.of(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Request `n`'s draw.
    pub(super) fn of(&self, n: u64) -> RequestDraw {
        let drawn = self.drawer.draw(n);
        RequestDraw {
            script: drawn.script,
            bound: self
                .names
                .iter()
                .zip(drawn.values)
                .map(|(name, value)| Bound::drawn(name.clone(), value))
                .collect(),
        }
    }
}
