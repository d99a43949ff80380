//! spanprof's integration tests, in one binary so they share helpers and link once.

mod cli;
mod errors;
mod fuzz;
mod golden;
mod props;
mod support;
