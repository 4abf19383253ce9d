#!/bin/sh
# A real SLURM on this machine: munged and a one-node cluster (slurmctld + slurmd on
# localhost, a generated slurm.conf with two GPU slots, ports of its own, everything in a
# temporary directory), then contrib/slurm/submit.sh tunes d2x and d2y at 512^3 on simulated
# GPUs (--simulate-from tests/data/h100-replay.db): a job array of 2 tasks, one "GPU" each,
# at most 1 at a time, and the dependent merge job. Checks that both tasks ran and published
# their shards, that the merge job waited for the array and merged them into one database
# whose bests are the recording's (the merge needs `fdtune db merge`; without it the merge
# job fails and that part is skipped, saying why), and that a failing array cancels the merge
# job. Skipped (exit 77) when slurm-wlm and munge are not installed (scripts/setup.sh installs
# them), when not root (slurmd launches jobs as their user), or when the daemons do not start
# here (a container without what slurmd needs): the reason is printed.
# Usage: test_slurm.sh FDTUNE SOURCE_DIR
set -u
fdtune=$1
src=$2
skip() {
    echo "SKIP: $*"
    exit 77
}
for b in munged mungekey slurmctld slurmd sbatch squeue scontrol; do
    command -v "$b" >/dev/null 2>&1 || skip "$b not installed (Debian packages slurm-wlm and munge; scripts/setup.sh installs them)"
done
[ "$(id -u)" -eq 0 ] || skip "needs root: slurmd starts jobs as their user"
tmp=$(mktemp -d /tmp/fdtune-slurm.XXXXXX) # short: socket paths are limited to 108 bytes
chmod 755 "$tmp"
pids=""
cleanup() {
    if [ -n "${SLURM_CONF:-}" ]; then
        scancel --quiet --user=root >/dev/null 2>&1
    fi
    for p in $pids; do kill "$p" 2>/dev/null; done
    sleep 1
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
export FDTUNE_SYSTEM_DB= # the merged bests are compared with the recording alone
failed=0
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*" >&2
}

# ---------------------------------------------------------------- munge
mkdir -p "$tmp/munge" && chmod 755 "$tmp/munge"
mungekey --create --keyfile="$tmp/munge/munge.key" >/dev/null 2>&1 ||
    skip "mungekey could not create a key"
chmod 600 "$tmp/munge/munge.key"
munged --socket="$tmp/munge/sock" --key-file="$tmp/munge/munge.key" \
    --log-file="$tmp/munge/log" --pid-file="$tmp/munge/pid" --seed-file="$tmp/munge/seed" ||
    skip "munged does not start here: $(tail -2 "$tmp/munge/log" 2>/dev/null)"
pids="$pids $(cat "$tmp/munge/pid")"

# ---------------------------------------------------------------- a one-node cluster
host=$(hostname -s)
ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
set -- $ports
mkdir -p "$tmp/state" "$tmp/spool/$host" "$tmp/log"
: >"$tmp/gpu0"
: >"$tmp/gpu1"
cat >"$tmp/slurm.conf" <<EOF
ClusterName=fdtunetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool/%n
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
echo "NodeName=$host Name=gpu File=$tmp/gpu[0-1]" >"$tmp/gres.conf"
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start here"
sleep 1
[ -f "$tmp/slurmctld.pid" ] && pids="$pids $(cat "$tmp/slurmctld.pid")"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start here: $(tail -3 "$tmp/log/slurmd.log")"
sleep 1
[ -f "$tmp/slurmd.pid" ] && pids="$pids $(cat "$tmp/slurmd.pid")"
up=0
for _ in $(seq 1 30); do
    if sinfo -h -N -o '%T' 2>/dev/null | grep -q '^idle'; then
        up=1
        break
    fi
    sleep 1
done
[ "$up" -eq 1 ] || skip "the SLURM node did not come up: $(sinfo -N 2>&1 | tail -1);" \
    "slurmd: $(tail -2 "$tmp/log/slurmd.log" | tr '\n' ' ')"
echo "slurm: one node ($host) up on ports $1/$2"

# wait_jobs ID...: until none of them is pending or running (at most 3 minutes)
wait_jobs() {
    for _ in $(seq 1 180); do
        left=0
        for j in "$@"; do
            st=$(scontrol show job "$j" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u)
            case $st in *PENDING* | *RUNNING* | *CONFIGURING* | *COMPLETING*) left=1 ;; esac
        done
        [ "$left" -eq 0 ] && return 0
        sleep 1
    done
    return 1
}
state_of() { scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' '; }

# ---------------------------------------------------------------- the array and the merge
run=$tmp/run1
FDTUNE=$fdtune sh "$src/contrib/slurm/submit.sh" -d "$run" -k 1 \
    -s "--cpus-per-task=1 --mem=100" -f "--simulate-from $src/tests/data/h100-replay.db" \
    -- --op d2x,d2y --R 4 --grid 512^3 --strategy exhaustive >"$tmp/submit.out" 2>&1 ||
    fail "submit.sh: $(cat "$tmp/submit.out")"
cat "$tmp/submit.out"
array=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' "$tmp/submit.out")
merge=$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' "$tmp/submit.out")
[ -n "$array" ] && [ -n "$merge" ] || fail "submit.sh printed no job ids"
scontrol show job "$merge" | grep -q "Dependency=afterok:${array}" ||
    fail "the merge job does not depend on the array: $(scontrol show job "$merge" | grep -i depend)"
scontrol show job "$array" | grep -q "ArrayTaskThrottle=1" ||
    fail "no concurrency cap on the array: $(scontrol show job "$array" | grep -i array)"
wait_jobs "$array" "$merge" || fail "the jobs did not finish in 3 minutes"
case $(state_of "$array") in
"COMPLETED ") ;;
*) fail "array: $(state_of "$array"); logs: $(tail -3 "$run"/logs/task-* 2>/dev/null)" ;;
esac
for i in 0 1; do
    [ -f "$run/results/task-000$i.db" ] || fail "task $i published no shard"
done
ls "$run/logs"
if "$fdtune" db merge --help >/dev/null 2>&1; then
    [ "$(state_of "$merge")" = "COMPLETED " ] || fail "merge job: $(state_of "$merge"): $(cat "$run"/logs/merge-*)"
    "$fdtune" query best --db "$run/fdtune.db" --json >"$tmp/merged.json" || fail "no merged database"
    "$fdtune" query best --db "$src/tests/data/h100-replay.db" --json >"$tmp/source.json"
    python3 - "$tmp/source.json" "$tmp/merged.json" <<'PY' || fail "merged bests differ from the recording"
import json, sys
a, b = ({(r["op"], r["R"], r["precision"], r["nx"], r["ny"], r["nz"]): r["config"]
         for r in json.load(open(p))["results"]} for p in sys.argv[1:])
# the two problems of the array, d2x and d2y at R=4 f32 512^3, with the recording's bests
tuned = {(op, 4, "f32", 512, 512, 512) for op in ("d2x", "d2y")}
assert set(b) == tuned, b
assert {k: a[k] for k in tuned} == b, (a, b)
PY
else
    echo "SKIP: the merged database: 'fdtune db merge' is not in this build (dbscale branch);" \
         "the merge job ran after the array and failed: $(state_of "$merge")"
    grep -q "unknown command 'db'" "$run"/logs/merge-* || fail "the merge job did not run: $(cat "$run"/logs/merge-* 2>&1)"
fi

# ---------------------------------------------------------------- a failing array
run=$tmp/run2
FDTUNE=$fdtune sh "$src/contrib/slurm/submit.sh" -d "$run" -k 2 -s "--cpus-per-task=1 --mem=100" \
    -f "--simulate-from $tmp/no-such.db" -- --op d2x --R 4 --grid 512^3 >"$tmp/submit2.out" 2>&1 ||
    fail "submit.sh (failing): $(cat "$tmp/submit2.out")"
array=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' "$tmp/submit2.out")
merge=$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' "$tmp/submit2.out")
wait_jobs "$array" "$merge" || fail "the failing jobs did not finish"
case $(state_of "$array") in *FAILED*) ;; *) fail "failing array: $(state_of "$array")" ;; esac
case $(state_of "$merge") in *CANCELLED*) ;; *) fail "merge after a failed array: $(state_of "$merge")" ;; esac

[ "$failed" -eq 0 ] || { echo "test_slurm: $failed check(s) failed" >&2; exit 1; }
echo "test_slurm: ok"
