//! The host crate's module graph, read from its source: which module of `host/src` imports
//! which (`use crate::…`, `crate::…` and `super::…` paths in code, and the binary's
//! `kernels_gpu_host::…` paths into the library), with no import circle, `error.rs` importing
//! nothing of the crate, and no layer importing one above it ([`LAYERS`]).
//!
//! A module is a file. A module's own children (its `mod` declarations and what it re-exports
//! from them) are part of it, not imports; a child importing its parent or a sibling is one.
//! Comments and string literals are skipped, so doc links do not count. Paths through the
//! crate root's re-exports (`crate::Error`) are imports of `lib.rs`, the top of the library,
//! so modules below it name items by their own module.
//!
//! `cargo test -p kernels-gpu-host --test layers -- --nocapture` prints the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first, each the files of `host/src` it holds: a folder (every file
/// under it) or a file at the root. A module may import modules of its own layer and of
/// layers below it, never of a layer above.
const LAYERS: &[(&str, &[&str])] = &[
    // Progress lines on stderr, and what the unit tests share: import nothing of the crate.
    ("progress", &["progress.rs", "testing.rs"]),
    // What is asked: shapes, tiles, axes, the GEMM call, the error type.
    ("problem", &["problem"]),
    // f64 references, error bounds, spot checks, the random inputs they check.
    ("check", &["check"]),
    // Which kernel, which launch, which split; the embedded PTX.
    ("plan", &["plan"]),
    // The `Backend` trait both backends implement.
    ("backend", &["backend.rs"]),
    // The two backends: the CPU simulator, and the GPU with its autotuner.
    ("backends", &["sim.rs", "gpu"]),
    // Several GPUs through NCCL, and the same splits on simulated devices.
    ("multi", &["multi"]),
    // Programs over a GPU: the shape suite (the command line's and the bench's).
    ("programs", &["suite.rs"]),
    // The library root: module declarations and re-exports.
    ("library root", &["lib.rs"]),
    // The binary (feature `cli`).
    ("command line", &["main.rs", "cli"]),
];

/// The file that must import nothing of the crate.
const ERROR_MODULE: &str = "problem/error.rs";

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    PathSep,
    Punct(char),
}

/// The tokens of Rust source with comments, character literals and numbers left out.
fn tokens(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |ch: char| ch.is_alphabetic() || ch == '_';
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(len) = raw_string_start(&c[i..]) {
            // r"…", r#"…"#, br"…": no escapes, ends at a quote and as many hashes.
            let hashes = len - 1 - usize::from(c[i] == 'b') - 1;
            let start = i + len;
            let mut j = start;
            while j < c.len() && !(c[j] == '"' && (1..=hashes).all(|h| c.get(j + h) == Some(&'#')))
            {
                j += 1;
            }
            out.push(Tok::Str(c[start..j.min(c.len())].iter().collect()));
            i = j + 1 + hashes;
        } else if ch == '"' || (ch == 'b' && next == Some('"')) {
            let start = i + if ch == 'b' { 2 } else { 1 };
            let mut j = start;
            while j < c.len() && c[j] != '"' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            out.push(Tok::Str(c[start..j.min(c.len())].iter().collect()));
            i = j + 1;
        } else if ch == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                let mut j = i + 3;
                while j < c.len() && c[j] != '\'' {
                    j += 1;
                }
                i = j + 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch == 'b' && next == Some('\'') {
            let mut j = i + 2;
            while j < c.len() && c[j] != '\'' {
                j += if c[j] == '\\' { 2 } else { 1 };
            }
            i = j + 1;
        } else if ch.is_ascii_digit() {
            while i < c.len() && (ident_char(c[i]) || c[i] == '.') {
                // `0..n` is a range, not a number with a point.
                if c[i] == '.' && c.get(i + 1) == Some(&'.') {
                    break;
                }
                i += 1;
            }
        } else if ident_start(ch) {
            let start = i;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
        } else if ch == ':' && next == Some(':') {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// The length of a raw string's opening (`r"`, `r##"`, `br#"`) at the start of `c`.
fn raw_string_start(c: &[char]) -> Option<usize> {
    let mut i = usize::from(c.first() == Some(&'b'));
    if c.get(i) != Some(&'r') {
        return None;
    }
    i += 1;
    while c.get(i) == Some(&'#') {
        i += 1;
    }
    (c.get(i) == Some(&'"')).then_some(i + 1)
}

/// A module of a crate: its path (`["gpu", "vector"]`) and the file that holds it.
#[derive(Clone, Debug)]
struct Module {
    path: Vec<String>,
    file: String,
}

/// One crate's modules (inline ones too) and, per file, the module paths it names.
#[derive(Default)]
struct Crate {
    modules: Vec<Module>,
    /// (file, the module the path is named in, the path's segments).
    paths: Vec<(String, Vec<String>, Vec<String>)>,
}

/// Reads the crate whose root file is `root` (relative to `src`): its `mod` declarations,
/// followed from file to file, and the paths each file names. `extern_crate` is the
/// library's name where the binary names it.
fn read_crate(src: &Path, root: &str, extern_crate: Option<&str>) -> Crate {
    let mut krate = Crate::default();
    let mut queue = vec![(root.to_owned(), Vec::<String>::new())];
    while let Some((file, path)) = queue.pop() {
        let text = std::fs::read_to_string(src.join(&file))
            .unwrap_or_else(|e| panic!("reading host/src/{file}: {e}"));
        krate.modules.push(Module {
            path: path.clone(),
            file: file.clone(),
        });
        // Where this file's children live: beside it for lib.rs, main.rs and mod.rs, else
        // in the folder of its name.
        let name = Path::new(&file);
        let stem = name.file_stem().unwrap().to_str().unwrap();
        let dir = name.parent().unwrap();
        let child_dir = if path.is_empty() || stem == "mod" {
            dir.to_path_buf()
        } else {
            dir.join(stem)
        };
        let toks = tokens(&text);
        // Inline modules open at a brace depth: (name, depth inside it).
        let mut inline: Vec<(String, usize)> = Vec::new();
        let mut depth = 0;
        let mut path_attr: Option<String> = None;
        let mut i = 0;
        while i < toks.len() {
            let here = || {
                let mut p = path.clone();
                p.extend(inline.iter().map(|(n, _)| n.clone()));
                p
            };
            match &toks[i] {
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    if inline.last().is_some_and(|&(_, d)| d == depth) {
                        inline.pop();
                    }
                    depth -= 1;
                    path_attr = None;
                }
                Tok::Punct(';') => path_attr = None,
                Tok::Punct('#') => {
                    // #[path = "…"]
                    if let [
                        Tok::Punct('['),
                        Tok::Ident(p),
                        Tok::Punct('='),
                        Tok::Str(s),
                        Tok::Punct(']'),
                        ..,
                    ] = &toks[i + 1..]
                        && p == "path"
                    {
                        path_attr = Some(s.clone());
                    }
                }
                Tok::Ident(kw) if kw == "mod" => {
                    if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                        let mut child = here();
                        child.push(name.clone());
                        match toks.get(i + 2) {
                            Some(Tok::Punct(';')) => {
                                let file = match path_attr.take() {
                                    Some(p) => dir.join(p),
                                    None if src
                                        .join(child_dir.join(format!("{name}.rs")))
                                        .exists() =>
                                    {
                                        child_dir.join(format!("{name}.rs"))
                                    }
                                    None => child_dir.join(name).join("mod.rs"),
                                };
                                queue.push((file.to_str().unwrap().to_owned(), child));
                            }
                            Some(Tok::Punct('{')) => {
                                krate.modules.push(Module {
                                    path: child,
                                    file: file.clone(),
                                });
                                inline.push((name.clone(), depth + 1));
                            }
                            _ => {}
                        }
                        i += 2;
                        continue;
                    }
                }
                Tok::Ident(_) if starts_path(&toks, i, extern_crate) => {
                    let mut trees = Vec::new();
                    i = use_tree(&toks, i, vec![], &mut trees);
                    for segments in trees {
                        krate.paths.push((file.clone(), here(), segments));
                    }
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }
    krate
}

/// Whether `toks[i]` starts a path into this crate (`crate::`, `super::`, `self::`) or into
/// `extern_crate`; `$crate::` in a macro is the macro's crate.
fn starts_path(toks: &[Tok], i: usize, extern_crate: Option<&str>) -> bool {
    let Tok::Ident(start) = &toks[i] else {
        return false;
    };
    (["crate", "super", "self"].contains(&start.as_str()) || Some(start.as_str()) == extern_crate)
        && toks.get(i + 1) == Some(&Tok::PathSep)
        && (i == 0 || toks[i - 1] != Tok::Punct('$'))
}

/// Reads the path (or `use` tree) at `toks[i]` under `prefix` into `out`, one path per leaf;
/// returns the index after it.
fn use_tree(
    toks: &[Tok], mut i: usize, mut prefix: Vec<String>, out: &mut Vec<Vec<String>>,
) -> usize {
    loop {
        match toks.get(i) {
            Some(Tok::Ident(seg)) => {
                if seg != "self" || prefix.is_empty() {
                    prefix.push(seg.clone());
                }
                i += 1;
                if toks.get(i) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                out.push(prefix);
                return i;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                while !matches!(toks.get(i), Some(Tok::Punct('}')) | None) {
                    let after = use_tree(toks, i, prefix.clone(), out);
                    // Past the subtree and its comma (at least one token: no endless loop).
                    i = after.max(i + 1);
                    if toks.get(i) == Some(&Tok::Punct(',')) {
                        i += 1;
                    }
                }
                return i + 1;
            }
            // A glob.
            Some(Tok::Punct('*')) => {
                out.push(prefix);
                return i + 1;
            }
            // A generic argument list after `::`, or the end of the input.
            _ => {
                out.push(prefix);
                return i;
            }
        }
    }
}

/// Each file of `host/src` → the files it imports → the names it takes from each.
type Graph = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// Adds to `graph` the imports of `krate`'s files, resolving the library's paths in `lib`.
fn add_imports(graph: &mut Graph, krate: &Crate, lib: &Crate, extern_crate: &str) {
    let file_of = |c: &Crate, path: &[String]| {
        c.modules
            .iter()
            .find(|m| m.path == path)
            .map(|m| m.file.clone())
    };
    for m in &krate.modules {
        graph.entry(m.file.clone()).or_default();
    }
    for (file, here, segments) in &krate.paths {
        let own = &krate.modules.iter().find(|m| &m.file == file).unwrap().path;
        let (target_crate, mut module, rest) = match segments[0].as_str() {
            "crate" => (krate, vec![], &segments[1..]),
            s if s == extern_crate => (lib, vec![], &segments[1..]),
            _ => {
                let mut module = here.clone();
                let mut rest = &segments[..];
                while let Some(seg) = rest.first() {
                    match seg.as_str() {
                        "super" => {
                            module.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
                (krate, module, rest)
            }
        };
        let mut names = rest;
        while let Some(seg) = names.first() {
            let mut next = module.clone();
            next.push(seg.clone());
            if target_crate.modules.iter().any(|m| m.path == next) {
                module = next;
                names = &names[1..];
            } else {
                break;
            }
        }
        let target = file_of(target_crate, &module).unwrap();
        // A module's own children are part of it.
        let own_child = std::ptr::eq(target_crate, krate) && module.starts_with(own);
        if &target == file || own_child {
            continue;
        }
        let name = if names.is_empty() {
            module.last().cloned().unwrap_or_else(|| "crate".to_owned())
        } else {
            names.join("::")
        };
        graph
            .entry(file.clone())
            .or_default()
            .entry(target)
            .or_default()
            .insert(name);
    }
}

/// The import graph of `host/src`: the library's files, then the binary's (which import the
/// library as `kernels_gpu_host`).
fn graph() -> Graph {
    let src = src();
    let lib = read_crate(&src, "lib.rs", None);
    let bin = read_crate(&src, "main.rs", Some("kernels_gpu_host"));
    let mut graph = Graph::new();
    add_imports(&mut graph, &lib, &lib, "kernels_gpu_host");
    add_imports(&mut graph, &bin, &lib, "kernels_gpu_host");
    graph
}

/// The circles of `graph`: its strongly connected components of more than one file
/// (Tarjan's algorithm), each sorted.
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph[v].keys() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// The index in [`LAYERS`] of `file`'s layer.
fn layer(file: &str) -> Option<usize> {
    let first = file.split('/').next().unwrap();
    LAYERS.iter().position(|(_, held)| held.contains(&first))
}

/// The graph as text: each layer, top first, its files and what each imports (the files,
/// and in parentheses the names taken from each).
fn listing(graph: &Graph) -> String {
    let mut s = String::new();
    let layers = LAYERS
        .iter()
        .enumerate()
        .rev()
        .map(|(at, (name, _))| (Some(at), *name));
    for (at, name) in layers.chain([(None, "in no layer")]) {
        let files: Vec<_> = graph.iter().filter(|(f, _)| layer(f) == at).collect();
        if at.is_none() && files.is_empty() {
            continue;
        }
        s += &format!("{name}\n");
        for (file, imports) in files {
            let list: Vec<String> = imports
                .iter()
                .map(|(t, names)| {
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    format!("{t} ({})", names.join(", "))
                })
                .collect();
            s += &format!("  {file} -> {}\n", list.join("; "));
        }
    }
    s
}

#[test]
fn host_modules_are_layered_without_circles() {
    let graph = graph();
    println!("{}", listing(&graph));
    let mut faults = Vec::new();
    for circle in circles(&graph) {
        faults.push(format!(
            "import circle of {} files: {}",
            circle.len(),
            circle.join(", ")
        ));
    }
    for (file, imports) in &graph {
        let Some(at) = layer(file) else {
            faults.push(format!("{file} is in no layer: add its folder to LAYERS"));
            continue;
        };
        for (target, names) in imports {
            if layer(target).is_some_and(|t| t > at) {
                faults.push(format!(
                    "{file} ({}) imports {target} ({}), a layer above it: {names:?}",
                    LAYERS[at].0,
                    LAYERS[layer(target).unwrap()].0
                ));
            }
        }
    }
    match graph.get(ERROR_MODULE) {
        None => faults.push(format!("no module {ERROR_MODULE}")),
        Some(imports) if !imports.is_empty() => faults.push(format!(
            "{ERROR_MODULE} imports {:?}; it must import nothing of the crate",
            imports.keys().collect::<Vec<_>>()
        )),
        Some(_) => {}
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// The reader finds what the test must see: paths in `use` trees, in code and after
/// `super`, and none in comments or strings.
#[test]
fn the_reader_finds_imports_in_code_only() {
    let text = r##"
        //! [`crate::doc::Link`]
        use crate::a::{self, b::{C, D}, e::*};
        use super::{F, g::H};
        /* crate::block::Comment */
        fn f() -> crate::x::Y<'static> { let _ = "crate::in::string"; let _ = 'c'; crate::z::w::<u8>() }
        const R: &str = r#"crate::raw::String"#;
        macro_rules! m { () => { $crate::macro_path::M } }
    "##;
    let toks = tokens(text);
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        i = if starts_path(&toks, i, None) {
            use_tree(&toks, i, vec![], &mut found)
        } else {
            i + 1
        };
    }
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "crate::a",
            "crate::a::b::C",
            "crate::a::b::D",
            "crate::a::e",
            "super::F",
            "super::g::H",
            "crate::x::Y",
            "crate::z::w",
        ]
    );
}
