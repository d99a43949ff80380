//! The rooms of a source tree, read as Rust (syn) rather than as text: each file's module path,
//! the files of its own folder that its non-test code names (through `use`, through paths in code
//! and in macro bodies, and through the folder's re-exports), the circles among the files of one
//! folder, and the length of every file and non-test function.
//!
//! A folder's graph has one node per file directly in it (`floor` for `client/floor.rs`) and one
//! per folder inside it (`fast` for everything under `wire/fast/`). The folder's face (`mod.rs`,
//! `lib.rs`, or `x.rs` beside a folder `x/`) is the parent module of them all, not a node: a file
//! using an item the face defines, or the face dispatching to a file, is the module tree. A name
//! reached through the face's re-exports (`super::Session`, `crate::client::ClientError`) is an
//! edge to the file that defines it. Everything declared under `#[cfg(test)]`, `#[test]`
//! functions and files only declared for tests are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{Spacing, TokenStream, TokenTree};
use quote::ToTokens;

/// A module path from the crate root (`["client", "floor"]`; empty for `lib.rs`).
type ModulePath = Vec<String>;

/// One `.rs` file of a tree.
pub struct SourceFile {
    /// Its path under the tree's root, parts joined by `/` (`client/floor.rs`).
    pub path: String,
    /// Its module path, or `None` for a binary's root (`main.rs`), which is a crate of its own.
    pub module: Option<ModulePath>,
    /// Whether it is the face of a folder (`mod.rs`, `lib.rs`, or `x.rs` beside a folder `x/`).
    pub face: bool,
    /// How many lines it has.
    pub lines: usize,
    /// Its items, parsed.
    pub syntax: syn::File,
}

/// Every `.rs` file under a root (such as `src/`), parsed.
pub struct Tree {
    /// The files, ordered by path.
    pub files: Vec<SourceFile>,
    /// Module paths declared only under `#[cfg(test)]` (`mod fixture;`): test files.
    test_modules: BTreeSet<ModulePath>,
}

/// One folder's graph: file (or inner folder) -> the files of the same folder it names, each
/// edge with the first place that made it (`file:line path`).
pub type FolderGraph = BTreeMap<String, BTreeMap<String, String>>;

/// A function longer than allowed: where it is and how long.
#[derive(Debug, PartialEq, Eq)]
pub struct LongFunction {
    /// `path:line name`.
    pub at: String,
    /// From `fn` to its closing brace.
    pub lines: usize,
}

impl Tree {
    /// Reads and parses every `.rs` file under `root`.
    pub fn read(root: &Path) -> Result<Tree, String> {
        Tree::read_all(&[root.to_path_buf()])
    }

    /// Reads every `.rs` file under each of `roots` (the `src/` of each crate of a workspace) as
    /// one tree: a module's path is the same in every crate (each crate's root names the floors
    /// below it by their module names), so the crates read as the one crate they were split from.
    pub fn read_all(roots: &[PathBuf]) -> Result<Tree, String> {
        let mut files = Vec::new();
        for root in roots {
            let mut paths = Vec::new();
            collect_rust_files(root, root, &mut paths)?;
            for relative in paths {
                let full = root.join(&relative);
                let text =
                    std::fs::read_to_string(&full).map_err(|e| format!("{relative}: {e}"))?;
                let syntax = syn::parse_file(&text).map_err(|e| format!("{relative}: {e}"))?;
                let (module, face) = module_of(root, &relative);
                files.push(SourceFile {
                    path: relative,
                    module,
                    face,
                    lines: text.lines().count(),
                    syntax,
                });
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let mut test_modules = BTreeSet::new();
        for file in &files {
            if let (Some(module), true) = (&file.module, file.face) {
                for item in &file.syntax.items {
                    if let syn::Item::Mod(m) = item
                        && m.content.is_none()
                        && is_test(&m.attrs)
                    {
                        let mut path = module.clone();
                        path.push(m.ident.to_string());
                        test_modules.insert(path);
                    }
                }
            }
        }
        Ok(Tree {
            files,
            test_modules,
        })
    }

    /// Whether `file` holds tests only (declared under `#[cfg(test)]`, or inside such a module).
    pub fn is_test_file(&self, file: &SourceFile) -> bool {
        file.module
            .as_ref()
            .is_some_and(|m| self.test_modules.iter().any(|t| m.starts_with(t)))
    }

    fn graph_files(&self) -> impl Iterator<Item = (&SourceFile, &ModulePath)> {
        self.files
            .iter()
            .filter(|f| !self.is_test_file(f))
            .filter_map(|f| f.module.as_ref().map(|m| (f, m)))
    }

    /// Whether `name` is a module directly inside the module `folder`.
    fn is_child(&self, folder: &[String], name: &str) -> bool {
        self.graph_files().any(|(_, m)| {
            m.len() > folder.len() && m.starts_with(folder) && m[folder.len()] == name
        })
    }

    fn face_of(&self, folder: &[String]) -> Option<&SourceFile> {
        self.graph_files()
            .find(|(f, m)| f.face && m.as_slice() == folder)
            .map(|(f, _)| f)
    }

    /// The graph of every folder (keyed by its path under the root, `""` for the root itself).
    pub fn folder_graphs(&self) -> BTreeMap<String, FolderGraph> {
        let mut graphs: BTreeMap<String, FolderGraph> = BTreeMap::new();
        for (file, module) in self.graph_files() {
            for reference in references(file, module) {
                if let Some((folder, from, to)) = self.edge(file, module, &reference.target) {
                    let entry = graphs.entry(folder.join("/")).or_default();
                    entry
                        .entry(from)
                        .or_default()
                        .entry(to)
                        .or_insert_with(|| format!("{}:{}", file.path, reference.seen));
                }
            }
        }
        graphs
    }

    /// The edge a reference from `file` (module `source`) to `target` makes, in the deepest
    /// folder holding both: (folder, from, to).
    fn edge(
        &self,
        file: &SourceFile,
        source: &[String],
        target: &[String],
    ) -> Option<(ModulePath, String, String)> {
        let common = source
            .iter()
            .zip(target)
            .take_while(|(a, b)| a == b)
            .count();
        let from = if common == source.len() {
            if !file.face {
                return None; // inside the file itself
            }
            "mod".to_owned()
        } else {
            source[common].clone()
        };
        let folder = source[..common].to_vec();
        let to = self.node_in(&folder, target, 0)?;
        // The face is the folder's own module, parent of every file in it: a file using an item
        // the face defines, or the face using a file, is the module tree, not a circle of files.
        (from != to && from != "mod" && to != "mod").then_some((folder, from, to))
    }

    /// The node of `folder` that `target` (a path starting with `folder`) lands on, following the
    /// face's re-exports; `None` when a re-export leads out of the folder.
    fn node_in(&self, folder: &[String], target: &[String], depth: usize) -> Option<String> {
        let k = folder.len();
        let Some(name) = target.get(k) else {
            return Some("mod".to_owned());
        };
        if self.is_child(folder, name) {
            return Some(name.clone());
        }
        let Some(face) = self.face_of(folder) else {
            return Some("mod".to_owned());
        };
        let scope = Scope::of_file(face, folder.to_vec());
        if let Some(binding) = scope.bound(name) {
            let mut through = binding.path.clone();
            through.extend_from_slice(&target[k + 1..]);
            if depth < 8 && through.len() > k && through.starts_with(folder) {
                return self.node_in(folder, &through, depth + 1);
            }
            return None;
        }
        if scope.defines(name) {
            return Some("mod".to_owned());
        }
        for glob in scope.uses.iter().filter(|u| u.name.is_none()) {
            if glob.path.len() == k + 1 && glob.path.starts_with(folder) {
                let defines = self
                    .graph_files()
                    .find(|(_, m)| **m == glob.path)
                    .is_some_and(|(f, m)| Scope::of_file(f, m.clone()).defines(name));
                if defines {
                    return Some(glob.path[k].clone());
                }
            }
        }
        Some("mod".to_owned())
    }

    /// Every non-test function of a non-test file longer than `max` lines.
    pub fn long_functions(&self, max: usize) -> Vec<LongFunction> {
        let mut found = Vec::new();
        for file in self.files.iter().filter(|f| !self.is_test_file(f)) {
            let mut spans = Vec::new();
            function_spans(&file.syntax.items, &mut spans);
            for (name, start, end) in spans {
                let lines = end + 1 - start;
                if lines > max {
                    found.push(LongFunction {
                        at: format!("{}:{start} {name}", file.path),
                        lines,
                    });
                }
            }
        }
        found
    }

    /// Every field of a non-test struct in a non-test file: (file path, `Struct.field`, the
    /// field's type as written).
    pub fn struct_fields(&self) -> Vec<(String, String, String)> {
        let mut found = Vec::new();
        for file in self.files.iter().filter(|f| !self.is_test_file(f)) {
            for item in &file.syntax.items {
                if let syn::Item::Struct(s) = item
                    && !is_test(&s.attrs)
                {
                    for (at, field) in s.fields.iter().enumerate() {
                        let name = field
                            .ident
                            .as_ref()
                            .map_or_else(|| at.to_string(), ToString::to_string);
                        found.push((
                            file.path.clone(),
                            format!("{}.{name}", s.ident),
                            field.ty.to_token_stream().to_string(),
                        ));
                    }
                }
            }
        }
        found
    }

    /// The files whose non-test code has an `impl` block for the type `name`.
    pub fn impls_of(&self, name: &str) -> Vec<String> {
        let mut found = Vec::new();
        for file in self.files.iter().filter(|f| !self.is_test_file(f)) {
            let has = file.syntax.items.iter().any(|item| {
                matches!(item, syn::Item::Impl(i) if !is_test(&i.attrs)
                    && matches!(&*i.self_ty, syn::Type::Path(p)
                        if p.path.segments.last().is_some_and(|s| s.ident == name)))
            });
            if has {
                found.push(file.path.clone());
            }
        }
        found
    }
}

/// The circles of a folder's graph: each strongly connected set of two or more nodes, with one
/// circle through it spelled with the reference behind each step.
pub fn circles(graph: &FolderGraph) -> Vec<String> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_owned()];
        while let Some(node) = todo.pop() {
            for next in graph.get(&node).into_iter().flat_map(|e| e.keys()) {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut found = Vec::new();
    for node in graph.keys() {
        if done.contains(node) || !reach(node).contains(node) {
            continue;
        }
        let members: BTreeSet<String> = reach(node)
            .into_iter()
            .filter(|other| reach(other).contains(node))
            .collect();
        done.extend(members.iter().cloned());
        found.push(spell_circle(graph, node, &members));
    }
    found
}

/// One circle from `start` back to it inside `members` (breadth first, so a shortest one).
fn spell_circle(graph: &FolderGraph, start: &str, members: &BTreeSet<String>) -> String {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.to_owned()]);
    while let Some(node) = queue.pop_front() {
        for next in graph.get(&node).into_iter().flat_map(|e| e.keys()) {
            if members.contains(next) && !came_from.contains_key(next) {
                came_from.insert(next.clone(), node.clone());
                queue.push_back(next.clone());
            }
        }
        if came_from.contains_key(start) {
            break;
        }
    }
    let mut steps = vec![start.to_owned()];
    let mut at = start.to_owned();
    while let Some(previous) = came_from.get(&at) {
        steps.push(previous.clone());
        if previous == start {
            break;
        }
        at = previous.clone();
    }
    steps.reverse();
    let spelled: Vec<String> = steps
        .windows(2)
        .map(|w| format!("{} -> {} ({})", w[0], w[1], graph[&w[0]][&w[1]]))
        .collect();
    spelled.join(", ")
}

fn collect_rust_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            collect_rust_files(root, &path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).map_err(|e| e.to_string())?;
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

/// A file's module path and whether it is a folder's face.
fn module_of(root: &Path, relative: &str) -> (Option<ModulePath>, bool) {
    let mut parts: Vec<String> = relative.split('/').map(str::to_owned).collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs").to_owned();
    match (parts.is_empty(), stem.as_str()) {
        (true, "main") => (None, false),
        (true, "lib") => (Some(Vec::new()), true),
        (_, "mod") => (Some(parts), true),
        _ => {
            let beside_folder = root.join(relative.trim_end_matches(".rs")).is_dir();
            parts.push(stem);
            (Some(parts), beside_folder)
        }
    }
}

/// Whether attributes mark an item as test code (`#[cfg(test)]`, `#[test]`, `#[tokio::test]`).
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path.is_ident("test") || path.segments.last().is_some_and(|s| s.ident == "test") {
            return true;
        }
        path.is_ident("cfg")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

/// A name a `use` binds (`None` for a glob), the absolute path it stands for, and whether it is
/// re-exported.
struct UseBinding {
    name: Option<String>,
    path: ModulePath,
    public: bool,
    line: usize,
}

/// What one module (a file, or an inline module in it) has in scope.
struct Scope<'a> {
    module: ModulePath,
    face: bool,
    children: BTreeSet<String>,
    uses: Vec<UseBinding>,
    items: &'a [syn::Item],
}

impl<'a> Scope<'a> {
    fn of_file(file: &'a SourceFile, module: ModulePath) -> Scope<'a> {
        Scope::new(module, file.face, &file.syntax.items)
    }

    fn new(module: ModulePath, face: bool, items: &'a [syn::Item]) -> Scope<'a> {
        let mut children = BTreeSet::new();
        for item in items {
            if let syn::Item::Mod(m) = item
                && !is_test(&m.attrs)
            {
                children.insert(m.ident.to_string());
            }
        }
        let mut scope = Scope {
            module,
            face,
            children,
            uses: Vec::new(),
            items,
        };
        let mut raw = Vec::new();
        for item in items {
            if let syn::Item::Use(u) = item
                && !is_test(&u.attrs)
            {
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                let line = u.use_token.span.start().line;
                expand_use(&u.tree, Vec::new(), public, line, &mut raw);
            }
        }
        // Paths of a `use` may start with a name another `use` bound: resolve until settled.
        for _ in 0..4 {
            let mut left = Vec::new();
            for (name, segments, public, line) in raw {
                match scope.absolute(&segments, true) {
                    Some(path) => scope.uses.push(UseBinding {
                        name,
                        path,
                        public,
                        line,
                    }),
                    None => left.push((name, segments, public, line)),
                }
            }
            raw = left;
        }
        scope
    }

    fn bound(&self, name: &str) -> Option<&UseBinding> {
        self.uses.iter().find(|u| u.name.as_deref() == Some(name))
    }

    /// Whether the module's own items define `name` (a function, type, constant, ...).
    fn defines(&self, name: &str) -> bool {
        self.items.iter().any(|item| {
            let ident = match item {
                syn::Item::Fn(i) => Some(&i.sig.ident),
                syn::Item::Struct(i) => Some(&i.ident),
                syn::Item::Enum(i) => Some(&i.ident),
                syn::Item::Const(i) => Some(&i.ident),
                syn::Item::Static(i) => Some(&i.ident),
                syn::Item::Type(i) => Some(&i.ident),
                syn::Item::Trait(i) => Some(&i.ident),
                syn::Item::Union(i) => Some(&i.ident),
                syn::Item::Macro(i) => i.ident.as_ref(),
                _ => None,
            };
            ident.is_some_and(|i| i == name)
        })
    }

    /// The absolute path `segments` stands for here, if it is inside the crate. Only a path of
    /// two or more segments, or a `use` path, may start with a child module's name.
    fn absolute(&self, segments: &[String], in_use: bool) -> Option<ModulePath> {
        let first = segments.first()?;
        let rest = &segments[1..];
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => self.module.clone(),
            "super" => {
                let mut base = self.module.clone();
                base.pop()?;
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend_from_slice(rest);
                return Some(base);
            }
            _ if (in_use || !rest.is_empty()) && self.children.contains(first) => {
                let mut base = self.module.clone();
                base.push(first.clone());
                base
            }
            _ => {
                let binding = self.bound(first)?;
                binding.path.clone()
            }
        };
        base.extend_from_slice(rest);
        Some(base)
    }
}

/// Flattens a use tree into (bound name, segments as written, public, line).
fn expand_use(
    tree: &syn::UseTree,
    mut prefix: Vec<String>,
    public: bool,
    line: usize,
    out: &mut Vec<(Option<String>, Vec<String>, bool, usize)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            expand_use(&p.tree, prefix, public, line, out);
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            let name = prefix.last().cloned();
            out.push((name, prefix, public, line));
        }
        syn::UseTree::Name(n) => {
            prefix.push(n.ident.to_string());
            out.push((Some(n.ident.to_string()), prefix, public, line));
        }
        syn::UseTree::Rename(r) => {
            let name = Some(r.rename.to_string());
            if r.ident != "self" {
                prefix.push(r.ident.to_string());
            }
            out.push((name, prefix, public, line));
        }
        syn::UseTree::Glob(_) => out.push((None, prefix, public, line)),
        syn::UseTree::Group(g) => {
            for item in &g.items {
                expand_use(item, prefix.clone(), public, line, out);
            }
        }
    }
}

/// A place in a file that names a module or item of the crate.
struct Reference {
    target: ModulePath,
    /// `line path`, for the message.
    seen: String,
}

/// Everything `file`'s non-test code names inside the crate, inline modules included.
fn references(file: &SourceFile, module: &ModulePath) -> Vec<Reference> {
    let mut out = Vec::new();
    scope_references(&Scope::of_file(file, module.clone()), &mut out);
    out
}

fn scope_references(scope: &Scope, out: &mut Vec<Reference>) {
    let mut code_paths = Vec::new();
    for item in scope.items {
        match item {
            syn::Item::Use(_) => {}
            syn::Item::Mod(m) if m.content.is_none() || is_test(&m.attrs) => {}
            syn::Item::Mod(m) => {
                let mut inner = scope.module.clone();
                inner.push(m.ident.to_string());
                let items = m.content.as_ref().map(|(_, items)| items.as_slice());
                let inner = Scope::new(inner, false, items.unwrap_or(&[]));
                scope_references(&inner, out);
            }
            _ if item_is_test(item) => {}
            _ => token_paths(item.to_token_stream(), &mut code_paths),
        }
    }
    let used_here: BTreeSet<&str> = code_paths
        .iter()
        .flat_map(|(segments, _)| segments.first())
        .map(String::as_str)
        .collect();
    for binding in &scope.uses {
        let counts = match &binding.name {
            _ if !binding.public => true,
            Some(name) => !scope.face || used_here.contains(name.as_str()),
            None => !scope.face,
        };
        if counts {
            out.push(Reference {
                target: binding.path.clone(),
                seen: format!("{} use {}", binding.line, binding.path.join("::")),
            });
        }
    }
    for (segments, line) in code_paths {
        if let Some(target) = scope.absolute(&segments, false) {
            out.push(Reference {
                seen: format!("{line} {}", segments.join("::")),
                target,
            });
        }
    }
}

fn item_is_test(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => return false,
    };
    is_test(attrs)
}

/// Every path `a::b::c` (or single name) in `tokens` that does not follow `::`, `.` or `$`, with
/// its line; macro bodies included.
fn token_paths(tokens: TokenStream, out: &mut Vec<(Vec<String>, usize)>) {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut i = 0;
    while i < trees.len() {
        match &trees[i] {
            TokenTree::Group(g) => token_paths(g.stream(), out),
            TokenTree::Ident(ident) if !follows_joiner(&trees, i) => {
                let line = ident.span().start().line;
                let mut segments = vec![ident.to_string()];
                while let (Some(TokenTree::Ident(next)), true) =
                    (trees.get(i + 3), is_path_sep(&trees, i + 1))
                {
                    segments.push(next.to_string());
                    i += 3;
                }
                out.push((segments, line));
            }
            _ => {}
        }
        i += 1;
    }
}

fn is_path_sep(trees: &[TokenTree], at: usize) -> bool {
    matches!(
        (trees.get(at), trees.get(at + 1)),
        (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
            if a.as_char() == ':' && a.spacing() == Spacing::Joint && b.as_char() == ':'
    )
}

fn follows_joiner(trees: &[TokenTree], at: usize) -> bool {
    if at >= 2 && is_path_sep(trees, at - 2) {
        return true;
    }
    at >= 1
        && matches!(&trees[at - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == '$')
}

/// (name, first line, last line) of every non-test function in `items`, methods included.
fn function_spans(items: &[syn::Item], out: &mut Vec<(String, usize, usize)>) {
    let span = |sig: &syn::Signature, block: &syn::Block| {
        (
            sig.ident.to_string(),
            sig.fn_token.span.start().line,
            block.brace_token.span.close().end().line,
        )
    };
    for item in items {
        match item {
            syn::Item::Fn(f) if !is_test(&f.attrs) => out.push(span(&f.sig, &f.block)),
            syn::Item::Impl(i) if !is_test(&i.attrs) => {
                for inner in &i.items {
                    if let syn::ImplItem::Fn(f) = inner
                        && !is_test(&f.attrs)
                    {
                        out.push(span(&f.sig, &f.block));
                    }
                }
            }
            syn::Item::Trait(t) if !is_test(&t.attrs) => {
                for inner in &t.items {
                    if let syn::TraitItem::Fn(f) = inner
                        && let Some(block) = &f.default
                        && !is_test(&f.attrs)
                    {
                        out.push(span(&f.sig, block));
                    }
                }
            }
            syn::Item::Mod(m) if !is_test(&m.attrs) => {
                if let Some((_, inner)) = &m.content {
                    function_spans(inner, out);
                }
            }
            _ => {}
        }
    }
}
