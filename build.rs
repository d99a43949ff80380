//! Generates the Spanner message types and the tonic client and server code from `proto/`,
//! with the protoc that protoc-bin-vendored ships (no system protoc needed).

use std::path::{Path, PathBuf};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new("proto");
    let mut protos = Vec::new();
    collect_protos(root, &mut protos)?;
    protos.sort();
    println!("cargo:rerun-if-changed=proto");

    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    let includes = [root.to_path_buf(), protoc_bin_vendored::include_path()?];
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .include_file("spanner_protos.rs")
        .compile_with_config(config, &protos, &includes)?;
    local_server_stubs(&includes)?;
    Ok(())
}

/// The built-in local instance's Spanner service, generated a second time with every message taken
/// from the code above except `PartialResultSet` and `ResultSet`, which the local server sends already
/// encoded (`crate::server::encoded::EncodedPartialResultSet`, `EncodedResultSet`): its answers are
/// built as bytes, never as trees.
fn local_server_stubs(includes: &[PathBuf]) -> Result<(), Box<dyn std::error::Error>> {
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
            &[Path::new("proto/google/spanner/v1/spanner.proto")],
            &includes.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
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
