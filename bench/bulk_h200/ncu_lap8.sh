#!/bin/bash
# GPU call (not committed): ncu of the 512^3 bests, wave against dwave (and dwave at wave's nt=1)
set -u
F=$PWD/.gpu/tq/fdtune
export FDTUNE_RECIPES=$PWD/recipes HOME=/tmp/h FDTUNE_SYSTEM_DB= FDTUNE_CACHE=/tmp/cache
mkdir -p /tmp/h
W=align=32,bx=64,by=8,l2pf=256,lb=512,lds=2,nt=1,nw=256,pf=3,tile=2,vec=2
D=align=32,bx=64,by=8,l2pf=256,lb=512,lds=2,nw=256,pf=3,tile=2,vec=2
M=smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_imc_miss_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_misc_per_issue_active.ratio,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum
prof() {  # name, op args...
  echo "== $1"
  shift
  ncu --clock-control none --target-processes all --kernel-name "regex:fdt_lap_r" --launch-skip 2 --launch-count 1 \
      --metrics $M "$F" bench "$@" --probe 2>&1 | grep -vE "^==PROF==|^ *$" | grep -E "^ +[a-z]|Section|fdt_" | head -60
}
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__t_sectors_op_read.sum
{
prof "lap R=8 f32 512^3 bulk=1 best" --op lap --R 8 --grid 512^3 --config align=32,bulk=1,bx=32,by=16,lb=512,lds=3,mbar=1,nw=512,pf=5,tile=2,vec=2
prof "lap R=8 f32 512^3 bulk=0 best (before)" --op lap --R 8 --grid 512^3 --config align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,mbar=1,nw=512,pf=4,tile=2,vec=2
} > $OUT/ncu31.txt 2>&1
