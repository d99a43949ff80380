//! The Cloud Spanner emulator for the app and the tests: starting the installed `emulator_main`
//! on an address it binds itself, stopping it, and seeding it (or any plaintext endpoint) with the
//! demo tables.

mod process;
mod seed;

pub use process::{BINARY_VAR, Emulator, EmulatorError, PACKAGE, START_TIMEOUT, installed_binary};
pub use seed::{SeedError, SeedSummary, SeedTarget, TableSeeded, seed, seed_blocking};
