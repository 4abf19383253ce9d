-- d2z: second derivative along z (one pass of the multi-pass scheme). Neighbours are whole
-- planes away: without a window every output re-reads 2R planes through the cache, which is
-- why the seeds' 64x8 baseline falls off at large xy planes; a register sliding window of nw
-- planes per thread reads each plane once (Seismic stencil codes, part 2). Grid-index order
-- and y subdomains (split) keep the planes in flight inside the last-level cache
-- (FD Laplacian part 4).
ops { "d2z" }

local common = include "common"

param("bx", { 32, 64, 128, 256 })
param("by", { 1, 2, 4, 8 })
param("tile", { 1, 2, 4 })
param("nw", { 0, 8, 16, 32, 64 })
param("vec", { 1, 2, 4 })
param("align", { 1, 32, 64 })
param("nt", { 0, 1 })
param("order", { "xyz", "yzx" })
param("split", { 1, 2, 4, 8, 16 })

-- Whole waves, 64 threads or more, padding to the wave size, rows that fit (lib/common.lua).
common.block_rules()
-- 2R+1 planes of tile x vec values, with or without a window.
constrain("values per thread fit in registers", function(c, dev, prob)
  local values = (2 * prob.R + 1) * c.tile * c.vec * prob.esize // 4
  return values <= 64, values .. " 32-bit values"
end)
-- Split only when the planes in flight outgrow half the last-level cache, and with the xyz
-- order (lib/common.lua).
common.split_rules()
common.fill_device()
common.launch_bounds()

strategy "model"
budget(400)
default { bx = 64, by = 8 }
