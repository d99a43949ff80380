//! Generates the Spanner code from `proto/`, with the protoc that protoc-bin-vendored ships (no
//! system protoc needed). One script for the two crates that need generated code, each naming it
//! as its `build` in its Cargo.toml:
//! - `spanprof-wire`: the message types and the tonic client and server (`proto.rs` includes them);
//! - `spanprof-server`: the local instance's service once more, answering with messages it has
//!   already encoded (`server/encoded.rs` includes it).

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // This file sits at the top of the repository; the crate running it, two floors below.
    let top = Path::new(&std::env::var("CARGO_MANIFEST_DIR")?)
        .join("../..")
        .canonicalize()?;
    let root = top.join("proto");
    println!("cargo:rerun-if-changed={}", root.display());
    let includes = [root.clone(), protoc_bin_vendored::include_path()?];
    match std::env::var("CARGO_PKG_NAME")?.as_str() {
        "spanprof-wire" => spanner_protos(&root, &includes),
        "spanprof-server" => local_server_stubs(&root, &includes),
        other => Err(format!("build.rs generates nothing for {other}").into()),
    }
}

/// Every message type, and the client and server of every service.
fn spanner_protos(root: &Path, includes: &[PathBuf]) -> Result<(), Box<dyn std::error::Error>> {
    let mut protos = Vec::new();
    collect_protos(root, &mut protos)?;
    protos.sort();
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .include_file("spanner_protos.rs")
        .compile_with_config(config, &protos, includes)?;
    Ok(())
}

/// The built-in local instance's Spanner service, generated a second time with every message taken
/// from `spanprof-wire`'s code except `PartialResultSet` and `ResultSet`, which the local server
/// sends already encoded (`crate::server::encoded::EncodedPartialResultSet`, `EncodedResultSet`):
/// its answers are built as bytes, never as trees.
fn local_server_stubs(root: &Path, includes: &[PathBuf]) -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(std::env::var("OUT_DIR")?).join("local_server");
    std::fs::create_dir_all(&out)?;
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .out_dir(&out)
        .include_file("local_server.rs")
        .extern_path(".google.spanner.v1", "crate::proto::google::spanner::v1")
        .extern_path(
            ".google.spanner.v1.PartialResultSet",
            "crate::server::encoded::EncodedPartialResultSet",
        )
        .extern_path(
            ".google.spanner.v1.ResultSet",
            "crate::server::encoded::EncodedResultSet",
        )
        .compile_with_config(
            config,
            &[root.join("google/spanner/v1/spanner.proto")],
            includes,
        )?;
    Ok(())
}

/// Every `.proto` file under `dir`, recursively.
fn collect_protos(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_protos(&path, out)?;
        } else if path.extension().is_some_and(|ext| ext == "proto") {
            out.push(path);
        }
    }
    Ok(())
}
