//! Talking to an instance: spanprof's own Spanner client, the Cloud Spanner emulator's launcher and
//! another program's client under the microscope (the subject). It names nothing of the server.
//!
//! A floor of spanprof (`ARCHITECTURE.md` has its table). The floors below are named at this
//! crate's root, so a path reads the same in every crate (`crate::wire::Value`).

pub mod client;
pub mod emulator;
pub mod subject;

use spanprof_base::{children, files, text, units};
use spanprof_model::{demo, report};
use spanprof_wire::{kind, proto, wire};
