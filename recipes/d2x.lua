-- d2x: second derivative along x (one pass of the multi-pass scheme). Every neighbour is in
-- the thread's own row, so the space is about block shape, vector width and alignment; the
-- seeds' baseline is a 256x1 block (Seismic stencil codes, part 1).
ops { "d2x" }

param("bx", { 32, 64, 128, 256, 512 })
param("by", { 1, 2, 4, 8 })
param("tile", { 1, 2, 4, 8 })
param("vec", { 1, 2, 4 })            -- vec 2/4 need align % vec == 0, vec 4 is f32 only: the generator prunes the rest
param("align", { 1, 32, 64 })
param("nt", { 0, 1 })

constrain("bx is a multiple of the wave size", function(c, dev)
  return c.bx % dev.warp_size == 0
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
-- x halo per side in whole vectors, plus the outputs, for each of the tile rows.
constrain("values per thread fit in registers", function(c, dev, prob)
  local hx = (prob.R + c.vec - 1) // c.vec * c.vec
  local values = c.tile * (2 * hx + c.vec) * prob.esize // 4
  return values <= 64, values .. " 32-bit values"
end)
-- Two blocks per compute unit, or on grids too small for that, at most 4096 points a block.
constrain("enough blocks to fill the device", function(c, dev, prob)
  local n = blocks(c)
  return n >= math.min(2 * dev.compute_units, prob.nx * prob.ny * prob.nz // 4096), n .. " blocks"
end)

-- Launch bounds equal to the block size (FD Laplacian part 3).
derive("lb", function(c) return c.bx * c.by * c.bz end)

strategy "exhaustive"
budget(1000)
default { bx = 256, by = 1 }
