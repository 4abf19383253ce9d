-- dwave: the damped wave step, wave's leapfrog step with an absorbing layer of W points on
-- every face (p_next = (2p - (1 - g) p_prev + c2 L(p)) / (1 + g), g the damping, 0 inside).
-- Its space is wave's (lib/lapwave.lua, the same kernels and rules) with two parameters of
-- the layer (lib/common.lua's absorb_params): the deployment (complete: one damped kernel
-- over the grid; inout: the interior kernel, then one damped kernel over the border shell;
-- sides: the interior kernel, then one damped kernel per face, 7 launches) and where the
-- damping comes from (dist: computed from the distance to the faces; array: read from the
-- profile array). The search measures the deployments like any other parameter.
-- Bounded, so that the walk stays within its limit of points and the survivors near wave's:
-- the xyz order alone (the rings and the stream need it; yzx serves the direct and window
-- families on large planes, which split serves too), splits up to 4, and no bulk copies
-- (bulk=1 would double the space past the walk's limit).
ops { "dwave" }

local common = include "common"
local lapwave = include "lapwave"
lapwave.params({ order = { "xyz" }, split = { 1, 2, 4 }, bulk = { 0 } })
common.absorb_params()
lapwave.rules()
common.absorb_rules()
-- sides' z faces are slabs of W planes: a register window walks one slab at most (the
-- generator refuses a longer one on the grid; here it goes before it is ranked).
constrain("sides: windows within the layer's W planes", function(c, dev, prob)
  return c.deploy ~= "sides" or c.nw <= prob.absorb_w, c.nw .. " planes, W=" .. prob.absorb_w
end)

strategy "model"
budget(400)
default { bx = 64, by = 4, lds = 1, nw = 32 }
