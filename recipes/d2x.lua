-- d2x: second derivative along x (one pass of the multi-pass scheme). Every neighbour is in
-- the thread's own row, so the space is about block shape, vector width and alignment; the
-- seeds' baseline is a 256x1 block (Seismic stencil codes, part 1).
ops { "d2x" }

local common = include "common"

param("bx", { 32, 64, 128, 256, 512 })
param("by", { 1, 2, 4, 8 })
param("tile", { 1, 2, 4, 8 })
param("vec", { 1, 2, 4 })            -- vec 2/4 need align % vec == 0, vec 4 is f32 only: the generator prunes the rest
param("align", { 1, 32, 64 })
param("nt", { 0, 1 })

-- Whole waves, 64 threads or more, padding to the wave size, rows that fit (lib/common.lua).
common.block_rules()
-- x halo per side in whole vectors, plus the outputs, for each of the tile rows.
constrain("values per thread fit in registers", function(c, dev, prob)
  local hx = (prob.R + c.vec - 1) // c.vec * c.vec
  local values = c.tile * (2 * hx + c.vec) * prob.esize // 4
  return values <= 64, values .. " 32-bit values"
end)
common.fill_device()
common.launch_bounds()

strategy "exhaustive"
budget(1000)
default { bx = 256, by = 1 }
