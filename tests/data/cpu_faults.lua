-- Test only: a lap space on the host CPU in which most configs are deliberately broken: one
-- writes far outside its arrays (fault "oob": the worker process dies), one never returns
-- ("hang": the per-candidate timeout kills it) and one has a wrong weight ("coef": wrong).
-- A tuning run over it must record them crashed, timeout and wrong, restart its worker and
-- finish with the sound config (tests/test_cpu_tune.sh).
ops { "lap" }
name "cpu-faults-test"
param("blk", { 0 })
param("fault", { "none", "oob", "hang", "coef" })
strategy "exhaustive"
default { blk = 0 }
