//! The layering of `src/`, read from the source: which top-level modules each one's non-test code
//! names through `crate::`, no cycle among them, and the two rules issue 11 set (the engine knows
//! nothing of tonic, prost or the generated types; the app nothing of the command line).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module -> the top-level modules its code outside `#[cfg(test)]` names.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The source of a file without its test modules: everything from the first `#[cfg(test)]` on
/// (the codebase keeps its tests at the end of a file).
fn without_tests(source: &str) -> &str {
    source.split("#[cfg(test)]").next().unwrap_or(source)
}

/// The top-level modules `source` names as `crate::name` or inside `crate::{a, b::c}`.
fn named_modules(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = source;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each file of `src/`: its top-level module and its source.
fn sources() -> Vec<(String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let relative = path.strip_prefix(&src).expect("under src/");
            let first = relative
                .components()
                .next()
                .expect("a path")
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned();
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            (first, text)
        })
        .collect()
}

fn graph() -> Graph {
    let mut graph = Graph::new();
    for (module, text) in sources() {
        let names = named_modules(without_tests(&text));
        let entry = graph.entry(module.clone()).or_default();
        entry.extend(names.into_iter().filter(|n| *n != module));
    }
    graph
}

/// A cycle of `graph` as a path `a -> b -> ... -> a`, if there is one.
fn a_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &Graph,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_reader_of_imports_sees_plain_and_grouped_paths_and_cycles() {
    let names = named_modules("use crate::report::X;\nuse crate::{stats, plan::diff};\n");
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["plan", "report", "stats"]
    );
    assert_eq!(without_tests("a\n#[cfg(test)]\nuse crate::cli;"), "a\n");
    let mut g = Graph::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(a_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        a_cycle(&g).expect("a cycle"),
        ["a", "b", "c", "a"].map(String::from)
    );
}

#[test]
fn no_cycle_among_the_top_level_modules_of_src() {
    let graph = graph();
    assert!(graph.len() > 10, "read the modules: {graph:?}");
    assert!(graph["app"].contains("engine"), "{graph:?}");
    if let Some(cycle) = a_cycle(&graph) {
        panic!("a module cycle: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_engine_knows_no_grpc_types_and_the_app_no_command_line() {
    for (module, text) in sources() {
        if module == "engine" {
            // Tests included, as `grep -rnE "tonic|prost|crate::proto" src/engine` reads it.
            for word in ["tonic", "prost", "crate::proto"] {
                assert!(!text.contains(word), "src/engine names {word}");
            }
        }
        if module == "app" {
            assert!(
                !named_modules(without_tests(&text)).contains("cli"),
                "src/app imports from cli"
            );
        }
    }
}
