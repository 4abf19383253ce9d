-- common.lua: the rules the recipes of every operator share (d2x, d2y, d2z, lap and wave).
-- A recipe takes them with `local common = include "common"` and calls the groups it needs
-- where it wants them in its own order: rules run in the order they are registered, and the
-- first one a config fails is the one the dry run counts. Each group registers its rules
-- (constrain, derive) under the names the pruning report uses, so a name and its rule live
-- here once; including the module registers nothing by itself.
local common = {}

-- Whole waves per block row, enough threads per block, padding that lines up with the
-- waves, and a block row that fits the grid. half_rows (optional), a function (c, dev, prob),
-- names the configs whose rows may be half a wave wide (a wave over two rows).
function common.block_rules(half_rows)
  constrain("bx is a multiple of the wave size", function(c, dev, prob)
    return c.bx % dev.warp_size == 0
           or (half_rows ~= nil and 2 * c.bx == dev.warp_size and half_rows(c, dev, prob))
  end)
  constrain("block has 64 to max threads", function(c, dev)
    local t = c.bx * c.by * c.bz
    return t >= 64 and t <= dev.max_threads_per_block
  end)
  -- Padding to the wave size in elements gives whole cache lines per wave on both vendors
  -- (32 x 4 B = one 128 B line on NVIDIA, 64 elements as the seeds pad on AMD).
  constrain("align is 1 or the wave size", function(c, dev)
    return c.align == 1 or c.align == dev.warp_size
  end)
  constrain("block row not wider than the grid", function(c, dev, prob)
    return c.bx * c.vec <= math.max(prob.nx, dev.warp_size)
  end)
end

-- The time steps, wave and dwave (the damped wave step): they read p_prev and c2 at the point.
function common.is_step(prob)
  return prob.op == "wave" or prob.op == "dwave"
end

-- Bytes of the xy planes (with their halos) a z stencil keeps in flight: the 2R+1 planes of
-- the input, and for a time step the p_prev and c2 planes it also reads at the point.
function common.planes_in_flight(prob)
  local plane = (prob.nx + 2 * prob.R) * (prob.ny + 2 * prob.R) * prob.esize
  local planes = (2 * prob.R + 1) * plane
  if common.is_step(prob) then planes = planes + 2 * plane end
  return planes
end

-- dwave's absorbing layer as tuned parameters (DWAVE.md): deploy (complete: one damped
-- kernel over the grid; inout: the interior kernel plus a damped one over the border shell;
-- sides: the interior kernel plus one damped kernel per face) and eta (dist: the damping
-- computed from the distance to the faces; array: read from the profile array). The other
-- operators have no layer and take the defaults, so their spaces keep their survivors.
-- absorb_params declares them after a recipe's own parameters (the walk's innermost, so the
-- order of the others, and of the search, stays); absorb_rules, after the recipe's own rules,
-- gives them to dwave alone: a config another rule refuses is skipped with its deployments
-- (the walk skips what the failing rule did not read).
function common.absorb_params()
  param("deploy", { "complete", "inout", "sides" })
  param("eta", { "dist", "array" })
end
function common.absorb_rules()
  constrain("deploy and eta only for dwave", function(c, dev, prob)
    return prob.op == "dwave" or (c.deploy == "complete" and c.eta == "dist")
  end)
  -- Where the damping comes from matters where the damped kernel covers the grid (complete:
  -- every point computes or loads it); inout and sides run it on the layer alone, a fraction
  -- 1 - (1 - 2W/n)^3 of the points (19% at W=16 on 512^3), and compute it from the distance.
  constrain("eta=array only with the complete deployment", function(c)
    return c.eta == "dist" or c.deploy == "complete"
  end)
end

-- y subdomains (split) for the operators that walk z.
function common.split_rules()
  -- Splitting only pays when the planes in flight outgrow half the last-level cache (the
  -- part a partitioned L2, as on NVIDIA, serves near; an H100 ran the lap ring at 1024^3,
  -- 38 MiB of planes vs 50 MiB, 2% faster split in two); each doubling of split must still
  -- be needed.
  constrain("split only when the planes outgrow half the last-level cache", function(c, dev, prob)
    if c.split == 1 then return true end
    local planes = common.planes_in_flight(prob)
    return planes / (c.split // 2) > dev.llc_bytes / 2,
           string.format("%.1f MiB of planes vs %.0f MiB of cache", planes / MiB, dev.llc_bytes / MiB)
  end)
  -- Splitting (kernel 7) and the yzx grid order (kernel 6) are two fixes for the same cache
  -- problem; the seeds split with the natural order.
  constrain("split with the xyz order", function(c)
    return c.split == 1 or c.order == "xyz"
  end)
end

-- Two blocks per compute unit (one for blocks of 512 threads or more, which run one per
-- unit as soon as they take over 64 registers: an H200 ran lap R=4 f32 at 512^3 best as a
-- 512-thread stream of 256 blocks on 132 units, 0.846 of copy, which the rule of two pruned;
-- and one for the configs one_per_unit (optional, a function (c, dev, prob)) names, whose
-- registers leave room for one block per unit whatever its size), or on grids too small for
-- that, at most 4096 points a block. Where one block a unit is the rule, a block for 7 units
-- in 8 is enough: lap R=7 f32 at 512^3 ran best in 128 blocks on an H100's 132 SMs (a
-- stream whose 512-plane columns march 2R planes of z halo once instead of four times,
-- bench/notes/explore45.txt), and on an H200 the 512-thread rings of wave R=4 f32 in 128
-- blocks ran 1.000 of copy at 512^3 (nw=512; 0.975 in 256 blocks) and 0.877 at 256^3 (the
-- tuned best of the rule before 0.854), dwave's 0.836 (0.770; bench/hybrid_h200/run6).
function common.fill_device(one_per_unit)
  constrain("enough blocks to fill the device", function(c, dev, prob)
    local n = blocks(c)
    local want = 2 * dev.compute_units
    if (one_per_unit ~= nil and one_per_unit(c, dev, prob)) or c.bx * c.by * c.bz >= 512 then
      want = (7 * dev.compute_units + 7) // 8
    end
    return n >= math.min(want, prob.nx * prob.ny * prob.nz // 4096), n .. " blocks"
  end)
end

-- Launch bounds equal to the block size (FD Laplacian part 3).
function common.launch_bounds()
  derive("lb", function(c) return c.bx * c.by * c.bz end)
end

return common
