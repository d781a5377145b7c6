//! Collective instructions that a thread may reach while others of its block or warp take
//! another path: a `bar.sync` under a branch whose condition differs between the threads of
//! a block, or a full-mask `shfl.sync`/`vote.sync`/`redux.sync` under one whose condition
//! differs between the lanes of a warp. On the GPU either may hang the block (the PTX ISA
//! leaves both undefined); the CPU simulator cannot see it, because it runs the Rust source
//! and the hazard is made by the compiler: with a branch on `threadIdx.x == 0` before and
//! after a loop body, LLVM gave thread 0 a copy of the body of its own, shuffles and
//! barriers included, and the kernel hung on an H100. This reads the PTX as compiled.
//!
//! The analysis, on one entry's body:
//!
//! - **What varies.** Every register gets a level, [`Varies`]: `%tid` and `%laneid` vary
//!   between lanes; a right shift by 5 or more of a lane-varying value (`tid / 32`, the
//!   warp's index) varies between warps only; a `vote`/`redux` result is one value per warp;
//!   a `shfl` or `atom` result varies between lanes; a load varies as its address does
//!   (memory at one address holds one value: a word other threads write while it is
//!   polled may read differently, so a poll should end on a ballot, as this project's do); a comparison of `%tid.x` itself with an
//!   immediate at a warp boundary (`tid < 32`) varies between warps only (blocks are whole
//!   warps); anything else varies as its most varying source, or its guard. Registers are
//!   assigned in loops, so this runs to a fixed point; a register assigned in several places
//!   (LLVM reuses them) has a level per program point, carried along the control flow.
//! - **Where threads may part.** A block ending in a branch (`@p bra`, `brx.idx`) on a
//!   varying value starts a region that lasts until the block's immediate post-dominator,
//!   where every path meets again; the blocks reachable in between are divergent at that
//!   level (the most varying region around a block counts). A branch to code that can only
//!   `trap` (a bounds check) parts nobody: the launch ends there.
//! - **Findings.** A `bar.sync`/`barrier.sync` of the whole block in a region divergent
//!   between warps or lanes, one with a thread count (`bar.sync id, n`: some warps meet
//!   there, whole) in a region divergent between lanes; a full-mask (`-1`, `0xffffffff`) warp collective, or any `.aligned` instruction
//!   (`mma.sync`, `ldmatrix`, `wgmma`), in a region divergent between lanes; either under a
//!   predicate guard that varies as much.
//!
//! It reads what LLVM's NVPTX back end writes; a construct it does not know is read as
//! varying as its sources, so a finding may be a false alarm but a body it passes has no
//! collective under a branch it could see as varying.

use std::collections::HashMap;
use std::fmt;

/// How much a value may differ between the threads of a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Varies {
    /// The same in every thread.
    Uniform,
    /// The same in the lanes of a warp, perhaps not between warps.
    Warps,
    /// Perhaps different in every thread.
    Lanes,
}

/// A collective instruction in a region where the threads it needs may have parted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The instruction, as written.
    pub instruction: String,
    /// Its 1-based line in the body (the body's `{` is line 1).
    pub line: usize,
    /// How far the branch (or guard) it sits under varies.
    pub varies: Varies,
    /// The branch or guard, as written.
    pub branch: String,
    /// Its line in the body.
    pub branch_line: usize,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "body line {}: `{}` under `{}` (body line {}), which varies between {}",
            self.line,
            self.instruction,
            self.branch,
            self.branch_line,
            match self.varies {
                Varies::Uniform => "nothing",
                Varies::Warps => "warps",
                Varies::Lanes => "lanes",
            }
        )
    }
}

/// A statement of the body: its text (no `;`), its line, and its predicate guard (the
/// register; `negated` for `@!p`).
struct Stmt {
    text: String,
    line: usize,
    guard: Option<String>,
    negated: bool,
}

impl Stmt {
    fn new(raw: &str, line: usize) -> Self {
        let raw = raw.trim();
        match raw.strip_prefix('@') {
            Some(rest) => {
                let (guard, text) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                Stmt {
                    text: text.trim().to_owned(),
                    line,
                    guard: Some(guard.trim_start_matches('!').to_owned()),
                    negated: guard.starts_with('!'),
                }
            }
            None => Stmt {
                text: raw.to_owned(),
                line,
                guard: None,
                negated: false,
            },
        }
    }

    fn opcode(&self) -> &str {
        self.text.split_whitespace().next().unwrap_or("")
    }

    fn operands(&self) -> &str {
        self.text[self.opcode().len()..].trim()
    }

    /// The statement as written, its guard included.
    fn written(&self) -> String {
        match &self.guard {
            Some(g) => format!("@{}{g} {}", if self.negated { "!" } else { "" }, self.text),
            None => self.text.clone(),
        }
    }
}

/// The body's items in order: labels and statements.
enum Item {
    Label(String),
    Stmt(Stmt),
}

/// Splits `body` (with its outer braces) into labels and statements (a `.branchtargets`
/// list among them, which may span lines); comments, other directives and inline
/// assembly's braces are dropped.
fn items(body: &str) -> Vec<Item> {
    let mut out = vec![];
    let (mut buffer, mut first_line) = (String::new(), 0);
    let code = super::strip_comments_and_strings(body);
    for (i, raw) in code.lines().enumerate() {
        let mut rest = raw.trim();
        while !rest.is_empty() {
            if buffer.is_empty() {
                if let Some(r) = rest.strip_prefix('{').or_else(|| rest.strip_prefix('}')) {
                    rest = r.trim_start();
                    continue;
                }
                let token_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
                if let Some(label) = rest[..token_end].strip_suffix(':')
                    && !label.is_empty()
                {
                    out.push(Item::Label(label.to_owned()));
                    rest = rest[token_end..].trim_start();
                    continue;
                }
                first_line = i + 1;
            }
            match rest.split_once(';') {
                Some((part, r)) => {
                    buffer.push(' ');
                    buffer.push_str(part);
                    let stmt = buffer.trim();
                    if !stmt.starts_with('.') || stmt.starts_with(".branchtargets") {
                        out.push(Item::Stmt(Stmt::new(stmt, first_line)));
                    }
                    buffer.clear();
                    rest = r.trim_start();
                }
                None => {
                    buffer.push(' ');
                    buffer.push_str(rest);
                    rest = "";
                }
            }
        }
    }
    out
}

/// The registers named in `s` (`%r12`, `%rd3`, `%p1`, `%tid.x`, ...), in order.
fn registers(s: &str) -> impl Iterator<Item = &str> {
    s.match_indices('%').filter_map(move |(i, _)| {
        let rest = &s[i + 1..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        (end > 0).then(|| &s[i..i + 1 + end])
    })
}

/// How a special register varies.
fn special(reg: &str) -> Option<Varies> {
    let name = reg.trim_start_matches('%');
    if name.starts_with("tid") || name == "laneid" || name.starts_with("lanemask") {
        Some(Varies::Lanes)
    } else if name == "warpid" {
        Some(Varies::Warps)
    } else if name.contains('.') || !name.ends_with(|c: char| c.is_ascii_digit()) {
        // %ctaid.x, %ntid.y, %dynamic_smem_size, %clock: the same in every thread of a
        // block, or (the clocks) not meant to steer control flow.
        Some(Varies::Uniform)
    } else {
        None
    }
}

/// Opcodes (prefixes) that write no register: stores, barriers, branches, exits, fences,
/// asynchronous copies and reductions to memory.
const NO_DESTINATION: [&str; 15] = [
    "st.",
    "bar",
    "bra",
    "brx",
    "ret",
    "exit",
    "trap",
    "cp.async",
    "red.",
    "fence",
    "membar",
    "wgmma.fence",
    "wgmma.commit",
    "wgmma.wait",
    ".branchtargets",
];

/// Opcodes (prefixes) that end a basic block: branches and exits.
const ENDS_BLOCK: [&str; 5] = ["bra", "brx", "ret", "exit", "trap"];

/// The destination registers of `stmt` and the registers its value is computed from; the
/// address registers for a load.
fn defs_and_uses(stmt: &Stmt) -> (Vec<&str>, Vec<&str>) {
    let op = stmt.opcode();
    let operands = stmt.operands();
    let no_def = NO_DESTINATION.iter().any(|p| op.starts_with(p));
    if op.starts_with("brx") {
        // The index chooses the target.
        return (vec![], registers(operands).take(1).collect());
    }
    if no_def {
        return (vec![], vec![]);
    }
    // The destination: a register, or a `{...}` list of them, before the first comma at
    // depth zero.
    let mut depth = 0;
    let mut split = operands.len();
    for (i, c) in operands.char_indices() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                split = i;
                break;
            }
            _ => {}
        }
    }
    let (dest, sources) = (&operands[..split], operands.get(split + 1..).unwrap_or(""));
    let defs: Vec<&str> = registers(dest).collect();
    let uses: Vec<&str> = if op.starts_with("ld.") || op.starts_with("ldmatrix") {
        // What a load reads depends on its address only.
        registers(sources.split(']').next().unwrap_or("")).collect()
    } else {
        registers(sources).collect()
    };
    (defs, uses)
}

/// The index of register `r`, numbered in order of first appearance.
fn intern<'a>(ids: &mut HashMap<&'a str, usize>, names: &mut Vec<&'a str>, r: &'a str) -> usize {
    *ids.entry(r).or_insert_with(|| {
        names.push(r);
        names.len() - 1
    })
}

/// A statement's registers, as indices.
struct Op {
    defs: Vec<usize>,
    uses: Vec<usize>,
    guard: Option<usize>,
    /// A comparison that splits the threads at a multiple of 32 if its register operand is
    /// `%tid.x` (`tid < 32`, `tid > 255`): the same in the lanes of a warp, where blocks are
    /// whole warps (every launch of this project's kernels).
    warp_compare: bool,
}

/// Whether `stmt` compares a register against an immediate at a warp boundary (see
/// [`Op::warp_compare`]).
fn warp_compare(stmt: &Stmt) -> bool {
    let op = stmt.opcode();
    let Some(rest) = op.strip_prefix("setp.") else {
        return false;
    };
    let Some(imm) = stmt
        .operands()
        .rsplit(',')
        .next()
        .and_then(|s| s.trim().parse::<u32>().ok())
    else {
        return false;
    };
    (rest.starts_with("lt.") || rest.starts_with("ge.")) && imm % 32 == 0
        || (rest.starts_with("le.") || rest.starts_with("gt.")) && imm % 32 == 31
}

/// How `stmt`'s result varies, given how its sources do.
fn result_level(stmt: &Stmt, sources: Varies) -> Varies {
    let op = stmt.opcode();
    if op.starts_with("vote") || op.starts_with("redux") || op.starts_with("activemask") {
        // One value per warp.
        return sources
            .min(Varies::Warps)
            .max(if op.starts_with("activemask") {
                Varies::Warps
            } else {
                Varies::Uniform
            });
    }
    if op.starts_with("shfl") || op.starts_with("atom") || op.starts_with("match") {
        return if sources == Varies::Uniform && !op.starts_with("atom") {
            Varies::Uniform
        } else {
            Varies::Lanes
        };
    }
    let immediate = |k: usize| {
        stmt.operands()
            .split(',')
            .nth(k)
            .and_then(|s| s.trim().parse::<u32>().ok())
    };
    if sources == Varies::Lanes
        && ((op.starts_with("shr.") && immediate(2).is_some_and(|b| b >= 5))
            || (op.starts_with("bfe.") && immediate(2).is_some_and(|b| b >= 5)))
    {
        // `tid / 32` and the like: the warp's index.
        return Varies::Warps;
    }
    sources
}

/// [`divergent_collectives`] of every entry point of `module`, each with its entry's name.
pub fn divergent_collectives_in(module: &str) -> Vec<(&str, Finding)> {
    super::entry_names(module)
        .into_iter()
        .filter_map(|entry| Some((entry, super::entry_body(module, entry)?)))
        .flat_map(|(entry, body)| {
            divergent_collectives(body)
                .into_iter()
                .map(move |f| (entry, f))
        })
        .collect()
}

/// A basic block: its statements, its successors, and whether its last statement ends it
/// (a branch or an exit).
struct Block<'a> {
    stmts: Vec<&'a Stmt>,
    succs: Vec<usize>,
    ends: bool,
}

impl Block<'_> {
    fn empty() -> Self {
        Block {
            stmts: vec![],
            succs: vec![],
            ends: false,
        }
    }
}

/// The basic blocks of `items` (a label starts one, a branch or exit ends one), with their
/// successors: the targets of a block's last statement, and the next block unless that is an
/// unconditional jump or an exit.
fn basic_blocks(items: &[Item]) -> Vec<Block<'_>> {
    let mut blocks = vec![Block::empty()];
    let mut label_block: HashMap<&str, usize> = HashMap::new();
    let mut tables: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut pending_label: Option<&str> = None;
    for item in items {
        match item {
            Item::Label(l) => {
                if !blocks.last().expect("a block").stmts.is_empty() || blocks.len() == 1 {
                    blocks.push(Block::empty());
                }
                label_block.insert(l.as_str(), blocks.len() - 1);
                pending_label = Some(l.as_str());
            }
            Item::Stmt(s) => {
                if let Some(list) = s.text.strip_prefix(".branchtargets") {
                    if let Some(l) = pending_label {
                        tables.insert(l, list.split(',').map(str::trim).collect());
                    }
                    continue;
                }
                pending_label = None;
                let op = s.opcode();
                blocks.last_mut().expect("a block").stmts.push(s);
                let ends = ENDS_BLOCK.iter().any(|p| op.starts_with(p));
                if ends {
                    blocks.last_mut().expect("a block").ends = true;
                    blocks.push(Block::empty());
                }
            }
        }
    }
    let n = blocks.len();
    for (b, block) in blocks.iter_mut().enumerate() {
        // A jump or an exit that is not guarded never falls through.
        let mut falls = true;
        let mut succs = vec![];
        if let Some(s) = block.stmts.last().filter(|_| block.ends) {
            let op = s.opcode();
            falls = s.guard.is_some();
            if op.starts_with("bra") {
                succs.extend(label_block.get(s.operands().trim()).copied());
            } else if op.starts_with("brx") {
                let table = s.operands().rsplit(',').next().unwrap_or("").trim();
                let targets = tables.get(table).into_iter().flatten();
                succs.extend(targets.filter_map(|t| label_block.get(t).copied()));
            }
        }
        if falls && b + 1 < n {
            succs.push(b + 1);
        }
        succs.sort_unstable();
        succs.dedup();
        block.succs = succs;
    }
    blocks
}

/// How far each block's closing branch condition varies, and each statement's guard: what
/// varies, flow-sensitively. A register assigned once has one level (that of its
/// assignment); one assigned in several places (LLVM reuses registers for phis and across
/// live ranges: a loop counter's zero and an accumulator shared one) has a level per
/// program point, carried along the blocks to a fixed point.
fn levels(blocks: &[Block]) -> (Vec<Varies>, Vec<Vec<Varies>>) {
    let n = blocks.len();
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut names: Vec<&str> = vec![];
    let mut ops: Vec<Vec<Op>> = Vec::with_capacity(n);
    for block in blocks {
        let mut block_ops = Vec::with_capacity(block.stmts.len());
        for &st in &block.stmts {
            let (defs, uses) = defs_and_uses(st);
            block_ops.push(Op {
                defs: defs
                    .iter()
                    .map(|r| intern(&mut ids, &mut names, r))
                    .collect(),
                uses: uses
                    .iter()
                    .map(|r| intern(&mut ids, &mut names, r))
                    .collect(),
                guard: st.guard.as_deref().map(|g| intern(&mut ids, &mut names, g)),
                warp_compare: warp_compare(st),
            });
        }
        ops.push(block_ops);
    }
    let registers_count = names.len();
    let fixed: Vec<Option<Varies>> = names.iter().map(|r| special(r)).collect();
    // Exact copies of %tid.x, which `warp_compare` turns into warp-level conditions.
    let mut assignments = vec![0u32; registers_count];
    for op in ops.iter().flatten() {
        for &d in &op.defs {
            assignments[d] += 1;
        }
    }
    let tid_copy: Vec<bool> = {
        let mut copy = vec![false; registers_count];
        for (block, block_ops) in blocks.iter().zip(&ops) {
            for (st, op) in block.stmts.iter().zip(block_ops) {
                if st.opcode().starts_with("mov.") && op.guard.is_none() {
                    if let ([d], [u]) = (op.defs.as_slice(), op.uses.as_slice()) {
                        copy[*d] = assignments[*d] == 1 && names[*u] == "%tid.x";
                    }
                }
            }
        }
        copy
    };
    let multi: Vec<Option<usize>> = {
        let mut k = 0;
        assignments
            .iter()
            .map(|&c| {
                (c > 1).then(|| {
                    k += 1;
                    k - 1
                })
            })
            .collect()
    };
    let multi_count = multi.iter().flatten().count();
    let mut single = vec![Varies::Uniform; registers_count];
    let mut entry: Vec<Vec<Varies>> = vec![vec![Varies::Uniform; multi_count]; n];
    let mut cond = vec![Varies::Uniform; n];
    let mut guards: Vec<Vec<Varies>> = ops.iter().map(|o| vec![Varies::Uniform; o.len()]).collect();
    loop {
        let mut changed = false;
        for b in 0..n {
            let mut state = entry[b].clone();
            let level = |r: usize, state: &[Varies], single: &[Varies]| {
                fixed[r].unwrap_or_else(|| match multi[r] {
                    Some(m) => state[m],
                    None => single[r],
                })
            };
            for (i, (st, op)) in blocks[b].stmts.iter().zip(&ops[b]).enumerate() {
                let guard = op
                    .guard
                    .map(|g| level(g, &state, &single))
                    .unwrap_or(Varies::Uniform);
                guards[b][i] = guard;
                let sources = op
                    .uses
                    .iter()
                    .map(|&u| level(u, &state, &single))
                    .max()
                    .unwrap_or(Varies::Uniform);
                if st.opcode().starts_with("brx") {
                    cond[b] = sources;
                } else if st.opcode().starts_with("bra") {
                    cond[b] = guard;
                }
                let tid_only = op.warp_compare && op.uses.iter().all(|&u| tid_copy[u]);
                let v = if tid_only {
                    Varies::Warps
                } else {
                    result_level(st, sources)
                };
                for &d in &op.defs {
                    match multi[d] {
                        // A guarded assignment leaves the old value where the guard is false.
                        Some(m) => {
                            state[m] = if op.guard.is_some() {
                                state[m].max(v).max(guard)
                            } else {
                                v
                            }
                        }
                        None => {
                            let v = v.max(guard);
                            if v > single[d] {
                                single[d] = v;
                                changed = true;
                            }
                        }
                    }
                }
            }
            for &succ in &blocks[b].succs {
                for (e, &v) in entry[succ].iter_mut().zip(&state) {
                    if v > *e {
                        *e = v;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }

    (cond, guards)
}

/// Drops the edges into blocks every path from which traps: a branch to one (a bounds
/// check) is not a place where threads part and meet again, the launch ends there.
fn drop_trap_edges(blocks: &mut [Block]) {
    let n = blocks.len();
    let traps = |b: &Block| {
        b.ends
            && b.stmts
                .last()
                .is_some_and(|s| s.opcode().starts_with("trap") && s.guard.is_none())
    };
    let mut doomed: Vec<bool> = blocks.iter().map(traps).collect();
    loop {
        let mut changed = false;
        for b in (0..n).rev() {
            if !doomed[b]
                && !blocks[b].succs.is_empty()
                && blocks[b].succs.iter().all(|&s| doomed[s])
            {
                doomed[b] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for b in 0..n {
        if !doomed[b] {
            let kept: Vec<usize> = blocks[b]
                .succs
                .iter()
                .copied()
                .filter(|&s| !doomed[s])
                .collect();
            blocks[b].succs = kept;
        }
    }
}

/// Each block's immediate post-dominator (Cooper, Harvey and Kennedy's iteration on the
/// reversed graph), with a virtual exit, index `blocks.len()`, after every block without
/// successors; `usize::MAX` for a block from which no path leaves.
fn post_dominators(blocks: &[Block]) -> Vec<usize> {
    let n = blocks.len();
    let exit = n;
    // The control flow's edges, the exit's included (`succs`), and the reversed graph's
    // (`reversed[s]` holds `b` for an edge from `b` to `s`).
    let mut succs: Vec<Vec<usize>> = vec![vec![]; n + 1];
    let mut reversed: Vec<Vec<usize>> = vec![vec![]; n + 1];
    for (b, block) in blocks.iter().enumerate() {
        succs[b] = if block.succs.is_empty() {
            vec![exit]
        } else {
            block.succs.clone()
        };
        for &s in &succs[b] {
            reversed[s].push(b);
        }
    }
    // Postorder of the reverse graph from the exit.
    let mut order = vec![];
    let mut seen = vec![false; n + 1];
    let mut stack = vec![(exit, 0usize)];
    seen[exit] = true;
    while let Some(&mut (v, ref mut i)) = stack.last_mut() {
        if *i < reversed[v].len() {
            let w = reversed[v][*i];
            *i += 1;
            if !seen[w] {
                seen[w] = true;
                stack.push((w, 0));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    let mut index = vec![usize::MAX; n + 1];
    for (i, &v) in order.iter().enumerate() {
        index[v] = i;
    }
    const NONE: usize = usize::MAX;
    let mut ipdom = vec![NONE; n + 1];
    ipdom[exit] = exit;
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev() {
            if v == exit {
                continue;
            }
            // In the reversed graph, v's predecessors are its successors.
            let mut new = NONE;
            for &p in &succs[v] {
                if ipdom[p] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    let (mut a, mut b) = (p, new);
                    while a != b {
                        while index[a] < index[b] {
                            a = ipdom[a];
                        }
                        while index[b] < index[a] {
                            b = ipdom[b];
                        }
                    }
                    a
                };
            }
            if new != NONE && ipdom[v] != new {
                ipdom[v] = new;
                changed = true;
            }
        }
    }

    ipdom
}

/// For each block, the most varying branch whose region holds it (from the branch to its
/// post-dominator), and that branch's block.
fn regions(blocks: &[Block], cond: &[Varies], ipdom: &[usize]) -> Vec<Option<(Varies, usize)>> {
    let n = blocks.len();
    let mut region: Vec<Option<(Varies, usize)>> = vec![None; n];
    let mut mark = vec![usize::MAX; n];
    for b in 0..n {
        let v = cond[b];
        if v == Varies::Uniform {
            continue;
        }
        let stop = ipdom[b];
        let mut work: Vec<usize> = blocks[b].succs.clone();
        while let Some(x) = work.pop() {
            if x == stop || x >= n || mark[x] == b {
                continue;
            }
            mark[x] = b;
            if region[x].is_none_or(|(w, _)| v > w) {
                region[x] = Some((v, b));
            }
            work.extend(blocks[x].succs.iter().copied());
        }
    }

    region
}

/// Whether a warp collective's member mask (its last operand) is the whole warp: `-1` or
/// `0xffffffff`, or a register (this project's kernels pass `FULL_MASK`).
fn is_full_mask(s: &Stmt) -> bool {
    let mask = s.operands().rsplit(',').next().unwrap_or("").trim();
    match mask.parse::<i64>() {
        Ok(m) => m == -1 || m == 0xffff_ffff,
        Err(_) => !mask.starts_with("0x") || mask.eq_ignore_ascii_case("0xffffffff"),
    }
}

/// The collectives of `body` (an entry's body, as [`super::entry_body`] returns it) that a
/// thread may reach while the threads they need have parted (see the [module](self)).
pub fn divergent_collectives(body: &str) -> Vec<Finding> {
    let items = items(body);
    let mut blocks = basic_blocks(&items);
    let (cond, guards) = levels(&blocks);
    drop_trap_edges(&mut blocks);
    let ipdom = post_dominators(&blocks);
    let region = regions(&blocks, &cond, &ipdom);
    let mut findings = vec![];
    for (b, block) in blocks.iter().enumerate() {
        for (i, s) in block.stmts.iter().enumerate() {
            let op = s.opcode();
            let barrier = (op.starts_with("bar.") || op.starts_with("barrier."))
                && !op.starts_with("bar.warp")
                && (op.contains(".sync") || op.contains(".red"));
            // `bar.sync id, n`: a barrier of `n` threads, some warps of the block (a
            // warpgroup, say), which the others never reach; whole warps must, converged.
            let counted = barrier && !op.contains(".red") && s.operands().split(',').count() == 2;
            let block_wide = barrier && !counted;
            // `.aligned` instructions (`mma.sync`, `ldmatrix`, `wgmma`) need every lane of
            // the warp at the same instruction too.
            let warp_wide = (op.starts_with("shfl.sync")
                || op.starts_with("vote.sync")
                || op.starts_with("redux.sync")
                || op.starts_with("match.")
                || op.starts_with("bar.warp.sync"))
                && is_full_mask(s)
                || op.contains(".aligned");
            let needs = if block_wide {
                Varies::Warps
            } else if warp_wide || counted {
                Varies::Lanes
            } else {
                continue;
            };
            let guard = guards[b][i];
            if guard >= needs {
                findings.push(Finding {
                    instruction: s.text.to_owned(),
                    line: s.line,
                    varies: guard,
                    branch: s.written(),
                    branch_line: s.line,
                });
            } else if let Some((v, by)) = region[b].filter(|&(v, _)| v >= needs) {
                let branch = blocks[by].stmts.last().expect("a branch");
                findings.push(Finding {
                    instruction: s.text.to_owned(),
                    line: s.line,
                    varies: v,
                    branch: branch.written(),
                    branch_line: branch.line,
                });
            }
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The findings' instructions for a body made of `code` (one statement per line).
    fn found(code: &str) -> Vec<(String, Varies)> {
        let body = format!("{{\n.reg .pred %p<9>;\n{code}\nret;\n}}");
        divergent_collectives(&body)
            .into_iter()
            .map(|f| {
                (
                    f.instruction.split_whitespace().next().unwrap().to_owned(),
                    f.varies,
                )
            })
            .collect()
    }

    const SHFL: &str = "shfl.sync.bfly.b32 %r9, %r8, 16, 31, -1;";

    #[test]
    fn a_shuffle_under_a_branch_on_the_thread_index_is_found() {
        let code = format!(
            "mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\n{SHFL}\n$L2:\nret;"
        );
        assert_eq!(found(&code), [("shfl.sync.bfly.b32".into(), Varies::Lanes)]);
    }

    #[test]
    fn a_shuffle_after_the_paths_meet_again_is_not() {
        let code = format!(
            "mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L1;\nadd.s32 %r8, %r1, 1;\n$L1:\n{SHFL}"
        );
        assert!(found(&code).is_empty());
    }

    #[test]
    fn a_branch_on_the_block_index_parts_nobody() {
        let code = format!(
            "mov.u32 %r1, %ctaid.x;\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\n{SHFL}\nbar.sync 0;\n$L2:\nret;"
        );
        assert!(found(&code).is_empty());
    }

    #[test]
    fn warp_uniform_conditions_allow_shuffles_not_barriers() {
        // `tid < 32` (warp 0) and a ballot: the same in every lane of a warp.
        for cond in [
            "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;",
            "mov.u32 %r1, %tid.x;\nsetp.eq.s32 %p2, %r1, 3;\nvote.sync.ballot.b32 %r2, %p2, -1;\nsetp.eq.s32 %p1, %r2, 0;",
            "mov.u32 %r1, %tid.x;\nshr.u32 %r2, %r1, 5;\nsetp.eq.s32 %p1, %r2, 0;",
        ] {
            let code = format!(
                "{cond}\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\n{SHFL}\nbar.sync 0;\n$L2:\nret;"
            );
            assert_eq!(found(&code), [("bar.sync".into(), Varies::Warps)], "{cond}");
        }
        // `tid == 32` is lane 0 of warp 1 alone.
        let code = format!(
            "mov.u32 %r1, %tid.x;\nsetp.eq.u32 %p1, %r1, 32;\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\n{SHFL}\n$L2:\nret;"
        );
        assert_eq!(found(&code), [("shfl.sync.bfly.b32".into(), Varies::Lanes)]);
    }

    #[test]
    fn a_counted_barrier_may_part_warps_not_lanes() {
        // Warp 0 alone (a warp-uniform branch) meets at barrier 1 of 32 threads.
        let warps = "mov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 32;\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\nbar.sync 1, 32;\n$L2:\nret;";
        assert!(found(warps).is_empty());
        // Thread 0 alone: the other lanes of its warp never reach it.
        let lanes = warps.replace("setp.lt.u32 %p1, %r1, 32;", "setp.eq.u32 %p1, %r1, 0;");
        assert_eq!(found(&lanes), [("bar.sync".into(), Varies::Lanes)]);
    }

    #[test]
    fn a_bounds_check_that_traps_parts_nobody() {
        let code = "mov.u32 %r1, %tid.x;\nsetp.gt.u32 %p1, %r1, 100;\n@%p1 bra $L9;\nbar.sync 0;\nbra.uni $L2;\n$L9:\ntrap;\nexit;\n$L2:\nret;";
        assert!(found(code).is_empty());
    }

    #[test]
    fn a_register_reused_after_the_loop_keeps_its_level_before_it() {
        // %r5 counts the loop (uniform), then holds a lane's value after it.
        let code = "mov.u32 %r5, 0;\n$L1:\nbar.sync 0;\nadd.s32 %r5, %r5, 1;\nsetp.lt.u32 %p1, %r5, 8;\n@%p1 bra $L1;\nmov.u32 %r5, %tid.x;\nst.global.u32 [%rd1], %r5;";
        assert!(found(code).is_empty());
        // A counter that starts from the thread index does vary.
        let varying = code.replace("mov.u32 %r5, 0;", "mov.u32 %r5, %tid.x;");
        assert_eq!(found(&varying), [("bar.sync".into(), Varies::Lanes)]);
    }

    #[test]
    fn a_guarded_collective_and_a_jump_table_count() {
        let code = format!("mov.u32 %r1, %laneid;\nsetp.eq.s32 %p1, %r1, 0;\n@%p1 {SHFL}");
        assert_eq!(found(&code), [("shfl.sync.bfly.b32".into(), Varies::Lanes)]);
        let table = |index: &str| {
            format!(
                "mov.u32 %r1, {index};\n$T: .branchtargets\n$L1,\n$L2;\nbrx.idx %r1, $T;\n$L1:\nbar.sync 0;\nbra.uni $L3;\n$L2:\nbar.sync 0;\n$L3:\nret;"
            )
        };
        assert!(found(&table("%ctaid.x")).is_empty());
        assert_eq!(found(&table("%tid.x")).len(), 2);
    }

    #[test]
    fn a_tensor_core_instruction_needs_the_whole_warp() {
        let mma = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%r1, %r2, %r3, %r4}, {%r5, %r6, %r7, %r8}, {%r9, %r10}, {%r1, %r2, %r3, %r4};";
        let code = format!(
            "mov.u32 %r11, %tid.x;\nsetp.lt.u32 %p1, %r11, 16;\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\n{mma}\n$L2:\nret;"
        );
        assert_eq!(found(&code).len(), 1);
        assert!(found(&code.replace("16;", "32;")).is_empty());
    }

    #[test]
    fn comments_are_not_code_and_lines_keep_their_numbers() {
        // Commented-out code, over lines, and the finding's lines and branch as written.
        let body = format!(
            "{{\nmov.u32 %r1, %tid.x;\nsetp.eq.s32 %p1, %r1, 0;\n@!%p1 bra $L1;\n/* bar.sync 0;\nbar.sync 0; */\n{SHFL} // bar.sync 0;\n$L1:\nret;\n}}"
        );
        let found = divergent_collectives(&body);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].line, found[0].branch_line), (7, 4));
        assert_eq!(found[0].branch, "@!%p1 bra $L1");
    }

    #[test]
    fn loads_vary_as_their_addresses() {
        // A shared word every thread reads at one address steers them all alike.
        let code = format!(
            "mov.u32 %r1, %tid.x;\nld.shared.u32 %r2, [%r3];\nsetp.eq.s32 %p1, %r2, 0;\n@%p1 bra $L1;\nbra.uni $L2;\n$L1:\n{SHFL}\n$L2:\nret;"
        );
        assert!(found(&code).is_empty());
        let per_thread = code.replace("[%r3]", "[%r1]");
        assert_eq!(found(&per_thread).len(), 1);
    }
}
