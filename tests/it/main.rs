//! spanprof's integration tests, in one binary so they share helpers and link once.

mod app;
mod cli;
mod client;
mod cloud;
mod emulator;
mod engine;
mod errors;
mod fast;
mod fuzz;
mod golden;
mod hostile_client;
mod hostile_resources;
mod hostile_sql;
mod hostile_tokens;
mod iteration;
mod local;
mod memory;
mod official;
mod official_load;
mod plan;
mod plan_local;
mod props;
mod recorder;
mod serve_process;
mod support;
mod variants;
