//! The one place where PTX text is read: the builder checks and patches the module with
//! these functions, and the host crate reads its entry points' names and parameter sizes
//! with them, so both agree on what a declaration looks like.
//!
//! They read the PTX that LLVM's NVPTX back end writes (one declaration per line, the
//! parameter list opening on the `.entry` line), not every spelling the PTX ISA allows.
//! None of them panics on input it does not understand: what it cannot read is `None`, an
//! empty list, or a [`PtxError`].

use std::collections::HashMap;
use std::fmt;

pub mod divergence;
pub mod split;

/// The comment keyword of a launch-bounds marker:
/// `// nvptx-device:launch_bounds ENTRY MAX_THREADS MIN_BLOCKS [CLUSTER]`.
///
/// rustc has no attribute for `.maxntid`/`.minnctapersm`/`.reqnctapercluster`, so
/// `nvptx_device::entry_points!`
/// writes this comment into the module (through `core::arch::global_asm!`) and
/// [`apply_launch_bounds`] turns it into the directives.
pub const LAUNCH_BOUNDS_MARKER: &str = "nvptx-device:launch_bounds";

/// The most threads a block may have on every GPU the PTX can target; a `.maxntid` above it
/// is a module no GPU can launch.
pub const MAX_THREADS_PER_BLOCK: u32 = 1024;

/// Why a PTX module could not be read or patched; the message names the entry or line and
/// the fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxError {
    /// A launch-bounds marker line is not `// nvptx-device:launch_bounds ENTRY MAX_THREADS
    /// MIN_BLOCKS [CLUSTER]` with decimal values.
    MalformedMarker {
        /// 1-based line number in the module.
        line: usize,
        /// The line as written.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A marker names an entry that the module does not define.
    UnknownEntry {
        /// The entry the marker names.
        entry: String,
    },
    /// The entry already has launch bounds of its own, which the marker would contradict.
    AlreadyBounded {
        /// The entry.
        entry: String,
        /// The directive it already has (`.maxntid`, `.reqntid`, `.minnctapersm` or
        /// `.reqnctapercluster`).
        directive: &'static str,
    },
    /// Two markers name the same entry.
    DuplicateMarker {
        /// The entry.
        entry: String,
    },
    /// A marker asks for 0 threads per block, or more than [`MAX_THREADS_PER_BLOCK`].
    InvalidMaxThreads {
        /// The entry.
        entry: String,
        /// The value the marker gives.
        max_threads: u32,
    },
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MalformedMarker { line, text, reason } => write!(
                f,
                "malformed launch-bounds marker on PTX line {line} ({reason}): `{}`; the format is `// {LAUNCH_BOUNDS_MARKER} ENTRY MAX_THREADS MIN_BLOCKS [CLUSTER]` with decimal values, as `nvptx_device::entry_points!` writes it",
                text.trim()
            ),
            Self::UnknownEntry { entry } => write!(
                f,
                "a launch-bounds marker names `{entry}`, but the module defines no `.entry {entry}`; give launch bounds only to entry points the kernel crate exports (was it renamed, or compiled out?)"
            ),
            Self::AlreadyBounded { entry, directive } => write!(
                f,
                "entry point `{entry}` already has `{directive}`, and a launch-bounds marker would add its own; give the entry its launch bounds in one place only"
            ),
            Self::DuplicateMarker { entry } => write!(
                f,
                "two launch-bounds markers name `{entry}`; give each entry point one `launch_bounds`"
            ),
            Self::InvalidMaxThreads { entry, max_threads } => write!(
                f,
                "the launch bounds of `{entry}` ask for {max_threads} threads per block; it must be 1 to {MAX_THREADS_PER_BLOCK}"
            ),
        }
    }
}

impl std::error::Error for PtxError {}

/// The module's `.target` line: `.target sm_80` or `.target sm_80, debug`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The architecture, e.g. `sm_80`.
    pub arch: String,
    /// Whether the module is marked `debug`: built against a prebuilt `core`, it runs
    /// several times slower.
    pub debug: bool,
}

/// An entry's performance-tuning directives, between its parameter list and its body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryDirectives {
    /// `.maxntid X[, Y[, Z]]`, the dimensions left out being 1.
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid X[, Y[, Z]]`, the dimensions left out being 1.
    pub reqntid: Option<[u32; 3]>,
    /// `.minnctapersm N`.
    pub minnctapersm: Option<u32>,
    /// `.reqnctapercluster X[, Y[, Z]]`, the dimensions left out being 1.
    pub reqnctapercluster: Option<[u32; 3]>,
}

/// One launch-bounds marker: CUDA C's `__launch_bounds__(max_threads, min_blocks)` for
/// `entry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The `.entry` it applies to.
    pub entry: String,
    /// `.maxntid max_threads, 1, 1`.
    pub max_threads: u32,
    /// `.minnctapersm min_blocks`; 0 for none.
    pub min_blocks: u32,
    /// `.reqnctapercluster cluster, 1, 1` (blocks per thread-block cluster along x, the
    /// launch's cluster shape); 1 for none.
    pub cluster: u32,
}

/// A `.shared` symbol declared twice in one function body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateShared {
    /// The `.entry` or `.func` whose body holds both declarations.
    pub function: String,
    /// The symbol, e.g. `__shared_l23_c14`.
    pub symbol: String,
}

/// `line` up to its `//` comment.
fn strip_line_comment(line: &str) -> &str {
    line.find("//").map_or(line, |i| &line[..i])
}

/// An `.entry` header line: the entry's name, and where in the module its parameter list
/// opens.
struct Header<'a> {
    name: &'a str,
    open: usize,
}

/// The `[.visible|.weak] .entry NAME(` lines of `ptx`, in order. (`.extern` ones declare
/// an entry of another module, which this one cannot launch.)
fn entry_headers(ptx: &str) -> impl Iterator<Item = Header<'_>> {
    let mut offset = 0;
    ptx.split_inclusive('\n').filter_map(move |line| {
        let start = offset;
        offset += line.len();
        let code = strip_line_comment(line);
        let mut rest = code.trim_start();
        loop {
            let (token, after) = rest.split_at(rest.find(char::is_whitespace)?);
            match token {
                ".visible" | ".weak" => rest = after.trim_start(),
                ".entry" => {
                    rest = after.trim_start();
                    break;
                }
                _ => return None,
            }
        }
        let name_len = rest.find(|c: char| c == '(' || c.is_whitespace())?;
        let (name, after) = rest.split_at(name_len);
        let paren = after.trim_start();
        if name.is_empty() || !paren.starts_with('(') {
            return None;
        }
        let open = start + (code.len() - paren.len());
        Some(Header { name, open })
    })
}

/// Where a defined entry's parameter list closes and its body opens.
struct Definition {
    close: usize,
    body: usize,
}

/// The first `.entry name` of `ptx` that has a body (a declaration ends in `;` instead).
fn entry_definition(ptx: &str, name: &str) -> Option<Definition> {
    entry_headers(ptx).filter(|h| h.name == name).find_map(|h| {
        let close = h.open + ptx[h.open..].find(')')?;
        let end = close + ptx[close..].find(['{', ';'])?;
        (ptx.as_bytes()[end] == b'{').then_some(Definition { close, body: end })
    })
}

/// The body of `.entry entry` in `ptx`, from its `{` to the `}` that closes it (inline
/// assembly's nested `{ }` scopes included); `None` if the module defines no such entry.
pub fn entry_body<'a>(ptx: &'a str, entry: &str) -> Option<&'a str> {
    let start = entry_definition(ptx, entry)?.body;
    let mut depth = 0usize;
    for (i, b) in ptx.bytes().enumerate().skip(start) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&ptx[start..=i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The instructions of `body` that reach memory through a generic address: loads and stores
/// without a state space, and conversions of shared addresses to or from generic ones. Shared
/// memory read that way compiles to generic `LD`/`ST` in SASS, measured 15–35% slower than
/// `LDS`/`STS`.
pub fn generic_accesses(body: &str) -> Vec<&str> {
    const SPACES: [&str; 5] = [
        "ld.param",
        "ld.global",
        "ld.shared",
        "st.global",
        "st.shared",
    ];
    body.lines()
        .map(str::trim)
        .filter(|l| {
            let generic = (l.starts_with("ld.") || l.starts_with("st."))
                && !SPACES.iter().any(|p| l.starts_with(p));
            generic || l.contains("cvta.shared") || l.contains("cvta.to.shared")
        })
        .collect()
}

/// What compiling `module` as relocatable code would cost it: the driver's linker
/// (`cuLinkAddData`) compiles PTX that way, as `ptxas -c` does, and then ignores
/// `setmaxnreg` ("to maintain compatibility across compilation units", ptxas's C7504) and
/// serializes every `wgmma.mma_async` of a function that calls another (C7509: each waits
/// for the one before).
pub fn relocatable_cost(module: &str) -> RelocatableCost {
    let code = || {
        module
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
    };
    RelocatableCost {
        setmaxnreg: code().any(|l| l.starts_with("setmaxnreg.")),
        wgmma_serialized: code().any(|l| l.contains("wgmma.mma_async")) && code().any(is_call),
    }
}

/// What a module loses compiled as relocatable code ([`relocatable_cost`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RelocatableCost {
    /// Its warpgroups trade registers with `setmaxnreg`, which would be ignored.
    pub setmaxnreg: bool,
    /// It issues `wgmma.mma_async` and calls a function: the instructions would be
    /// serialized.
    pub wgmma_serialized: bool,
}

impl RelocatableCost {
    /// Whether relocatable code is the same code.
    pub fn is_free(self) -> bool {
        self == Self::default()
    }
}

/// Whether the comment-free PTX line `line` is a call (`call`, `call.uni`, predicated or
/// not).
fn is_call(line: &str) -> bool {
    let line = match line.strip_prefix('@') {
        Some(guarded) => guarded
            .split_once(char::is_whitespace)
            .map_or("", |(_, op)| op),
        None => line,
    };
    let op = line.split_whitespace().next().unwrap_or("");
    op == "call" || op.starts_with("call.")
}

/// Names of the `.entry` functions declared in `ptx`, in order (`.visible .entry NAME(` or
/// `.entry NAME(`).
pub fn entry_names(ptx: &str) -> Vec<&str> {
    entry_headers(ptx).map(|h| h.name).collect()
}

/// The byte sizes of the parameters of `.entry entry` in `ptx`, in order; `None` if there
/// is no such entry or a declaration is not a scalar or byte array this reads.
///
/// A raw launch packs its arguments by these sizes, so a declaration this cannot size is
/// `None` rather than a guess.
pub fn param_sizes(ptx: &str, entry: &str) -> Option<Vec<usize>> {
    let open = entry_headers(ptx).find(|h| h.name == entry)?.open + 1;
    let list = &ptx[open..open + ptx[open..].find(')')?];
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(param_size)
        .collect()
}

/// `.param [.align N] .TYPE [.ptr [.space] [.align N]] name[[LEN]]`.
fn param_size(decl: &str) -> Option<usize> {
    let mut tokens = decl.split_whitespace();
    if tokens.next()? != ".param" {
        return None;
    }
    let tokens: Vec<&str> = tokens.collect();
    let scalar = tokens.iter().find_map(|t| match t.strip_prefix('.')? {
        "u8" | "s8" | "b8" => Some(1),
        "u16" | "s16" | "b16" | "f16" => Some(2),
        "u32" | "s32" | "b32" | "f32" => Some(4),
        "u64" | "s64" | "b64" | "f64" => Some(8),
        _ => None,
    })?;
    let name = tokens.last()?;
    let count = match name.split_once('[') {
        Some((_, len)) => len.strip_suffix(']')?.parse().ok()?,
        None => 1,
    };
    Some(scalar * count)
}

/// The first line of `ptx` that is the directive `directive`, less the directive.
fn directive_line<'a>(ptx: &'a str, directive: &str) -> Option<&'a str> {
    ptx.lines().find_map(|line| {
        let rest = strip_line_comment(line).trim().strip_prefix(directive)?;
        rest.starts_with(char::is_whitespace).then_some(rest.trim())
    })
}

/// The module's `.target` line; `None` if it has none.
pub fn target(ptx: &str) -> Option<Target> {
    let rest = directive_line(ptx, ".target")?;
    let mut items = rest.split(',').map(str::trim);
    let arch = items.next().filter(|a| !a.is_empty())?.to_owned();
    let debug = items.any(|i| i == "debug");
    Some(Target { arch, debug })
}

/// The module's PTX ISA version, `(7, 8)` for `.version 7.8`; `None` if it has none.
pub fn version(ptx: &str) -> Option<(u32, u32)> {
    let (major, minor) = directive_line(ptx, ".version")?.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The performance-tuning directives of `.entry entry`; `None` if the module defines no
/// such entry.
pub fn entry_directives(ptx: &str, entry: &str) -> Option<EntryDirectives> {
    let def = entry_definition(ptx, entry)?;
    Some(parse_directives(&ptx[def.close + 1..def.body]))
}

/// Up to three dimensions after `.maxntid`/`.reqntid`; those left out are 1.
fn dims(tokens: &mut std::iter::Peekable<std::str::SplitWhitespace<'_>>) -> [u32; 3] {
    let mut dims = [1; 3];
    for dim in &mut dims {
        match tokens.peek().and_then(|t| t.parse().ok()) {
            Some(v) => {
                *dim = v;
                tokens.next();
            }
            None => break,
        }
    }
    dims
}

/// The directives in the text between an entry's `)` and its `{`.
fn parse_directives(region: &str) -> EntryDirectives {
    let code: String = region
        .lines()
        .map(strip_line_comment)
        .collect::<Vec<_>>()
        .join(" ")
        .replace(',', " ");
    let mut tokens = code.split_whitespace().peekable();
    let mut directives = EntryDirectives::default();
    while let Some(token) = tokens.next() {
        match token {
            ".maxntid" => directives.maxntid = Some(dims(&mut tokens)),
            ".reqntid" => directives.reqntid = Some(dims(&mut tokens)),
            ".reqnctapercluster" => directives.reqnctapercluster = Some(dims(&mut tokens)),
            ".minnctapersm" => {
                // Present even if its value does not parse: the entry has the directive.
                let value = tokens.peek().and_then(|t| t.parse().ok());
                if value.is_some() {
                    tokens.next();
                }
                directives.minnctapersm = Some(value.unwrap_or(0));
            }
            _ => {}
        }
    }
    directives
}

/// A decimal `u32` as the marker writes it: digits only, no sign.
fn decimal(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The launch-bounds markers of `ptx`, in order: lines
/// `// nvptx-device:launch_bounds ENTRY MAX_THREADS MIN_BLOCKS [CLUSTER]` (leading
/// whitespace allowed, values decimal, CLUSTER 1 where left out). A line whose first word after `//` is the keyword but which does not
/// follow the format is an error, since the bounds it meant to give would silently be lost.
pub fn launch_bound_markers(ptx: &str) -> Result<Vec<LaunchBounds>, PtxError> {
    let mut markers = Vec::new();
    for (index, line) in ptx.lines().enumerate() {
        let Some(comment) = line.trim_start().strip_prefix("//") else {
            continue;
        };
        let mut words = comment.split_whitespace();
        if words.next() != Some(LAUNCH_BOUNDS_MARKER) {
            continue;
        }
        let malformed = |reason: String| PtxError::MalformedMarker {
            line: index + 1,
            text: line.to_owned(),
            reason,
        };
        let words: Vec<&str> = words.collect();
        let (entry, threads, blocks, cluster) = match words[..] {
            [entry, threads, blocks] => (entry, threads, blocks, "1"),
            [entry, threads, blocks, cluster] => (entry, threads, blocks, cluster),
            _ => {
                return Err(malformed(format!(
                    "{} fields after the keyword, expected 3 or 4",
                    words.len()
                )));
            }
        };
        let max_threads = decimal(threads)
            .ok_or_else(|| malformed(format!("MAX_THREADS `{threads}` is not a decimal u32")))?;
        let min_blocks = decimal(blocks)
            .ok_or_else(|| malformed(format!("MIN_BLOCKS `{blocks}` is not a decimal u32")))?;
        let cluster = decimal(cluster).filter(|&c| c > 0).ok_or_else(|| {
            malformed(format!("CLUSTER `{cluster}` is not a positive decimal u32"))
        })?;
        markers.push(LaunchBounds {
            entry: entry.to_owned(),
            max_threads,
            min_blocks,
            cluster,
        });
    }
    Ok(markers)
}

/// `ptx` with each launch-bounds marker's directives, `.maxntid MAX_THREADS, 1, 1`, (for
/// a nonzero MIN_BLOCKS) `.minnctapersm MIN_BLOCKS` and (for a CLUSTER above 1)
/// `.reqnctapercluster CLUSTER, 1, 1`, on their own lines between its entry's
/// parameter list and its body, where the PTX ISA puts performance-tuning directives. A
/// module without markers comes back unchanged; the markers themselves stay, as comments.
///
/// Every marker must name a defined entry without bounds of its own, once, with 1 to
/// [`MAX_THREADS_PER_BLOCK`] threads: a kernel that silently lost its bounds would only be
/// noticed as a slowdown.
pub fn apply_launch_bounds(ptx: &str) -> Result<String, PtxError> {
    let markers = launch_bound_markers(ptx)?;
    let mut inserts: Vec<(usize, String)> = Vec::with_capacity(markers.len());
    for marker in &markers {
        let entry = &marker.entry;
        if markers.iter().filter(|m| m.entry == *entry).count() > 1 {
            return Err(PtxError::DuplicateMarker {
                entry: entry.clone(),
            });
        }
        if marker.max_threads == 0 || marker.max_threads > MAX_THREADS_PER_BLOCK {
            return Err(PtxError::InvalidMaxThreads {
                entry: entry.clone(),
                max_threads: marker.max_threads,
            });
        }
        let def = entry_definition(ptx, entry).ok_or_else(|| PtxError::UnknownEntry {
            entry: entry.clone(),
        })?;
        let existing = parse_directives(&ptx[def.close + 1..def.body]);
        let conflict = if existing.maxntid.is_some() {
            Some(".maxntid")
        } else if existing.reqntid.is_some() {
            Some(".reqntid")
        } else if existing.minnctapersm.is_some() && marker.min_blocks > 0 {
            Some(".minnctapersm")
        } else if existing.reqnctapercluster.is_some() && marker.cluster > 1 {
            Some(".reqnctapercluster")
        } else {
            None
        };
        if let Some(directive) = conflict {
            return Err(PtxError::AlreadyBounded {
                entry: entry.clone(),
                directive,
            });
        }
        let mut text = format!("\n.maxntid {}, 1, 1", marker.max_threads);
        if marker.min_blocks > 0 {
            text.push_str(&format!("\n.minnctapersm {}", marker.min_blocks));
        }
        if marker.cluster > 1 {
            text.push_str(&format!("\n.reqnctapercluster {}, 1, 1", marker.cluster));
        }
        inserts.push((def.close + 1, text));
    }
    inserts.sort_by_key(|(at, _)| *at);
    let mut out =
        String::with_capacity(ptx.len() + inserts.iter().map(|(_, t)| t.len()).sum::<usize>());
    let mut copied = 0;
    for (at, text) in inserts {
        out.push_str(&ptx[copied..at]);
        out.push_str(&text);
        copied = at;
    }
    out.push_str(&ptx[copied..]);
    Ok(out)
}

/// `ptx` without its comments and without the contents of its string literals (`.file`
/// paths), so that braces and semicolons in them do not count; every line stays where it
/// was.
fn strip_comments_and_strings(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut chars = ptx.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    // Its line breaks stay, so that line numbers do.
                    if c == '\n' {
                        out.push('\n');
                    }
                    last = c;
                }
                out.push(' ');
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '"' && !escaped {
                        break;
                    }
                    escaped = c == '\\' && !escaped;
                }
                out.push('"');
            }
            c => out.push(c),
        }
    }
    out
}

/// The function a module-scope header declares before its `{`: the name after its last
/// `.entry` or `.func` (past a `.func`'s return parameter list); `None` for anything else,
/// e.g. an array initializer.
fn function_name(header: &str) -> Option<&str> {
    let bytes = header.as_bytes();
    let at = [".entry", ".func"]
        .iter()
        .flat_map(|d| header.match_indices(d))
        .filter(|&(i, d)| {
            let before = i.checked_sub(1).map(|b| bytes[b]);
            let after = bytes.get(i + d.len()).copied();
            before.is_none_or(|b| b.is_ascii_whitespace())
                && after.is_some_and(|a| a.is_ascii_whitespace() || a == b'(')
        })
        .max_by_key(|&(i, _)| i)?;
    let mut rest = header[at.0 + at.1.len()..].trim_start();
    if at.1 == ".func" && rest.starts_with('(') {
        rest = rest[rest.find(')')? + 1..].trim_start();
    }
    let end = rest
        .find(|c: char| c == '(' || c == ';' || c == '{' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// `statement` without the labels in front of it (`$L__BB0_2:`).
fn strip_labels(mut statement: &str) -> &str {
    loop {
        statement = statement.trim_start();
        let Some((label, rest)) = statement.split_once(':') else {
            return statement;
        };
        let is_label = !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%'));
        if !is_label {
            return statement;
        }
        statement = rest;
    }
}

/// The symbols a `.shared [.align N] .TYPE NAME[[LEN]][, …]` statement declares; empty for
/// any other statement.
fn shared_symbols(statement: &str) -> Vec<&str> {
    let statement = strip_labels(statement);
    let Some(mut rest) = statement.strip_prefix(".shared") else {
        return Vec::new();
    };
    if !rest.starts_with(char::is_whitespace) {
        return Vec::new();
    }
    loop {
        rest = rest.trim_start();
        if !rest.starts_with('.') {
            break;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (token, after) = rest.split_at(end);
        rest = after.trim_start();
        if token == ".align" {
            rest = &rest[rest.find(char::is_whitespace).unwrap_or(rest.len())..];
        }
    }
    let names = rest.split('=').next().unwrap_or(rest);
    names
        .split(',')
        .map(|n| n.split(['[', '<']).next().unwrap_or(n).trim())
        .filter(|n| !n.is_empty())
        .collect()
}

/// The `.shared` symbols declared more than once in one `.entry` or `.func` body, each pair
/// once, in the order of their second declaration.
///
/// `nvptx_device::shared_array!` declares its array with inline PTX named after its call
/// site; a helper holding one that is inlined twice into a kernel declares the name twice,
/// which ptxas only reports when the driver loads the module on a GPU. A body runs from its
/// `{` to the matching `}` (inline PTX opens scopes of its own inside it); declarations
/// outside any body (`.extern .shared` at module scope) belong to no function.
pub fn duplicate_shared(ptx: &str) -> Vec<DuplicateShared> {
    let code = strip_comments_and_strings(ptx);
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut statement = 0;
    // The function whose body the scan is in, and how often each symbol was declared in it.
    let mut function: Option<(&str, HashMap<&str, usize>)> = None;
    for (i, c) in code.char_indices() {
        match c {
            '{' => {
                if depth == 0 {
                    function = function_name(&code[statement..i]).map(|f| (f, HashMap::new()));
                }
                depth += 1;
                statement = i + 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    function = None;
                }
                statement = i + 1;
            }
            ';' => {
                if let Some((name, seen)) = function.as_mut() {
                    for symbol in shared_symbols(&code[statement..i]) {
                        let count = seen.entry(symbol).or_insert(0);
                        *count += 1;
                        if *count == 2 {
                            found.push(DuplicateShared {
                                function: (*name).to_owned(),
                                symbol: symbol.to_owned(),
                            });
                        }
                    }
                }
                statement = i + 1;
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn bodies_and_generic_accesses() {
        let ptx = ".visible .entry f(\n.param .u64 p\n)\n{\n\t{ .reg .b32 r; }\n\tld.shared.b32 %r1, [%r2];\n\tld.u32 %r3, [%rd1];\n\tcvta.shared.u64 %rd2, %rd3;\n\tret;\n}\n.visible .entry g()\n{\n}\n";
        let body = entry_body(ptx, "f").unwrap();
        assert!(body.starts_with('{') && body.ends_with('}') && body.contains("ret;"));
        assert!(!body.contains(".entry g"));
        assert_eq!(entry_body(ptx, "g"), Some("{\n}"));
        assert_eq!(entry_body(ptx, "h"), None);
        assert_eq!(
            generic_accesses(body),
            ["ld.u32 %r3, [%rd1];", "cvta.shared.u64 %rd2, %rd3;"]
        );
    }

    #[test]
    fn relocatable_cost_names_setmaxnreg_and_calls_beside_wgmma() {
        use super::{RelocatableCost, relocatable_cost};
        let wgmma = "\twgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%r1}, %rd1, %rd2, p, 1, 1, 0, 1;\n";
        let call = "\tcall.uni f, ();\n";
        let setmaxnreg = "\tsetmaxnreg.inc.sync.aligned.u32 232;\n";
        let serialized = RelocatableCost {
            setmaxnreg: false,
            wgmma_serialized: true,
        };
        assert!(relocatable_cost(wgmma).is_free());
        assert!(relocatable_cost(call).is_free());
        assert_eq!(relocatable_cost(&format!("{wgmma}{call}")), serialized);
        assert_eq!(
            relocatable_cost(&format!("{wgmma}\t@%p1 call g, (%r1);\n")),
            serialized
        );
        assert_eq!(
            relocatable_cost(&format!("{setmaxnreg}{wgmma}{call}")),
            RelocatableCost {
                setmaxnreg: true,
                wgmma_serialized: true
            }
        );
        assert!(!relocatable_cost(setmaxnreg).is_free());
        // Comments and names that merely contain the words are not instructions.
        let quiet =
            format!("{wgmma}\t// call.uni f, ();\n\tmov.u32 %r_call, 1;\n// setmaxnreg.inc\n");
        assert!(relocatable_cost(&quiet).is_free());
    }

    use super::*;

    /// A module as LLVM writes it: a marker, a declaration, an entry with two parameters
    /// and inline PTX in braces, one without parameters, and a `.func`.
    const MODULE: &str = "//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_80
.address_size 64

\t// nvptx-device:launch_bounds f 256 2
// nvptx-device:launch_bounds g 128 0
.extern .shared .align 16 .b8 __dynamic_shared[];

\t// .globl\tf
.func _RNvCs_4core5panic
()
.noreturn;

.visible .entry f(
\t.param .align 8 .b8 f_param_0[24],
\t.param .f64 f_param_1
)
{
\t.reg .b32 \t%r<4>;

\t// begin inline asm
\t.shared .align 16 .b8 __shared_l23_c14[1024];
\tmov.u32 %r1, __shared_l23_c14;
\t// end inline asm
\t// begin inline asm
\t{ .reg .pred p; setp.eq.u32 p, %r1, 0; }
\t// end inline asm
\tst.shared.v4.b32 [%r1], {%r1, %r2, %r3, %r1};
\tret;

}
\t// .globl\tg
.entry g()
{
\tret;

}
.func  (.param .b32 func_retval0) h(
\t.param .b32 h_param_0
)
{
\t.shared .align 16 .b8 __shared_l23_c14[1024];
\tret;
}
";

    #[test]
    fn entries_are_listed_with_or_without_visible() {
        assert_eq!(entry_names(MODULE), ["f", "g"]);
        assert_eq!(entry_names(".weak .entry w (\n)\n{\n}\n"), ["w"]);
        assert!(entry_names("// .entry commented(\n.entryx y(\n").is_empty());
    }

    #[test]
    fn parameter_sizes_are_read_from_the_entry() {
        assert_eq!(param_sizes(MODULE, "f"), Some(vec![24, 8]));
        assert_eq!(param_sizes(MODULE, "g"), Some(vec![]));
        assert_eq!(param_sizes(MODULE, "nope"), None);
        // `.entry foo(` is not `.entry foo_bar(`.
        let ptx = ".visible .entry foo_bar(\n\t.param .u32 a\n)\n{\n}\n.visible .entry foo(\n\t.param .u64 .ptr .align 1 b,\n\t.param .u16 c\n)\n{\n}\n";
        assert_eq!(param_sizes(ptx, "foo"), Some(vec![8, 2]));
        assert_eq!(param_sizes(ptx, "foo_bar"), Some(vec![4]));
        assert_eq!(param_sizes(ptx, "fo"), None);
        // A declaration it cannot size is no guess.
        assert_eq!(
            param_sizes(
                ".entry k(\n\t.param .u32 a,\n\t.param .pred p\n)\n{\n}\n",
                "k"
            ),
            None
        );
        assert_eq!(
            param_sizes(".entry k(\n\t.param .b8 a[x]\n)\n{\n}\n", "k"),
            None
        );
    }

    #[test]
    fn target_and_version() {
        assert_eq!(
            target(MODULE),
            Some(Target {
                arch: "sm_80".into(),
                debug: false
            })
        );
        assert_eq!(
            target(".version 8.0\n.target sm_90a, debug\n"),
            Some(Target {
                arch: "sm_90a".into(),
                debug: true
            })
        );
        assert_eq!(target(".targets sm_80\n"), None);
        assert_eq!(version(MODULE), Some((7, 8)));
        assert_eq!(version(".version 8.5 // comment\n"), Some((8, 5)));
        assert_eq!(version(".version 8\n"), None);
        assert_eq!(version(""), None);
    }

    #[test]
    fn directives_are_read_between_parameters_and_body() {
        assert_eq!(
            entry_directives(MODULE, "f"),
            Some(EntryDirectives::default())
        );
        let ptx =
            ".visible .entry k(\n\t.param .u32 a\n)\n.maxntid 128\n.minnctapersm 3\n{\n\tret;\n}\n";
        assert_eq!(
            entry_directives(ptx, "k"),
            Some(EntryDirectives {
                maxntid: Some([128, 1, 1]),
                reqntid: None,
                minnctapersm: Some(3),
                reqnctapercluster: None,
            })
        );
        let ptx = ".entry k()\n.reqntid 32, 4, 2\n{\n}\n";
        assert_eq!(
            entry_directives(ptx, "k").and_then(|d| d.reqntid),
            Some([32, 4, 2])
        );
        assert_eq!(entry_directives(MODULE, "h"), None);
        // A declaration has no body, hence no directives of its own.
        assert_eq!(entry_directives(".visible .entry k(\n);\n", "k"), None);
        assert_eq!(entry_names(".extern .entry k(\n);\n"), Vec::<&str>::new());
    }

    #[test]
    fn markers_are_parsed() {
        assert_eq!(
            launch_bound_markers(MODULE),
            Ok(vec![
                LaunchBounds {
                    entry: "f".into(),
                    max_threads: 256,
                    min_blocks: 2,
                    cluster: 1
                },
                LaunchBounds {
                    entry: "g".into(),
                    max_threads: 128,
                    min_blocks: 0,
                    cluster: 1
                },
            ])
        );
        assert_eq!(
            launch_bound_markers("// nvptx-device:other f 1 2\n"),
            Ok(vec![])
        );
        for (bad, reason) in [
            ("// nvptx-device:launch_bounds f 256", "2 fields"),
            ("// nvptx-device:launch_bounds f 256 2 1 1", "5 fields"),
            ("// nvptx-device:launch_bounds f 256 2 0", "CLUSTER `0`"),
            (
                "// nvptx-device:launch_bounds f 0x100 2",
                "MAX_THREADS `0x100`",
            ),
            ("// nvptx-device:launch_bounds f 256 -1", "MIN_BLOCKS `-1`"),
            (
                "// nvptx-device:launch_bounds f 99999999999 1",
                "MAX_THREADS",
            ),
        ] {
            let ptx = format!(".version 7.8\n{bad}\n");
            match launch_bound_markers(&ptx) {
                Err(e @ PtxError::MalformedMarker { line: 2, .. }) => {
                    let message = e.to_string();
                    assert!(message.contains(reason), "{message}");
                    assert!(message.contains("line 2"), "{message}");
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn launch_bounds_go_between_parameters_and_body() {
        let out = apply_launch_bounds(MODULE).unwrap();
        assert!(
            out.contains("\t.param .f64 f_param_1\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n{\n"),
            "{out}"
        );
        assert!(out.contains(".entry g()\n.maxntid 128, 1, 1\n{\n"), "{out}");
        assert_eq!(
            entry_directives(&out, "f"),
            Some(EntryDirectives {
                maxntid: Some([256, 1, 1]),
                reqntid: None,
                minnctapersm: Some(2),
                reqnctapercluster: None,
            })
        );
        assert_eq!(
            entry_directives(&out, "g"),
            Some(EntryDirectives {
                maxntid: Some([128, 1, 1]),
                ..EntryDirectives::default()
            })
        );
        // Nothing else moves.
        assert_eq!(
            out.replace("\n.maxntid 256, 1, 1\n.minnctapersm 2", "")
                .replace("\n.maxntid 128, 1, 1", ""),
            MODULE
        );
        // A cluster shape, for blocks launched in clusters of two.
        let paired = MODULE.replace("launch_bounds g 128 0", "launch_bounds g 128 0 2");
        let out = apply_launch_bounds(&paired).unwrap();
        assert!(
            out.contains(".entry g()\n.maxntid 128, 1, 1\n.reqnctapercluster 2, 1, 1\n{\n"),
            "{out}"
        );
        assert_eq!(
            entry_directives(&out, "g").and_then(|d| d.reqnctapercluster),
            Some([2, 1, 1])
        );
        let plain = MODULE.replace("// nvptx-device:launch_bounds", "// other");
        assert_eq!(apply_launch_bounds(&plain).as_deref(), Ok(plain.as_str()));
    }

    #[test]
    fn bad_launch_bounds_are_errors_naming_the_entry() {
        let base = ".visible .entry k(\n\t.param .u32 a\n)\n{\n\tret;\n}\n";
        let with = |markers: &str| format!("{markers}\n{base}");
        let cases = [
            (
                with("// nvptx-device:launch_bounds nope 256 2"),
                PtxError::UnknownEntry {
                    entry: "nope".into(),
                },
            ),
            (
                with(
                    "// nvptx-device:launch_bounds k 256 2\n// nvptx-device:launch_bounds k 128 0",
                ),
                PtxError::DuplicateMarker { entry: "k".into() },
            ),
            (
                with("// nvptx-device:launch_bounds k 0 2"),
                PtxError::InvalidMaxThreads {
                    entry: "k".into(),
                    max_threads: 0,
                },
            ),
            (
                with("// nvptx-device:launch_bounds k 1025 1"),
                PtxError::InvalidMaxThreads {
                    entry: "k".into(),
                    max_threads: 1025,
                },
            ),
            (
                format!(
                    "// nvptx-device:launch_bounds k 256 2\n{}",
                    base.replace(")\n{", ")\n.maxntid 128, 1, 1\n{")
                ),
                PtxError::AlreadyBounded {
                    entry: "k".into(),
                    directive: ".maxntid",
                },
            ),
            (
                format!(
                    "// nvptx-device:launch_bounds k 256 2\n{}",
                    base.replace(")\n{", ")\n.minnctapersm 1\n{")
                ),
                PtxError::AlreadyBounded {
                    entry: "k".into(),
                    directive: ".minnctapersm",
                },
            ),
        ];
        for (ptx, expected) in cases {
            let error = apply_launch_bounds(&ptx).unwrap_err();
            assert_eq!(error, expected);
            let entry = match &expected {
                PtxError::UnknownEntry { entry }
                | PtxError::DuplicateMarker { entry }
                | PtxError::InvalidMaxThreads { entry, .. }
                | PtxError::AlreadyBounded { entry, .. } => entry,
                PtxError::MalformedMarker { .. } => unreachable!(),
            };
            assert!(error.to_string().contains(&format!("`{entry}`")), "{error}");
        }
        // The limits themselves are fine.
        assert!(apply_launch_bounds(&with("// nvptx-device:launch_bounds k 1024 0")).is_ok());
        assert!(apply_launch_bounds(&with("// nvptx-device:launch_bounds k 1 1")).is_ok());
    }

    #[test]
    fn shared_declared_twice_in_one_function() {
        // `f` and `h` each declare `__shared_l23_c14` once: no duplicate.
        assert_eq!(duplicate_shared(MODULE), []);
        let inlined_twice = MODULE.replace(
            "\tst.shared.v4.b32",
            "$L__BB0_2:\n\t// begin inline asm\n\t.shared .align 16 .b8 __shared_l23_c14[1024];\n\t// end inline asm\n\tst.shared.v4.b32",
        );
        assert_eq!(
            duplicate_shared(&inlined_twice),
            [DuplicateShared {
                function: "f".into(),
                symbol: "__shared_l23_c14".into(),
            }]
        );
        // Inside an inline-asm scope of the body, in a `.func`, three times: one report.
        let ptx = ".func  (.param .b32 func_retval0) helper(\n)\n{\n\t.shared .b32 x;\n\t{\n\t.shared .align 4 .b8 x[4];\n\t}\n\t.shared .u32 y, x;\n}\n";
        assert_eq!(
            duplicate_shared(ptx),
            [DuplicateShared {
                function: "helper".into(),
                symbol: "x".into(),
            }]
        );
        // Module scope is no function; commented-out and quoted braces do not count.
        let ptx = ".extern .shared .align 16 .b8 s[];\n.shared .align 4 .b8 s2[4];\n.file 1 \"/a/{b.rs\"\n/* { */\n.visible .entry k()\n{\n\t// }\n\t.shared .align 4 .b8 s[4];\n\t.shared .align 4 .b8 s2[4];\n}\n.global .align 4 .b8 table[2] = {1, 2};\n.entry k2()\n{\n\t.shared .align 4 .b8 s[4];\n}\n";
        assert_eq!(duplicate_shared(ptx), []);
    }
}
