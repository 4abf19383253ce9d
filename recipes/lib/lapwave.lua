-- lapwave.lua: the space of the one-pass 3-D Laplacian and of the time steps that share its
-- stencil (wave, dwave), for lap.lua and dwave.lua: the parameters (lists a recipe may
-- shorten: dwave's space must stay within the walk's limit once its deployments multiply it)
-- and the rules. What the families are and why the rules hold: lap.lua's header and the
-- comments below.
local common = include "common"
local M = {}

-- The parameters; lists (a table, may be empty) replaces the values of those it names.
function M.params(lists)
  param("bx", lists.bx or { 16, 32, 64, 128, 256 })
  param("by", lists.by or { 1, 2, 4, 8, 16 })
  param("tile", lists.tile or { 1, 2, 4 })
  param("nw", lists.nw or { 0, 16, 32, 64, 128, 256, 512 })
  param("vec", lists.vec or { 1, 2, 4 })
  param("lds", lists.lds or { 0, 1, 2, 3 })
  param("pf", lists.pf or { 1, 2, 3, 4, 5, 6 })
  param("align", lists.align or { 1, 32, 64 })
  param("nt", lists.nt or { 0, 1 })
  param("order", lists.order or { "xyz", "yzx" })
  param("split", lists.split or { 1, 2, 4, 8, 16 })
  param("mbar", lists.mbar or { 0, 1 })
  param("bulk", lists.bulk or { 0, 1 })
  param("guard", lists.guard or { "rows", "none" })
end

-- The rules, in the order the pruning report counts them.
function M.rules()
  -- Whole waves, 64 threads or more, padding to the wave size, rows that fit (lib/common.lua).
  -- Rows of half a warp only in the stream's square tiles (bx=16, by=16) on NVIDIA: at R=7 and
  -- R=8 in f64 its 2x2 ran 1% faster as a 32x32 tile than as bx=32 by=8's 64x16 (the fill 2.25x
  -- the tile at R=8 instead of 2.5x; H100, bench/notes/ab40.txt's A side), at R=5 and 6 2% slower
  -- (explore39.txt); tuned, lap R=8 f32 2x2 0.657 -> 0.709, R=7 f32 2x4 0.803 -> 0.815, f64 R=7
  -- 0.775 -> 0.787, wave R=8 f32 1x4 0.857 -> 0.867 (explore40.txt, bench/matrix/README.md); not
  -- measured on AMD, whose waves of 64 would span four rows.
  common.block_rules(function(c, dev, prob)
    return c.lds == 3 and c.by == 16 and dev.vendor == "NVIDIA"
  end)
  -- The z planes (window or not), plus the rows and x halos when lds does not hold them. The
  -- stream's 2R+1 sums per column are all it keeps: an H100 compiled up to 144 32-bit values
  -- of them without spilling (R=8 f64 tile=2 vec=2: 242 registers, its best config there) and
  -- the other families spill from 128 on.
  -- The z planes or sums a thread keeps, (2R+1) x tile x vec values of the precision.
  local function column_values(c, prob)
    return (2 * prob.R + 1) * c.tile * c.vec
  end
  constrain("values per thread fit in registers", function(c, dev, prob)
    local R = prob.R
    local values = column_values(c, prob)
    if c.lds == 0 then
      local hx = (R + c.vec - 1) // c.vec * c.vec
      values = values + (c.tile + 2 * R) * c.vec + 2 * c.tile * hx
    end
    values = values * prob.esize // 4
    if c.lds == 3 then return values <= 144, values .. " 32-bit values" end
    return values < 128, values .. " 32-bit values"
  end)
  constrain("lds fills its tile while walking a window", function(c)
    return c.lds == 0 or c.nw >= 1
  end)
  -- Deeper prefetch is the rings' business (lds=2, 3): the register window stays one plane ahead.
  constrain("prefetch depth with the ring", function(c)
    return c.pf == 1 or c.lds >= 2
  end)
  -- What the ring needs to pay off (measured on an H100, R=4): two planes or more in flight
  -- (one leaves the barrier waiting on the copy), vectors and two rows or more per thread
  -- (each load from shared memory serves more outputs, each copy moves 8 or 16 bytes),
  -- windows of 32 planes or more (the 2R planes of z halo a block loads are amortised), and
  -- the xyz order (yzx walks other blocks' planes).
  constrain("the ring keeps planes in flight, vectors, rows and long windows", function(c)
    return c.lds ~= 2 or (c.pf >= 2 and c.vec >= 2 and c.tile >= 2 and c.nw >= 32
                          and c.order == "xyz")
  end)
  -- AMD has no asynchronous copy the ring can use: its copies stage a whole plane's chunks in
  -- registers (FDT_STAGED_COPY, templates/ring_fill.hip) next to the window. gfx90a (ROCm 5.2
  -- hiprtc, 256-thread blocks, bench/amd_ring.txt) compiled lap windows of up to 48 32-bit
  -- values (R=1 4x4, R=1 f64 4x2, R=2 2x4, R=4 2x2) with no scratch and every chunk of a plane
  -- in flight, and spilled to scratch from 52 on (R=6 2x2, R=3 2x4, R=4 2x4: 104-672 bytes,
  -- one load in flight); wave, which also stages p_prev and c2 per output, from 36 on (R=4 2x2;
  -- R=2 2x2 and R=1 f64 2x2, 24, fit). Those rings stay out of AMD spaces. Measured without
  -- launch bounds (128 VGPRs): with lb = threads, as derived below, lap R=6 2x2 and wave R=4
  -- 2x2 compiled clean too, so the limits are conservative there.
  constrain("AMD rings stage their copies in registers next to the window", function(c, dev, prob)
    if c.lds ~= 2 or dev.vendor ~= "AMD" then return true end
    local values = (2 * prob.R + 1) * c.tile * c.vec * prob.esize // 4
    local limit = common.is_step(prob) and 24 or 48
    return values <= limit, values .. " 32-bit values of window"
  end)
  -- What the stream needs to pay off (measured on an H100, R=4..8, bench/notes/explore23-25.txt):
  -- vectors and 4 to 8 outputs per thread (each shared load serves tile x vec outputs; 1x4
  -- served wave R=8 best, 2x2 lap R=8, 4x2 lap R=4; more spill), two to four planes in flight
  -- (2..5 ran within 1%), at least 8 rows per block and R (the y halo at most triples the rows
  -- the tile copies; wave R=8 ran best with 8 rows of 1x4, lap R=8 with 32 rows of 2x2, lap
  -- R=4 with 16), windows of
  -- 128 planes or more (its 2R planes of z halo cost a full step each), and the xyz order.
  constrain("the stream blocks registers, keeps planes in flight and long windows", function(c, dev, prob)
    return c.lds ~= 3 or (c.pf >= 2 and c.pf <= 4 + c.mbar and c.vec >= 2 and c.tile * c.vec >= 4
                          and c.tile * c.vec <= 8 and c.by * c.tile >= math.max(8, prob.R)
                          and c.nw >= 128 and c.order == "xyz")
  end)
  -- The stream's slot barriers (mbar=1: a pair of mbarriers per ring slot instead of a block
  -- barrier per step; warps drift up to a step apart, and a plane is copied PF - 1 steps ahead,
  -- hence pf up to 5 above) need NVIDIA's cp.async (sm_80 on); elsewhere mbar=1 compiles to the
  -- kernel of mbar=0. On an H200 (bench/notes/ab42.txt, the H100's tuned configs) they ran lap f64
  -- R=5..8 11-14% faster, wave R=8 f32 9%, lap R=8 f32 8% (at 126 registers), lap R=5..7 f32
  -- within -1%..+1% and wave R=8 f64 in 4-warp blocks 57% slower: from R=5 on the search
  -- measures both. At R <= 4 they ran 3-5% slower (lap f32 R=4), 1% (R=3) or within 0.5%
  -- (lap f64 R=4, wave f32 R=3).
  constrain("slot barriers only in the stream from R=5 on, with cp.async", function(c, dev, prob)
    if c.mbar == 0 then return true end
    local sm = dev.vendor == "NVIDIA" and tonumber((dev.arch or ""):match("^sm_(%d+)")) or 0
    return c.lds == 3 and sm >= 80 and (prob.R >= 5 or c.bulk == 1)
  end)
  -- The stream's bulk form (bulk=1, templates/ring_bulk.hip): thread 0 copies each plane's
  -- tile by one tensor copy (cp.async.bulk.tensor), completing on the slot barriers, so no
  -- thread spends issue slots on copies (issue 31: lap R=4 on an H200 and R=8 everywhere are bound by issued
  -- instructions, most of which move data). It needs the slot barriers (mbar=1, at every
  -- radius here: the bulk copies are what the barriers pay for below R=5) and NVIDIA's
  -- sm_90; the generator refuses the rows that cannot start on 16 bytes and the tiles wider or
  -- taller than a tensor copy's 256 values. AMD has an LDS-direct
  -- load instead, which no AMD GPU has measured: pruned there.
  constrain("bulk copies in the stream with slot barriers, NVIDIA sm_90 on", function(c, dev)
    if c.bulk == 0 then return true end
    local sm = dev.vendor == "NVIDIA" and tonumber((dev.arch or ""):match("^sm_(%d+)")) or 0
    return c.mbar == 1 and sm >= 90
  end)
  -- The stream's stores without the row's guard (guard=none): where whole blocks cover the
  -- grid (the generator checks it: rows of bx*vec values, y subdomains of by*tile rows, which
  -- split's chunks are but the last), every store a full vector. The guard changes where the
  -- compiler puts the stores among the next plane's loads, not how many instructions issue,
  -- and which placement the memory prefers differs by cell: on an H200, lap R=4 f32 512^3's
  -- stream 4x2 ran at 0.916 of copy without it against 0.869, the same stream with split=2
  -- at 1024^3 at 0.830 against 0.862 (bench/notes/store_guard.txt), so the search measures
  -- both.
  constrain("unguarded stores only in the stream, on whole blocks", function(c, dev, prob)
    return c.guard == "rows" or (c.lds == 3 and prob.nx % (c.bx * c.vec) == 0
                                 and prob.ny % (c.by * c.tile) == 0)
  end)
  -- Register windows lose to shorter ones beyond 64 planes (fewer blocks, one plane in flight);
  -- the ring gains from 256 and 512 planes on 1024^3 (H100: the 2R planes of z halo a window
  -- re-reads from DRAM are 6% of the input at 128).
  -- The stream unrolls its march by the 2R+1 slots of its sums, each step about 6R FMAs per
  -- output: on an H100 lap R=8 f32 ran 2x2 at 0.65 of copy and 2x4 (twice the code, no spills,
  -- no memory or barrier stalls; 1088 weighted outputs) at 0.18, while R=6 2x4 (624) ran at
  -- 0.83 and R=7 2x4 (840) at 0.804 against 0.730 for its 2x2 (bench/notes/explore36.txt): the
  -- unrolled march must stay within what the instruction cache holds, (2R+1) R tile vec <= 900.
  -- AMD keeps the older limit of 640, measured nowhere on AMD: CDNA's instruction cache is
  -- 64 KB for two CUs, and gfx90a (ROCm 5.2 hiprtc) makes code objects of 44 KB of R=6 2x4
  -- (624), 63 KB of R=7 2x4 (840) and 78 KB of R=8 2x4 (1088).
  constrain("the stream's unrolled march fits the instruction cache", function(c, dev, prob)
    local size = (2 * prob.R + 1) * prob.R * c.tile * c.vec
    local limit = dev.vendor == "AMD" and 640 or 900
    return c.lds ~= 3 or size <= limit, size .. " weighted outputs"
  end)
  -- 16 rows of threads only in the stream at high radii: its 32-row tiles of 2x2 (bx=32, by=16)
  -- halve the share of the 2R rows of y halo, which pays where R is large: lap R=8 f32 ran at
  -- 0.657 of copy on an H100 against 0.636 for by=8, wave R=8 f32 at 0.709 on an H200 against
  -- 0.686 (bench/notes/explore29.txt, explore30.txt). The other families gain nothing from blocks
  -- that tall, nor the stream from 1024 threads (64 registers each).
  constrain("by=16 only in the stream, with bx=32 or 16, from R=6 on", function(c, dev, prob)
    return c.by <= 8 or (c.lds == 3 and c.bx <= 32 and prob.R >= 6)
  end)
  constrain("windows of 128 planes or more only in the ring", function(c)
    return c.nw < 128 or c.lds >= 2
  end)
  -- The rings live in dynamic shared memory, which may use the opt-in limit.
  constrain("shared tiles fit the limit per block", function(c, dev)
    local bytes = shared_bytes(c)
    local limit = c.lds >= 2 and dev.shared_per_block_optin or dev.shared_per_block
    return bytes <= limit, bytes .. " bytes"
  end)
  -- Split only when the planes in flight outgrow half the last-level cache, and with the xyz
  -- order (lib/common.lua).
  common.split_rules()
  -- A stream block whose queue of sums leaves no room for a second block of its size in the
  -- 65536 registers of an NVIDIA SM (the queue's 32-bit values and some 56 more per thread:
  -- lap R=8 f32 2x2, 68 values, compiled to 126 registers; R=5 f64 2x2, 88, to 206; R=7 f32
  -- 2x4, 120, to 201; bench/notes/explore44-45) runs one block per SM, so it fills the device with
  -- one per SM: lap R=7 f32 2x4 at nw=512 (128 blocks of 256 threads at 512^3) ran 0.854 of
  -- copy on an H100, against 0.840 at nw=256 and the tuned 0.817 at nw=128 (explore45).
  -- From R=5 on only, where the 2R planes of z halo that shorter columns march again cost
  -- more than a unit in 8 left idle (measured at R=7; R <= 4 keeps the rule of old).
  common.fill_device(function(c, dev, prob)
    local threads = c.bx * c.by * c.bz
    return c.lds == 3 and dev.vendor == "NVIDIA" and prob.R >= 5
           and (column_values(c, prob) * prob.esize // 4 + 56) * threads > 65536 // 2
  end)
  common.launch_bounds()
  -- The ring's copies of 4 or 8 bytes carry an L2 prefetch hint of 256 bytes: an H100 ran lap
  -- and wave rings 0.5-1.5% faster with it (1024^3 lap 0.880 -> 0.889 of copy), while d2z's
  -- 16-byte copies ran 2.4% slower, so those go without (no effect on AMD).
  -- Bulk copies (bulk=1) take no hint: l2pf 0 there.
  derive("l2pf", function(c, dev, prob)
    return (c.lds >= 2 and c.bulk == 0 and c.vec * prob.esize < 16) and 256 or 0
  end)
end

return M
