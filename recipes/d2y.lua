-- d2y: second derivative along y (one pass of the multi-pass scheme). Neighbours are whole
-- rows away, so tiling along y (outputs per thread) reuses loaded rows in registers, and a
-- shared-memory tile (lds) shares them across the block; the seeds' baseline is 64x4.
ops { "d2y" }

local common = include "common"

param("bx", { 32, 64, 128, 256 })
param("by", { 1, 2, 4, 8, 16 })
param("tile", { 1, 2, 4, 8 })
param("vec", { 1, 2, 4 })
param("align", { 1, 32, 64 })
param("nt", { 0, 1 })
param("lds", { 0, 1 })

-- Whole waves, 64 threads or more, padding to the wave size, rows that fit (lib/common.lua).
common.block_rules()
-- Rows j-R .. j+tile-1+R of vec columns; with lds they live in shared memory instead.
constrain("values per thread fit in registers", function(c, dev, prob)
  local values = (c.lds == 1 and c.tile or c.tile + 2 * prob.R) * c.vec * prob.esize // 4
  return values <= 64, values .. " 32-bit values"
end)

-- The shared tile is filled plane by plane while the block walks z, so it needs a window
-- of planes per thread; without lds, one plane per thread keeps the most blocks in flight.
derive("nw", function(c, dev, prob)
  if c.lds == 1 then return math.min(16, prob.nz) end
  return 0
end)
common.launch_bounds()

constrain("shared tile fits the static limit", function(c, dev)
  local bytes = shared_bytes(c)
  return bytes <= dev.shared_per_block, bytes .. " bytes"
end)
common.fill_device()

strategy "exhaustive"
budget(1000)
default { bx = 64, by = 4 }
