#!/bin/sh
# The README's test command: sets up everything (scripts/setup.sh installs the missing
# Debian packages, configures and builds the preset) and runs every test with CTest.
# Tests that need a GPU report "skipped" (exit 77) on a machine without one.
#   scripts/test.sh              preset "default" (build/)
#   scripts/test.sh asan         preset "asan" (build-asan/, AddressSanitizer + UBSan)
#   scripts/test.sh [asan] ARGS  extra ctest arguments, e.g. -R test_cli or -L gpu
# Exit status: setup's when setup fails, else ctest's (0: every test passed or skipped).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
preset=default
if [ "${1:-}" = asan ]; then
    preset=asan
    shift
fi

"$here/scripts/setup.sh" "$preset"
cd "$here"
echo "test: ctest --preset $preset${*:+ $*}" >&2
status=0
ctest --preset "$preset" "$@" || status=$?
exit "$status"
