#!/usr/bin/env bash
# One shard of a differential campaign (see BUILD): qptwin fuzz --differential with the
# test's arguments; the shard comes from TEST_SHARD_INDEX/TEST_TOTAL_SHARDS. Differences are
# saved under the test's undeclared outputs (kept by Bazel) or a temp dir.
set -uo pipefail
qptwin="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-__main__}/tools/qptwin"
[ -x "$qptwin" ] || qptwin=tools/qptwin
out="${TEST_UNDECLARED_OUTPUTS_DIR:-$(mktemp -d)}/differences"
"$qptwin" fuzz --differential --out "$out" "$@"
rc=$?
if [ -n "${TEST_TOTAL_SHARDS:-}" ] && [ ! -f "${TEST_SHARD_STATUS_FILE:-/nonexistent}" ]; then
  echo "campaign_test: qptwin did not touch TEST_SHARD_STATUS_FILE" >&2
  exit 1
fi
exit $rc
