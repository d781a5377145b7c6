//! Compile-time loop unrolling, for loops that index register arrays, and closures inlined
//! wherever they are called.
//!
//! A register array (accumulators, fragments, staged loads) stays in registers only if every
//! index into it is a constant after optimisation. Plain `for` loops with constant bounds get
//! there only if LLVM's unroller decides to unroll them fully, which it does not for a loop
//! body beyond a few hundred instructions: the 64-output epilogue of an 8 × 8 thread tile
//! stayed a loop, and the whole accumulator array went to local memory (`__local_depot`).
//! The crate-internal `unroll!(n, |i| body)` makes the decision at compile time instead:
//! `n` calls of an `#[inline(always)]` closure with literal indices, straight-line code with
//! no loop for LLVM to keep. (`tests/ptx_sgemm.rs` checks the result: no local memory, and
//! exactly `BK ×` outputs-per-thread FMAs per kernel.)

/// The most iterations [`unroll_with`] expands.
pub const MAX_UNROLL: usize = 32;

/// Calls `f(0), f(1), …, f(n − 1)` as straight-line code, for `n` a constant after
/// inlining (an expression of const generics, say): each call is guarded by `i < n` with a
/// literal `i`, the guards fold away, and the body is inlined `n` times with a literal
/// index. (`n` is an argument rather than a const generic because `{TM / 4}` as a generic
/// argument would need `generic_const_exprs`.) `n > MAX_UNROLL` panics.
#[inline(always)]
pub fn unroll_with(n: usize, mut f: impl FnMut(usize)) {
    assert!(n <= MAX_UNROLL, "unroll: raise MAX_UNROLL");
    macro_rules! calls {
        ($($i:literal)*) => { $( if $i < n { f($i) } )* };
    }
    calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

/// `unroll!(n, |i| body)`: [`unroll_with`] with an `#[inline(always)]` closure, so that the
/// body is inlined at every index even where it is large or shared by several entry points
/// (LLVM's inliner gave up on a 64-store epilogue used by two kernels, and the accumulators
/// it borrows went to local memory). Written as a call with a closure, so that rustfmt
/// formats the body.
macro_rules! unroll {
    ($n:expr, |$i:ident| $body:expr) => {
        $crate::sgemm::parts::unroll::unroll_with(
            $n,
            #[inline(always)]
            |$i: usize| $body,
        )
    };
}
pub(crate) use unroll;

/// `inlined!(|args| body)`: the closure, marked `#[inline(always)]`, for code a kernel runs
/// at several places (a prologue and its loop, two paths of one loop): LLVM then pastes it
/// at every call, where it may otherwise outline a large closure into a `.func`. (A macro
/// because an attribute on a closure is accepted in a call's arguments, not as a `let`'s
/// value.)
macro_rules! inlined {
    (|$arg:ident: $ty:ty| $body:expr) => {
        ::core::convert::identity(
            #[inline(always)]
            |$arg: $ty| $body,
        )
    };
}
pub(crate) use inlined;
