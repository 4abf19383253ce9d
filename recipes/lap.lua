-- lap and wave: the one-pass 3-D Laplacian and one leapfrog step of the acoustic wave
-- equation (the same stencil; wave also reads p_prev and c2 at the point). x/y neighbours
-- come from registers or from a shared-memory tile (lds=1), z neighbours from a register
-- sliding window of nw planes; the seeds' one-pass kernel is LDS + window on a 64x4 block.
-- lds=2 is a ring of shared tiles filled by asynchronous copies pf planes ahead (cp.async on
-- NVIDIA): large tiles cut the L2 traffic of the halos, and the planes in flight cost no
-- registers. lds=3 (the stream) fills the same ring but reads each plane once, into a queue of
-- 2R+1 sums per column in registers: no window of planes and no neighbour arrays, so register
-- blocking (tile x vec) fits at every radius, R=8 in f64 included.
-- Grid-index order and y subdomains (split) address the last-level-cache limit of large xy
-- planes (FD Laplacian part 4).
ops { "lap", "wave" }

-- The space and its rules are lib/lapwave.lua's, shared with dwave.lua.
local lapwave = include "lapwave"
lapwave.params({})
lapwave.rules()

strategy "model"
budget(400)
default { bx = 64, by = 4, lds = 1, nw = 32 }
