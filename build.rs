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
