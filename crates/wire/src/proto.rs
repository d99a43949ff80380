//! The Spanner wire types and gRPC stubs that `build.rs` generates from `proto/`.
//!
//! Nothing else lives here. Code outside `wire`, `client` and `server` should not need these types.
#![allow(missing_docs, clippy::all, clippy::pedantic)]

include!(concat!(env!("OUT_DIR"), "/spanner_protos.rs"));
