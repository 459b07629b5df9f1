#!/bin/sh
# rdma-core's pyverbs suite on qptwin0 (profile rxe) under `qptwin exec`, compared test by
# test with rxe0's outcomes in the VM (pyverbs_rxe_outcomes.txt): every difference must be
# one listed, with its reason, in pyverbs_expected_diffs.txt.
# Skips (exit 0, saying why) when python3-pyverbs is not installed.
set -u
here="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-qptwin}"
tests=/usr/share/doc/rdma-core/tests
if ! [ -f "$tests/run_tests.py" ] || ! /usr/bin/python3 -c 'import pyverbs' 2>/dev/null; then
  echo "SKIPPED: python3-pyverbs is not installed (apt-get install python3-pyverbs)"
  exit 0
fi
if ldd "$here/tools/exec/libqptwin_verbs.so" | grep -q libasan; then
  # An ASan-built preload in an uninstrumented python3 needs libasan first in the link
  # order, and LeakSanitizer would judge python3's own allocations: not this test's subject.
  echo "SKIPPED: the preload is built with ASan (--config=asan); run this test without it"
  exit 0
fi
work="${TEST_TMPDIR:-$(mktemp -d)}/pyverbs"
rm -rf "$work" && mkdir -p "$work" && cp -r "$tests" "$work/" && find "$work" -name '*.gz' -exec gunzip -f {} +
cd "$work" || exit 1
QPTWIN_PRELOAD="$here/tools/exec/libqptwin_verbs.so" \
  "$here/tools/qptwin" exec --profile rxe -- /usr/bin/python3 tests/run_tests.py --dev qptwin0 -v \
  >run.txt 2>&1
echo "suite exit code $? (1 is expected: rxe0 has an ERROR too)"
tail -3 run.txt
/usr/bin/python3 "$here/tools/exec/pyverbs_outcomes.py" compare \
  "$here/tools/exec/pyverbs_rxe_outcomes.txt" run.txt "$here/tools/exec/pyverbs_expected_diffs.txt"
