#!/usr/bin/env python3
"""The model against Nsight Compute, one cell (bench/model_check.sh): reads the model's dry run
of one config (fdtune --dry-run --json: its bound and per-point counts), ncu's CSV of the
candidate kernel's first launch (ncu --csv --print-units base, the details page) and fdtune
bench's JSON of the same run, and prints one CSV row of predicted beside measured numbers per
output point. With --header: the header line only.

Measured per point (npts: the interior points one launch computes, nx ny nz / split):
  dram_B      (dram__bytes_read + dram__bytes_write) / npts
  l2_B        32 x (lts__t_sectors_op_read + _op_write) / npts
  l1_B        32 x the L1 sectors of the global loads, stores and asynchronous copies
              (l1tex__t_sectors_pipe_lsu_mem_global_op_ld, _st, _ldgsts) / npts
  shared_B    128 x l1tex__data_pipe_lsu_wavefronts_mem_shared / npts: one wavefront moves
              at most 128 bytes, so this is the model's shared bytes when the accesses are
              conflict-free and whole (bank conflicts and partial wavefronts make it larger)
  fp          the FP thread instructions (smsp__sass_thread_inst_executed_op_{f,d}{fma,add,
              mul}_pred_on) / npts
  inst        32 x smsp__inst_executed (warp instructions) / npts: the model counts thread
              instructions of full warps
  occupancy   sm__warps_active.avg.pct_of_peak_sustained_active / 100
The measured bound: the unit with the largest share of its peak (dram__throughput, lts__t_
sectors, l1tex__t_sectors_pipe_lsu_mem_global, l1tex__data_pipe_lsu_wavefronts_mem_shared,
smsp__issue_active, sm__pipe_fma or sm__pipe_fp64 cycles active), or latency when no unit
reaches LATENCY_PCT percent of its peak: every unit waits. Metrics ncu did not report are left
empty."""
import csv
import json
import sys

LATENCY_PCT = 60.0

# the shares of peak that name the measured bound, as the model names its terms
PCT = {
    "dram": ["dram__throughput.avg.pct_of_peak_sustained_elapsed"],
    "l2": ["lts__t_sectors.avg.pct_of_peak_sustained_elapsed"],
    "l1": ["l1tex__t_sectors_pipe_lsu_mem_global.avg.pct_of_peak_sustained_elapsed"],
    "shared": ["l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"],
    "issue": ["smsp__issue_active.avg.pct_of_peak_sustained_active"],
    "fp": ["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
           "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active"],
}

FP = ["smsp__sass_thread_inst_executed_op_%s%s_pred_on.sum" % (p, o)
      for p in "fd" for o in ("fma", "add", "mul")]

# what model_check.sh asks ncu for (each name once; those this ncu lacks are dropped there)
METRICS = sorted(set(
    ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
     "lts__t_sectors_op_write.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
     "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
     "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
     "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "smsp__inst_executed.sum",
     "smsp__inst_executed_pipe_fma.sum", "smsp__inst_executed_pipe_fp64.sum",
     "sm__warps_active.avg.pct_of_peak_sustained_active", "gpu__time_duration.sum"]
    + FP + [m for ms in PCT.values() for m in ms]))

COLUMNS = ("gpu,op,R,precision,nx,ny,nz,config,pred_bound,meas_bound,pred_gbs,meas_gbs,"
           "pred_dram_B,meas_dram_B,pred_l2_B,meas_l2_B,pred_l1_B,meas_l1_B,pred_shared_B,"
           "meas_shared_B,pred_fp,meas_fp,pred_inst,meas_inst,pred_occupancy,meas_occupancy,"
           "pct_dram,pct_l2,pct_l1,pct_shared,pct_issue,pct_fp,kernel_ms").split(",")

SCALE = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "nsecond": 1e-9,
         "usecond": 1e-6, "msecond": 1e-3, "second": 1}


def number(text, unit=""):
    """ncu's value as a float (thousands separators dropped, units to bytes and seconds)."""
    try:
        v = float(text.replace(",", ""))
    except ValueError:
        return None
    return v * SCALE.get(unit.strip().lower(), 1)


def ncu_metrics(path):
    """Metric name -> value of the first profiled kernel in ncu's CSV (details page)."""
    out, first = {}, None
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]  # ncu's own ==PROF== lines are not CSV
    for row in csv.DictReader(lines):
        if first is None:
            first = row.get("ID")
        if row.get("ID") != first:
            continue
        v = number(row.get("Metric Value", ""), row.get("Metric Unit", ""))
        if v is not None:
            out[row["Metric Name"]] = v
    return out


def total(m, names):
    vals = [m[n] for n in names if n in m]
    return sum(vals) if vals else None


def fmt(v, spec="%.2f"):
    return "" if v is None else spec % v


def row(dry_path, ncu_path, bench_path, gpu):
    dry = json.load(open(dry_path))
    prob = dry["problems"][0]
    pred = prob["ranking"][0]
    m = ncu_metrics(ncu_path)
    try:  # the JSON document, whatever a profiler printed before it
        text = open(bench_path).read()
        doc = json.loads(text[text.index("{"):])
        res = [r for r in doc["results"] if r.get("status") == "ok"]
    except (OSError, ValueError, KeyError):
        res = []
    cfg = pred["config"]
    split = 1
    for kv in cfg.split(","):
        if kv.startswith("split="):
            split = int(kv.split("=")[1])
    npts = prob["nx"] * prob["ny"] * prob["nz"] / split
    per = (lambda v, k=1: None if v is None else k * v / npts)
    pct = {b: max([m[n] for n in names if n in m], default=None) for b, names in PCT.items()}
    known = {b: v for b, v in pct.items() if v is not None}
    meas_bound = ""
    if known:
        top = max(known, key=known.get)
        meas_bound = top if known[top] >= LATENCY_PCT else "latency"
    occ = m.get("sm__warps_active.avg.pct_of_peak_sustained_active")
    dur = m.get("gpu__time_duration.sum")
    vals = {
        "gpu": gpu or dry["device"]["name"], "op": prob["op"], "R": prob["R"],
        "precision": prob["precision"], "nx": prob["nx"], "ny": prob["ny"], "nz": prob["nz"],
        "config": cfg, "pred_bound": pred["bound"], "meas_bound": meas_bound,
        "pred_gbs": fmt(pred["predicted_gbs"], "%.0f"),
        "meas_gbs": fmt(res[0]["gbs"], "%.0f") if res else "",
        "pred_dram_B": fmt(pred["dram_bytes"] / (npts * split)),
        "meas_dram_B": fmt(per(total(m, ["dram__bytes_read.sum", "dram__bytes_write.sum"]))),
        "pred_l2_B": fmt(pred["l2_bytes"] / (npts * split)),
        "meas_l2_B": fmt(per(total(m, ["lts__t_sectors_op_read.sum",
                                       "lts__t_sectors_op_write.sum"]), 32)),
        "pred_l1_B": fmt(pred["l1_bytes_per_point"]),
        "meas_l1_B": fmt(per(total(m, ["l1tex__t_sectors_pipe_lsu_mem_global_op_%s.sum" % o
                                       for o in ("ld", "st", "ldgsts")]), 32)),
        "pred_shared_B": fmt(pred["shared_bytes_per_point"]),
        "meas_shared_B": fmt(per(m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"), 128)),
        "pred_fp": fmt(pred["fp_per_point"]), "meas_fp": fmt(per(total(m, FP))),
        "pred_inst": fmt(pred["inst_per_point"]),
        "meas_inst": fmt(per(m.get("smsp__inst_executed.sum"), 32)),
        "pred_occupancy": fmt(pred["occupancy"], "%.3f"),
        "meas_occupancy": fmt(None if occ is None else occ / 100, "%.3f"),
        "kernel_ms": fmt(None if dur is None else dur * 1e3, "%.4f"),
    }
    for b in PCT:
        vals["pct_" + b] = fmt(pct[b], "%.1f")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow([vals[c] for c in COLUMNS])


def main(argv):
    if argv[1:] == ["--header"]:
        print(",".join(COLUMNS))
    elif argv[1:] == ["--metrics"]:
        print("\n".join(METRICS))
    elif len(argv) in (4, 5):
        row(argv[1], argv[2], argv[3], argv[4] if len(argv) == 5 else "")
    else:
        sys.exit("usage: model_check.py --header | --metrics | DRY.json NCU.csv BENCH.json [GPU]")


if __name__ == "__main__":
    main(sys.argv)
