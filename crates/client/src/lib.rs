//! Talking to an instance: spanprof's own Spanner client, the Cloud Spanner emulator's launcher,
//! another program's client under the microscope (the subject), and the script a read-write
//! transaction runs (parsed into its steps). It names nothing of the server.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod client;
pub mod emulator;
pub mod script;
pub mod subject;

use spanprof_base::{children, files, text, units};
use spanprof_model::{demo, report};
use spanprof_wire::{kind, proto, wire};
