//! spanprof's integration tests, in one binary so they share helpers and link once.

mod allocations;
mod app;
mod app_window_knobs;
mod cli;
mod client;
mod cloud;
mod emulator;
mod engine;
mod errors;
mod fast;
mod fuzz;
mod golden;
mod history;
mod hostile_client;
mod hostile_resources;
mod hostile_server;
mod hostile_sql;
mod hostile_streams;
mod hostile_tokens;
mod iteration;
mod layers;
mod local;
mod memory;
mod official;
mod official_load;
mod official_rust;
mod outlive;
mod plan;
mod plan_local;
mod props;
mod recorder;
mod row_check;
mod serve_process;
mod shapes;
mod spanprof_client;
mod support;
mod tail;
mod variants;

/// Counts what each thread holds, for the tests that bound memory (`allocations.rs`).
#[global_allocator]
static ALLOCATOR: allocations::Counting = allocations::Counting;
