#!/usr/bin/env bash
# Runs the verbs-in-a-user's-simulation example and checks its verdict and its VCD's signals.
set -euo pipefail
bin="$1"
out="${TEST_TMPDIR:-$(mktemp -d)}"
log="$out/verbs_in_simulation.log"
SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$bin" "$out" >"$log" 2>&1 || { cat "$log"; echo "example failed"; exit 1; }
cat "$log"
grep -q '^verbs_in_simulation: all checks passed' "$log" || { echo "no verdict line: sc_main did not run?"; exit 1; }
vcd="$out/verbs_in_simulation.vcd"
[[ -s "$vcd" ]] || { echo "no VCD at $vcd"; exit 1; }
for sig in qp_state_a qp_state_b sq_occupancy_a completions ticks; do
  grep -q "^\$var .* $sig " "$vcd" || { echo "VCD lacks $sig"; exit 1; }
done
# qp_state_a reached RTS (3) at some time.
id=$(awk '/^\$var .* qp_state_a /{print $4; exit}' "$vcd")
grep -q "^b11 $id\$" "$vcd" || { echo "qp_state_a never 3 (RTS)"; exit 1; }
echo "verbs_in_simulation_test: ok"
