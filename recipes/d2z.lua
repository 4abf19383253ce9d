-- d2z: second derivative along z (one pass of the multi-pass scheme). Neighbours are whole
-- planes away: without a window every output re-reads 2R planes through the cache, which is
-- why the seeds' 64x8 baseline falls off at large xy planes; a register sliding window of nw
-- planes per thread reads each plane once (Seismic stencil codes, part 2). Grid-index order
-- and y subdomains (split) keep the planes in flight inside the last-level cache
-- (FD Laplacian part 4).
ops { "d2z" }

param("bx", { 32, 64, 128, 256 })
param("by", { 1, 2, 4, 8 })
param("tile", { 1, 2, 4 })
param("nw", { 0, 8, 16, 32, 64 })
param("vec", { 1, 2, 4 })
param("align", { 1, 32, 64 })
param("nt", { 0, 1 })
param("order", { "xyz", "yzx" })
param("split", { 1, 2, 4 })

constrain("bx is a multiple of the wave size", function(c, dev)
  return c.bx % dev.warp_size == 0
end)
constrain("block has 64 to max threads", function(c, dev)
  local t = c.bx * c.by * c.bz
  return t >= 64 and t <= dev.max_threads_per_block
end)
constrain("align is 1 or the wave size", function(c, dev)
  return c.align == 1 or c.align == dev.warp_size
end)
constrain("block row not wider than the grid", function(c, dev, prob)
  return c.bx * c.vec <= math.max(prob.nx, dev.warp_size)
end)
-- 2R+1 planes of tile x vec values, with or without a window.
constrain("values per thread fit in registers", function(c, dev, prob)
  local values = (2 * prob.R + 1) * c.tile * c.vec * prob.esize // 4
  return values <= 64, values .. " 32-bit values"
end)
-- Splitting only pays when the 2R+1 xy planes a z stencil keeps in flight outgrow half the
-- last-level cache (the part a partitioned L2, as on NVIDIA, serves near; an H100 ran the lap
-- ring at 1024^3, 38 MiB of planes vs 50 MiB, 2% faster split in two); each doubling of split
-- must still be needed.
constrain("split only when the planes outgrow half the last-level cache", function(c, dev, prob)
  if c.split == 1 then return true end
  local planes = (2 * prob.R + 1) * (prob.nx + 2 * prob.R) * (prob.ny + 2 * prob.R) * prob.esize
  return planes / (c.split // 2) > dev.llc_bytes / 2,
         string.format("%.1f MiB of planes vs %.0f MiB of cache", planes / MiB, dev.llc_bytes / MiB)
end)
-- Splitting (kernel 7) and the yzx grid order (kernel 6) are two fixes for the same cache
-- problem; the seeds split with the natural order.
constrain("split with the xyz order", function(c)
  return c.split == 1 or c.order == "xyz"
end)
-- Two blocks per compute unit, or on grids too small for that, at most 4096 points a block.
constrain("enough blocks to fill the device", function(c, dev, prob)
  local n = blocks(c)
  return n >= math.min(2 * dev.compute_units, prob.nx * prob.ny * prob.nz // 4096), n .. " blocks"
end)

derive("lb", function(c) return c.bx * c.by * c.bz end)

strategy "model"
budget(400)
default { bx = 64, by = 8 }
