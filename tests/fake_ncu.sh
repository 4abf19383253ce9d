#!/bin/sh
# A stand-in for Nsight Compute's ncu, for tests/test_model_check.sh on a machine without a
# GPU: --query-metrics lists every base name bench/model_check.py asks for but the LDGSTS
# sectors (so that the script's dropping of unknown metrics runs); a profiling run writes a
# details-page CSV (--log-file) of the values below for kernel ID 0 (per point of a 512^3
# launch: DRAM 8 bytes, L2 12, L1 20, shared 32, FP 30, 64 instructions; DRAM at 91.5% of its
# peak, the largest share) and different ones for a second kernel, which the reader must
# ignore, and prints a bench JSON after a profiler line instead of running the application.
set -eu
if [ "$1" = --query-metrics ]; then
    echo "Device NVIDIA FAKE (GH100)"
    echo "Metric Name                                   Metric Description"
    python3 "$(dirname "$0")/../bench/model_check.py" --metrics | sed 's/\..*//' |
        grep -vx l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts | sort -u |
        sed 's/$/   a counter/'
    exit 0
fi
log=
while [ $# -gt 0 ]; do
    case $1 in
    --log-file) log=$2; shift ;;
    --metrics) metrics=$2; shift ;;
    esac
    shift
done
case $metrics in *ldgsts*) echo "fake ncu: an unknown metric was asked for" >&2; exit 1 ;; esac
n=134217728
{
    echo "==PROF== Connected to process 1234"
    echo '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
    for id in 0 1; do
        k=$((id + 1))
        python3 - "$id" "$n" "$k" <<'PY'
import sys
i, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vals = [("dram__bytes_read.sum", "Mbyte", "%.6f" % (4 * n * k / 1e6)),
        ("dram__bytes_write.sum", "byte", "{:,}".format(4 * n * k)),
        ("lts__t_sectors_op_read.sum", "sector", "{:,}".format(n // 4 * k)),
        ("lts__t_sectors_op_write.sum", "sector", "{:,}".format(n // 8 * k)),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sector", str(n // 2 * k)),
        ("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sector", str(n // 8 * k)),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "", str(n // 4 * k)),
        ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", str(20 * n * k)),
        ("smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", str(8 * n * k)),
        ("smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst", str(2 * n * k)),
        ("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", "inst", "0"),
        ("smsp__inst_executed.sum", "inst", "{:,}".format(2 * n * k)),
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "24.5"),
        ("gpu__time_duration.sum", "nsecond", "412,345"),
        ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "%", "91.5"),
        ("lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "%", "40"),
        ("l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed", "%",
         "70" if k == 1 else "99"),
        ("smsp__issue_active.avg.pct_of_peak_sustained_active", "%", "80"),
        ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "%", "30")]
for name, unit, v in vals:
    print('"%s","1234","fdtune","h","fdt_x","1","7","(32, 8, 1)","(16, 64, 1)","0","9.0",'
          '"Command line profiler metrics","%s","%s","%s"' % (i, name, unit, v))
PY
    done
} >"$log"
echo "==PROF== Disconnected from process 1234"
echo '{"schema": 1, "results": [{"status": "ok", "gbs": 2500.4}]}'
