//! What cargo cannot check of spanprof's layering. The crates are the floors and each crate's
//! Cargo.toml names the floors it uses, so the compiler keeps the direction; this test holds the
//! manifests to the declared order (no crate uses one above it; the client and the server are
//! siblings; the engine, the one composer, needs no gRPC crate), and reads the source for the rest:
//! no cycle among the modules of one crate, the engine naming none of the generated types, and the
//! rooms (read with syn by [`rooms`]): no circle of files inside any folder, no file over 800 lines
//! and no non-test function over 120, the server in rooms, one module called `plan` (besides the
//! `plan` subcommand's file, `cli/plan.rs`), and the app in folders, with the methods of
//! `SpanprofApp` added only from the top of its folder and the runs (the run in flight, the run
//! list, the history worker) owned by `RunController` alone. And the glossary in ARCHITECTURE.md
//! held to the code ([`glossary`]): every type it names exists, and no public type or file is
//! named with a word the glossary gives another meaning there.

mod glossary;
mod rooms;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use rooms::Tree;

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

/// The floors, bottom up, as ARCHITECTURE.md declares them: each crate's directory (the top one,
/// `spanprof`, is the repository's root) and its package name.
const FLOORS: [(&str, &str); 10] = [
    ("crates/base", "spanprof-base"),
    ("crates/wire", "spanprof-wire"),
    ("crates/model", "spanprof-model"),
    ("crates/server", "spanprof-server"),
    ("crates/client", "spanprof-client"),
    ("crates/analysis", "spanprof-analysis"),
    ("crates/history", "spanprof-history"),
    ("crates/engine", "spanprof-engine"),
    ("crates/app", "spanprof-app"),
    (".", "spanprof"),
];

/// The `src/` of every crate.
fn source_roots() -> Vec<PathBuf> {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    FLOORS
        .iter()
        .map(|(dir, _)| top.join(dir).join("src"))
        .collect()
}

/// Each file of every crate's `src/`: its top-level module and its source.
fn sources() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for src in source_roots() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for path in files {
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
            found.push((first, text));
        }
    }
    found
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
fn the_engine_names_none_of_the_generated_types() {
    // Its Cargo.toml lists no tonic and no prost (the manifests' test holds that); the generated
    // types live in spanprof-wire, below it, so the source is read for them. Tests included, as
    // `grep -rn "crate::proto" crates/engine` reads it.
    let engine: Vec<String> = sources()
        .into_iter()
        .filter(|(module, _)| module == "engine")
        .map(|(_, text)| text)
        .collect();
    assert!(engine.len() > 5, "read the engine's files");
    for text in engine {
        assert!(
            !text.contains("crate::proto"),
            "the engine names crate::proto"
        );
    }
}

/// Each crate's spanprof dependencies (normal, dev and build), read from its Cargo.toml.
fn floor_dependencies(dir: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(dir)
        .join("Cargo.toml");
    let text = std::fs::read_to_string(&path).expect("a readable Cargo.toml");
    let manifest: toml::Table = text.parse().expect("a Cargo.toml");
    let (mut spanprof, mut others) = (BTreeSet::new(), BTreeSet::new());
    for table in ["dependencies", "dev-dependencies", "build-dependencies"] {
        for name in manifest
            .get(table)
            .and_then(toml::Value::as_table)
            .into_iter()
            .flat_map(toml::Table::keys)
        {
            if name.starts_with("spanprof-") {
                spanprof.insert(name.clone());
            } else {
                others.insert(name.clone());
            }
        }
    }
    (spanprof, others)
}

#[test]
fn each_crate_uses_only_the_floors_below_it_and_the_client_and_server_are_siblings() {
    let mut problems = Vec::new();
    let mut used = BTreeSet::new();
    for (at, (dir, package)) in FLOORS.iter().enumerate() {
        let (spanprof, others) = floor_dependencies(dir);
        for name in &spanprof {
            match FLOORS.iter().position(|(_, p)| p == name) {
                Some(floor) if floor < at => {}
                Some(_) => problems.push(format!("{package} uses {name}, a floor not below it")),
                None => problems.push(format!("{package} uses {name}, which is no floor")),
            }
        }
        for (sibling, other) in [
            ("spanprof-client", "spanprof-server"),
            ("spanprof-server", "spanprof-client"),
        ] {
            if *package == sibling && spanprof.contains(other) {
                problems.push(format!("{sibling} uses its sibling {other}"));
            }
        }
        if *package == "spanprof-engine" {
            for grpc in ["tonic", "prost", "prost-types", "tonic-prost", "h2"] {
                if others.contains(grpc) {
                    problems.push(format!("the engine uses {grpc}"));
                }
            }
        }
        if *package == "spanprof-app" && others.contains("clap") {
            problems.push("the app uses clap, the command line's".into());
        }
        used.extend(spanprof);
    }
    // Every floor but the top is used by one above it (the binary's crate uses them all).
    let unused: Vec<&str> = FLOORS[..FLOORS.len() - 1]
        .iter()
        .map(|(_, package)| *package)
        .filter(|package| !used.contains(*package))
        .collect();
    assert!(unused.is_empty(), "floors no crate uses: {unused:?}");
    // The workspace is the declared floors, no more.
    let top: toml::Table =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .expect("the top Cargo.toml")
            .parse()
            .expect("a Cargo.toml");
    let members: Vec<&str> = top["workspace"]["members"]
        .as_array()
        .expect("workspace members")
        .iter()
        .filter_map(toml::Value::as_str)
        .collect();
    let declared: Vec<&str> = FLOORS.iter().rev().map(|(dir, _)| *dir).collect();
    let mut sorted_members = members.clone();
    sorted_members.sort_unstable();
    let mut sorted_declared = declared.clone();
    sorted_declared.sort_unstable();
    assert_eq!(
        sorted_members, sorted_declared,
        "the workspace's members are the floors"
    );
    assert!(problems.is_empty(), "the floors:\n{}", problems.join("\n"));
}

/// The longest a source file may be, tests included.
const MAX_FILE_LINES: usize = 800;
/// The longest a non-test function may be, from `fn` to its closing brace.
const MAX_FUNCTION_LINES: usize = 120;

fn src_tree() -> Tree {
    Tree::read_all(&source_roots()).expect("every crate's src/ parses")
}

/// Writes `files` (path, text) under a fresh directory and reads it as a tree.
fn synthetic_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, Tree) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().expect("a parent")).expect("a folder");
        std::fs::write(full, text).expect("a file");
    }
    let tree = Tree::read(dir.path()).expect("the synthetic tree parses");
    (dir, tree)
}

/// Every circle of files in `tree`, as `folder: a -> b (where), b -> a (where)`.
fn all_circles(tree: &Tree) -> Vec<String> {
    tree.folder_graphs()
        .iter()
        .flat_map(|(folder, graph)| {
            rooms::circles(graph)
                .into_iter()
                .map(move |c| format!("{folder}/: {c}"))
        })
        .collect()
}

#[test]
fn the_reader_of_rooms_finds_circles_of_files_through_uses_paths_macros_and_re_exports() {
    let lib = "mod a;\nmod b;\n";
    let face = "mod x;\nmod y;\nmod z;\n#[cfg(test)]\nmod fixture;\npub use x::X;\npub use z::*;\n";
    let x = "use crate::a::y::Y;\npub struct X(Y);\n";
    // y names X through the face's re-export: an edge to x, not to the face.
    let y_back = "pub struct Y;\nfn f() -> Option<super::X> { None }\n";
    let y_clean = "pub struct Y;\n";
    // Names in a macro body count; a test module's do not.
    let y_macro = "pub struct Y;\nfn f() { let _ = format!(\"{}\", super::z::Z); }\n";
    let z = "pub struct Z;\nfn g() -> super::X { todo!() }\n#[cfg(test)]\nmod tests { use super::super::y::Y; }\n";
    let fixture = "use super::x::X;\n";
    let b = "pub fn h() -> crate::a::Z { crate::a::Z }\n";

    let (_dir, tree) = synthetic_tree(&[
        ("lib.rs", lib),
        ("a/mod.rs", face),
        ("a/x.rs", x),
        ("a/y.rs", y_back),
        ("a/z.rs", "pub struct Z;\n"),
        ("a/fixture.rs", fixture),
        ("b.rs", b),
    ]);
    let circles = all_circles(&tree);
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(circles[0].starts_with("a/: x -> y"), "{circles:?}");
    assert!(circles[0].contains("a/y.rs:2 super::X"), "{circles:?}");
    let graphs = tree.folder_graphs();
    // b names Z through a's glob re-export: at the root, b -> a; inside a, nothing from b.
    assert!(graphs[""]["b"].contains_key("a"), "{graphs:?}");
    assert!(
        !graphs["a"].contains_key("mod"),
        "the face only re-exports: {graphs:?}"
    );

    let (_dir, tree) = synthetic_tree(&[
        ("lib.rs", lib),
        ("a/mod.rs", face),
        ("a/x.rs", x),
        ("a/y.rs", y_clean),
        ("a/z.rs", z),
        ("a/fixture.rs", fixture),
        ("b.rs", b),
    ]);
    assert_eq!(all_circles(&tree), Vec::<String>::new());

    let (_dir, tree) = synthetic_tree(&[
        ("lib.rs", lib),
        ("a/mod.rs", face),
        ("a/x.rs", x),
        ("a/y.rs", y_macro),
        ("a/z.rs", z),
        ("a/fixture.rs", fixture),
        ("b.rs", b),
    ]);
    let circles = all_circles(&tree);
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(circles[0].contains("y -> z"), "{circles:?}");
    assert!(circles[0].contains("z -> x"), "{circles:?}");
}

#[test]
fn the_reader_of_rooms_follows_re_exports_into_inner_folders_and_leaves_the_face_out() {
    let (_dir, tree) = synthetic_tree(&[
        ("lib.rs", "mod w;\n"),
        (
            "w/mod.rs",
            "mod d;\nmod inner;\npub use d::D;\npub fn make() -> D { D }\n",
        ),
        (
            "w/d.rs",
            "pub struct D;\nfn f() { crate::w::inner::deep::g(); }\n",
        ),
        ("w/inner.rs", "pub mod deep;\n"),
        // D through the face's re-export is d; make, defined in the face, is no edge.
        (
            "w/inner/deep.rs",
            "pub fn g() {}\nfn h() -> super::super::D { super::super::make() }\n",
        ),
    ]);
    let graphs = tree.folder_graphs();
    assert!(graphs["w"]["d"].contains_key("inner"), "{graphs:?}");
    assert!(graphs["w"]["inner"].contains_key("d"), "{graphs:?}");
    assert!(
        graphs["w"]
            .keys()
            .chain(graphs["w"].values().flat_map(|e| e.keys()))
            .all(|n| n != "mod"),
        "{graphs:?}"
    );
    let circles = all_circles(&tree);
    assert_eq!(circles.len(), 1, "{circles:?}");
    assert!(circles[0].starts_with("w/: d -> inner"), "{circles:?}");
    assert!(
        circles[0].contains("w/inner/deep.rs:2 super::super::D"),
        "{circles:?}"
    );
}

#[test]
fn the_reader_of_rooms_measures_functions_from_fn_to_brace_tests_aside() {
    let long_body = "    let _ = 1;\n".repeat(5);
    let text = format!(
        "/// doc\n/// doc\npub fn long() {{\n{long_body}}}\nfn short() {{}}\nstruct S;\nimpl S {{\n    fn method(&self) {{\n{long_body}    }}\n}}\n#[cfg(test)]\nmod tests {{\n    fn helper() {{\n{long_body}    }}\n}}\n"
    );
    let (_dir, tree) = synthetic_tree(&[("lib.rs", text.as_str())]);
    let long = tree.long_functions(6);
    let at: Vec<(&str, usize)> = long.iter().map(|f| (f.at.as_str(), f.lines)).collect();
    assert_eq!(at, [("lib.rs:3 long", 7), ("lib.rs:13 method", 7)]);
    assert_eq!(tree.long_functions(7), Vec::new());
}

#[test]
fn the_reader_of_rooms_lists_struct_fields_and_impls_tests_aside() {
    let (_dir, tree) = synthetic_tree(&[
        ("lib.rs", "mod a;\nmod b;\n#[cfg(test)]\nmod t;\n"),
        (
            "a.rs",
            "pub struct Owner { run: Option<ActiveRun>, id: u64 }\nimpl Owner {}\n",
        ),
        (
            "b.rs",
            "struct Pair(RunList);\nimpl crate::a::Owner { fn f(&self) {} }\n#[cfg(test)]\nstruct Fake { r: RunList }\n",
        ),
        ("t.rs", "struct T { h: HistoryWorker }\nimpl Owner {}\n"),
    ]);
    let fields: Vec<(String, String)> = tree
        .struct_fields()
        .into_iter()
        .map(|(path, field, ty)| (format!("{path} {field}"), ty))
        .collect();
    assert_eq!(
        fields,
        [
            (
                "a.rs Owner.run".to_owned(),
                "Option < ActiveRun >".to_owned()
            ),
            ("a.rs Owner.id".to_owned(), "u64".to_owned()),
            ("b.rs Pair.0".to_owned(), "RunList".to_owned()),
        ]
    );
    assert_eq!(tree.impls_of("Owner"), ["a.rs", "b.rs"]);
}

#[test]
fn no_circle_of_files_inside_any_folder_of_src() {
    let tree = src_tree();
    let graphs = tree.folder_graphs();
    assert!(
        graphs.get("client").is_some_and(|g| g.len() > 5),
        "read the client's files: {graphs:?}"
    );
    assert!(
        graphs
            .get("app")
            .is_some_and(|g| g.values().any(|e| e.contains_key("runs")))
            && graphs
                .get("app/load")
                .is_some_and(|g| g.contains_key("view")),
        "read the app's folders: {graphs:?}"
    );
    let circles = all_circles(&tree);
    assert!(
        circles.is_empty(),
        "circles of files:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_source_file_over_800_lines_and_no_function_over_120() {
    let tree = src_tree();
    let mut problems: Vec<String> = tree
        .files
        .iter()
        .filter(|f| f.lines > MAX_FILE_LINES)
        .map(|f| format!("src/{}: {} lines", f.path, f.lines))
        .collect();
    problems.extend(
        tree.long_functions(MAX_FUNCTION_LINES)
            .into_iter()
            .map(|f| format!("src/{}: {} lines", f.at, f.lines)),
    );
    assert!(tree.files.len() > 50, "read the files of src/");
    assert!(problems.is_empty(), "too long:\n{}", problems.join("\n"));
}

#[test]
fn the_server_is_in_rooms_and_only_src_plan_is_called_plan() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/server/src/server");
    let entries: Vec<std::path::PathBuf> = std::fs::read_dir(&server)
        .expect("src/server/ is readable")
        .map(|e| e.expect("an entry").path())
        .collect();
    let rooms: Vec<&std::path::PathBuf> = entries
        .iter()
        .filter(|p| p.is_dir() && std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some()))
        .collect();
    let files = entries
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .count();
    let mut problems = Vec::new();
    if rooms.len() < 3 {
        problems.push(format!(
            "src/server/ has {} sub-rooms, wants 3 or more",
            rooms.len()
        ));
    }
    if files > 10 {
        problems.push(format!(
            "src/server/ has {files} files directly in it, wants 10 at most"
        ));
    }
    let tree = src_tree();
    for file in &tree.files {
        let named_plan = file
            .module
            .as_ref()
            .is_some_and(|m| m.iter().any(|part| part == "plan"));
        // The `plan` subcommand's file is named as the command is: `cli/plan.rs`, a leaf.
        let subcommand = file.path == "cli/plan.rs";
        if named_plan && !file.path.starts_with("plan/") && !subcommand {
            problems.push(format!(
                "src/{} is a module called plan beside src/plan/",
                file.path
            ));
        }
    }
    assert!(problems.is_empty(), "the rooms:\n{}", problems.join("\n"));
}

/// The app's rooms: its top holds the app itself and the leaves every panel shares;
/// the rest is in folders. Only files at the top add methods to `SpanprofApp` (they name nearly
/// every folder, so inside one they would close a circle), and the run in flight, the run list
/// and the history worker are the `RunController`'s own state, no other struct's field.
#[test]
fn the_app_is_in_folders_and_its_runs_are_the_run_controllers() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/app/src/app");
    let mut problems = Vec::new();
    let top = std::fs::read_dir(&app)
        .expect("src/app/ is readable")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "rs"))
        })
        .count();
    if top > 16 {
        problems.push(format!(
            "src/app/ has {top} files directly in it, wants 16 at most"
        ));
    }
    for folder in [
        "runs",
        "connection",
        "query",
        "iterations",
        "timeline",
        "compare",
        "load",
        "history",
        "files",
    ] {
        if !app.join(folder).join("mod.rs").is_file() {
            problems.push(format!("src/app/{folder}/mod.rs is missing"));
        }
    }
    let tree = src_tree();
    for path in tree.impls_of("SpanprofApp") {
        let at_top = path
            .strip_prefix("app/")
            .is_some_and(|rest| !rest.contains('/'));
        if !at_top {
            problems.push(format!(
                "src/{path} adds methods to SpanprofApp from inside a folder"
            ));
        }
    }
    if !tree
        .impls_of("RunController")
        .contains(&"app/runs/controller.rs".to_owned())
    {
        problems.push("src/app/runs/controller.rs holds no RunController".into());
    }
    for (path, field, ty) in tree.struct_fields() {
        let owned = ["ActiveRun", "RunList", "HistoryWorker"]
            .iter()
            .any(|name| {
                ty.split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == *name)
            });
        if owned && path.starts_with("app/") && path != "app/runs/controller.rs" {
            problems.push(format!(
                "src/{path}: {field}: {ty} is the RunController's to own"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the app's rooms:\n{}",
        problems.join("\n")
    );
}

/// Whether a comment line cites an issue by its number (the word, then a number), which a reader
/// of the code cannot open.
fn cites_an_issue(line: &str) -> bool {
    let Some(at) = line.find("//") else {
        return false;
    };
    let comment = line[at..].to_ascii_lowercase();
    comment.match_indices("issue").any(|(i, _)| {
        let rest = comment[i + "issue".len()..].trim_start_matches('s');
        rest.strip_prefix(' ')
            .or_else(|| rest.strip_prefix(" #"))
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
    })
}

#[test]
fn no_comment_cites_an_issue_number() {
    // Spelled apart, so that this file does not cite one itself.
    assert!(cites_an_issue(&format!(
        "    // Skipped (issue {}, F11).",
        32
    )));
    assert!(cites_an_issue(&format!("//! Issues {} and 24: ...", 23)));
    assert!(!cites_an_issue(
        "/// The server issues a token; 3 issues of it."
    ));
    assert!(!cites_an_issue("let issue = 3; // issue"));
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = source_roots();
    roots.extend([top.join("tests"), top.join("benches")]);
    let mut files = Vec::new();
    for root in &roots {
        rust_files(root, &mut files);
    }
    assert!(files.len() > 300, "read the sources: {}", files.len());
    let cited: Vec<String> = files
        .iter()
        .flat_map(|path| {
            let text = std::fs::read_to_string(path).expect("a readable source file");
            text.lines()
                .enumerate()
                .filter(|(_, line)| cites_an_issue(line))
                .map(|(n, line)| format!("{}:{}: {}", path.display(), n + 1, line.trim()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        cited.is_empty(),
        "comments citing issues:\n{}",
        cited.join("\n")
    );
}
