#!/usr/bin/env bash
# qptwin::sc::Nic's elaboration (nic.h contract 1), each case in its own process.
set -uo pipefail
bin="$1"
run() {  # run CASE: its output in $out, its exit code in $rc
  out=$(SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 timeout 60 "$bin" "$1" 2>&1)
  rc=$?
  echo "--- $1 (exit $rc)"
  echo "$out"
}
fail() { echo "nic_config_test: FAILED: $*"; exit 1; }

run ok
[[ $rc -eq 0 ]] || fail "ok: exit $rc"
grep -q "^nic0: index 0$" <<<"$out" && grep -q "^nic1: index 1$" <<<"$out" || fail "indices"
# Each NIC is its own device: status 0, and two different GIDs.
[[ $(grep -c "query_port answered status 0 gid_lo" <<<"$out") -eq 2 ]] || fail "QUERY_PORT"
[[ $(grep "query_port answered" <<<"$out" | awk '{print $NF}' | sort -u | wc -l) -eq 2 ]] ||
  fail "the two NICs answered one GID"

run verbs
[[ $rc -eq 0 ]] || fail "verbs: exit $rc"
[[ $(grep -c "query_port answered status 0 gid_lo" <<<"$out") -eq 2 ]] || fail "verbs: QUERY_PORT"
grep -q "^verbs Advance returned at 1 us$" <<<"$out" || fail "verbs: the Advance was cut short"

for c in mismatch unknown seventeen early coarse; do
  run "$c"
  # A SystemC error (exit 1), not a crash (a signal's exit is above 128) or a hang (124).
  [[ $rc -eq 1 ]] || fail "$c: exit $rc"
  grep -q "qptwin::sc::Nic" <<<"$out" || fail "$c: no error line"
  grep -q "done$" <<<"$out" && fail "$c: the simulation ran"
done
run mismatch
grep -q "nic1 has profile 'rxe', nic0 'cx6-100g'" <<<"$out" || fail "mismatch: names"
run unknown
grep -q "unknown model profile 'no-such-nic'" <<<"$out" || fail "unknown: the reason"
run early
grep -q "the Nic of index 0 was destroyed before elaboration" <<<"$out" || fail "early: the index"
run coarse
grep -q "time resolution is 10 ns" <<<"$out" || fail "coarse: the reason"
echo "nic_config_test: ok"
