#!/usr/bin/env bash
# Runs the two-host SystemC example and checks its verdict line and its VCD's signals.
set -euo pipefail
bin="$1"
out="${TEST_TMPDIR:-$(mktemp -d)}"
log="$out/two_hosts.log"
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$bin" "$out" >"$log" 2>&1 || { cat "$log"; echo "example failed"; exit 1; }
cat "$log"
grep -q '^PASS: two_hosts example' "$log" || { echo "no PASS line: sc_main did not run?"; exit 1; }
vcd="$out/two_hosts.vcd"
[[ -s "$vcd" ]] || { echo "no VCD at $vcd"; exit 1; }
# sc_trace names "nic_a.qp1.state" become scopes nic_a > qp1 and the variable state.
for scope in nic_a nic_b qp1; do
  grep -q "^\$scope module $scope \$end" "$vcd" || { echo "VCD lacks scope $scope"; exit 1; }
done
for sig in link_busy tx_queue state sq_occupancy rq_occupancy; do
  [[ $(grep -c "^\$var .* $sig " "$vcd") -eq 2 ]] || { echo "VCD lacks $sig of both NICs"; exit 1; }
done
# The link was busy at some time: a 1 after the header for a link_busy identifier.
id=$(awk '/^\$var .* link_busy /{print $4; exit}' "$vcd")
grep -q "^1$id\$" "$vcd" || { echo "link_busy never 1"; exit 1; }
echo "two_hosts_test: ok"
