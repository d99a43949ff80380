//! The glossary held to the code. ARCHITECTURE.md's glossary gives each word of the domain one
//! meaning and the types that hold it; its last column, "instead of", names the words a name would
//! use to take that meaning from the word that has it (`Step` outside load: a place in a profile's
//! order is a slot, not a load's step). This file reads that table and the source (with syn,
//! through [`Tree`]) and finds every name the glossary gives that the source does not define, and
//! every public type and file named with a word where the glossary gives its meaning another word.
//!
//! A name in the type column is a Rust path read from its end: `report::RunReport` is an item
//! `RunReport` whose module path holds `report` (the floors re-export one another at their roots,
//! so the crate does not matter), `IterationRecord::accounting` a method of `IterationRecord`; a
//! span with a `/` in it is a file of the repository. The items the glossary names are its own
//! words: `ColdStep` may say Step outside load because the glossary says that is what it is.

use std::path::Path;

use super::rooms::{self, Tree};

/// One row of the glossary.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The word (`slot`; `step, level, knee` for a row of several).
    pub word: String,
    /// The spans of its type column: Rust paths and files.
    pub names: Vec<String>,
    /// The words a name must not use for this meaning, and where.
    pub instead_of: Vec<Misuse>,
}

/// A word a name must not carry in some rooms, where the glossary gives its meaning another word.
#[derive(Debug, Clone, PartialEq)]
pub struct Misuse {
    /// The word as a type would spell it (`Step`, `ColdStart`).
    pub word: String,
    /// Where a name with it takes another word's meaning.
    pub room: Room,
}

/// Where a [`Misuse`] applies, by the words of a module path.
#[derive(Debug, Clone, PartialEq)]
pub enum Room {
    /// In every module.
    Anywhere,
    /// In modules whose path holds the word or its plural (`load`: `load/step.rs`,
    /// `history/stored_load.rs`, `history/sqlite/loads.rs`).
    In(String),
    /// In modules whose path does not hold it.
    Outside(String),
}

impl Room {
    fn holds(&self, module: &[String]) -> bool {
        let has = |word: &str| {
            module.iter().any(|segment| {
                segment
                    .split('_')
                    .any(|w| w.strip_suffix('s').unwrap_or(w) == word)
            })
        };
        match self {
            Room::Anywhere => true,
            Room::In(word) => has(word),
            Room::Outside(word) => !has(word),
        }
    }

    fn phrase(&self) -> String {
        match self {
            Room::Anywhere => String::new(),
            Room::In(word) => format!(" in {word}"),
            Room::Outside(word) => format!(" outside {word}"),
        }
    }
}

/// The backticked spans of a cell.
fn spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One "instead of" cell: "`Step` outside load, `Phase`".
fn misuses(cell: &str) -> Result<Vec<Misuse>, String> {
    let mut found = Vec::new();
    for piece in cell.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut parts = piece.split('`');
        let (Some(""), Some(word), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!(
                "`{piece}` is not \"`Word`\", \"`Word` in room\" or \"`Word` outside room\""
            ));
        };
        let rest = rest.trim();
        let room = if rest.is_empty() {
            Room::Anywhere
        } else if let Some(room) = rest.strip_prefix("in ") {
            Room::In(room.trim().to_owned())
        } else if let Some(room) = rest.strip_prefix("outside ") {
            Room::Outside(room.trim().to_owned())
        } else {
            return Err(format!("`{piece}`: a room is `in x` or `outside x`"));
        };
        found.push(Misuse {
            word: word.to_owned(),
            room,
        });
    }
    Ok(found)
}

/// The glossary's rows, from the table under `## Glossary` (columns word, meaning, type, instead of).
pub fn read_glossary(markdown: &str) -> Result<Vec<Entry>, String> {
    let section = markdown
        .split("\n## ")
        .find(|s| s.starts_with("Glossary"))
        .ok_or("no `## Glossary` section")?;
    let rows: Vec<Vec<&str>> = section
        .lines()
        .filter(|l| l.trim_start().starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect()
        })
        .collect();
    let header = rows.first().ok_or("the glossary has no table")?;
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or(format!("the glossary's table has no column `{name}`"))
    };
    let (word, names, instead) = (column("word")?, column("type")?, column("instead of")?);
    let mut entries = Vec::new();
    for row in rows.iter().skip(1).filter(|r| !r[0].starts_with("---")) {
        let cell = |at: usize| row.get(at).copied().unwrap_or_default();
        entries.push(Entry {
            word: cell(word).to_owned(),
            names: spans(cell(names)),
            instead_of: misuses(cell(instead)).map_err(|e| format!("{}: {e}", cell(word)))?,
        });
    }
    Ok(entries)
}

/// What an [`Item`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A struct, enum, union, type alias or trait.
    Type,
    /// A function, method, constant or static.
    Value,
    /// A module written inline, or a name a `pub use` re-exports.
    Module,
    /// A source file (its module).
    File,
}

/// A named item of the source, outside its tests.
#[derive(Debug, Clone)]
pub struct Item {
    /// Its name.
    pub name: String,
    /// The module path it is reached by (a method's: its type's module and the type).
    pub context: Vec<String>,
    /// What it is.
    pub kind: Kind,
    /// Whether it is `pub`.
    pub public: bool,
    /// Where it is, for people (`crates/engine/src/engine/order.rs`).
    pub file: String,
    /// For a name a `use` binds, the path it stands for (`crate::part::ColdStep`).
    pub target: Vec<String>,
}

fn attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Union(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

/// The names a `use` binds, each with the path it stands for.
fn use_names(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    let path = |prefix: &[String], last: &syn::Ident| {
        let mut full = prefix.to_vec();
        full.push(last.to_string());
        full
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_names(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push((n.ident.to_string(), path(prefix, &n.ident))),
        syn::UseTree::Rename(r) => out.push((r.rename.to_string(), path(prefix, &r.ident))),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_names(t, prefix, out)),
        syn::UseTree::Glob(_) => {}
    }
}

fn item(name: String, context: &[String], kind: Kind, vis: &syn::Visibility, file: &str) -> Item {
    Item {
        name,
        context: context.to_vec(),
        kind,
        public: matches!(vis, syn::Visibility::Public(_)),
        file: file.to_owned(),
        target: Vec::new(),
    }
}

fn walk(items: &[syn::Item], context: &[String], file: &str, out: &mut Vec<Item>) {
    for it in items.iter().filter(|i| !rooms::is_test(attrs(i))) {
        let (name, kind, vis) = match it {
            syn::Item::Struct(i) => (i.ident.to_string(), Kind::Type, &i.vis),
            syn::Item::Enum(i) => (i.ident.to_string(), Kind::Type, &i.vis),
            syn::Item::Union(i) => (i.ident.to_string(), Kind::Type, &i.vis),
            syn::Item::Type(i) => (i.ident.to_string(), Kind::Type, &i.vis),
            syn::Item::Trait(i) => (i.ident.to_string(), Kind::Type, &i.vis),
            syn::Item::Fn(i) => (i.sig.ident.to_string(), Kind::Value, &i.vis),
            syn::Item::Const(i) => (i.ident.to_string(), Kind::Value, &i.vis),
            syn::Item::Static(i) => (i.ident.to_string(), Kind::Value, &i.vis),
            syn::Item::Use(u) => {
                let mut names = Vec::new();
                use_names(&u.tree, &mut Vec::new(), &mut names);
                for (name, target) in names {
                    let mut bound = item(name, context, Kind::Module, &u.vis, file);
                    bound.target = target;
                    out.push(bound);
                }
                continue;
            }
            syn::Item::Impl(i) => {
                if let syn::Type::Path(ty) = &*i.self_ty
                    && let Some(last) = ty.path.segments.last()
                {
                    let mut inner = context.to_vec();
                    inner.push(last.ident.to_string());
                    for member in &i.items {
                        if let syn::ImplItem::Fn(f) = member {
                            let name = f.sig.ident.to_string();
                            out.push(item(name, &inner, Kind::Value, &f.vis, file));
                        }
                    }
                }
                continue;
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner_items)) = &m.content {
                    let mut inner = context.to_vec();
                    inner.push(m.ident.to_string());
                    walk(inner_items, &inner, file, out);
                }
                (m.ident.to_string(), Kind::Module, &m.vis)
            }
            _ => continue,
        };
        out.push(item(name, context, kind, vis, file));
    }
}

/// Every named item of `tree` outside its tests, each file's path shown under `shown` (a crate's
/// `crates/engine/src`).
pub fn items(tree: &Tree, shown: &str) -> Vec<Item> {
    let mut out = Vec::new();
    for file in tree.files.iter().filter(|f| !tree.is_test_file(f)) {
        let Some(module) = &file.module else {
            continue;
        };
        let path = format!("{shown}/{}", file.path);
        if let Some((name, parent)) = module.split_last() {
            out.push(Item {
                name: name.clone(),
                context: parent.to_vec(),
                kind: Kind::File,
                public: true,
                file: path.clone(),
                target: Vec::new(),
            });
        }
        walk(&file.syntax.items, module, &path, &mut out);
    }
    out
}

/// Whether the Rust path `name` (`report::RunReport`) names `item`: its last segment is the item's
/// name and the others appear, in order, in the module path it is reached by.
fn names(name: &str, item: &Item) -> bool {
    let segments: Vec<&str> = name.split("::").collect();
    let Some((last, before)) = segments.split_last() else {
        return false;
    };
    if *last != item.name {
        return false;
    }
    let mut context = item.context.iter();
    before.iter().all(|s| context.any(|c| c == s))
}

fn is_rust_path(span: &str) -> bool {
    span.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// The names of `entries` that nothing in `items` is, nor, for a file, a file under `top`.
pub fn missing(entries: &[Entry], items: &[Item], top: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in entries {
        for name in &entry.names {
            let exists = if name.contains('/') {
                top.join(name).exists()
            } else if is_rust_path(name) {
                items.iter().any(|item| names(name, item))
            } else {
                true
            };
            if !exists {
                found.push(format!(
                    "the glossary's `{}` names `{name}`, which the source does not define \
                     (no type, function, module or file at that path)",
                    entry.word
                ));
            }
        }
    }
    found
}

/// The words of a name, lower case: `ColdStart` and `cold_start` are `cold`, `start`.
fn words(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' {
            previous_lower = false;
            out.push(String::new());
            continue;
        }
        if c.is_uppercase() && previous_lower || out.is_empty() {
            out.push(String::new());
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        if let Some(last) = out.last_mut() {
            last.extend(c.to_lowercase());
        }
    }
    out.retain(|w| !w.is_empty());
    out
}

/// Whether `name` carries the words of `word` one after another (a plural of the last counts:
/// `ConnectSteps` says Step).
fn says(name: &str, word: &str) -> bool {
    let (name, word) = (words(name), words(word));
    !word.is_empty()
        && name.windows(word.len()).any(|w| {
            w.iter().zip(&word).enumerate().all(|(i, (n, m))| {
                n == m || (i + 1 == word.len() && n.strip_suffix('s') == Some(m.as_str()))
            })
        })
}

/// Every public type and file of `items` named with a word where the glossary gives that meaning
/// another word; the items the glossary itself names are its words and pass.
pub fn misnamed(entries: &[Entry], items: &[Item]) -> Vec<String> {
    let glossary_names: Vec<&String> = entries.iter().flat_map(|e| &e.names).collect();
    // A name the glossary gives through a re-export (`report::ColdStep` for `part::ColdStep`)
    // is the item the `use` stands for.
    let through_uses: Vec<String> = items
        .iter()
        .filter(|i| !i.target.is_empty() && glossary_names.iter().any(|n| names(n, i)))
        .map(|i| {
            let path = i
                .target
                .iter()
                .filter(|s| !matches!(s.as_str(), "crate" | "self" | "super"));
            path.cloned().collect::<Vec<_>>().join("::")
        })
        .collect();
    let mut found = Vec::new();
    for item in items {
        let checked = match item.kind {
            Kind::Type => item.public,
            Kind::File => true,
            Kind::Value | Kind::Module => false,
        };
        let the_glossarys = glossary_names.iter().any(|n| names(n, item))
            || through_uses.iter().any(|n| names(n, item));
        if !checked || the_glossarys {
            continue;
        }
        let mut module = item.context.clone();
        if item.kind == Kind::File {
            module.push(item.name.clone());
        }
        let mut seen: Vec<&Misuse> = Vec::new();
        for misuse in entries.iter().flat_map(|e| &e.instead_of) {
            if seen.contains(&misuse)
                || !says(&item.name, &misuse.word)
                || !misuse.room.holds(&module)
            {
                continue;
            }
            seen.push(misuse);
            let owners: Vec<String> = entries
                .iter()
                .filter(|e| e.instead_of.contains(misuse))
                .map(|e| match e.names.first() {
                    Some(name) => format!("{} (`{name}`)", e.word),
                    None => e.word.clone(),
                })
                .collect();
            let what = match item.kind {
                Kind::File => "the file",
                _ => "the public type",
            };
            found.push(format!(
                "{}: {what} `{}` says `{}`{}, where the glossary's word for that meaning is {}",
                item.file,
                item.name,
                misuse.word,
                misuse.room.phrase(),
                owners.join(" or ")
            ));
        }
    }
    found
}

#[test]
fn the_reader_of_the_glossary_finds_names_missing_and_words_taken_from_another() {
    let markdown = "# x\n\n## Glossary\n\nprose\n\n\
        | word | meaning | type | instead of |\n|---|---|---|---|\n\
        | step | a load's level held | `load::StepResult` | |\n\
        | slot | a place in a profile's order | `engine::order::Slot` | `Step` outside load |\n\
        | cold-start step | dns, tcp... | `report::ColdStep` | `Step` outside load, `Phase` |\n\
        | measure | the total or a part | `part::Measure`, `Gone`, `tests/it/main.rs` | `Phase` |\n\
        | floor | a crate | `FLOORS` | |\n\n## Next\n| not | the | glossary | |\n";
    let entries = read_glossary(markdown).expect("the table reads");
    assert_eq!(entries.len(), 5);
    assert_eq!(entries[2].names, ["report::ColdStep"]);
    assert_eq!(
        entries[2].instead_of,
        [
            Misuse {
                word: "Step".into(),
                room: Room::Outside("load".into())
            },
            Misuse {
                word: "Phase".into(),
                room: Room::Anywhere
            }
        ]
    );
    let (_dir, tree) = super::synthetic_tree(&[
        (
            "lib.rs",
            "pub mod load;\npub mod engine;\npub mod report;\npub mod part;\npub const FLOORS: u8 = 0;\n",
        ),
        ("load/mod.rs", "pub mod step;\npub struct LoadSteps;\n"),
        ("load/step.rs", "pub struct StepResult;\n"),
        ("engine/mod.rs", "pub mod order;\npub mod phases;\n"),
        (
            "engine/order.rs",
            "pub struct Slot;\npub struct Step;\nstruct PrivateStep;\npub struct ColdStep;\n#[cfg(test)]\nmod tests { pub struct TestStep; }\n",
        ),
        ("engine/phases.rs", "pub use crate::report::ColdStep;\n"),
        (
            "report.rs",
            "pub use crate::part::ColdStep;\npub enum ConnectSteps { A }\n",
        ),
        (
            "part.rs",
            "pub enum Measure { Total }\nimpl Measure { pub fn label(&self) {} }\npub enum ColdStep {}\n",
        ),
    ]);
    let items = items(&tree, "src");
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(
        missing(&entries, &items, top),
        [
            "the glossary's `measure` names `Gone`, which the source does not define \
          (no type, function, module or file at that path)"
        ]
    );
    let wrong = misnamed(&entries, &items);
    // The glossary's `report::ColdStep` is part.rs's, re-exported; a second one is not.
    assert_eq!(wrong.len(), 4, "{wrong:#?}");
    assert_eq!(
        wrong[0],
        "src/engine/order.rs: the public type `Step` says `Step` outside load, where the \
         glossary's word for that meaning is slot (`engine::order::Slot`) or cold-start step \
         (`report::ColdStep`)"
    );
    assert!(
        wrong[1].starts_with("src/engine/order.rs: the public type `ColdStep` says `Step`"),
        "{wrong:#?}"
    );
    assert!(
        wrong[2].starts_with("src/engine/phases.rs: the file `phases` says `Phase`,"),
        "{wrong:#?}"
    );
    assert!(
        wrong[2].ends_with("cold-start step (`report::ColdStep`) or measure (`part::Measure`)")
    );
    assert!(
        wrong[3]
            .starts_with("src/report.rs: the public type `ConnectSteps` says `Step` outside load")
    );
    assert!(says("ColdStart", "ColdStart") && !says("ColdStarted", "ColdStart"));
    assert!(says("cold_start", "ColdStart") && !says("Partition", "Part"));
    assert_eq!(words("HTTP2Step"), ["http2", "step"]);
}

#[test]
fn every_name_the_glossary_gives_exists_and_no_name_takes_another_words_meaning() {
    let top = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(top.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let entries = read_glossary(&text).expect("the glossary's table reads");
    assert!(
        entries.len() > 30 && entries.iter().filter(|e| !e.instead_of.is_empty()).count() > 5,
        "read the glossary: {entries:#?}"
    );
    let mut source = Vec::new();
    for (dir, _) in super::FLOORS {
        let shown = if dir == "." {
            "src".to_owned()
        } else {
            format!("{dir}/src")
        };
        let tree = Tree::read(&top.join(&shown)).expect("the crate's src/ parses");
        source.extend(items(&tree, &shown));
    }
    assert!(
        source.len() > 3000,
        "read the source: {} items",
        source.len()
    );
    let tests = Tree::read(&top.join("tests/it")).expect("tests/it parses");
    let mut everything = source.clone();
    everything.extend(items(&tests, "tests/it"));
    let mut problems = missing(&entries, &everything, top);
    problems.extend(misnamed(&entries, &source));
    assert!(
        problems.is_empty(),
        "the glossary (ARCHITECTURE.md) and the code disagree:\n{}",
        problems.join("\n")
    );
}
