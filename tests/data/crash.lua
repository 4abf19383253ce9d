-- Test only: a d2x space in which half the configs write far outside their arrays
-- (fault "oob": an illegal address that kills the GPU context). A tuning run over it must
-- record those as crashed, restart its GPU worker and finish with the sound configs.
ops { "d2x" }
name "crash-test"
param("bx", { 64, 128 })
param("fault", { "none", "oob" })
derive("lb", function(c) return c.bx * c.by * c.bz end)
strategy "exhaustive"
default { bx = 64, by = 1 }
