#!/usr/bin/env python3
"""Chooses the stopping rules' defaults by replay, without a GPU (issue 30 item 2).

Every recorded problem of the databases given is replayed (`fdtune tune --replay DB --json`)
with each strategy (exhaustive, random, model) and each stopping rule: the limit rule at a
distance of 0.5, 1 and 2 % (--stop-within), the convergence rule after K evaluations without
a gain beyond noise (--stop-after), and --search-all (the whole record: the reference). Per
problem, strategy and rule it prints the evaluations spent when the search stopped, how far
its best is above the best of the whole record, and the evaluations it needed to come within
1 % and 3 % of that best ('-': it stopped first). The shipped defaults (no --stop-* option:
the distance and each strategy's K of tuner/fdt_stop.h, read from the source tree beside this
script) are replayed too, as the rule 'default'. Then, per strategy and rule, the total
evaluations over every problem and the problems whose stopped best is more than 1 % above
the record's best; per strategy, the replay's choice is the rule with no such problem that
spends the fewest evaluations in all; then one distance for all strategies with each one's
best K. Last, per problem, what the shipped defaults do, and the problems they stop more
than 1 % above the record's best.

Usage: bench/stop_replay.py FDTUNE DB... > bench/stop_replay.txt
"""
import datetime
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys

WITHIN = ["0.5", "1", "2"]
AFTER = [5, 10, 15, 20, 30, 40, 60, 80, 100, 130, 160, 200, 250, 300, 400]
STRATEGIES = ["exhaustive", "random", "model"]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def shipped():
    """The shipped defaults, from tuner/fdt_stop.h: (distance in %, {strategy: K})."""
    text = open(os.path.join(SRC, "tuner", "fdt_stop.h")).read()

    def define(name):
        m = re.search(r"^#define %s ([0-9.]+)$" % name, text, re.M)
        if not m:
            sys.exit("tuner/fdt_stop.h: no #define %s" % name)
        return m.group(1)
    return (100 * float(define("FDT_STOP_WITHIN_DEFAULT")),
            {s: int(define("FDT_STOP_AFTER_" + s.upper())) for s in STRATEGIES})


def problems(db):
    """The recorded problems of db: (op, R, precision, nx, ny, nz) with evaluations."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    rows = con.execute(
        "SELECT DISTINCT p.op, p.radius, p.precision, p.nx, p.ny, p.nz FROM problems p"
        " JOIN evaluations e ON e.problem_id = p.id ORDER BY p.precision, p.nx, p.op").fetchall()
    con.close()
    return rows


def rules():
    yield "all", ["--search-all"]
    yield "default", []
    for w, k in itertools.product(WITHIN, AFTER):
        yield "%s%%/K%d" % (w, k), ["--stop-within", w, "--stop-after", str(k)]


def gpu_of(db):
    """The catalogue name of the GPU db recorded: the last word of its device's name
    ("NVIDIA H200" -> "H200"; one GPU model a recording)."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    name = con.execute("SELECT name FROM devices WHERE backend != 'cpu' LIMIT 1").fetchone()
    con.close()
    return name[0].split()[-1] if name else "H100"


def recorded(db):
    """What db holds, in one line: problems, runs, evaluations, when its runs ran."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    n = [con.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
         for t in ("problems", "runs", "evaluations")]
    first, last = con.execute("SELECT min(started), max(finished) FROM runs").fetchone()
    con.close()
    return "%s: %d problems, %d runs, %d evaluations, runs from %s to %s" % (
        db.split("/")[-1], n[0], n[1], n[2], first, last)


def made_with(fdtune):
    """The fdtune that replays (its --version's first line) and the source tree's commit,
    '-dirty' when a tracked file other than the bench/ outputs (which a redirect of this
    script's output has already changed) differs from it."""
    version = subprocess.run([fdtune, "--version"], check=True, capture_output=True,
                             text=True).stdout.splitlines()[0]
    git = subprocess.run(["git", "-C", SRC, "rev-parse", "--short=7", "HEAD"],
                         capture_output=True, text=True)
    if git.returncode != 0:
        return version, "unknown"
    dirty = subprocess.run(["git", "-C", SRC, "diff", "--quiet", "HEAD", "--", ".",
                            ":(exclude)bench/*.txt"]).returncode != 0
    return version, git.stdout.strip() + ("-dirty" if dirty else "")


def replay(fdtune, db, prob, args):
    op, R, prec, nx, ny, nz = prob
    cmd = [fdtune, "tune", "--gpu", gpu_of(db), "--op", op, "--R", str(R), "--precision", prec,
           "--grid", "%dx%dx%d" % (nx, ny, nz), "--replay", db, "--json"] + args
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    p = json.loads(out)["problems"][0]
    return p["configs"], {s["strategy"]: s for s in p["strategies"]}


def recipe_strategy(fdtune, db, prob, cache={}):
    """The strategy the recipe gives prob on the record's GPU (a dry run; cached per op)."""
    op, R, prec, nx, ny, nz = prob
    if op not in cache:
        cmd = [fdtune, "--gpu", gpu_of(db), "--op", op, "--R", str(R), "--precision", prec,
               "--grid", "%dx%dx%d" % (nx, ny, nz), "--dry-run", "--top", "1", "--json"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        cache[op] = json.loads(out)["problems"][0]["strategy"]
    return cache[op]


def choose(totals, strategies, label):
    """Prints, per strategy, the rules without a miss and the cheapest of them, then the one
    distance whose cheapest K per strategy spends the fewest evaluations in all."""
    for s in strategies:
        ok = [name for name, _ in rules() if name not in ("all", "default")
              and totals[(s, name)][1] == 0]
        if not ok:
            print("%-10s none" % s)
            continue
        best = min(ok, key=lambda n: totals[(s, n)][0])
        print("%-10s %s: %d evaluations (the whole record: %d); also within 1%%: %s" % (
            s, best, totals[(s, best)][0], totals[(s, "all")][0], ", ".join(ok)))
    pick = None
    for w in WITHIN:
        ks = {}
        for s in strategies:
            ok = [k for k in AFTER if totals[(s, "%s%%/K%d" % (w, k))][1] == 0]
            if ok:
                ks[s] = min(ok, key=lambda k: totals[(s, "%s%%/K%d" % (w, k))][0])
        if len(ks) == len(strategies):
            ev = sum(totals[(s, "%s%%/K%d" % (w, ks[s]))][0] for s in strategies)
            if pick is None or ev < pick[0]:
                pick = (ev, w, ks)
    if pick:
        print("# %s: one distance for all: %s%%, with K %s: %d evaluations in all (the whole"
              " record: %d)" % (label, pick[1], ", ".join("%s %d" % (s, pick[2][s])
                                                         for s in strategies), pick[0],
                                sum(totals[(s, "all")][0] for s in strategies)))
    else:
        print("# %s: one distance for all: none keeps every problem within 1%%" % label)


def tally(runs, keep):
    """Per (strategy, rule): evaluations spent and misses over the runs keep(prob, s) takes."""
    totals = {}
    for s in STRATEGIES:
        for name, _ in rules():
            sel = [res[s] for _, prob, _, n, res in runs if n == name and keep(prob, s)]
            ev = sum(r["stopped_after"] for r in sel)
            miss = sum((r.get("stopped_gap") or 0) > 0.01 for r in sel)
            totals[(s, name)] = (ev, miss)
    return totals


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    fdtune, dbs = sys.argv[1], sys.argv[2:]
    within, after = shipped()
    version, commit = made_with(fdtune)
    runs = []  # (db, problem, configs, rule, strategy -> result)
    for db in dbs:
        for prob in problems(db):
            for name, args in rules():
                configs, res = replay(fdtune, db, prob, args)
                if name == "default":
                    for k in STRATEGIES:
                        m = re.match(r"converged: ([0-9]+) ", res[k]["stopped"])
                        if m and int(m.group(1)) != after[k]:
                            sys.exit("%s: the replay's default K for %s is %s, tuner/fdt_stop.h"
                                     " says %d (build %s again)" % (fdtune, k, m.group(1),
                                                                    after[k], fdtune))
                runs.append((db, prob, configs, name, res))
    print("# Made by `bench/stop_replay.py %s` with %s, in the source tree at %s, on %s;"
          % (" ".join(sys.argv[1:]), version, commit,
             datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")))
    print("# the shipped defaults read from tuner/fdt_stop.h: --stop-within %g, --stop-after %s."
          % (within, ", ".join("%d %s" % (after[s], s) for s in STRATEGIES)))
    print("# What the records are: tests/data/README.md. A strategy replays over the configs a")
    print("# record holds, not over the space, so 'the best of a full budget' is the record's")
    print("# best. Replayed on each record's GPU model (%s), seed 1."
          % ", ".join("%s: %s" % (db.split("/")[-1], gpu_of(db)) for db in dbs))
    for db in dbs:
        print("# %s" % recorded(db))
    print("# per problem, strategy and rule: evaluations spent when the search stopped, its best")
    print("# above the best of the whole record (%), evaluations to within 1% and 3% of that")
    print("# best before it stopped ('-': it stopped first)")
    print("%-44s %-5s %-10s %-11s %6s %7s %5s %5s" % ("problem (db, configs)", "", "strategy",
                                                     "rule", "evals", "above%", "1%", "3%"))
    for db, prob, configs, name, res in runs:
        key = "%s R=%d %s %dx%dx%d (%s, %d)" % (prob[0], prob[1], prob[2], prob[3], prob[4],
                                               prob[5], db.split("/")[-1], configs)
        for s in STRATEGIES:
            r = res[s]
            print("%-50s %-10s %-11s %6d %7.2f %5s %5s" % (
                key, s, name, r["stopped_after"], 100 * (r.get("stopped_gap") or 0),
                r["stopped_within_1pct"] or "-", r["stopped_within_3pct"] or "-"))
    print()
    print("# per strategy and rule, over every problem: evaluations spent in all, problems")
    print("# whose stopped best is more than 1% above the record's best (misses), the worst")
    print("%-10s %-11s %7s %6s %7s" % ("strategy", "rule", "evals", "misses", "worst%"))
    totals = {}
    for s in STRATEGIES:
        for name, _ in rules():
            sel = [res[s] for _, _, _, n, res in runs if n == name]
            ev = sum(r["stopped_after"] for r in sel)
            gaps = [r.get("stopped_gap") or 0 for r in sel]
            miss = sum(g > 0.01 for g in gaps)
            totals[(s, name)] = (ev, miss)
            print("%-10s %-11s %7d %6d %7.2f" % (s, name, ev, miss, 100 * max(gaps)))
    print()
    print("# per strategy, the rules that keep every problem within 1% of the record's best, and")
    print("# the one of them that spends the fewest evaluations (the replay's choice)")
    choose(totals, STRATEGIES, "every strategy on every problem")
    print()
    print("# the defaults as a tune applies them: each problem with its recipe's strategy (the")
    print("# dry run's; random is no recipe's, so its K is the one above): the rules that keep")
    print("# those problems within 1% of the record's best, and the cheapest")
    rs = {(db, prob): recipe_strategy(fdtune, db, prob) for db, prob, _, _, _ in runs}
    used = sorted({v for v in rs.values()}, key=STRATEGIES.index)
    print("# recipes' strategies: %s" % ", ".join(
        "%s %s" % (op, s) for op, s in sorted({(p[0], v) for (_, p), v in rs.items()})))
    own = tally([r for r in runs if rs[(r[0], r[1])] is not None],
                lambda prob, s: any(rs[(d, q)] == s for (d, q) in rs if q == prob))
    choose(own, used, "each problem with its recipe's strategy")
    print()
    print("# per problem with the shipped defaults (--stop-within %g, --stop-after %s;"
          % (within, ", ".join("%d %s" % (after[s], s) for s in STRATEGIES)))
    print("# tuner/fdt_stop.h): evaluations spent / its best above the record's best (%) /")
    print("# evaluations to within 1% / within 3% ('-': stopped first); in brackets the whole")
    print("# record's evaluations to within 1% / 3%; '!': more than 1% above the record's best")
    print("%-50s %s" % ("problem (db, configs)", "".join("%-28s" % s for s in STRATEGIES)))
    misses = []
    for db, prob, configs, name, res in runs:
        if name != "all":
            continue
        key = "%s R=%d %s %dx%dx%d (%s, %d)" % (prob[0], prob[1], prob[2], prob[3],
                                               prob[4], prob[5], db.split("/")[-1], configs)
        cells = []
        for s in STRATEGIES:
            r = next(x[4][s] for x in runs if x[0] == db and x[1] == prob and x[3] == "default")
            a = res[s]
            gap = r.get("stopped_gap") or 0
            if gap > 0.01:
                misses.append("%s %s: %.2f%% above (%s)" % (key, s, 100 * gap, r["stopped"]))
            cells.append("%-28s" % ("%d/%.1f/%s/%s [%s/%s]%s" % (
                r["stopped_after"], 100 * gap,
                r["stopped_within_1pct"] or "-", r["stopped_within_3pct"] or "-",
                a["stopped_within_1pct"], a["stopped_within_3pct"], "!" if gap > 0.01 else "")))
        print("%-50s %s" % (key, "".join(cells)))
    print("# the shipped defaults: %s evaluations in all (the whole record: %d); more than 1%%"
          " above the record's best: %s" % (
              ", ".join("%s %d" % (s, totals[(s, "default")][0]) for s in STRATEGIES),
              totals[("model", "all")][0], "none" if not misses else "%d" % len(misses)))
    for m in misses:
        print("#   %s" % m)


if __name__ == "__main__":
    main()
