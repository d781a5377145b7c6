//! One PTX module per entry point, cut from a whole one.
//!
//! The driver compiles a module's PTX to machine code when the module is loaded, all of it,
//! whichever of its entries will run: seconds for a module of dozens of large kernels, paid
//! again on every machine and after every change to any kernel (its compute cache is keyed by
//! the module's text). A host that loads [`ModuleIndex::module`] for an entry when it is
//! first launched compiles that entry and what it calls, nothing else, and an entry's module
//! text changes only when its own code does.
//!
//! A module is read as module-scope statements: the `.version`, `.target` and
//! `.address_size` lines, declarations ending in `;` (`.extern .shared …[];`, `.global`
//! variables, `.func` prototypes) and definitions ending in their body's `}` (`.func`,
//! `.entry`). An entry's module holds the first three, then every statement of the closure of
//! what the entry names (the `.func`s it calls, the variables it addresses, and so on), in
//! the whole module's order, without comments.

use std::collections::HashMap;

/// What a module-scope statement is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `.version`, `.target`, `.address_size`: every module needs them.
    Header,
    /// An `.entry`, declared or defined.
    Entry,
    /// Anything else that names a symbol: a `.func` or a variable.
    Symbol,
}

/// One module-scope statement: its text without the comments before it, and its name.
#[derive(Clone, Debug)]
struct Statement<'a> {
    text: &'a str,
    kind: Kind,
    name: Option<&'a str>,
}

/// The statements of a PTX module and where each symbol is declared: built once (one pass
/// over the text), then asked for the module of any entry.
#[derive(Clone, Debug)]
pub struct ModuleIndex<'a> {
    statements: Vec<Statement<'a>>,
    /// The statements that declare or define each symbol, in order.
    by_name: HashMap<&'a str, Vec<usize>>,
}

/// Whether `b` may continue a PTX identifier (`[a-zA-Z0-9_$]`).
fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The identifiers of `code` (comment-free PTX): runs of `[a-zA-Z0-9_$]` that do not start
/// with a digit, `%` registers and `.` directives excluded.
fn identifiers(code: &str) -> impl Iterator<Item = &str> {
    let bytes = code.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let start = i;
            if is_ident(bytes[i]) {
                while i < bytes.len() && is_ident(bytes[i]) {
                    i += 1;
                }
                let before = start.checked_sub(1).map(|b| bytes[b]);
                let skip = bytes[start].is_ascii_digit() || matches!(before, Some(b'%' | b'.'));
                if !skip {
                    return Some(&code[start..i]);
                }
            } else {
                i += 1;
            }
        }
        None
    })
}

/// The symbol a variable declaration names: its last word before any initializer, without
/// an array or vector suffix (`.global .align 4 .b8 table[16] = {…};` → `table`).
fn variable_name(code: &str) -> Option<&str> {
    let code = code.split('=').next()?.trim_end().trim_end_matches(';');
    let last = code.split_whitespace().last()?;
    let name = last.split(['[', '<']).next()?;
    (!name.is_empty() && !name.starts_with('.')).then_some(name)
}

/// `text` without its comments (strings kept as they are), for reading names.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[copied..i]);
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                copied = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[copied..i]);
                i = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
                out.push(' ');
                copied = i;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied.min(bytes.len())..]);
    out
}

impl<'a> ModuleIndex<'a> {
    /// Reads the module-scope statements of `ptx`. Text it cannot place (an unclosed body, a
    /// statement without its `;`) ends up in a last statement of its own, which no entry
    /// names.
    pub fn new(ptx: &'a str) -> Self {
        let bytes = ptx.as_bytes();
        let mut statements = Vec::new();
        // Where the statement being read starts (its first code byte), if one has started.
        let mut start: Option<usize> = None;
        // Whether the statement being read is a variable's initializer (`= {…};`), which
        // ends at its `;`, not at its `}` as a function body does.
        let mut initializer = false;
        let mut depth = 0usize;
        let mut i = 0;
        let push = |start: usize, end: usize, statements: &mut Vec<Statement<'a>>| {
            statements.push(Self::statement(&ptx[start..end]));
        };
        while i < bytes.len() {
            match bytes[i] {
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    i = ptx[i..].find('\n').map_or(bytes.len(), |n| i + n);
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'*') => {
                    i = ptx[i + 2..]
                        .find("*/")
                        .map_or(bytes.len(), |n| i + 2 + n + 2);
                    continue;
                }
                b'"' => {
                    start.get_or_insert(i);
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'\n' if depth == 0 => {
                    // The header directives end at their line's end, without a `;`.
                    if let Some(s) = start {
                        let line = &ptx[s..i];
                        if [".version", ".target", ".address_size"]
                            .iter()
                            .any(|d| line.starts_with(d))
                        {
                            push(s, i, &mut statements);
                            start = None;
                        }
                    }
                }
                b'{' => {
                    let s = *start.get_or_insert(i);
                    if depth == 0 {
                        initializer = ptx[s..i].contains('=');
                    }
                    depth += 1;
                }
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0
                        && !initializer
                        && let Some(s) = start.take()
                    {
                        push(s, i + 1, &mut statements);
                    }
                }
                b';' if depth == 0 => {
                    if let Some(s) = start.take() {
                        push(s, i + 1, &mut statements);
                    }
                    initializer = false;
                }
                b if !b.is_ascii_whitespace() => {
                    start.get_or_insert(i);
                }
                _ => {}
            }
            i += 1;
        }
        if let Some(s) = start {
            push(s, bytes.len(), &mut statements);
        }
        let mut by_name: HashMap<&'a str, Vec<usize>> = HashMap::new();
        for (at, statement) in statements.iter().enumerate() {
            if let Some(name) = statement.name {
                by_name.entry(name).or_default().push(at);
            }
        }
        Self {
            statements,
            by_name,
        }
    }

    /// Classifies one statement's text (which starts at its first code byte).
    fn statement(text: &'a str) -> Statement<'a> {
        let header = [".version", ".target", ".address_size"];
        if header.iter().any(|d| text.starts_with(d)) {
            return Statement {
                text,
                kind: Kind::Header,
                name: None,
            };
        }
        // The part before any body, where the name is.
        let head = text.split('{').next().unwrap_or(text);
        let code = without_comments(head);
        if let Some(name) = super::function_name(&code) {
            // `function_name` borrows from the comment-free copy: find the same name in
            // `text` (it is the first occurrence after the directive, which no comment
            // inside a header repeats).
            let name = text.find(name).map(|at| &text[at..at + name.len()]);
            let kind = if code.split_whitespace().any(|w| w == ".entry") {
                Kind::Entry
            } else {
                Kind::Symbol
            };
            return Statement { text, kind, name };
        }
        let name =
            variable_name(&code).and_then(|n| text.find(n).map(|at| &text[at..at + n.len()]));
        Statement {
            text,
            kind: Kind::Symbol,
            name,
        }
    }

    /// The entry points the module defines, in order.
    pub fn entries(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.statements
            .iter()
            .filter(|s| s.kind == Kind::Entry && s.text.trim_end().ends_with('}'))
            .filter_map(|s| s.name)
    }

    /// Whether the module defines the entry point `entry`.
    pub fn defines(&self, entry: &str) -> bool {
        self.root(entry).is_some()
    }

    /// The statement that defines `entry`.
    fn root(&self, entry: &str) -> Option<usize> {
        self.by_name.get(entry)?.iter().copied().find(|&at| {
            let s = &self.statements[at];
            s.kind == Kind::Entry && s.text.trim_end().ends_with('}')
        })
    }

    /// A module of its own for `entry`: the header, then every statement of the closure of
    /// what the entry names, in this module's order, without comments. `None` if the module
    /// defines no such entry.
    pub fn module(&self, entry: &str) -> Option<String> {
        let root = self.root(entry)?;
        let mut keep = vec![false; self.statements.len()];
        let mut stack = vec![root];
        keep[root] = true;
        while let Some(at) = stack.pop() {
            let code = without_comments(self.statements[at].text);
            for name in identifiers(&code) {
                for &dep in self.by_name.get(name).map_or(&[][..], Vec::as_slice) {
                    // Another entry is never a dependency: a module may not call one.
                    if !keep[dep] && self.statements[dep].kind == Kind::Symbol {
                        keep[dep] = true;
                        stack.push(dep);
                    }
                }
            }
        }
        let mut out = String::new();
        for (statement, kept) in self.statements.iter().zip(&keep) {
            if statement.kind == Kind::Header || *kept {
                if statement.kind == Kind::Header {
                    out.push_str(statement.text);
                    out.push('\n');
                } else {
                    out.push('\n');
                    out.push_str(&without_comments(statement.text));
                    out.push('\n');
                }
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_80\n.address_size 64\n\n\
        // nvptx-device:launch_bounds b 128 2\n\
        .extern .shared .align 16 .b8 __dynamic_shared[];\n\
        .global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};\n\n\
        \t// .globl\ta\n\
        .func helper_panic\n()\n.noreturn;\n\n\
        .visible .entry a(\n\t.param .u64 .ptr .align 1 a_param_0\n)\n{\n\t.reg .b32 %r<2>;\n\
        \tmov.u32 %r1, __dynamic_shared;\n\t// begin inline asm\n\t{ .reg .pred p; }\n\t// end inline asm\n\
        \t{ // callseq 0, 0\n\tcall.uni helper_panic, ();\n\t} // callseq 0\n\tret;\n}\n\
        \t// .globl\tb\n\
        .visible .entry b(\n\t.param .u32 b_param_0\n)\n.maxntid 128, 1, 1\n{\n\t.reg .b64 %rd<2>;\n\
        \tmov.u64 %rd1, table; // not __dynamic_shared\n\tret;\n}\n\
        .func helper_fmt()\n.noreturn\n{\n\ttrap;\n}\n\
        .func helper_panic()\n.noreturn\n{\n\tcall.uni helper_fmt, ();\n\ttrap;\n}\n";

    #[test]
    fn entries_in_order() {
        let index = ModuleIndex::new(MODULE);
        assert_eq!(index.entries().collect::<Vec<_>>(), ["a", "b"]);
        assert!(index.defines("a") && !index.defines("helper_fmt") && !index.defines("c"));
    }

    #[test]
    fn an_entry_takes_the_closure_of_what_it_names() {
        let index = ModuleIndex::new(MODULE);
        let a = index.module("a").unwrap();
        assert!(
            a.starts_with(".version 7.8\n.target sm_80\n.address_size 64\n"),
            "{a}"
        );
        // Its prototype and definition, and what that calls; the shared buffer it addresses.
        assert_eq!(a.matches(".func helper_panic").count(), 2, "{a}");
        assert!(a.contains(".func helper_fmt()"), "{a}");
        assert!(a.contains("__dynamic_shared[];"), "{a}");
        assert!(a.contains("{ .reg .pred p; }"), "{a}");
        // Not the other entry, the table it alone reads, or any comment.
        assert!(!a.contains(".entry b") && !a.contains("table"), "{a}");
        assert!(!a.contains("//"), "{a}");
        // Declarations come before their uses, as in the whole module.
        assert!(a.find("__dynamic_shared[]").unwrap() < a.find(".entry a").unwrap());
        assert!(a.find(".noreturn;").unwrap() < a.find(".entry a").unwrap());

        let b = index.module("b").unwrap();
        assert!(b.contains("table[8] = {1, 2, 3, 4, 5, 6, 7, 8};"), "{b}");
        assert!(b.contains(".maxntid 128, 1, 1"), "{b}");
        // A name in a comment is no reference.
        assert!(
            !b.contains("__dynamic_shared") && !b.contains("helper"),
            "{b}"
        );
    }

    #[test]
    fn unknown_entries_and_functions_have_no_module() {
        let index = ModuleIndex::new(MODULE);
        assert_eq!(index.module("c"), None);
        assert_eq!(index.module("helper_fmt"), None);
        assert_eq!(ModuleIndex::new("").entries().count(), 0);
        assert_eq!(ModuleIndex::new("not ptx {").module("not"), None);
    }

    #[test]
    fn a_module_of_one_entry_splits_to_itself() {
        let index = ModuleIndex::new(MODULE);
        let b = index.module("b").unwrap();
        let again = ModuleIndex::new(&b);
        assert_eq!(again.entries().collect::<Vec<_>>(), ["b"]);
        assert_eq!(again.module("b").unwrap(), b);
    }
}
