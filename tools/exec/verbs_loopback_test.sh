#!/bin/sh
# Runs a plain-C verbs program ($1, default verbs_loopback) under the preload, twice: it must
# pass, and the two runs must print the same completions (one process, simulated time:
# deterministic). With $2 (a file next to it), the output must also be that file: what the
# program printed on rxe0 in tools/rxe-vm.
set -u
dir="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-qptwin}/tools/exec"
lib="$dir/libqptwin_verbs.so"
prog="$dir/${1:-verbs_loopback}"
out="${TEST_TMPDIR:-/tmp}/loopback"
# Under --config=asan the preload and the program link libasan, which must come first in the
# initial library list: preload it ahead of the preload library.
preload="$lib"
asan=$(ldd "$lib" | awk '/libasan/ { print $3; exit }')
if [ -n "$asan" ]; then
  preload="$asan:$lib"
  # LeakSanitizer would judge the C programs' teardown (they leave some verbs objects to the
  # process exit, as programs on a real device may): not this test's subject.
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
for run in 1 2; do
  if ! LD_PRELOAD="$preload" QPTWIN_PROFILE=rxe "$prog" >"$out.$run" 2>&1; then
    echo "run $run failed:"; cat "$out.$run"; exit 1
  fi
done
cat "$out.1"
if ! cmp -s "$out.1" "$out.2"; then
  echo "the two runs differ:"; diff "$out.1" "$out.2"; exit 1
fi
if [ -n "${2:-}" ] && ! cmp -s "$out.1" "$dir/$2"; then
  echo "the output differs from rxe0's ($2):"; diff "$dir/$2" "$out.1"; exit 1
fi
# Without the preload the program finds no qptwin device (nothing of qptwin is linked in).
if "$prog" >"$out.plain" 2>&1; then echo "ran without the preload?"; exit 1; fi
echo "PASS: two identical runs${2:+, as on rxe0 ($2)}"
