//! spanprof's integration tests, in one binary so they share helpers and link once.

mod cli;
mod client;
mod errors;
mod fuzz;
mod golden;
mod iteration;
mod local;
mod memory;
mod official;
mod props;
mod support;
