#!/usr/bin/env python3
"""Records the code that results of a database measured with an older generator were measured
with, where nothing recorded it: the older fdtune (OLD_FDTUNE, built from OLD_COMMIT) emits
each result's kernel (`fdtune gen` for its problem and config) and OLD_COMMIT holds the mapping
header of its backend (templates/nvrtc_hip_runtime.h for cuda, templates/amd_device.h for
hip); their hash, as fdtune computes it (generator/source.c, fdt_gen_source_hash: comments,
blank lines and runs of white space left out, FNV-1a over the rest), is what the result was
measured with. For each result it prints one `--meta=KEY=HASH` line for
`fdtune db merge --best-only` (KEY: `fdtune db check --json`'s source_key), and says on
stderr whether that code is this fdtune's (unchanged) or differs. Before that it checks its
own hashing: this fdtune's code for every result must hash here to what `db check` says this
fdtune's hash is (source_hash); otherwise it records nothing. Only results `db check` lists as
unrecorded and whose generator is OLD_FDTUNE's are looked at.

Usage: system_db_attest.py OLD_FDTUNE OLD_COMMIT [DB]     (DB: share/fdtune/system.db)
Environment: FDTUNE (this fdtune). Exit 1 when a generation fails or the hashing disagrees."""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = {"cuda": "templates/nvrtc_hip_runtime.h", "hip": "templates/amd_device.h"}


def normalise(text):
    """fdtune's normalisation (generator/source.c, hash_normalised): per line (split at
    newlines only), everything from "//" on dropped, runs of space, tab, CR, VT, FF made one
    space, the ends trimmed; empty lines dropped; each kept line ends in a newline."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r"[ \t\r\v\f]+", " ", line.split("//", 1)[0]).strip(" ")
        if line:
            out.append(line + "\n")
    return "".join(out).encode()


def fnv(data, h=0xCBF29CE484222325):
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def code_hash(source, header):
    h = fnv(normalise(source))
    return "%016x" % (fnv(normalise(header), h) if header is not None else h)


def generate(fdtune, s):
    r = subprocess.run([fdtune, "gen", "--op", s["op"], "--R", str(s["R"]), "--precision",
                        s["precision"], "--grid", "%dx%dx%d" % (s["nx"], s["ny"], s["nz"]),
                        "--config", s["config"]], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def generator_of(fdtune):
    out = subprocess.run([fdtune, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"\(generator ([0-9a-f]{16})\)", out)
    if not m:
        sys.exit("%s --version names no generator" % fdtune)
    return m.group(1)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    old, commit = sys.argv[1], sys.argv[2]
    db = sys.argv[3] if len(sys.argv) == 4 else os.path.join(ROOT, "share/fdtune/system.db")
    new = os.environ.get("FDTUNE", os.path.join(ROOT, "build/fdtune"))
    old_gen = generator_of(old)
    check = subprocess.run([new, "db", "check", db, "--json"], capture_output=True, text=True)
    if check.returncode not in (0, 1):
        sys.exit("db check %s: %s" % (db, check.stderr.strip()))
    stale = json.loads(check.stdout)["kernels"]["stale"]
    headers = {}
    for backend, path in HEADERS.items():
        before = subprocess.run(["git", "-C", ROOT, "show", "%s:%s" % (commit, path)],
                                capture_output=True, text=True, check=True).stdout
        now = open(os.path.join(ROOT, path), encoding="utf-8").read()
        headers[backend] = (before, now)
    todo, bad = [], 0
    for s in stale:
        if s["kernel"] != "unrecorded" or s["generator"] != old_gen:
            continue
        backend = s["source_key"].split()[2]
        before, now = headers.get(backend, (None, None))
        a, b = generate(old, s), generate(new, s)
        what = "%s %s R=%d %s %dx%dx%d %s" % (s["device"], s["op"], s["R"], s["precision"],
                                              s["nx"], s["ny"], s["nz"], s["config"])
        if a is None:
            print("fails in the old fdtune: %s" % what, file=sys.stderr)
            bad += 1
            continue
        if b is not None and code_hash(b, now) != s["source_hash"]:
            print("the hashing here disagrees with fdtune's: %s" % what, file=sys.stderr)
            bad += 1
            continue
        todo.append((s, code_hash(a, before), what))
    if bad:
        return 1
    for s, old_hash, what in todo:
        print("%s: %s" % ("unchanged" if old_hash == s["source_hash"] else "differs", what),
              file=sys.stderr)
        print("--meta=%s=%s" % (s["source_key"], old_hash))
    return 0


if __name__ == "__main__":
    sys.exit(main())
