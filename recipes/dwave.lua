-- dwave: the damped wave step, wave's leapfrog step with an absorbing layer of W points on
-- every face (p_next = (2p - (1 - g) p_prev + c2 L(p)) / (1 + g), g the damping, 0 inside).
-- Its space is wave's (lib/lapwave.lua, the same kernels and rules) with two parameters of
-- the layer (lib/common.lua's absorb_params): the deployment (complete: one damped kernel
-- over the grid; inout: the interior kernel, then one damped kernel over the border shell;
-- sides: the interior kernel, then one damped kernel per face, 7 launches) and where the
-- damping comes from (dist: computed from the distance to the faces; array: read from the
-- profile array); a third, how the damped kernel's rows apply it (layer), is derived from
-- the vendor (below). The search measures the deployments like any other parameter.
-- Bounded, so that the walk's points and the survivors stay near wave's: the xyz order alone
-- (the rings and the stream need it; yzx serves the direct and window families on large
-- planes, which split serves too), splits up to 4, no bulk copies and guarded stores (the
-- generator refuses both for dwave, whose launches are boxes given at run time).
ops { "dwave" }

local common = include "common"
local lapwave = include "lapwave"
lapwave.params({ order = { "xyz" }, split = { 1, 2, 4 }, bulk = { 0 }, guard = { "rows" } })
common.absorb_params()
lapwave.rules()
common.absorb_rules()
-- How the damped kernel's rows apply the damping (generator/source.c emit_dwave_row): branch
-- tests each output row and damps only the rows that touch the layer; select damps every row
-- and keeps the undamped value where the damping is 0, with no branch between a plane's rows.
-- On NVIDIA the rows' branch splits a plane's code into blocks that the compiler schedules
-- apart: an H200 ran select 3-7% faster than branch in every config measured (R=4 f32 W=16,
-- 256^3 and 512^3, rings of 512 threads with nw 64-512; bench/hybrid_h200/run7). AMD keeps
-- branch until an AMD GPU measures select: there the f32 division is not the fast one, and
-- select divides at every output, branch only in the layer's rows (about a third of them).
-- Derived, not listed: a list would double the space and the survivors for a choice the
-- vendor makes.
derive("layer", function(c, dev)
  return dev.vendor == "NVIDIA" and "select" or "branch"
end)
-- sides' z faces are slabs of W planes: a register window walks one slab at most (the
-- generator refuses a longer one on the grid; here it goes before it is ranked).
constrain("sides: windows within the layer's W planes", function(c, dev, prob)
  return c.deploy ~= "sides" or c.nw <= prob.absorb_w, c.nw .. " planes, W=" .. prob.absorb_w
end)

strategy "model"
budget(400)
default { bx = 64, by = 4, lds = 1, nw = 32 }
