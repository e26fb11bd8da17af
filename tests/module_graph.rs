//! The library's modules name each other without circles: among the children of any module,
//! who uses whom (through `use` or a path in the code) has an order, so a reader can walk
//! them from the leaves up. A module's use of its own descendants or ancestors is not an
//! edge (a parent re-exports its children; a child implements its parent's types).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModulePath = Vec<String>;

/// Every file of the crate by its module path, following `mod` declarations (and their
/// `#[path]` attributes) from `lib.rs`; a file mounted twice counts once, where first met.
fn modules(src: &Path) -> BTreeMap<ModulePath, String> {
    let mut found = BTreeMap::new();
    let mut seen = BTreeSet::new();
    let mut stack = vec![(Vec::new(), src.join("lib.rs"), src.to_path_buf())];
    while let Some((path, file, dir)) = stack.pop() {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        let mut mounted_at: Option<String> = None;
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("#[path = \"") {
                mounted_at = rest.split('"').next().map(str::to_owned);
                continue;
            }
            let declared = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            match declared {
                Some(name) => {
                    let child: PathBuf = match mounted_at.take() {
                        // Relative to the declaring file's own directory.
                        Some(at) => file.parent().unwrap().join(at),
                        None if dir.join(format!("{name}.rs")).exists() => {
                            dir.join(format!("{name}.rs"))
                        }
                        None => dir.join(name).join("mod.rs"),
                    };
                    let child_dir = if child.file_name().unwrap() == "mod.rs" {
                        child.parent().unwrap().to_path_buf()
                    } else {
                        child.with_extension("")
                    };
                    let mut child_path = path.clone();
                    child_path.push(name.to_owned());
                    if seen.insert(child.clone()) {
                        stack.push((child_path, child, child_dir));
                    }
                }
                None if !line.starts_with("#[") => mounted_at = None,
                None => {}
            }
        }
        found.insert(path, text);
    }
    found
}

/// The paths `text` names through `crate::`, `super::` and `self::` (in `use` trees and in
/// code), resolved from the module `at`.
fn named_paths(at: &ModulePath, text: &str) -> Vec<ModulePath> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        let rest: String = bytes[i..bytes.len().min(i + 8)].iter().collect();
        let rooted = ["crate::", "super::", "self::"]
            .iter()
            .any(|root| rest.starts_with(root));
        match rooted {
            true if starts_word => {
                let mut segments = Vec::new();
                let mut j = i;
                loop {
                    let start = j;
                    while j < bytes.len() && (bytes[j].is_alphanumeric() || bytes[j] == '_') {
                        j += 1;
                    }
                    if start == j {
                        break;
                    }
                    segments.push(bytes[start..j].iter().collect::<String>());
                    if bytes[j..].starts_with(&[':', ':']) {
                        j += 2;
                    } else {
                        break;
                    }
                }
                if let Some(resolved) = resolve(at, &segments) {
                    out.push(resolved);
                }
                i = j.max(i + 1);
            }
            _ => i += 1,
        }
    }
    out
}

fn resolve(at: &ModulePath, segments: &[String]) -> Option<ModulePath> {
    let mut path = at.clone();
    let mut rest = segments;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            path.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().map(String::as_str) == Some("super") {
                path.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    path.extend(rest.iter().cloned());
    Some(path)
}

/// Who uses whom among siblings: for a use of `to` by `from`, the edge joins the children
/// of their deepest common module on each side.
fn edges(modules: &BTreeMap<ModulePath, String>) -> BTreeSet<(ModulePath, ModulePath)> {
    let mut edges = BTreeSet::new();
    for (from, text) in modules {
        for named in named_paths(from, text) {
            // The module named: the longest prefix of the path that is a module.
            let Some(to) = (0..=named.len())
                .rev()
                .map(|n| named[..n].to_vec())
                .find(|prefix| modules.contains_key(prefix))
            else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            edges.insert((from[..=common].to_vec(), to[..=common].to_vec()));
        }
    }
    edges
}

/// A circle among `edges`, if there is one.
fn circle(edges: &BTreeSet<(ModulePath, ModulePath)>) -> Option<Vec<ModulePath>> {
    let mut next: BTreeMap<&ModulePath, Vec<&ModulePath>> = BTreeMap::new();
    for (from, to) in edges {
        next.entry(from).or_default().push(to);
    }
    fn visit<'a>(
        node: &'a ModulePath,
        next: &BTreeMap<&'a ModulePath, Vec<&'a ModulePath>>,
        done: &mut BTreeSet<&'a ModulePath>,
        trail: &mut Vec<&'a ModulePath>,
    ) -> Option<Vec<ModulePath>> {
        if let Some(start) = trail.iter().position(|on| *on == node) {
            return Some(trail[start..].iter().map(|m| (*m).clone()).collect());
        }
        if !done.insert(node) {
            return None;
        }
        trail.push(node);
        for to in next.get(node).into_iter().flatten() {
            if let Some(found) = visit(to, next, done, trail) {
                return Some(found);
            }
        }
        trail.pop();
        None
    }
    let mut done = BTreeSet::new();
    for node in next.keys() {
        if let Some(found) = visit(node, &next, &mut done, &mut Vec::new()) {
            return Some(found);
        }
    }
    None
}

fn names(modules: &[ModulePath]) -> String {
    modules
        .iter()
        .map(|m| m.join("::"))
        .collect::<Vec<_>>()
        .join(" -> ")
}

#[test]
fn the_library_has_no_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    assert!(modules.len() > 40, "{} modules found", modules.len());
    let edges = edges(&modules);
    // The walk sees what is there: these uses exist.
    for (from, to) in [("groth16::store", "groth16::settings"), ("error", "shape")] {
        let split = |m: &str| m.split("::").map(str::to_owned).collect::<ModulePath>();
        assert!(edges.contains(&(split(from), split(to))), "{from} -> {to}");
    }
    if let Some(found) = circle(&edges) {
        panic!("a circle: {}", names(&found));
    }
}

#[test]
fn a_circle_is_found() {
    let path = |m: &str| m.split("::").map(str::to_owned).collect::<ModulePath>();
    let mut edges: BTreeSet<_> = [("a", "b"), ("b", "c"), ("d", "a")]
        .into_iter()
        .map(|(f, t)| (path(f), path(t)))
        .collect();
    assert_eq!(circle(&edges), None);
    edges.insert((path("c"), path("a")));
    assert_eq!(names(&circle(&edges).unwrap()), "a -> b -> c");
}

/// Modules name what they use where it lives, never through the facade's re-exports in
/// `lib.rs` (which would make each of them use the root above it).
#[test]
fn no_module_uses_the_root_s_re_exports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    let root = &modules[&Vec::new()];
    // Each `pub use path::{A, B};` or `pub use path::A;` statement, however it is wrapped.
    let re_exported: Vec<&str> = root
        .split(';')
        .filter_map(|statement| statement.split_once("pub use ").map(|(_, tree)| tree))
        .flat_map(|tree| {
            let items = tree.split_once('{').map_or_else(
                || tree.rsplit("::").next().unwrap_or(tree),
                |(_, items)| items.trim_end_matches('}'),
            );
            items.split(',')
        })
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect();
    for expected in ["Error", "ProverVectors", "Shape", "synthesize_batch"] {
        assert!(re_exported.contains(&expected), "{re_exported:?}");
    }
    for (path, text) in &modules {
        if path.is_empty() {
            continue;
        }
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for name in &re_exported {
                let through_root = format!("crate::{name}");
                // `crate::synthesize::...` names the module, not the function it re-exports.
                let module = modules.contains_key(&vec![name.to_string()]);
                let found = line.match_indices(&through_root).any(|(at, _)| {
                    let after = &line[at + through_root.len()..];
                    let longer_name = after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
                    let the_module = module && after.starts_with("::");
                    !(longer_name || the_module)
                });
                let grouped = line.contains("use crate::{") && line.contains(name);
                assert!(
                    !found && !grouped,
                    "{} names `{name}` through the root: {line}",
                    path.join("::")
                );
            }
        }
    }
}
