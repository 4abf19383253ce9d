#!/bin/sh
# What the compilers' options cost and save (issue 30, item 3), without a GPU: writes a set of
# representative kernels with `fdtune gen` (the HIP dialect: the H200's bests of
# share/fdtune/system.db for lap R=4 and R=8, wave R=4 and d2z R=4 f32 at 512^3, a wave R=8
# ring with mbar=1 and a lap R=4 one with bulk=1, and the f32 verification kernels of templates/util.hip; the C
# dialect: the CPU bests of bench/cpu_targets.txt and the plain loop nest), then
# bench/compile_options.py compiles each with today's options and with each candidate, REPS
# times, and prints one table per compiler: the median seconds per kernel, the saving against
# today's, the noise, and whether the emitted code is the same.
#   bench/compile_options.sh [REPS] > bench/compile_options.txt
# Needs NVRTC (/usr/local/cuda), Debian's ROCm 5.2 hiprtc (libamdhip64.so.5), clang-19 with
# lld-19, cc and objdump; ONLY=nvrtc,hiprtc,clang,cc picks the compilers, VARIANTS=a,b the
# variants (substrings of their labels; today's always), NAMES=lap8,d2z4 the kernels,
# TIMED_ONLY=1 compares the code on the timed target only. Run it niced on an
# idle machine: the A/A row (today's options twice) shows what the noise was.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
FDTUNE=${FDTUNE:-$root/build/fdtune}
reps=${1:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/fdtune-copts.XXXXXX")
trap 'rm -rf "$dir"' EXIT
gen() { # name op R config [target]
  "$FDTUNE" gen --op "$2" --R "$3" --precision f32 --grid 512^3 --config "$4" \
    ${5:+--target "$5"} >"$dir/$1" 2>/dev/null
}
gen lap4.hip lap 4 align=32,by=8,l2pf=256,lb=512,lds=3,nw=128,pf=4,tile=4,vec=2
gen wave4.hip wave 4 align=32,by=8,l2pf=256,lb=512,lds=2,nt=1,nw=256,pf=3,tile=2,vec=2
gen lap8.hip lap 8 align=32,bx=32,by=16,l2pf=256,lb=512,lds=3,nw=512,pf=4,tile=2,vec=2
gen d2z4.hip d2z 4 align=32,bx=128,by=1,lb=128,nw=8,vec=4
gen wave8_mbar.hip wave 8 align=32,by=8,l2pf=256,lb=512,lds=3,nw=128,pf=4,tile=2,vec=2,mbar=1
gen lap4_bulk.hip lap 4 align=32,by=8,lb=512,lds=3,nw=128,pf=4,tile=4,vec=2,mbar=1,bulk=1
sed -e 's#{{BANNER}}#// fdtune verification kernels (f32)#' -e 's#{{PREC}}#f32#g' \
    -e 's#{{REAL}}#float#g' -e 's#{{UBITS}}#unsigned int#g' \
    -e "/^#{include header.hip}/{r $root/templates/header.hip" -e 'd}' \
    "$root/templates/util.hip" >"$dir/util_f32.hip"
gen d2z4.c d2z 4 blk=1,nt=1,ty=32,uk=4 x86-64-v3
gen lap4.c lap 4 blk=1,nt=1,ty=32 x86-64-v3
gen wave4.c wave 4 blk=1,nt=1,ty=16 x86-64-v3
gen lap8_default.c lap 8 default x86-64-v3
echo "# What the compilers' options cost and save (issue 30, item 3): bench/compile_options.sh $reps"
echo "# $(date -u +%Y-%m-%d), $(uname -m) $(nproc) cores, $(. /etc/os-release; echo "$PRETTY_NAME"),"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), niced; load then: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# kernels: $(cd "$dir" && ls | tr '\n' ' ')"
echo "# median_s: the mean over the kernels of each kernel's median wall time of one compile"
echo "# (NVRTC and hiprtc in a child forked per compile, as fdtune calls them; a program run"
echo "# for clang and cc); saving: 1 - sum of the medians / today's sum; noise: the largest"
echo "# (max - min) / median over one kernel's repetitions. Code identical: every ELF section"
echo "# byte for byte but debug info, comments, symbol and string tables, hashes, the build id"
echo "# and NVIDIA's tool notes (no SASS disassembler is installed here: the cubin's .text.*"
echo "# bytes are compared, which is stricter); \"code yes, not the rest\": the executable"
echo "# sections are the same, some other section (named) is not. reps: the repetitions timed"
echo "# (a reference, or a variant whose code differed on the first, is timed once)."
nice -n 10 python3 "$root/bench/compile_options.py" --kernels "$dir" --reps "$reps" \
  --only "${ONLY:-nvrtc,hiprtc,clang,cc}" --variants "${VARIANTS:-}" --names "${NAMES:-}" ${TIMED_ONLY:+--timed-only}
