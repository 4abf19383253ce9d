-- cpu: the CPU's recipe (the C dialect, templates/cpu_*.c), every operator. The baseline is
-- the plain loop nest (blk=0: `parallel for` over the planes and rows, `omp simd` over x),
-- the one a user writes; the search is over the blocked family (blk=1): tiles of ty rows and
-- whole x rows (tx=0) that march along the whole z column (tz=0), so that the 2R + 1 planes
-- a z stencil reads come from cache, with software prefetch of the march's leading plane
-- (pfd), streaming stores (nt), planes computed together (uk: d2x and d2z) and two passes per
-- row (twopass: lap and wave). The space stays small (5 to 33 candidates per operator), so
-- that one operator at 256^3 tunes in under 3 minutes on 2 cores with `exhaustive`. dwave,
-- the damped wave step, adds its layer's deployment and damping (lib/common.lua's
-- absorb_params) to wave's space at two tile heights without prefetch (up to 36 candidates).
ops { "d2x", "d2y", "d2z", "lap", "wave", "dwave" }

local common = include "common"

param("blk", { 0, 1 })
param("ty", { 0, 16, 32, 64, 128 })  -- 0: the loop nest's whole extent
param("tx", { 0 })
param("tz", { 0 })
param("uk", { 1, 2, 4 })
param("twopass", { 0, 1 })           -- the generator refuses it for d2x, d2y, d2z
param("pfd", { 0, 1 })
param("nt", { 0, 1 })
common.absorb_params()

-- The loop nest takes no tiles (nor uk, twopass, pfd, nt: the generator prunes those).
constrain("tiles exactly for the blocked family", function(c, dev, prob)
  return (c.blk == 1) == (c.ty > 0)
end)
-- Planes computed together share their z neighbours' loads: d2x and d2z gain (Zen 3), the
-- others read too many streams at once.
constrain("uk only for d2x and d2z", function(c, dev, prob)
  return c.uk == 1 or prob.op == "d2x" or prob.op == "d2z"
end)
-- Without z neighbours nothing is re-read across planes: the tile height hardly matters.
constrain("d2x and d2y: one tile height", function(c, dev, prob)
  return c.blk == 0 or prob.op == "d2z" or prob.op == "lap" or common.is_step(prob)
         or c.ty == 64
end)
-- d2z: planes computed together in the short tiles only (uk planes in flight per row).
constrain("d2z: uk > 1 with ty <= 32", function(c, dev, prob)
  return prob.op ~= "d2z" or c.uk == 1 or c.ty <= 32
end)

common.absorb_rules()
-- dwave: the deployments multiply wave's space by 4, so its tiles take two heights and no
-- software prefetch (up to 36 candidates, within the budget of an exhaustive search). On the
-- H200 machine's host (16 cores, 2 MiB of L2 each) tiles of 16 rows ran the damped step 1.5x
-- faster than the best of 64 rows at 512^3 (33.7 ms against 50.8) and 2.7x at 256^3 (3.8
-- against 10.1), and the 64 rows' best varied from run to run by up to 47%; on the 2-core
-- Zen 3, 64 rows won. pfd=1 lost in every complete and inout pair of the H200 host's record,
-- and won only with sides, at over twice the best's time (bench/hybrid_h200/cpu_tiles.txt).
constrain("dwave: tiles of 16 or 64 rows, no prefetch", function(c, dev, prob)
  return prob.op ~= "dwave" or c.blk == 0 or ((c.ty == 16 or c.ty == 64) and c.pfd == 0)
end)

strategy "exhaustive"
budget(40)
default {}
