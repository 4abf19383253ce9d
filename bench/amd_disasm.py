#!/usr/bin/env python3
"""How an AMD kernel waits on its global loads, from `fdtune gen --compile --target gfxNNN
--disasm` output (stdin): one CSV row (no header unless --header) of

  vgprs, agprs, spill_bytes, scratch_bytes  the compiler's report
  loads     global_load* instructions in the kernel
  vmwaits   s_waitcnt instructions with a vmcnt (waits on vector memory) in the kernel
  barriers  s_barrier instructions (the ring's march is unrolled: one per step of it)
  inflight  the most global loads outstanding at once: issued since the last s_waitcnt
            vmcnt(N) left at most N, on any path through the kernel's control flow
  hidden    the most FP arithmetic instructions (v_fma*, v_fmac*, v_mul*, v_add*, packed
            too) between the latest global load and a vmcnt wait that waits for it, on any
            path: the arithmetic the loads travel under

Both of the last two follow the control flow (branches, exec-masked blocks the compiler
lays out of line), not the layout. The ring's copies before the staged path (one load, then
its wait: inflight 1, hidden 0) and with it (all of a plane's chunks issued together, the
wait after the step's arithmetic) differ there.

With --lds-direct (the stream's bulk form on AMD, bulk=1) the loads counted and followed are
those that write LDS directly (buffer_load_dword ... lds, global_load_lds_*), and two columns
follow: vgpr_loads, the vector-memory loads into VGPRs (global_load*, buffer_load* without
lds), and ds_writes, the LDS stores (ds_write*): 0 and 0 when no value of the ring goes
through a VGPR. Usage: fdtune gen ... --disasm | amd_disasm.py [--lds-direct] [--header]
"""
import re
import sys

HEADER = "vgprs,agprs,spill_bytes,scratch_bytes,loads,vmwaits,barriers,inflight,hidden"
HEADER_LDS = HEADER + ",vgpr_loads,ds_writes"
ARITH = re.compile(r"v_(pk_)?(fma|fmac|mul|add)_")
LINE = re.compile(r"^\s*(?://\s*)?(\S[^/]*?)\s*//\s*([0-9A-Fa-f]+):")
VMCNT = re.compile(r"vmcnt\((\d+)\)")


def instructions(text):
    """(address, instruction) of the disassembly part of fdtune gen's output."""
    out, on = [], False
    for line in text.splitlines():
        if line.startswith("// Disassembly for"):
            on = True
        m = LINE.match(line) if on else None
        if m:
            out.append((int(m.group(2), 16), m.group(1)))
    return out


def successors(ins, at, k):
    """Indices of the instructions that may follow instruction k (at: address -> index)."""
    addr, op = ins[k]
    name = op.split()[0]
    nxt = [k + 1] if k + 1 < len(ins) else []
    if name in ("s_endpgm", "s_setpc_b64", "s_trap"):
        return []
    if name.startswith("s_branch") or name.startswith("s_cbranch"):
        imm = int(op.split()[1]) & 0xFFFF
        imm = imm - 0x10000 if imm & 0x8000 else imm
        target = addr + 4 + 4 * imm
        to = [at[target]] if target in at else []
        return to if name == "s_branch" else nxt + to
    return nxt


def is_lds_direct(op):
    """A load that writes LDS directly: buffer_load_* ... lds, or global_load_lds_*."""
    return op.startswith("global_load_lds") or (op.startswith("buffer_load") and
                                                 op.split()[-1] == "lds")


def is_vgpr_load(op):
    """A vector-memory load into VGPRs."""
    return (op.startswith("global_load") or op.startswith("buffer_load")) and \
        not is_lds_direct(op)


def is_global_load(op):
    """What flow() counts by default: the global loads (into VGPRs)."""
    return op.startswith("global_load")


LOAD = is_global_load  # --lds-direct: is_lds_direct


def flow(ins):
    """inflight and hidden (module doc) by a forward data flow, the maximum where paths
    join: the loads outstanding and the arithmetic since the latest load."""
    # arith is capped at the kernel's arithmetic count: a path round a loop that never waits
    # would grow it without end (the cap then reads as "all of it")
    cap = sum(bool(ARITH.match(op)) for _, op in ins)
    at = {a: j for j, (a, _) in enumerate(ins)}
    state = {0: (0, 0)}
    work, inflight, hidden = [0], 0, 0
    while work:
        k = work.pop()
        n, arith = state[k]
        op = ins[k][1]
        if LOAD(op):
            n, arith = min(n + 1, 4096), 0
        elif op.startswith("s_waitcnt") and VMCNT.search(op):
            keep = int(VMCNT.search(op).group(1))
            if n > keep:
                hidden = max(hidden, arith)
            n = min(n, keep)
            if n == 0:
                arith = 0
        elif n and ARITH.match(op):
            arith = min(arith + 1, cap)
        inflight = max(inflight, n)
        for j in successors(ins, at, k):
            old = state.get(j)
            new = (n, arith) if old is None else (max(old[0], n), max(old[1], arith))
            if new != old:
                state[j] = new
                work.append(j)
    return inflight, hidden


def report_value(text, pattern):
    m = re.search(pattern, text)
    return int(m.group(1)) if m else -1


def analyse(text):
    ins = instructions(text)
    ops = [op for _, op in ins]
    inflight, hidden = flow(ins) if ins else (0, 0)
    return [
        report_value(text, r"registers (\d+) VGPRs"),
        report_value(text, r", (\d+) AGPRs"),
        report_value(text, r"spills (\d+) bytes"),
        report_value(text, r"scratch/stack (\d+) bytes"),
        sum(bool(LOAD(op)) for op in ops),
        sum(op.startswith("s_waitcnt") and "vmcnt" in op for op in ops),
        sum(op.startswith("s_barrier") for op in ops),
        inflight, hidden,
    ] + ([sum(is_vgpr_load(op) for op in ops), sum(op.startswith("ds_write") for op in ops)]
         if LOAD is is_lds_direct else [])


def main():
    global LOAD
    lds = "--lds-direct" in sys.argv[1:]
    if lds:
        LOAD = is_lds_direct
    if "--header" in sys.argv[1:]:
        print(HEADER_LDS if lds else HEADER)
        return
    print(",".join(str(v) for v in analyse(sys.stdin.read())))


if __name__ == "__main__":
    main()
