//! The sliding average at any window, one pass, each output's cost independent of the
//! window: the window sum ending at position `p` is the inclusive scan of
//! `e[p] = a[p] - a[p - window]` (the second term only where `p >= window`), because the
//! differences telescope. Each block needs the sum of the window that ends just before its
//! tile. Where the window fits in a tile, the block finds it in its own staged inputs; where
//! it spans up to [`FAR_TILES`] whole tiles more, the block adds those tiles' published
//! aggregates; a longer window's running sum is carried across blocks by a chained scan
//! ("decoupled look-back").
//!
//! # One tile, one block
//!
//! A block takes its tile of [`TILE`] positions (by its block index where it waits for no
//! other block, else by an atomic ticket: see below) and copies both of the tile's input
//! streams, `a[p]` and `a[p - window]`, into shared memory with `cp.async`
//! (every copy issued before the first is waited for, so a block keeps its whole tile in
//! flight without holding it in registers). From shared memory each thread reads its
//! [`ITEMS`] consecutive positions twice: once for the block's scan, once when the sum before
//! the tile is known to produce its means, which it writes back over its own inputs;
//! the block then stores its outputs as aligned 16-byte words, coalesced. Only `a[p]` is
//! normally read from DRAM: `a[p - window]` was read `window` places (a few tiles) earlier and
//! comes from L2, or lies in the same tile. So the DRAM traffic is a copy's, whatever the
//! window.
//!
//! The staged streams are laid out with a 16-byte gap after every eight 16-byte words
//! (`slot`), so that eight threads reading four consecutive words each (one phase of a
//! 16-byte shared load) touch 32 distinct banks.
//!
//! # A window within a tile
//!
//! Where `window <= TILE`, the window ending just before the tile, `a[s - window .. s]`, is
//! the staged `a[p - window]` of the tile's first `window` positions: the block sums that
//! halo with the tile's own sums, and needs nothing from any other block. Such a launch
//! publishes nothing, never looks back and reads no state ([`reads_state`]); its blocks are
//! independent, each takes the tile of its block index, and the result is the same every
//! run. On an H100 (2^28 values, the CLI's median of 20, two rounds in one device run) this
//! runs at 94.5–94.6, 91.1, 94.1 and 94.0–94.1% of device-copy bandwidth at windows 2, 16, 64
//! and 1,024, with each block asking L2 for a tile [`L2_AHEAD`] tiles on while its own copies
//! are in flight; without that prefetch (every figure in this section below), at 88.0, 85.4,
//! 88.4 and 88.5% (three runs within 0.2 point). In another device run, the build before the
//! leaner warp scans and folds (`warp_scan`, `fold_warps`) ran at 86.2, 85.4, 87.1 and
//! 86.1%, and the first build with them at 87.2,
//! 85.0, 87.8 and 88.0%; that build differed from this one only in its far path, so how much
//! a body's speed depends on the rest of the kernel's code is about half a point. Window 16
//! runs the same body as 64 and 1,024 yet is the slowest; not profiled further (its two
//! streams read the same lines 64 bytes apart, which may be why). A build that took a
//! ticket per block here too, as the other paths do, ran 1.4–2.0 points slower than one
//! without, in the same session (84.1, 82.3, 84.7, 83.5% against 86.5, 84.3, 86.1, 85.4%).
//!
//! # A window within a few tiles
//!
//! Where the window spans `f = `[`far_tiles`]`(window)` whole tiles beyond a halo of
//! `window - f·TILE` positions, with `1 <= f <= FAR_TILES`, the window before tile `b` is
//! that halo (the staged `a[p - window]` of the tile's first positions, as above) then tiles
//! `b - f .. b`. Each block sums its own tile's `a[p]` in the scan's pass, beside the
//! differences, and publishes that aggregate before the warps' scans and anything it waits
//! for; one warp then waits for the `f` aggregates it needs, one per lane, and adds them in
//! a fixed order. No block's published value depends on another's, so nothing forms a
//! chain, and the result is the same every run. On an H100 (2^28 values): 75.8–75.9% of copy
//! at window 4,097 and 74.9% at 100,000 with the L2 prefetch ([`L2_AHEAD`]); 71.2–71.3% and
//! 70.6–70.7% without it.
//!
//! Nsight Compute's stall reasons (an H100, 2^26 values; per issued instruction, 15.8
//! cycles at window 1,024 with 7.5 warps per scheduler) point at the shared-memory and
//! shuffle pipe: 3.44 cycles waiting for a short-scoreboard result (shared loads, shuffles,
//! conversions), 2.77 for a full MIO queue, 2.54 for a global load, 2.28 at fixed-latency
//! dependencies, 1.18 at barriers; at window 100,000, 3.63 at barriers, 2.67, 1.31, 1.88
//! and 2.19, and 25% more instructions. The f32-to-f64 conversions (five per position) are
//! not what bounds it: a build that converted with integer operations instead (right only
//! for normal numbers and zeros, so a measurement, not a kernel) ran at 81.4% against 88.5%
//! at window 1,024, 80.8% against 87.9–88.1% at 2 and 62.7% against 70.7% at 100,000, in
//! the same device run.
//!
//! Where the far path's time goes, from builds that compute wrong means on purpose (an
//! H100, 2^28 values, the CLI's median of 20, two rounds in one device run; this build at
//! 70.6% of copy at window 100,000 and 71.2–71.4% at 4,097): without warp 0's reads of the
//! aggregates (their sum taken as zero, its barrier kept), 77.3–77.4% and 80.5–80.6%;
//! without that barrier too, 77.7% and 81.8–81.9%; without the aggregate at all (no sum of
//! `a[p]`, no barrier, no fold, nothing published), 86.4–86.5% and 86.8–86.9%; and without
//! the ticket as well, 87.4% and 89.0%. So the aggregates cost about 16 points at window
//! 100,000: about 9 to publish (a sum, a barrier and a fold that the halo path does not
//! have) and 7 to wait for. The wait is not the L2 round trip alone: at window 4,097 the one
//! aggregate a block adds is that of tile `b - 1`, whose block started just before, and
//! waiting for it costs 9 points; that block is often still loading its own tile.
//!
//! What the far path loses is the aggregates, not its streams. The halo path at windows
//! 2,048 to 4,096, whose `a[p - window]` is most or all of the previous tile's `a[p]` (read
//! by another block, from L2, as on the far path), ran at 93.4, 92.9, 92.4–92.5 and
//! 92.2–92.4% of copy at 2,048, 3,072, 4,000 and 4,096, against 75.9–76.0% at 4,097 in the
//! same H100 run (94.0–94.1% at 1,024): the far path's streams cost about 2 points, its
//! aggregates (the ticket, the sum, two barriers, the fold, the publish and the wait) 16.
//! Two builds that compute wrong means on purpose split those 16, against this build at
//! 74.8–74.9% (100,000) and 75.9% (4,097) in the same run: warp 0 publishing its own warp's
//! sum as the tile's aggregate (no barrier, no fold), 77.0–77.3% and 80.1%; that and no
//! read of the far aggregates either (no wait, no barrier), 83.7–83.8% and 88.2–88.3%. In
//! another run that last build ran at 88.0–88.2% at every window whose halo is one position
//! (4,097, 8,193, 16,385, 32,769, 65,537 and 98,305), but at 82.8–82.9% with a halo of
//! 2,048 positions (6,144), 83.7–83.8% with 1,696 (100,000) and 82.9–83.0% with 4,096
//! (102,400): with no wait, the warps that sum the halo (the first `halo / ITEMS` threads)
//! hold every warp at the next barrier. This build barely notices the halo (74.9–75.0% at
//! 98,305, 74.4–74.6% at 102,400, same run): the wait hides it. So at window 100,000 a
//! design that published for free and never waited would still be short of 85% unless its
//! halo cost less too.
//!
//! So the far path runs at about 75% of copy at window 100,000, short of 85%. By the
//! second of the two splits above (the first is of a build before the L2 prefetch), it pays
//! about 2 points for the publish's barrier and fold, about 7 to read and wait for the
//! aggregates, and, once nothing waits, about 4 for a halo of 1,696 positions. Each design
//! under
//! [Designs measured and left out](#designs-measured-and-left-out) took some of these
//! costs away and paid more elsewhere. A far block's speed follows the latency along its
//! chain of barriers and L2 round trips more than the instructions it issues, and four
//! blocks per SM (the register file's limit) are what hide that latency: designs that keep
//! more per block (a persistent grid, the walkers) leave fewer warps to hide it, and one
//! that reads a third stream through L2 costs more than the waits it saves.
//!
//! For comparison, CUB's scan of the same differences (`scripts/cub-sliding/`:
//! `cub::DeviceScan::InclusiveSum` of the f64 differences, each mean written as an f32;
//! CCCL 3.0.1, nvcc 13.0, `sm_90`), timed beside this build by its `compare.sh` on an H100
//! (2^28 values, two interleaved rounds, medians): 1.207 ms at window 100,000 against this
//! build's 0.955 ms, so this build is 1.26× faster (1.56–1.66× at windows 2 to 1,024, 1.04×
//! at 135,169, where both carry a chained look-back). CUB's scan runs at 57.5–61.1% of its
//! own device copy at every window from 2 to 135,169, and at 70.9–73.9% with f32 sums. Its
//! plain f32 inclusive sum of the same input, which moves only a copy's bytes (no second
//! stream), runs at 81.1%: a one-pass scan with a decoupled look-back, as the best-known
//! library builds it, stays below 85% of copy on this GPU even with nothing but the scan to
//! do.
//!
//! # Order and progress
//!
//! Tile `b` belongs to a block that started after the blocks of tiles `0..b` had started
//! (the ticket). A block waits only for tiles before its own, whose blocks are already
//! running and publish what it waits for without waiting themselves: a tile's aggregate
//! (the path above) first of all, or (the chained scan, below) its aggregate as soon as it
//! has it, before its own look-back. So every wait ends.
//!
//! With a window past `FAR_TILES` whole tiles, a block looks back over its predecessors'
//! published aggregates and inclusive prefixes. One look-back step reads [`LOOK_BACK`]
//! predecessors, so the chain of inclusive prefixes advances up to that many tiles per L2
//! round trip (59.3% of copy on an H100 at window 135,169; 56.3% before the leaner scans and
//! folds).
//!
//! Each published value is one word of a tile's 16-byte head, the f64 sum itself unless
//! the tally has non-finite counts ([`Descriptors`]): every word says whether it has been
//! written, so a reader needs no fence, and a look-back step reads 16 bytes per predecessor.
//!
//! # Accuracy
//!
//! The sums are f64: each `e[p]` is the f64 difference of two f32s (exact). Every addition
//! of the kernel adds the sums of two adjacent runs of positions (a thread's run, a warp's,
//! the tiles before a tile, and so on), and the window sum ending at `p` comes out of exactly
//! `p` such additions over the `p + 1` differences `e[0..=p]`. The exact sum over a run is the
//! difference of two window sums, so with `M = max |a|` each addition rounds by at most
//! `2⁻⁵³ · 2·window·M`, and the window sum is within `2⁻⁵² · window · M · p`. Multiplying by
//! the rounded `1/window` adds `2⁻⁵² · M` at most, and the final rounding to f32 half an ulp
//! of the mean, so the mean is within `2⁻²⁴ · |mean| + 2⁻⁵¹ · (p + 1) · M`; [`ERROR_LOG2`]
//! states `2⁻⁵⁰`, a factor of two to spare (an f32 ulp of `M` at `p = 2²⁶`; the host's
//! `sliding::within_bound` checks exactly this).
//!
//! Non-finite inputs cannot be subtracted back out of a running sum, so they are counted
//! instead: the scan carries, besides the f64 sum of the finite values, how many NaNs and
//! how many +∞ and -∞ the window holds (as wrapping integers, whose differences telescope
//! exactly). A window with a NaN, or with both infinities, averages to NaN; one with
//! infinities of one sign to that infinity; any other to the mean of its finite values — the
//! IEEE result of summing the window, except that no finite window overflows. A warp whose
//! inputs are all finite scans the sums alone (two words per shuffle instead of five).
//!
//! A window within a tile takes a different path to the same bound: its halo is a sum of
//! `window` values, each partial sum within `window · M`, and the tile adds at most
//! [`TILE`] more terms. Past the first tile `p >= TILE >= window`, so the additions number at
//! most `window + TILE <= 2p` (and few more than `p + 1` in the first tile, whose halo is
//! zero); the stated bound, with its factor of two to spare, covers them. A window within a
//! few tiles is summed the same way, from its halo and whole tiles' aggregates: `window - 1`
//! additions whose partial sums are within `window · M` (additions of zero, for tiles before
//! the first, are exact), then at most `TILE + 1` in the tile, and `window + TILE < 2(p + 1)`
//! because `window > TILE` and `p >= window - 1`.
//!
//! With a window past `FAR_TILES` whole tiles, the grouping of the f64 additions depends on
//! how far each look-back reaches, so two runs can differ in the last bits of an f64 sum
//! (almost never in the f32 output).
//!
//! # Designs measured and left out
//!
//! Windows past a tile. Each design was measured against the far path as it stood then
//! (its figures beside theirs), on an H100 with 2^28 values and the CLI's median of 20
//! unless said otherwise; the first ones before the L2 prefetch, against 71.2–71.3% at
//! window 4,097 and 70.6–70.7% at 100,000.
//!
//! A build that summed the aggregate in a pass of its own ran at 71.3% and 68.6% in the
//! same runs; one that also had the earlier, costlier warp scans and folds, at 70.0% and
//! 65.0% in another device run. On earlier builds (69.9% and 64.6%) the aggregate's own
//! pass and barrier cost about 12 points against the halo path (measured with no window to
//! wait for), the wait about 6 more; a build that published the aggregate after the scan's
//! pass instead, saving that barrier, waited longer and ran at 61.2% and 55.6%; one that
//! summed the aggregate in the scan's pass, as this build does, spilled in its loops (61%
//! with nothing to wait for, 49.7% at 100,000); one whose waiting warp read the scan's
//! pass, holding them in registers through it, ran at 62.4% and 59.2%; one in which each
//! block summed the tile 256 to 2,048 tickets ahead (loaded from global memory with its
//! stages, published after the scan's barrier), so that no block ever waited and no pass or
//! barrier of its own was needed, ran at 63.2–63.4% at 100,000 whatever the lead: the lead
//! tile's loads, conversions and sums cost more than what they saved (68.6% for the same
//! build without them). Two more, against this build in the same H100 run: every warp
//! waiting for and adding the aggregates itself, with no barrier after the wait, 67.4%
//! against 70.8% at 100,000 (eight warps' reads and sums cost more than the barrier); warp
//! 0 waiting for them right after it publishes, before the scans' barrier instead of after
//! it, 59.2–59.3% against 70.9–71.1% (the aggregates are then seldom there yet: Nsight
//! Compute counts 1.08 polls per block where the wait is now). Nsight Compute at 100,000
//! against 1,024: 57.5 against 46.1 thread instructions per value (the far path's per-block
//! sums and folds), and 23% of the stall samples at barriers against 8%, 40% of those the
//! seven warps waiting for the one that waits.
//!
//! Fewer instructions alone do not make it faster. A build in which the threads holding no
//! halo ran a scan pass without the halo's per-position test and select (two copies of the
//! pass, chosen per thread) took each such thread's pass from about 196 to 84 SASS
//! instructions for 16 positions (ptxas 12.9, `sm_90`). On an H100, against this build in
//! the same device run (CLI median of 20, two rounds), it ran at the same 88.6% at window
//! 1,024, where the halo ends at a warp's edge; everywhere else it was slower: 85.7 against
//! 88.1% at window 2, 84.2–84.3 against 85.3–85.4% at 16, 87.1 against 88.4% at 64, 70.2–70.4
//! against 71.3% at 4,097, 67.8–67.9 against 70.7% at 100,000. Where the halo ends inside a
//! warp, that warp runs both copies one after the other, and every warp then waits for it
//! at the scans' barrier. So what bounds a block is its slowest warp's way to each
//! barrier, not the instructions the SM issues.
//!
//! A build that spread both costs over the warps was slower. Each warp published the sum of
//! its run of `a[p]` in a record of its own (no barrier, no fold); each warp read its share
//! of the far tiles' records as its means pass began and waited for them only after it;
//! the means pass staged f64 running sums over the inputs it had read (4 KiB more shared
//! memory); and the store pass added the far tiles' sum, scaled and converted, the barrier
//! before the stores covering both. It was correct (`gpu_vector`'s sliding tests, the
//! CLI's full checks at seven windows, compute-sanitizer's four tools), but against this
//! build in the same runs it ran at 69.1% against 70.7% at window 100,000 and 72.0%
//! against 71.2–71.3% at 4,097, the halo path within 0.4 point; without its reads of the
//! records (a wrong result), at 75.6% and 74.8%. The records, the staged f64 sums and the
//! folds cost more than the barrier they replaced, and the wait remained.
//!
//! A persistent grid that published every aggregate a whole step before anyone waited for
//! it was slower still. Its blocks (two per SM, 264 on an H100: three stages of both
//! streams fill a block's 108 KiB) took tickets one step ahead; in each step a block
//! scanned its newest tile and published that tile's aggregate after the scans' barrier,
//! then produced the means of the tile it had scanned the step before, whose far tiles'
//! aggregates had been published a step earlier, and meanwhile its next tile was being
//! copied: no barrier beyond the one-tile block's three, and no wait. It was correct
//! (`gpu_vector`'s 39 sliding tests, the CLI's full checks at nine windows,
//! compute-sanitizer's four tools), and slow: on an H100 (2^28 values, the CLI's median of
//! 20, this build in the same runs at 70.5–70.9% and 71.2–71.4%) it ran at 45.5% at window
//! 100,000 and 52.2% at 4,097; 47.2–47.4% and 48.2–48.3% with the ticket's atomic and the
//! first reads of the aggregates overlapped with the step's passes (unchanged with the
//! shared-memory carveout set to its maximum); 45.5% and 51.8% without any reads of the
//! aggregates (a wrong result); 35.2% and 39.3% with 512-thread blocks of 8 positions per
//! thread (64 registers, 976 bytes of spills). Nsight Compute (2^26 values, window 100,000)
//! says why: two blocks of eight warps leave each scheduler 4 warps, against 7.6 for the
//! one-tile blocks, and both kernels are bound by latency (10.8 cycles per issued
//! instruction, 0.52 eligible warps and 0.37 instructions issued per cycle and scheduler,
//! against 15.6, 1.09 and 0.49); 128 registers per thread still spilled, 12 times the
//! one-tile blocks' local-memory requests. The four one-tile blocks per SM hide the passes'
//! latencies; a pipeline that holds three tiles per block cannot have as many.
//!
//! What bounds a far block is the latency along its chain of barriers, not the instructions
//! it issues. Nsight Compute's per-instruction counts (an H100, 2^26 values) give this build
//! 57.5 thread instructions per value at window 100,000 against 46.1 at 1,024. Per thread of 16
//! positions at 100,000: 119 for the ticket and staging, 251 for the scan's pass and the
//! aggregate, 131 for the warp scans, 143 for the folds and the read of the far aggregates,
//! 144 for the means and 131 for the stores. The largest stalls are the copies' wait (11% of
//! the samples) and the barrier behind warp 0's read of the far aggregates (9%). Measured and
//! left out, each against this build (or the build named beside it) in the same H100 runs
//! (2^28 values, the CLI's median of 20, two rounds):
//! - Warp 0 alone folding the totals and halos and writing every warp's base, with the halo
//!   summed in a strided loop instead of the scan's pass: 50.1 instructions per value, but
//!   63.6% against 70.6–70.7% at window 100,000 and 85.9% against 88.6% at 1,024. Warp 0's
//!   serial folds became the chain: 21% of the samples sat at the barrier after them.
//! - Reading the far aggregates early into registers: 63.0% (warp 0, after it publishes),
//!   58.0% and 58.6% (every warp, before the totals' barrier or after the publish barrier),
//!   against 70.7%. The held registers pushed the passes into spills. Fetched into shared
//!   memory with `cp.async` instead, by warp 0 after it publishes or just before the
//!   totals' barrier: 64.2% and 66.6% (against 70.6–70.7%), and 67.2% for the second with the
//!   volatile reads below (against 70.6% for those alone); after the earlier publish below,
//!   the same fetch gained.
//! - 20 positions per thread (five 16-byte words, conflict-free without gaps, 41 KiB):
//!   25–31% at every window. ptxas kept the scan pass's loaded words and their conversions in
//!   local memory.
//! - Publishing the aggregate at the staging barrier: each thread sums the 16 `a[p]` its own
//!   copies brought in (visible to it after its own wait, with no barrier), its warp's sum goes
//!   to shared memory before the staging barrier, and warp 0 publishes the tile's aggregate
//!   right after that barrier. So the publish barrier goes, and the aggregate is published a
//!   whole scan pass earlier. As built, ptxas kept the scan pass's words for the rare
//!   non-finite pass, which reads them again (113 64-bit local stores in the entry, ptxas
//!   12.9, where this build has none): 33%. With that pass reading its words through
//!   `ld.volatile.shared`, which ended those spills, it ran at 71.1% at window 100,000 and
//!   72.6% at 4,097 (70.5% and 73.3% for the volatile reads alone). With warp 0 also fetching
//!   the far aggregates' heads into shared memory with `cp.async` just before the totals'
//!   barrier: 73.0–73.1% against 70.5–70.6% at 100,000 and 76.3% against 71.0–71.2% at 4,097;
//!   with a register read there instead, 71.0% and 73.4%. Left out because:
//!   - it is 12 points short of 85%;
//!   - it costs the halo path 0.8–1.5 points: 86.5, 84.4, 86.8 and 87.0–87.1% against 87.9,
//!     85.2–85.3, 88.3 and 88.4–88.5% at windows 2, 16, 64 and 1,024. With the volatile reads
//!     confined to the far bodies (73.2–73.3% and 76.3% there, against 70.5–70.6% and
//!     71.2–71.3%), the halo bodies' code still changed shape and lost 0.5–2.5 points (85.4,
//!     84.9, 87.7 and 87.8–87.9% against 87.9–88.0, 85.3–85.4, 88.3–88.4 and 88.5–88.6%);
//!   - compute-sanitizer's synccheck reported its warp-0 branch around the fetch, just before
//!     a barrier (780 errors at window 12,001);
//!   - its `cp.async` read of a head that another SM may be writing is a weak read, which
//!     relies on aligned 8-byte reads being single-copy atomic;
//!   - with the L2 prefetch it gains nothing at window 100,000. The build with the volatile
//!     reads in the far bodies only, on top of this one, against this one in the same H100
//!     run: 73.8% against 74.6% at 100,000 and 77.2–77.3% against 75.7–75.8% at 4,097; 91.7,
//!     91.0–91.1, 94.4 and 94.4% against 94.4–94.5, 90.9, 93.9–94.0 and 93.9% at windows 2, 16,
//!     64 and 1,024 (the CLI's full checks passed at windows 2, 4,097, 100,000, 100,001 and
//!     135,168).
//!
//! With the L2 prefetch, one more design was measured and left out: tickets that run `LEAD`
//! tiles ahead of their tiles. Ticket `k` summed tile `k`'s `a[p]` from global memory (an L2
//! hit after the prefetch) and published that aggregate right after the staging barrier, then
//! took tile `k - LEAD`, whose far tiles' aggregates had been published `LEAD` tickets
//! earlier; warp 0 read their heads before the staging wait and added them before the totals'
//! barrier, so the far path had the halo path's barriers and no pass of its own (`LEAD` more
//! blocks, the first `LEAD` only summing). It was correct (the CLI's full checks at windows 2,
//! 4,097, 100,000 and 135,168) and slow: against 74.8–74.9% (100,000) and 75.9–76.0% (4,097)
//! for the prefetch alone in the same H100 runs, 56.3% and 57.6% with `LEAD` 128, 61.0% and
//! 63.0% with 256, 58.4–58.5% and 59.8% with 512, 55.8–55.9% and 55.4–55.5% with 1,024. Not
//! profiled; that more lead helped up to 256 says the waits for the aggregates remained. (Its
//! first build left the rare non-finite passes' closures to LLVM, which did not inline them
//! in the far bodies, and ran at 50.2–50.3%; the builds above had those passes out of line.)
//!
//! A third stage for the lead tile was slower still. Ticket `k` copied tile `k`'s `a[p]`
//! with its own two streams into 18 KiB of dynamic shared memory (still four blocks per
//! SM), summed it in a pass of its own before the scan's, and the last warp folded and
//! published that aggregate after the totals' barrier while warp 0 read the far tiles'
//! (published `LEAD` tickets earlier): no publish barrier, no wait after publishing. Each
//! against 74.7–74.8% at window 100,000 and 75.8–75.9% at 4,097 for this build in the same
//! H100 runs, with the L2 prefetch 256 tiles past the scanned tile: 59.7–59.8% and 62.5% with
//! `LEAD` 16, 60.8–60.9% and 63.3% with 64, 69.4% and 69.7–69.8% with 256; prefetching past
//! the lead tile instead, 70.4% and 70.9–71.0% with 256, 69.2% and 69.6–69.7% with 512.
//! It was correct (the CLI's full checks at windows 2, 4,097, 8,193, 100,000, 100,001 and
//! 135,168); with `LEAD` 64 the halo path moved by −0.9 to +0.3 points (93.6–93.7 and 94.3%
//! against 94.5–94.6 and 94.0–94.2% at windows 2 and 1,024). Without any read of the far
//! aggregates (a wrong result) it ran at only 72.8% and 72.2–72.3%: the third stream cost more
//! than every wait.
//!
//! Nsight Compute (2^26 values) says why. L2 runs at 80% of its peak throughput on the
//! halo path at window 1,024 (DRAM at 65%), 74% on this build's far path at 100,000 (DRAM
//! 52%), and 77% for the third-stage build without reads (DRAM 49%). The kernel is close to
//! what L2 delivers, so a design that moves more bytes through L2 (16 KiB more per tile
//! here) loses more than it saves.
//!
//! Blocks that each walk a contiguous run of tiles, carrying the window sum from one tile to
//! the next, would wait for no one, but were not built. Each block would read `a[p - window]`
//! `window` places after it read the same value as `a[p]`. With an H100's 528 resident blocks
//! walking at once, 528 × 400 KB = 211 MB pass through L2 between the two reads at window
//! 100,000, about four times its capacity, so the second stream would come from DRAM.
//! Besides, each run's first window, the `window` values before it, is an extra read: 10% of a
//! copy's traffic with 528 runs. (The team walkers at the end of this section, a design
//! study, walk 33 to 132 runs instead.)
//!
//! Three more designs were measured against this build in the same H100 runs (2^28 values,
//! the CLI's median of 20, two rounds; one round for the smaller clusters) and left out;
//! their diffs are kept outside the repository.
//!
//! - **A thread-block cluster per run of tiles (`sm_90`).** The staged `a[p - window]` of a
//!   cluster of `C` consecutive tiles cover `C` tiles of positions, so where `window <=
//!   C·TILE` the window before the cluster's first tile is the sum of its first blocks'
//!   staged halos, and the window before tile `j` adds the differences' totals of tiles
//!   `0..j`. Each block wrote its halo and total to its shared memory; after a cluster
//!   barrier every warp read the cluster's records through distributed shared memory
//!   (`mapa`, `ld.shared::cluster`) and scanned them: no ticket, no state, no wait for any
//!   other cluster. Window 100,000 needs `C·TILE >= 100,000`: 16 blocks of 512 threads
//!   (8,192 positions, two per SM, the stages in dynamic shared memory). It was correct
//!   (the CLI's full checks at windows 4,097, 8,193, 65,537, 100,000, 100,001 and 131,072;
//!   memcheck and synccheck clean) and slow: 23.7% at 100,000, 33.9% at 4,097 and 21.9% at
//!   131,072. At window 1,024 (this build 94.0%), with smaller clusters and blocks: one
//!   block of 256 threads per cluster 75.0%, four 65.8%, sixteen 40.3%; of 512 threads, one
//!   66.6%, four 56.7%, eight 50.7%. Even a cluster of one ran 19 points below this build
//!   (`ptxas` lowers the cluster barrier's release to `MEMBAR.ALL.GPU` and its acquire to
//!   an L1 invalidation, twice per block, besides the records' reads and scans), and each
//!   larger cluster lost more: its blocks start, wait and leave together, so their loads no
//!   longer overlap other blocks' passes. (A first build signalled the cluster barrier
//!   before the values its remote reads returned were used, and its launches failed;
//!   signalling after their use fixed it.)
//! - **Tiles of 8,192 positions**: 32 per thread, three blocks per SM, the stages in
//!   dynamic shared memory, the rare non-finite passes reading through `ld.volatile.shared`
//!   (without that, `ptxas` kept the scan pass's words for them: 669 64-bit local stores at
//!   80 registers). Correct (full checks at windows 2, 8,193, 100,000 and 100,001);
//!   75.2–75.3% against 74.7–74.8% at 100,000 and 75.8–75.9% against 75.4–75.5% at 8,193,
//!   but 88.3–88.4% against 94.5% at window 2 and 91.5–91.6% against 94.1% at 1,024. Half
//!   as many aggregates per value, and the far path did not gain: what it pays is not a
//!   fixed cost per block.
//! - **Fewer instructions per position.** Each thread summed all its `a[p - window]` (no
//!   test per position for the halo), the tile's aggregate came from that sum and the
//!   differences' (no sum of `a[p]`), the one thread holding part of the halo summed that
//!   part again in a loop of its own, and on the far path only warp 0 folded the halo. No
//!   local stores; correct (full checks at eleven windows from 2 to 135,169); slower
//!   everywhere: 73.1% against 74.7–74.8% at 100,000, 73.9% against 75.8–75.9% at 4,097,
//!   and 92.3, 90.4, 93.5–93.6 and 93.4% against 94.6, 91.0–91.1, 94.0–94.1 and 94.1–94.2%
//!   at windows 2, 16, 64 and 1,024. Not profiled: at 4,097, where the one thread's loop
//!   runs once, it lost 2 points too, so that loop is not all of it; warp 0 folding the
//!   halo before its wait lengthens the path every warp waits for at the barrier after it.
//!
//! Three more, measured the same way against this build (its figures beside theirs) and left
//! out; their diffs too are kept outside the repository.
//!
//! - **Blocks that walk down rows of `window` positions (a persistent grid).** Laid out as
//!   rows of `window` positions, the window ending at `p = r·window + c` is row `r − 1`'s
//!   columns after `c` and row `r`'s up to `c`, so `a[p − window]` is the same column one
//!   row up. Each block took a run of columns of a band of consecutive rows and walked down
//!   them, keeping the row above in shared memory, so `a[p − window]` never came back from
//!   L2; it scanned each row one row ahead of producing its means and published its
//!   tile's sum then. The window before its tile is its own tile one row up, the tiles to
//!   its right one row up and those to its left in its row, published two rows and one row
//!   earlier. The grid was a whole number of bands of `window.div_ceil(TILE)` blocks, all
//!   resident at once (the occupancy calculator's count; blocks wait for blocks after
//!   them, so a launch that could not be resident whole would need a cooperative launch's
//!   guarantee): no ticket. It was correct (the CLI's full checks at seven windows from
//!   4,100 to 196,608, multiples of 4 only) and slow. At windows 100,000 and 8,192, against
//!   74.6–74.9% and 75.1–75.4% for this build:
//!   - four stages (the row above, the row, the next row, one in flight; 72 KiB, three
//!     blocks per SM at 80 registers): 58.7% and 61.1–61.2%;
//!   - 3,072 columns per block in four unpadded 12 KiB stages (four blocks per SM at 64
//!     registers): 51.8–52.0% and 47.8%;
//!   - three stages (four blocks per SM; the next row copied one iteration ahead, asked of
//!     L2 two rows ahead): 50.5–50.6% and 53.0–53.1%, and 58.0–58.1% and 57.6–57.7% without
//!     any read of other blocks' sums (a wrong result). A four-stage build with the same L2
//!     requests ran at 53.5–53.6% and 56.6–56.7%, and without the reads at 61.9–62.0% and
//!     61.7–61.8%.
//!
//!   So even free of every wait the walkers stay below this build. Nsight Compute (2^26
//!   values, window 100,000): the first build issued about as many instructions as this
//!   one, at 0.41 per cycle and scheduler against 0.50, with 5.6 active warps per scheduler
//!   against 7.6. A walking block runs its passes back to back, and three such blocks per
//!   SM are too few warps to hide the passes' latencies; a fourth needs the fourth stage's
//!   shared memory, which the slack behind the published sums depends on.
//! - **Blocks of 128 threads** (2,048 positions, eight blocks per SM, the far aggregates
//!   two per lane): correct (full checks at windows 2, 4,097 and 100,000), but `ptxas`
//!   kept 362 64-bit spills in the entry at 64 registers: 33.1% and 32.1% at windows 2 and
//!   1,024, 24.0% and 25.5% at 4,097 and 100,000, against 94.6%, 94.1%, 75.9% and 74.7%.
//! - **Tickets interleaved over `D` segments of tiles**, so that the tile before a block's
//!   own was taken `D` tickets earlier: ticket `k` took tile `(k mod D)·tiles/D + k/D`. A
//!   segment's first tiles would need the window reaching into the segment before, taken
//!   last, summed apart; the builds measured took it as zero there (a wrong result at those
//!   tiles only).
//!   - The chained look-back at every window past a tile (each tile publishes the total of
//!     its differences, then its window sum): 62.2, 65.9, 68.2 and 60.8% at window 100,000
//!     with `D` = 1, 4, 16 and 64, and 61.4, 66.3–66.4, 71.0 and 76.0–76.1% at 4,097,
//!     against 74.8–74.9% and 75.9–76.0%. At 135,169, where this build takes the chained
//!     look-back too (61.7–61.8%): 61.8–61.9, 66.2, 65.3 and 59.3–59.4%.
//!   - This build's far path without a halo: each tile published, besides its aggregate,
//!     the sum of its last `window - f·TILE` positions, and the window before tile `b`
//!     added that sum of tile `b - f - 1` to the `f` aggregates. Both were published after
//!     the totals' barrier (no barrier of their own); `ptxas` kept 15 64-bit spills.
//!     Correct with `D` = 1 (the CLI's full checks at windows 4,097, 8,191, 100,000 and
//!     126,976), and slow: 60.4–60.5, 65.2–65.4, 66.2 and 60.3% at 100,000 with `D` = 1,
//!     8, 16 and 32, and 62.2, 64.7, 68.0 and 70.5–70.6% at 4,097, against 74.8% and
//!     75.8–75.9% in another run.
//!   - This build with its tickets interleaved, nothing else changed: 73.7, 73.0–73.1 and
//!     69.9% at 100,000 with `D` = 4, 8 and 16; 75.5, 74.8 and 73.6–73.7% at 4,097; 75.2,
//!     74.2 and 72.1% at 65,537; against 74.8–74.9%, 75.9% and 75.1–75.2% in the same run.
//!
//!   So a head start of `D` tickets is worth less than this build's early publish with a
//!   head start of one, and on top of it gains less than the interleaving costs, even at
//!   window 4,097, where the reads stay in L2 (not profiled). At window 100,000 the head
//!   start cannot grow far either: `D` segments put about `24·D` tickets between the two
//!   reads of each value, and the slowdown past `D` ≈ 16 suggests that `a[p - window]`
//!   then no longer comes from L2 (not profiled).
//!
//! One more, as a design study in CUDA C++ (nvcc 13.0, not ported; kept outside the
//! repository), timed against this build in the same H100 run (2^28 values, medians of 20):
//!
//! - **Team walkers.** One block of 1,024 threads per SM: four warpgroups, each working a
//!   tile of 4,096 positions as this kernel's blocks do (both streams staged with
//!   `cp.async`, f64 sums, the L2 prefetch). A team of `K` blocks walks one contiguous run of
//!   tiles, groups of four consecutive tiles going to its blocks in turn, and the window sum
//!   is carried from tile to tile (`W + D`) through shared memory inside a block and through
//!   a global slot between blocks; each run's first window is summed directly. No ticket,
//!   no look-back, and `a[p - window]` stays in L2 with 33 to 132 runs. It was correct (256
//!   outputs against f64 window sums at each window) and slow: 49.6, 56.1 and 61.6% of copy
//!   at window 100,000 with `K` = 1, 2 and 4 (56.7 and 49.3% with the prefetch 16 and 32
//!   tiles ahead instead of 8), and 68.6, 77.5 and 68.3% at 4,100, against 74.8% and 73.8%
//!   for this build. Not profiled: the four warpgroups of a block start and finish their
//!   tiles nearly in step, where four independent blocks per SM overlap one block's loads
//!   with another's passes.

use crate::sgemm::parts::unroll::unroll;
use nvptx_device::atomic;
use nvptx_device::intrinsics::F32x4;
use nvptx_device::pipeline::{
    commit_group, cp_async_16, cp_async_16_zfill, prefetch_l2, wait_group,
};
use nvptx_device::shared::SharedSlice;
use nvptx_device::shared_array;
use nvptx_device::thread::{block_idx_x, sync_threads, thread_idx_x};
use nvptx_device::warp::{self, FULL_MASK, WARP_SIZE};

/// Threads per block.
pub const BLOCK: u32 = 256;
/// The scan's error bound: within `2⁻²⁴ · |mean| + 2^ERROR_LOG2 · (p + 1) · max |a|` of the
/// exact mean of the window ending at position `p` (see the [module](self)).
pub const ERROR_LOG2: i32 = -50;
/// Consecutive positions per thread.
pub const ITEMS: u32 = 16;
/// Positions per block.
pub const TILE: u32 = BLOCK * ITEMS;
/// [`ITEMS`] as an index.
const I: usize = ITEMS as usize;
/// A thread's 16-byte words of a staged stream.
const WORDS: u32 = ITEMS / 4;
const WARPS: u32 = BLOCK / WARP_SIZE;
/// 16-byte words of a staged stream: a tile's, and one more for `a[p - window]`, which
/// starts up to three floats past a 16-byte boundary.
const QUADS: u32 = TILE / 4 + 1;
/// Floats of shared memory per staged stream: [`QUADS`] words and their gaps ([`slot`]).
const STAGE_FLOATS: u32 = 4 * slot_quad(QUADS - 1) + 4;
/// Its shared arrays, each 16-byte aligned: the ticket, the warps' totals, their halos' and
/// their aggregates' (five words per tally), the tile's prefix and the two staged streams.
pub const STATIC_SHARED_BYTES: u32 =
    16 + 3 * (20 * WARPS).next_multiple_of(16) + 32 + 2 * 4 * STAGE_FLOATS;

/// Words of the scratch state before the tiles' heads: the ticket counter (a `u32` in word
/// 0), padded to 64 bytes.
pub const HEADER_WORDS: usize = 8;
/// Words per tile in the heads, which follow the header: the aggregate's head, then the
/// inclusive prefix's (see [`Descriptors`]).
pub const HEAD_WORDS: usize = 2;
/// Words per tile in the full records, which follow the heads: the aggregate's four, then
/// the inclusive prefix's.
pub const FULL_WORDS: usize = 8;
/// Predecessors a look-back step reads: `PER_LANE` per lane of a warp. More per step
/// means fewer steps, but every block near the front of the scan polls the heads of the
/// same few recent tiles, so each step's requests queue at the same few L2 lines: on an
/// H100 (2^28 values, windows 2 and 100,000) 1, 2, 4 and 8 per lane ran at 55–57%, 52–55%,
/// 46–47% and 36–37% of device-copy bandwidth.
pub const LOOK_BACK: u32 = WARP_SIZE * PER_LANE;
const PER_LANE: u32 = 1;

/// The most whole tiles a window summed from published aggregates spans (see
/// [`far_tiles`]): one per lane of the warp that reads them. A window reaching further back
/// takes the chained look-back.
pub const FAR_TILES: u32 = WARP_SIZE;

/// The longest window summed from a halo and published aggregates: a whole tile's halo,
/// then [`FAR_TILES`] tiles (135,168 positions).
pub const FAR_WINDOW: u32 = (FAR_TILES + 1) * TILE;

/// The whole tiles just before a tile that the window ending there covers, `f`, beyond its
/// halo of `window - f·TILE` (between 1 and [`TILE`]) positions: the window before the tile
/// starting at `s` is `a[s - window .. s - f·TILE]`, the tile's staged halo, then tiles
/// `s/TILE - f .. s/TILE`.
#[inline(always)]
pub const fn far_tiles(window: u32) -> u32 {
    (window - 1) / TILE
}

/// Tiles ahead of its own whose `a[p]` a block asks L2 for (`prefetch.global.L2`) while its
/// copies are in flight, so that the block of that tile, which starts about as many blocks
/// later, copies from L2 rather than DRAM: without it four blocks per SM keep too few bytes
/// in flight to cover DRAM's latency. The DRAM traffic stays a copy's (each line is fetched
/// once, and 256 tiles are 4 MiB of L2).
///
/// Measured on an H100 (2^28 values, the CLI's median of 20, two rounds in one device run),
/// in % of device-copy bandwidth at windows 2, 16, 64, 1,024, 4,097 and 100,000: with no
/// prefetch 87.9–88.0, 85.4, 88.4, 88.5–88.6, 71.2 and 70.5–70.7; 128 tiles ahead 93.3,
/// 90.3–90.4, 92.9, 92.9–93.0, 75.9 and 75.0–75.1; 256 ahead 94.5–94.6, 91.1, 94.1,
/// 94.0–94.1, 75.8–75.9 and 74.9; 512 ahead 93.2–93.3, 90.5, 93.1, 93.1, 74.8 and 74.5;
/// 1,024 ahead 67–68, 61.4 and 60.3–60.4 (not profiled; 16 MiB ahead is a third of the L2).
pub const L2_AHEAD: u32 = 256;

/// Blocks per SM the entry's launch bounds ask for (`.minnctapersm`), so at most 64
/// registers per thread (ptxas spills in the rare non-finite passes at this bound).
///
/// Measured on an H100 (2^28 values, an earlier build), in % of device-copy bandwidth:
/// 84.1 / 83.7 / 86.0 / 84.8% at windows 2 / 16 / 64 / 1,024 (the halo path, when it took
/// tickets), 64.6% at 100,000 (a halo and 24 tiles' aggregates) and 56.3% at 135,169 (the
/// look-back); for this build's figures, see the [module](self) docs. A build whose halo
/// sums skipped the warps without halo ran 1–2 points faster on the halo path, but failed
/// synccheck (see `sliding_scan_shifted`). On earlier builds (same design, no rotation in
/// `store_means`),
/// 3, 5 and 2 blocks per SM (80, 48 and 128 registers) ran slower at windows 2, 1,024 and
/// 100,000: 73–79%, 70–72% and 62–64% on the halo path. So did 128-thread blocks of 32
/// positions per thread (27–30%: they spill 11 KB), and a persistent grid that staged each
/// block's next tile while it looked back for the current one (51% at window 2, 19.5% at
/// 100,000 with 2,048-position tiles): a tile staged early publishes its aggregate only once
/// its block has finished the tile before, so the aggregates themselves formed a chain.
/// On this build, 5 blocks per SM (48 registers; ptxas 12.9 spills 16 KB, nearly all in the
/// rare non-finite passes, a few words around the scan pass) ran at 95.0%, 90.3–90.5%,
/// 64.5% and 59.2% at windows 2, 1,024, 4,097 and 100,000, against 94.5–94.6%, 94.1%,
/// 75.8–75.9% and 74.8–74.9% in the same H100 run (the CLI's median of 20, two rounds): a
/// fifth block per SM does not hide the far path's waits (not profiled).
/// Before the halo path, with the look-back at every window, this kernel ran at 55–58%;
/// Nsight Compute (2^26 values, window 1,024) then found 43% of the cycles between a warp's
/// instructions spent waiting at a barrier for warp 0's look-back.
pub const MIN_BLOCKS: u32 = 4;

/// Where 16-byte word `q` of a staged stream lies, in words: a gap after every eight.
#[inline(always)]
pub const fn slot_quad(q: u32) -> u32 {
    q + q / 8
}

/// Where float `i` of a staged stream lies (see [`slot_quad`]).
#[inline(always)]
const fn slot(i: u32) -> u32 {
    4 * slot_quad(i / 4) + i % 4
}

/// Whether a launch over windows of `window` reads its scratch state: only where the window
/// spans a whole tile beyond its halo (the aggregates and the chained paths take tickets and
/// publish); a launch that does not needs no zeroed state.
pub const fn reads_state(window: u32) -> bool {
    far_tiles(window) > 0
}

/// Tiles (and blocks) for `n` inputs: at least one.
pub const fn tiles(n: u32) -> u32 {
    let t = n.div_ceil(TILE);
    if t == 0 { 1 } else { t }
}

/// `u64` words of scratch state a launch over `n` inputs needs, all zero at launch.
pub const fn state_words(n: u32) -> usize {
    HEADER_WORDS + (HEAD_WORDS + FULL_WORDS) * tiles(n) as usize
}

/// What a tile has published: nothing yet.
pub const EMPTY: u32 = 0;
/// Its own aggregate.
pub const AGGREGATE: u32 = 1;
/// The inclusive prefix through it.
pub const INCLUSIVE: u32 = 2;
/// XORed into a sum's bits in a head, so that a zero head is one not yet written: the bits
/// of a NaN, which no sum of finite values is.
const HEAD_KEY: u64 = 0x7ff4_0000_0000_0001;
/// The head of a tally with non-finite counts, whose full record holds it: another NaN's
/// bits, keyed.
const MARKED: u64 = 0x7ff4_0000_0000_0002 ^ HEAD_KEY;
/// The "valid" bit of a full record's count words.
const VALID: u64 = 1 << 32;

/// One -∞ in [`Tally::inf`].
const NEG_INF: u64 = 1 << 32;

/// What the scan adds up: the f64 sum of the finite values, and counts of the non-finite
/// ones (wrapping, so that differences of counts telescope exactly).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tally {
    /// Sum of the finite values.
    pub sum: f64,
    /// +∞ count in the low 32 bits, -∞ count in the high 32.
    pub inf: u64,
    /// NaN count.
    pub nan: u32,
}

impl Tally {
    /// Nothing.
    pub const ZERO: Self = Self {
        sum: 0.0,
        inf: 0,
        nan: 0,
    };

    /// One value.
    #[inline(always)]
    pub fn of(x: f32) -> Self {
        let mut t = Self::ZERO;
        if x.is_finite() {
            t.sum = x as f64;
        } else if x.is_nan() {
            t.nan = 1;
        } else if x > 0.0 {
            t.inf = 1;
        } else {
            t.inf = NEG_INF;
        }
        t
    }

    /// The average of a window whose tally this is, `inv_window` being `1 / window`.
    #[inline(always)]
    pub fn mean(self, inv_window: f64) -> f32 {
        let (pos, neg) = (self.inf as u32, (self.inf >> 32) as u32);
        if self.nan != 0 || (pos != 0 && neg != 0) {
            f32::NAN
        } else if pos != 0 {
            f32::INFINITY
        } else if neg != 0 {
            f32::NEG_INFINITY
        } else {
            (self.sum * inv_window) as f32
        }
    }

    /// The five 32-bit words, in a fixed order.
    #[inline(always)]
    fn words(self) -> [u32; 5] {
        let s = self.sum.to_bits();
        [
            s as u32,
            (s >> 32) as u32,
            self.inf as u32,
            (self.inf >> 32) as u32,
            self.nan,
        ]
    }

    #[inline(always)]
    fn from_words(w: [u32; 5]) -> Self {
        Self {
            sum: f64::from_bits(w[0] as u64 | (w[1] as u64) << 32),
            inf: w[2] as u64 | (w[3] as u64) << 32,
            nan: w[4],
        }
    }

    /// Each word through `f` (a shuffle, say), in order.
    #[inline(always)]
    fn map_words(self, mut f: impl FnMut(u32) -> u32) -> Self {
        let w = self.words();
        Self::from_words([f(w[0]), f(w[1]), f(w[2]), f(w[3]), f(w[4])])
    }

    /// Writes the five words to `s[at .. at + 5]`.
    ///
    /// # Safety
    /// `at + 5 <= s.len()` (the simulator checks it).
    #[inline(always)]
    unsafe fn store(self, s: SharedSlice<u32>, at: u32) {
        let w = self.words();
        for (i, &x) in w.iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe { s.set_unchecked(at + i as u32, x) };
        }
    }

    /// Reads what [`store`](Self::store) wrote at `at`.
    ///
    /// # Safety
    /// As [`store`](Self::store).
    #[inline(always)]
    unsafe fn load(s: SharedSlice<u32>, at: u32) -> Self {
        // SAFETY: the caller's contract.
        Self::from_words(core::array::from_fn(|i| unsafe {
            s.get_unchecked(at + i as u32)
        }))
    }
}

impl core::ops::Add for Tally {
    type Output = Self;

    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Self {
            sum: self.sum + o.sum,
            inf: self.inf.wrapping_add(o.inf),
            nan: self.nan.wrapping_add(o.nan),
        }
    }
}

impl core::ops::Sub for Tally {
    type Output = Self;

    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        Self {
            sum: self.sum - o.sum,
            inf: self.inf.wrapping_sub(o.inf),
            nan: self.nan.wrapping_sub(o.nan),
        }
    }
}

/// Where the tiles publish, in a launch's scratch state: per tile a 16-byte head, its
/// aggregate's word then its inclusive prefix's, each zero until written; and a full record
/// of four words per kind, used only by a tally with non-finite counts.
///
/// A head holds the sum's bits XOR `HEAD_KEY` when the tally's counts are zero (the
/// common case), else `MARKED`: its full record holds the sum (keyed, so non-zero) and the
/// three counts, each with a `VALID` bit, written before the head. Each word carries its
/// own "written" mark, so a reader needs no fence: it spins on a full record's words until
/// all are marked. The heads are contiguous, so that one warp's look-back step reads 16
/// bytes per predecessor, coalesced: a step's L2 traffic, and a spinning block's, stays small.
#[derive(Clone, Copy, Debug)]
pub struct Descriptors {
    heads: *mut u64,
    fulls: *mut u64,
}

impl Descriptors {
    /// The descriptors of a launch's `tiles` tiles, in its scratch state `state` (of
    /// [`state_words`] words).
    pub fn new(state: *mut u64, tiles: u32) -> Self {
        let heads = state.wrapping_add(HEADER_WORDS);
        Self {
            heads,
            fulls: heads.wrapping_add(HEAD_WORDS * tiles as usize),
        }
    }

    /// Tile `b`'s head word of kind `status` ([`AGGREGATE`] or [`INCLUSIVE`]).
    fn head(self, b: u32, status: u32) -> *mut u64 {
        let kind = (status == INCLUSIVE) as usize;
        self.heads.wrapping_add(HEAD_WORDS * b as usize + kind)
    }

    /// The first of the four words of tile `b`'s full record of kind `status`.
    fn full(self, b: u32, status: u32) -> *mut u64 {
        let kind = (status == INCLUSIVE) as usize;
        self.fulls.wrapping_add(FULL_WORDS * b as usize + 4 * kind)
    }
}

/// Publishes `t` as tile `b`'s aggregate ([`AGGREGATE`]) or inclusive prefix
/// ([`INCLUSIVE`]).
///
/// # Safety
/// `d` is a launch's descriptors, tile `b` one of its tiles, and only this thread publishes
/// that kind for it.
#[inline(always)]
pub unsafe fn publish(d: Descriptors, b: u32, status: u32, t: Tally) {
    // SAFETY: the caller's contract.
    unsafe { publish_if(true, d, b, status, t) }
}

/// [`publish`] where `write`, with predicated stores (no branch: see
/// [`atomic::store_pair_relaxed_if`]). The kernel publishes from one thread just before the
/// look-back and barriers.
///
/// # Safety
/// As [`publish`] where `write`.
#[inline(always)]
unsafe fn publish_if(write: bool, d: Descriptors, b: u32, status: u32, t: Tally) {
    let plain = t.inf == 0 && t.nan == 0;
    let full = d.full(b, status);
    let head = d.head(b, status);
    let keyed = keyed(t.sum);
    let counts = [
        t.inf as u32 as u64 | VALID,
        t.inf >> 32 | VALID,
        t.nan as u64 | VALID,
    ];
    // SAFETY: the full record (16-byte aligned) and the head are tile b's, this kind's.
    unsafe {
        let full_too = write && !plain;
        atomic::store_pair_relaxed_if(full_too, full, [keyed, counts[0]]);
        atomic::store_pair_relaxed_if(full_too, full.wrapping_add(2), [counts[1], counts[2]]);
        let word = if plain { keyed } else { MARKED };
        atomic::store_relaxed_u64_if(write, head, word);
    }
}

/// A sum as published: its bits XOR [`HEAD_KEY`], never zero for a sum of finite values.
#[inline(always)]
fn keyed(sum: f64) -> u64 {
    sum.to_bits() ^ HEAD_KEY
}

/// The sum a [`keyed`] word holds.
#[inline(always)]
fn unkeyed(word: u64) -> f64 {
    f64::from_bits(word ^ HEAD_KEY)
}

/// Tile `b`'s head: its status, and the word of the most advanced kind published.
///
/// # Safety
/// As [`publish`].
#[inline(always)]
unsafe fn read_head(d: Descriptors, b: u32) -> (u32, u64) {
    // SAFETY: tile b's head, 16-byte aligned.
    let [aggregate, inclusive] = unsafe { atomic::load_pair_relaxed(d.head(b, AGGREGATE)) };
    if inclusive != 0 {
        (INCLUSIVE, inclusive)
    } else if aggregate != 0 {
        (AGGREGATE, aggregate)
    } else {
        (EMPTY, 0)
    }
}

/// The tally behind tile `b`'s non-zero head `word` of kind `status`: the keyed sum, or
/// where [`MARKED`] the full record, re-read until all of it is written.
///
/// # Safety
/// As [`publish`]; `word` was read from that head.
#[inline(always)]
unsafe fn head_value(d: Descriptors, b: u32, status: u32, word: u64) -> Tally {
    if word != MARKED {
        return Tally {
            sum: unkeyed(word),
            ..Tally::ZERO
        };
    }
    let full = d.full(b, status);
    loop {
        // SAFETY: tile b's full record of this kind, 16-byte aligned.
        let [[sum, pos], [neg, nan]] = unsafe {
            [
                atomic::load_pair_relaxed(full),
                atomic::load_pair_relaxed(full.wrapping_add(2)),
            ]
        };
        if sum != 0 && pos & neg & nan & VALID != 0 {
            return Tally {
                sum: unkeyed(sum),
                inf: pos as u32 as u64 | (neg as u32 as u64) << 32,
                nan: nan as u32,
            };
        }
    }
}

/// The sum of every tile before tile `b`, by one full warp: lane `l` reads predecessors
/// `b - 1 - PER_LANE·l - j` (`j < PER_LANE`), and the warp adds the published values back to
/// the nearest inclusive prefix, [`LOOK_BACK`] tiles per step, re-reading while any of those
/// has published nothing yet.
///
/// # Safety
/// All 32 lanes of one warp call it together; `d` is the launch's descriptors and tiles
/// `0..b` belong to blocks that have started (the ticket order).
#[inline(always)]
pub unsafe fn look_back(d: Descriptors, b: u32) -> Tally {
    let lane = warp::lane_id();
    // Tile b - 1 first, every lane polling the same word (one request per warp): the wide
    // reads below then rarely find a predecessor that has published nothing (tiles publish
    // their aggregates about in ticket order), so a waiting block adds one request per poll
    // to the L2 lines every block near it polls, not LOOK_BACK.
    // SAFETY: tile b - 1 is before b.
    while b > 0 && unsafe { read_head(d, b - 1) }.0 == EMPTY {}
    let mut excl = Tally::ZERO;
    let mut end = b;
    while end > 0 {
        let mut status = [EMPTY; PER_LANE as usize];
        let mut word = [0u64; PER_LANE as usize];
        let tile = |j: usize| end.wrapping_sub(1 + PER_LANE * lane + j as u32);
        unroll!(PER_LANE as usize, |j| {
            // Tiles before the first count as an inclusive prefix of zero.
            (status[j], word[j]) = if PER_LANE * lane + (j as u32) < end {
                // SAFETY: that tile is before b.
                unsafe { read_head(d, tile(j)) }
            } else {
                (INCLUSIVE, keyed(0.0))
            };
        });
        // This lane's nearest inclusive prefix (PER_LANE: none), and whether a tile it
        // needs has published nothing.
        let mut first = PER_LANE;
        let mut pending_before = [false; PER_LANE as usize + 1];
        unroll!(PER_LANE as usize, |j| {
            if first == PER_LANE && status[j] == INCLUSIVE {
                first = j as u32;
            }
            pending_before[j + 1] = pending_before[j] || status[j] == EMPTY;
        });
        // SAFETY: the whole warp is here (the loop's conditions are warp-uniform).
        let with_inclusive = unsafe { warp::ballot(FULL_MASK, first < PER_LANE) };
        let nearest = with_inclusive.trailing_zeros();
        let upto = if lane == nearest { first + 1 } else { PER_LANE };
        let mut pending = false;
        unroll!(PER_LANE as usize + 1, |j| {
            if j as u32 == upto {
                pending = pending_before[j];
            }
        });
        // SAFETY: as above.
        if unsafe { warp::ballot(FULL_MASK, lane <= nearest && pending) } != 0 {
            continue;
        }
        let mut mine = Tally::ZERO;
        if lane <= nearest {
            unroll!(PER_LANE as usize, |j| {
                if (j as u32) < upto {
                    // SAFETY: a head this lane read, non-zero.
                    mine = unsafe { head_value(d, tile(j), status[j], word[j]) } + mine;
                }
            });
        }
        // SAFETY: as above.
        let step = unsafe {
            let sums_only = warp::ballot(FULL_MASK, mine.inf != 0 || mine.nan != 0) == 0;
            warp_sum(mine, sums_only)
        };
        excl = step + excl;
        if nearest < WARP_SIZE {
            break;
        }
        end -= LOOK_BACK;
    }
    excl
}

/// The sum of the aggregates of the `far` (at most [`FAR_TILES`]) tiles just before tile `b`
/// (those before the first tile count as zero), by one full warp: lane `l` waits for tile
/// `b - far + l`'s aggregate. Those tiles' blocks publish their aggregates without waiting
/// on anyone, so however long a block waits, nothing waits on it in turn.
///
/// # Safety
/// All 32 lanes of one warp call it together; `d` is the launch's descriptors, tiles
/// `0..b` belong to blocks that have started (the ticket order) and publish their
/// aggregates.
#[inline(always)]
unsafe fn far_aggregates(d: Descriptors, b: u32, far: u32) -> Tally {
    let lane = warp::lane_id();
    let wanted = lane < far && b + lane >= far;
    let tile = (b + lane).wrapping_sub(far);
    let (mut status, mut word) = (EMPTY, 0);
    loop {
        if wanted {
            // SAFETY: a tile before b.
            (status, word) = unsafe { read_head(d, tile) };
        }
        // SAFETY: the whole warp is here (the loop's condition is warp-uniform).
        if unsafe { warp::ballot(FULL_MASK, wanted && status == EMPTY) } == 0 {
            break;
        }
    }
    let mine = if wanted {
        // SAFETY: a head this lane read, non-zero.
        unsafe { head_value(d, tile, status, word) }
    } else {
        Tally::ZERO
    };
    // SAFETY: as above.
    unsafe {
        let sums_only = warp::ballot(FULL_MASK, mine.inf != 0 || mine.nan != 0) == 0;
        warp_sum(mine, sums_only)
    }
}

/// The sum over the warp's lanes, in every lane (butterfly, so every lane adds in the
/// same order); only the sums move where `sums_only` (see [`warp_scan`]).
///
/// # Safety
/// All 32 lanes call it together, with the same `sums_only`.
#[inline(always)]
unsafe fn warp_sum(mut t: Tally, sums_only: bool) -> Tally {
    if sums_only {
        // The sums alone, apart: the counts' adds and selects in the general loop cost as
        // many instructions as the shuffles.
        let mut sum = t.sum;
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            // SAFETY: the caller's contract.
            sum += map_sum_words(sum, |w| unsafe { warp::shuffle_xor(FULL_MASK, w, offset) }).sum;
            offset /= 2;
        }
        return Tally { sum, ..Tally::ZERO };
    }
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        // SAFETY: the caller's contract.
        let other = t.map_words(|w| unsafe { warp::shuffle_xor(FULL_MASK, w, offset) });
        // Lower lanes' tiles first: the same grouping in the pair's two lanes.
        t = if warp::lane_id() & offset == 0 {
            t + other
        } else {
            other + t
        };
        offset /= 2;
    }
    t
}

/// `t`'s words through `f` (a shuffle, say), or only its sum's where `sums_only` (the
/// counts then zero).
#[inline(always)]
fn map_moved(t: Tally, sums_only: bool, f: impl FnMut(u32) -> u32) -> Tally {
    if sums_only {
        map_sum_words(t.sum, f)
    } else {
        t.map_words(f)
    }
}

/// Each word of the sum's bits through `f` (a shuffle, say); the counts are left at zero.
#[inline(always)]
fn map_sum_words(sum: f64, mut f: impl FnMut(u32) -> u32) -> Tally {
    let s = sum.to_bits();
    let (lo, hi) = (f(s as u32), f((s >> 32) as u32));
    Tally {
        sum: f64::from_bits(lo as u64 | (hi as u64) << 32),
        ..Tally::ZERO
    }
}

/// `t` from the lane `d` below (zero counts and all if `sums_only`, see [`warp_scan`]).
///
/// # Safety
/// All 32 lanes call it together.
#[inline(always)]
unsafe fn shuffle_up(t: Tally, d: u32, sums_only: bool) -> Tally {
    // SAFETY: the caller's contract.
    map_moved(t, sums_only, |w| unsafe {
        warp::shuffle_up(FULL_MASK, w, d)
    })
}

/// The inclusive scan of `t` over the first `lanes` lanes of the warp (a power of two; the
/// others get sums of runs of `lanes` lanes), Hillis–Steele by shuffles. Where `sums_only`,
/// every lane's counts are zero and only the sum's two words move.
///
/// # Safety
/// All 32 lanes call it together, with the same `sums_only` and `lanes`.
#[inline(always)]
unsafe fn warp_scan(t: Tally, sums_only: bool, lanes: u32) -> Tally {
    let lane = warp::lane_id();
    if sums_only {
        // The sums alone, as in `warp_sum`.
        let mut sum = t.sum;
        let mut d = 1;
        while d < lanes {
            // SAFETY: the caller's contract.
            let below = map_sum_words(sum, |w| unsafe { warp::shuffle_up(FULL_MASK, w, d) });
            if lane >= d {
                sum += below.sum;
            }
            d *= 2;
        }
        return Tally { sum, ..Tally::ZERO };
    }
    let mut inclusive = t;
    let mut d = 1;
    while d < lanes {
        // SAFETY: the caller's contract.
        let below = unsafe { shuffle_up(inclusive, d, false) };
        if lane >= d {
            inclusive = below + inclusive;
        }
        d *= 2;
    }
    inclusive
}

/// From the tallies of the first `count` (at most [`WARPS`]) warps in `per_warp`, five words
/// each ([`Tally::store`]): the sum of those before warp `upto`, and the sum of all `count`, in
/// every lane. Lane `j < count` reads warp `j`'s tally and the lanes scan them, so a warp
/// spends a few shuffles, not a load and an addition per warp in every thread.
///
/// # Safety
/// All 32 lanes of a warp call it together, with the same `count` and `upto`;
/// `per_warp` holds `5 · count` words written before a barrier.
#[inline(always)]
unsafe fn fold_warps(per_warp: SharedSlice<u32>, count: u32, upto: u32) -> (Tally, Tally) {
    let lane = warp::lane_id();
    let mine = if lane < count {
        // SAFETY: the caller's contract.
        unsafe { Tally::load(per_warp, 5 * lane) }
    } else {
        Tally::ZERO
    };
    // SAFETY: the caller's contract (every lane, uniform arguments).
    unsafe {
        let sums_only = warp::ballot(FULL_MASK, mine.inf != 0 || mine.nan != 0) == 0;
        let inclusive = warp_scan(mine, sums_only, WARPS);
        let from = |src: u32| {
            map_moved(inclusive, sums_only, |w| {
                warp::shuffle_idx(FULL_MASK, w, src)
            })
        };
        let (before, all) = (from(upto.wrapping_sub(1)), from(count.wrapping_sub(1)));
        (
            if upto == 0 { Tally::ZERO } else { before },
            if count == 0 { Tally::ZERO } else { all },
        )
    }
}

/// Copies 16-byte word `q` of a stream starting at `a[g0]` (`g0` a multiple of 4, perhaps
/// negative) into its [`slot`] of `stage`: the floats at indices `0..n` are copied, the
/// others zero-filled.
///
/// # Safety
/// `a` holds `n` floats and is 16-byte aligned; `q < QUADS`; nobody reads that slot before
/// the copy has been waited for and a barrier passed.
#[inline(always)]
unsafe fn stage_quad(stage: SharedSlice<f32>, a: *const f32, n: u32, g0: i64, q: u32) {
    let g = g0 + 4 * q as i64;
    let floats = (n as i64 - g).clamp(0, 4) as u32;
    let floats = if g < 0 { 0 } else { floats };
    let slot = 4 * slot_quad(q);
    if floats % 4 == 0 {
        let full = floats == 4;
        // Nothing is read from `src` when the word is outside `a`.
        let src = if full { a.wrapping_add(g as usize) } else { a };
        // SAFETY: where `full`, 4 floats from `src` lie in `a`, 16-byte aligned; the slot is
        // in `stage`, aligned.
        unsafe { cp_async_16_zfill(stage, slot, src, full) };
    } else {
        // The word where `a` ends, by plain loads: compute-sanitizer's memcheck (CUDA 13)
        // reports a `cp.async` of fewer than 16 source bytes as reading all 16.
        let w = core::array::from_fn(|e| {
            // SAFETY: a[g + e] for e < floats lies in `a` (g >= 0, g + floats <= n).
            (e < floats as usize).then(|| unsafe { *a.add(g as usize + e) })
        });
        // SAFETY: the slot is in `stage`, 16-byte aligned, read only after the barrier.
        unsafe { stage.set4_unchecked(slot, w.map(|x| x.unwrap_or(0.0))) };
    }
}

/// Stages the two streams of a tile at an edge of `a` (the first tiles, whose `a[p - window]`
/// starts before `a`, or the last): word by word, zero-filled past the edges.
///
/// # Safety
/// `a` holds `n` floats, 16-byte aligned; nobody reads the stages before the copies are
/// waited for and a barrier passed.
#[inline(always)]
unsafe fn stage_edge_tile<const S: usize>(
    new: SharedSlice<f32>, old: SharedSlice<f32>, a: *const f32, n: u32, s: u32, old0: i64,
) {
    let mut q = thread_idx_x();
    while q < QUADS {
        // SAFETY: `a` holds n floats, 16-byte aligned; q < QUADS; the caller's contract.
        unsafe {
            if q < TILE / 4 {
                stage_quad(new, a, n, s as i64, q);
            }
            if q < TILE / 4 || S != 0 {
                stage_quad(old, a, n, old0, q);
            }
        }
        q += BLOCK;
    }
}

/// Visits this thread's staged inputs one 16-byte word at a time: `f(q, xn, xo)` gets
/// `a[p]` and `a[p - window]` for its positions `4q .. 4q + 4` (of [`ITEMS`]), the second
/// stream `S` floats past the start of its words. One word of each stream is held at a time
/// (and the next word of `a[p - window]`), so that the thread's run never sits in registers.
///
/// # Safety
/// Both stages hold the tile (copies waited for, barrier passed); `f` writes at most this
/// thread's own words of `new`, the one it was given.
#[inline(always)]
unsafe fn for_each_word<const S: usize>(
    new: SharedSlice<f32>, old: SharedSlice<f32>, t: u32,
    mut f: impl FnMut(u32, [f32; 4], [f32; 4]),
) {
    // Every visit reads its words afresh: without this, LLVM reuses the first visit's
    // loads (and conversions) in the rare non-finite visit after it, and keeps all of them
    // live across the common path, which then spills.
    reload_fence();
    let word = |s: SharedSlice<f32>, q: u32| {
        // SAFETY: word WORDS·t + q <= TILE / 4 < QUADS lies in the stage, 16-byte aligned.
        unsafe { s.get4_unchecked(4 * slot_quad(WORDS * t + q)) }
    };
    let mut low = word(old, 0);
    unroll!(I / 4, |q| {
        let q = q as u32;
        let xn = word(new, q);
        let xo = if S == 0 {
            low
        } else {
            let high = word(old, q + 1);
            let w = [
                low[0], low[1], low[2], low[3], high[0], high[1], high[2], high[3],
            ];
            low = high;
            [w[S], w[S + 1], w[S + 2], w[S + 3]]
        };
        f(q, xn, xo);
        if S == 0 && q + 1 < ITEMS / 4 {
            low = word(old, q + 1);
        }
    });
}

/// `out[i] = mean(a[i .. i + window])` for every `i < n - window + 1`: the mean ending at
/// position `p = i + window - 1`. See the [module](self).
///
/// Launch [`tiles`]`(n)` blocks of [`BLOCK`] threads, with `state` holding
/// [`state_words`]`(n)` words, zeroed where [`reads_state`]`(window)` (else never read).
///
/// # Safety
/// `1 <= window <= n`; `a` points to `n` floats and is 16-byte aligned, `out` to
/// `n - window + 1` floats and is 16-byte aligned, `state` as above and used by this launch
/// alone.
#[inline(always)]
pub unsafe fn sliding_scan(a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64) {
    // Tiles start at multiples of 4, so `a[p - window]` is `(-window) mod 4` places past a
    // 16-byte boundary in every thread: one body per shift, its shared reads' shuffles and
    // its output's alignment known at compile time.
    // The shared arrays, declared once for the four bodies.
    let shared = Shared {
        ticket: shared_array!(u32; 1),
        warp_totals: shared_array!(u32; WARPS * 5),
        warp_halos: shared_array!(u32; WARPS * 5),
        warp_aggregates: shared_array!(u32; WARPS * 5),
        prefix: shared_array!(u32; 5),
        new: shared_array!(f32; STAGE_FLOATS),
        old: shared_array!(f32; STAGE_FLOATS),
    };
    // SAFETY: the caller's contract.
    unsafe {
        match window % 4 {
            0 => sliding_scan_path::<0>(a, n, window, out, state, shared),
            1 => sliding_scan_path::<3>(a, n, window, out, state, shared),
            2 => sliding_scan_path::<2>(a, n, window, out, state, shared),
            _ => sliding_scan_path::<1>(a, n, window, out, state, shared),
        }
    }
}

/// How the window before a tile is summed: from the tile's staged halo alone (a window
/// within a tile); from the halo and the published aggregates of at most [`FAR_TILES`]
/// whole tiles; or by the chained look-back.
const HALO: u8 = 0;
/// See [`HALO`].
const FAR: u8 = 1;
/// See [`HALO`].
const CHAINED: u8 = 2;

/// [`sliding_scan_shifted`] with the path for `window`, each its own body: a path's
/// registers are not held through another's code, where LLVM and ptxas would keep them
/// live (with the far path's sums in the halo path's loops, ptxas spilled 5 KB).
///
/// # Safety
/// As [`sliding_scan_shifted`].
#[inline(always)]
unsafe fn sliding_scan_path<const S: usize>(
    a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64, shared: Shared,
) {
    let far = far_tiles(window);
    // SAFETY: the caller's contract.
    unsafe {
        if far == 0 {
            sliding_scan_shifted::<S, HALO>(a, n, window, out, state, shared)
        } else if far <= FAR_TILES {
            sliding_scan_shifted::<S, FAR>(a, n, window, out, state, shared)
        } else {
            sliding_scan_shifted::<S, CHAINED>(a, n, window, out, state, shared)
        }
    }
}

/// The block's shared arrays: the ticket, the warps' totals, their halos' and their
/// aggregates', the tile's prefix, and the two staged streams (`a[p]` and `a[p - window]`).
#[derive(Clone, Copy)]
struct Shared {
    ticket: SharedSlice<u32>,
    warp_totals: SharedSlice<u32>,
    warp_halos: SharedSlice<u32>,
    warp_aggregates: SharedSlice<u32>,
    prefix: SharedSlice<u32>,
    new: SharedSlice<f32>,
    old: SharedSlice<f32>,
}

/// [`sliding_scan`] where `a[p - window]` is `S` places past a 16-byte boundary for every
/// position `p` that is a multiple of 4, i.e. `S = (-window) mod 4`.
///
/// # Safety
/// As [`sliding_scan`], and `(window + S) % 4 == 0`.
#[inline(always)]
unsafe fn sliding_scan_shifted<const S: usize, const PATH: u8>(
    a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64, shared: Shared,
) {
    let t = thread_idx_x();
    let (lane, warp_id) = (t % WARP_SIZE, t / WARP_SIZE);
    let Shared {
        ticket,
        warp_totals,
        warp_halos,
        warp_aggregates,
        prefix,
        new,
        old,
    } = shared;

    // A halo-path block depends on no other, so it takes its tile from its block index: no
    // atomic, and no barrier before its loads (see the module docs for what that gained).
    // The other paths wait for earlier tiles, so they take tickets, in the order their
    // blocks start.
    let b = if PATH == HALO {
        block_idx_x()
    } else {
        if t == 0 {
            // SAFETY: word 0 of the state is the ticket counter.
            ticket.set(0, unsafe { atomic::fetch_add_u32(state as *mut u32, 1) });
        }
        sync_threads();
        ticket.get(0)
    };
    let s = b * TILE;

    // Both streams of the tile, in flight at once: a[s ..] and a[s - window - S ..].
    let old0 = s as i64 - window as i64 - S as i64;
    if old0 >= 0 && s + TILE <= n {
        // Both wholly inside `a` (the second ends at s + TILE + 4 - window - S <= s + TILE).
        let (new_src, old_src) = (a.wrapping_add(s as usize), a.wrapping_add(old0 as usize));
        unroll!((TILE / 4 / BLOCK) as usize, |j| {
            let q = t + BLOCK * j as u32;
            // SAFETY: words q < TILE / 4 of both streams lie in `a`, 16-byte aligned; read
            // after the barrier.
            unsafe {
                cp_async_16(new, 4 * slot_quad(q), new_src.wrapping_add(4 * q as usize));
                cp_async_16(old, 4 * slot_quad(q), old_src.wrapping_add(4 * q as usize));
            }
        });
        if S != 0 && t == 0 {
            let q = TILE / 4;
            // SAFETY: as above; the second stream's last word ends within `a`.
            unsafe { cp_async_16(old, 4 * slot_quad(q), old_src.wrapping_add(4 * q as usize)) };
        }
    } else {
        // SAFETY: `a` holds n floats, 16-byte aligned; the stages are read after the barrier.
        unsafe { stage_edge_tile::<S>(new, old, a, n, s, old0) };
    }
    commit_group();
    {
        // The tile L2_AHEAD tiles on, asked of L2 while this tile's copies are in flight:
        // TILE / BLOCK floats (64 bytes) apart per thread, so the block covers the whole
        // tile. Clamped into `a` rather than branched around (a branch here moved the later
        // passes' codegen into spills).
        let step = (TILE / BLOCK) as u64;
        let ahead =
            ((b as u64 + L2_AHEAD as u64) * TILE as u64 + step * t as u64).min(n as u64 - 1);
        // SAFETY: a float of `a` (n >= 1).
        unsafe { prefetch_l2(a.wrapping_add(ahead as usize)) };
    }
    wait_group::<0>();
    sync_threads();

    let far = far_tiles(window);
    let (near, aggregates) = (PATH != CHAINED, PATH == FAR);
    let desc = Descriptors::new(state, tiles(n));
    // The thread's sum, the warp's scan, the block's sum of differences; where the window
    // spans at most FAR_TILES whole tiles beyond its halo, the sum of that halo too: the
    // staged `a[p - window]` of the tile's first `halo_positions` (`halo_len` of them are
    // this thread's); on the far path, the sum of the thread's `a[p]` for the tile's
    // aggregate.
    let halo_positions = window - far * TILE;
    let halo_len = if near {
        halo_positions.saturating_sub(ITEMS * t)
    } else {
        0
    };
    let (mut sum, mut halo_sum, mut own_sum) = (0.0f64, 0.0f64, 0.0f64);
    // SAFETY: staged and waited for.
    unsafe {
        for_each_word::<S>(new, old, t, |q, xn, xo| {
            unroll!(4, |i| {
                sum += e(xn[i], xo[i]);
                if aggregates {
                    own_sum += xn[i] as f64;
                }
                if 4 * q + (i as u32) < halo_len {
                    halo_sum += xo[i] as f64;
                }
            });
        });
    }
    // A non-finite input makes its difference, and so the sum, non-finite: one check.
    let clean = sum.is_finite();
    let mut mine = Tally { sum, ..Tally::ZERO };
    let mut halo = Tally {
        sum: halo_sum,
        ..Tally::ZERO
    };
    // The tile's own `a[p]` (the far path), finite wherever the differences are.
    let mut own = Tally {
        sum: own_sum,
        ..Tally::ZERO
    };
    if !clean {
        (mine, halo, own) = (Tally::ZERO, Tally::ZERO, Tally::ZERO);
        // SAFETY: as above.
        unsafe {
            for_each_word::<S>(new, old, t, |q, xn, xo| {
                unroll!(4, |i| {
                    let (old, new) = (Tally::of(xo[i]), Tally::of(xn[i]));
                    mine = mine + (new - old);
                    if aggregates {
                        own = own + new;
                    }
                    if 4 * q + (i as u32) < halo_len {
                        halo = halo + old;
                    }
                });
            });
        }
    }
    if aggregates {
        // The tile's aggregate (the sum of its `a[p]`), which the windows of the next
        // FAR_TILES tiles add up: published before the scan goes on, so that a later block
        // seldom waits for it.
        // SAFETY: every lane of every warp (`aggregates` is uniform).
        let own = unsafe {
            let sums_only = warp::ballot(FULL_MASK, own.inf != 0 || own.nan != 0) == 0;
            warp_sum(own, sums_only)
        };
        if lane == 0 {
            // SAFETY: warp_aggregates holds 5 words per warp.
            unsafe { own.store(warp_aggregates, 5 * warp_id) };
        }
        sync_threads();
        if warp_id == 0 {
            // SAFETY: the whole warp, after the barrier; tile b's aggregate, written by
            // thread 0 only (predicated, see `publish_if`).
            unsafe {
                let (_, own) = fold_warps(warp_aggregates, WARPS, 0);
                publish_if(lane == 0, desc, b, AGGREGATE, own)
            };
        }
    }

    // SAFETY: every lane of every (full) warp, with a warp-uniform `sums_only`.
    let (inclusive, thread_prefix) = unsafe {
        let sums_only = warp::ballot(FULL_MASK, !clean) == 0;
        let inclusive = warp_scan(mine, sums_only, WARP_SIZE);
        let below = shuffle_up(inclusive, 1, sums_only);
        (inclusive, if lane == 0 { Tally::ZERO } else { below })
    };
    if lane == WARP_SIZE - 1 {
        // SAFETY: warp_totals holds 5 words per warp.
        unsafe { inclusive.store(warp_totals, 5 * warp_id) };
    }
    // Every warp where `near`, those with no halo too: under a warp-dependent condition
    // LLVM gave the two sides their own copies of the barrier below, and compute-sanitizer's
    // synccheck reports a block whose threads wait at different barriers.
    if near {
        // SAFETY: every lane of every warp (`near` is uniform), `sums_only` warp-uniform.
        let halo = unsafe {
            let sums_only = warp::ballot(FULL_MASK, !clean) == 0;
            warp_sum(halo, sums_only)
        };
        if lane == 0 {
            // SAFETY: warp_halos holds 5 words per warp.
            unsafe { halo.store(warp_halos, 5 * warp_id) };
        }
    }
    sync_threads();
    // SAFETY: every lane of every warp, after the barrier.
    let (warp_prefix, aggregate) = unsafe { fold_warps(warp_totals, WARPS, warp_id) };

    let before = if near {
        // The window ending before the tile is the staged halo, then `far` whole tiles
        // whose aggregates their blocks publish without waiting on anyone: no chain. A
        // launch whose windows span no whole tile publishes nothing.
        let halo_warps = halo_positions.div_ceil(WARP_SIZE * ITEMS);
        // SAFETY: as above (`halo_warps` is uniform, at most WARPS).
        let (_, halo) = unsafe { fold_warps(warp_halos, halo_warps, 0) };
        if aggregates {
            if warp_id == 0 {
                // SAFETY: the whole warp; tiles before b belong to started blocks, which
                // publish their aggregates before anything else.
                let far_sum = unsafe { far_aggregates(desc, b, far) };
                if lane == 0 {
                    // SAFETY: prefix holds 5 words.
                    unsafe { far_sum.store(prefix, 0) };
                }
            }
            sync_threads();
            // SAFETY: written before the barrier.
            halo + unsafe { Tally::load(prefix, 0) }
        } else {
            halo
        }
    } else {
        if warp_id == 0 {
            let status = if b == 0 { INCLUSIVE } else { AGGREGATE };
            // SAFETY: tile b's records, written by thread 0 only (predicated, not branched
            // around: see `publish_if`).
            unsafe { publish_if(lane == 0, desc, b, status, aggregate) };
            // SAFETY: the whole warp; tiles before b belong to started blocks.
            let before = unsafe { look_back(desc, b) };
            // SAFETY: as above.
            unsafe { publish_if(lane == 0 && b > 0, desc, b, INCLUSIVE, before + aggregate) };
            if lane == 0 {
                // SAFETY: prefix holds 5 words.
                unsafe { before.store(prefix, 0) };
            }
        }
        sync_threads();
        // SAFETY: written before the barrier.
        unsafe { Tally::load(prefix, 0) }
    };

    // The means of the thread's positions, from the window ending just before them.
    let start = before + warp_prefix + thread_prefix;
    let inv_window = 1.0 / window as f64;
    // Each word of means goes over the thread's own word of `a[p]` (no other thread reads
    // it) as soon as that is read.
    let put = |q: u32, m: [f32; 4]| {
        // SAFETY: this thread's word of the stage, 16-byte aligned.
        unsafe { new.set4_unchecked(4 * slot_quad(WORDS * t + q), m) };
    };
    if clean && start.inf == 0 && start.nan == 0 {
        // Nothing non-finite in these windows: the mean is the sum's.
        let mut run = start.sum;
        // SAFETY: as above.
        unsafe {
            for_each_word::<S>(new, old, t, |q, xn, xo| {
                let mut m = [0.0f32; 4];
                unroll!(4, |i| {
                    run += e(xn[i], xo[i]);
                    m[i] = (run * inv_window) as f32;
                });
                put(q, m);
            });
        }
    } else if clean {
        // The counts, non-zero, stay as they are through these positions, and decide.
        let m = start.mean(inv_window);
        unroll!(I / 4, |q| put(q as u32, [m; 4]));
    } else {
        let mut run = start;
        // SAFETY: as above.
        unsafe {
            for_each_word::<S>(new, old, t, |q, xn, xo| {
                let mut m = [0.0f32; 4];
                unroll!(4, |i| {
                    run = run + (Tally::of(xn[i]) - Tally::of(xo[i]));
                    m[i] = run.mean(inv_window);
                });
                put(q, m);
            });
        }
    }
    sync_threads();
    // SAFETY: the tile's means are staged; `out` holds n - window + 1 floats, 16-byte aligned.
    unsafe { store_means::<S>(new, n, window, s, out) };
}

/// A point LLVM may not move shared-memory reads across, nor reuse a value read before it
/// after it (an empty `asm!` that may read and write memory); no instruction is emitted.
#[inline(always)]
fn reload_fence() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: an empty instruction sequence.
    unsafe {
        core::arch::asm!("", options(nostack, preserves_flags));
    }
}

/// `e[p] = a[p] - a[p - window]` from the two, exact in f64.
#[inline(always)]
fn e(new: f32, old: f32) -> f64 {
    new as f64 - old as f64
}

/// Stores the tile's means, staged in `means` by position (`means[p - s]` ends at `p`), to
/// `out[p - (window - 1)]` for the positions `p` of the tile with `window - 1 <= p < n`:
/// the aligned 16-byte words of `out` the tile fills alone, one per thread in turn
/// (coalesced), and the at most three outputs at each end that share a word with the next
/// or previous tile, one per thread.
///
/// # Safety
/// As [`sliding_scan_shifted`]; the means are staged and a barrier has passed.
#[inline(always)]
unsafe fn store_means<const S: usize>(
    means: SharedSlice<f32>, n: u32, window: u32, s: u32, out: *mut f32,
) {
    let t = thread_idx_x();
    // Outputs [lo, hi), from positions [p_lo, p_hi); output o's mean is staged at
    // o + window - 1 - s, which is 3 - S past a multiple of 4 where o is one.
    let (p_lo, p_hi) = (s.max(window - 1), (s + TILE).min(n));
    if p_hi <= p_lo {
        return;
    }
    let (lo, hi) = (p_lo - (window - 1), p_hi - (window - 1));
    const { assert!(S < 4) };
    let c = 3 - S as u32;
    let at = |o: u32| o + (window - 1) - s;
    let (first, last) = (lo.next_multiple_of(4), hi - hi % 4);
    if first < last {
        // Thread t takes the words whose staged means start at word ≡ t (mod 8) past a
        // multiple of 8, so that the eight threads of one phase of a 16-byte shared load
        // read eight words between two gaps (see `slot`): no bank conflict.
        let rotate = (at(first) / 4) % 8;
        let mut g = first + 4 * ((t + BLOCK - rotate) % BLOCK);
        while g < last {
            let i = at(g);
            let q = i / 4;
            // SAFETY: words q and q + 1 (when C > 0) hold staged means of this tile.
            let v = unsafe {
                let w0 = means.get4_unchecked(4 * slot_quad(q));
                let w1 = if c > 0 {
                    means.get4_unchecked(4 * slot_quad(q + 1))
                } else {
                    w0
                };
                let w = [w0[0], w0[1], w0[2], w0[3], w1[0], w1[1], w1[2], w1[3]];
                F32x4([
                    w[c as usize],
                    w[c as usize + 1],
                    w[c as usize + 2],
                    w[c as usize + 3],
                ])
            };
            // SAFETY: g .. g + 4 are outputs of this tile alone, `g` a multiple of 4 and `out`
            // 16-byte aligned.
            unsafe { *(out.add(g as usize) as *mut F32x4) = v };
            g += 4 * BLOCK;
        }
    }
    // The ends: [lo, min(first, hi)) and [max(last, first), hi) once first <= last.
    let o = if t < 3 {
        lo + t
    } else if t < 6 {
        last.max(first) + (t - 3)
    } else {
        return;
    };
    let end = if t < 3 { first.min(hi) } else { hi };
    if o < end && (t < 3 || first <= last) {
        // SAFETY: o is an output of this tile; its mean is staged.
        unsafe { *out.add(o as usize) = means.get(slot(at(o))) };
    }
}

// Exported only with the `entries` feature; the simulator twins always exist.
#[cfg(any(feature = "entries", not(target_arch = "nvptx64")))]
nvptx_device::entry_points! {
    sliding_scan(a: *const f32, n: u32, window: u32, out: *mut f32, state: *mut u64) => sliding_scan,
        launch_bounds(BLOCK, MIN_BLOCKS);
}
