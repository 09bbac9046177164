//! The crate's layers, checked from its sources: top-level modules import each other
//! without cycles, the sans-IO core imports no face (CLI, wasm, SQL, the face-shared `api`), and
//! every module imports only what its row of the layer map in `docs/ARCHITECTURE.md` allows.
//! Doc comments and test modules are not imports and are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

const FACES: &[&str] = &["api", "cli", "sql", "wasm"];

/// `crate::<module>` references outside comments, per top-level module.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let top = rel
                .split('/')
                .next()
                .unwrap()
                .trim_end_matches(".rs")
                .to_string();
            if !rel.ends_with(".rs") || top == "lib" || top == "main" || name.contains("test") {
                continue;
            }
            let text = fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let deps = graph.entry(top.clone()).or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for (i, _) in line.match_indices("crate::") {
                    let m: String = line[i + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !m.is_empty() && m != top {
                        deps.insert(m);
                    }
                }
            }
        }
    }
    graph
}

/// A cycle through `start`, if any (depth-first).
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        graph: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        start: &str,
        path: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) -> bool {
        for next in graph.get(node).into_iter().flatten() {
            if next == start {
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(graph, next, start, path, seen) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_string()];
    walk(graph, start, start, &mut path, &mut BTreeSet::new()).then_some(path)
}

#[test]
fn modules_form_no_cycle() {
    let graph = module_graph();
    assert!(
        graph.contains_key("read") && graph.contains_key("table"),
        "{graph:?}"
    );
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module) {
            panic!("module cycle: {} -> {module}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_core_imports_no_face() {
    for (module, deps) in module_graph() {
        if FACES.contains(&module.as_str()) {
            continue;
        }
        let faces: Vec<&String> = deps
            .iter()
            .filter(|d| FACES.contains(&d.as_str()))
            .collect();
        assert!(faces.is_empty(), "core module {module} imports {faces:?}");
    }
}

/// The layer map of `docs/ARCHITECTURE.md`: module → the modules it may import.
fn layer_map() -> BTreeMap<String, BTreeSet<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ARCHITECTURE.md");
    let text = fs::read_to_string(&path).unwrap();
    let section = text
        .split("## The layer map")
        .nth(1)
        .expect("docs/ARCHITECTURE.md has a layer map")
        .split("\n## ")
        .next()
        .unwrap();
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .map(|c| c.trim().trim_matches('`').to_string())
            .filter(|c| !c.is_empty())
            .collect()
    };
    let mut map = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').collect();
        assert_eq!(cells.len(), 3, "layer map row {row:?}");
        let module = cells[0].trim().trim_matches('`').to_string();
        map.insert(module, names(cells[2]));
    }
    map
}

#[test]
fn imports_follow_the_layer_map() {
    let map = layer_map();
    let graph = module_graph();
    for (module, deps) in &graph {
        let allowed = map
            .get(module)
            .unwrap_or_else(|| panic!("src/{module} has no row in docs/ARCHITECTURE.md"));
        let extra: Vec<&String> = deps.difference(allowed).collect();
        assert!(
            extra.is_empty(),
            "{module} imports {extra:?}, which its row in docs/ARCHITECTURE.md does not allow"
        );
    }
    for module in map.keys() {
        assert!(
            graph.contains_key(module),
            "docs/ARCHITECTURE.md names {module}, which src/ does not have"
        );
    }
}
