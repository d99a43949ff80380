//! The README and the user guide under `docs/` hold together: every relative link and picture in
//! them points at a file that exists (and, with a `#fragment`, at a heading of that file, named as
//! GitHub names its anchors), every page of the guide is reached from the README by links, and the
//! README stays short enough to read in five minutes (under 450 lines; the rest is in the guide).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

const README_MAX_LINES: usize = 450;

fn top() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, as paths relative to the top of the checkout.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                found.push(path);
            }
        }
    }
    let mut found = vec![top().join("README.md")];
    walk(&top().join("docs"), &mut found);
    found
        .into_iter()
        .map(|path| {
            path.strip_prefix(top())
                .expect("under the top")
                .to_path_buf()
        })
        .collect()
}

/// The text outside fenced code blocks and inline code spans, where links are links.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if fenced {
            out.push('\n');
            continue;
        }
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// Every `[text](target)` and `![alt](target)`, the target without an optional title.
fn links(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut found = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or_default();
        found.push(target.to_string());
        rest = &after[end..];
    }
    found
}

/// The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens,
/// a repeated heading numbered from -1.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let heading = line.trim_start_matches('#').trim();
        let slug: String = heading
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

/// `base`'s folder joined with `target`, `..` resolved, relative to the top.
fn resolve(base: &Path, target: &str) -> PathBuf {
    let mut path = PathBuf::new();
    for part in base
        .parent()
        .unwrap_or(Path::new(""))
        .join(target)
        .components()
    {
        match part {
            Component::ParentDir => {
                path.pop();
            }
            Component::CurDir => {}
            other => path.push(other),
        }
    }
    path
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

#[test]
fn every_relative_link_and_picture_points_at_what_exists() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(top().join(&page)).expect("a page");
        for target in links(&text) {
            if is_external(&target) {
                continue;
            }
            let (file, fragment) = match target.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() {
                page.clone()
            } else {
                resolve(&page, file)
            };
            let full = top().join(&linked);
            if !full.exists() {
                broken.push(format!(
                    "{}: {target} (no {})",
                    page.display(),
                    linked.display()
                ));
                continue;
            }
            if let Some(fragment) = fragment {
                let heads = std::fs::read_to_string(&full)
                    .map(|text| anchors(&text))
                    .unwrap_or_default();
                if !heads.contains(fragment) {
                    broken.push(format!(
                        "{}: {target} (no heading #{fragment} in {})",
                        page.display(),
                        linked.display()
                    ));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_page_of_the_guide_is_reached_from_the_readme() {
    let all: BTreeSet<PathBuf> = pages().into_iter().collect();
    let mut reached = BTreeSet::new();
    let mut next = vec![PathBuf::from("README.md")];
    while let Some(page) = next.pop() {
        if !reached.insert(page.clone()) {
            continue;
        }
        let text = std::fs::read_to_string(top().join(&page)).unwrap_or_default();
        for target in links(&text) {
            let file = target.split('#').next().unwrap_or_default();
            if file.is_empty() || is_external(file) {
                continue;
            }
            let linked = resolve(&page, file);
            if all.contains(&linked) {
                next.push(linked);
            }
        }
    }
    let orphans: Vec<_> = all
        .difference(&reached)
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        orphans.is_empty(),
        "pages no link reaches from README.md: {orphans:?}"
    );
}

#[test]
fn the_readme_is_read_in_five_minutes() {
    let readme = std::fs::read_to_string(top().join("README.md")).expect("README.md");
    let lines = readme.lines().count();
    assert!(
        lines < README_MAX_LINES,
        "README.md has {lines} lines; keep it under {README_MAX_LINES} and move the rest into docs/"
    );
}

#[test]
fn the_link_reader_finds_links_anchors_and_broken_ones() {
    let page = "# A title\n## Why `x` isn't y\n[a](docs/a.md#b) ![p](../assets/p.png \"t\")\n\
                `[not](a link)`\n```\n[nor](this)\n# nor a heading\n```\n## A title\n";
    assert_eq!(links(page), ["docs/a.md#b", "../assets/p.png"]);
    let heads = anchors(page);
    assert!(heads.contains("why-x-isnt-y"), "{heads:?}");
    assert!(
        heads.contains("a-title") && heads.contains("a-title-1"),
        "{heads:?}"
    );
    assert!(!heads.contains("nor-a-heading"));
    assert_eq!(
        resolve(Path::new("docs/views/x.md"), "../../assets/p.png"),
        PathBuf::from("assets/p.png")
    );
    assert!(
        !top()
            .join(resolve(Path::new("README.md"), "docs/no-such-page.md"))
            .exists()
    );
}
