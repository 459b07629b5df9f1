#!/usr/bin/env bash
# Runs the verbs-in-a-user's-simulation example and checks its verdict and its VCD's signals.
set -euo pipefail
source "$(dirname "$0")/run_example.sh"
run_example "$1" verbs_in_simulation "verbs_in_simulation: all checks passed"
for sig in qp_state_a qp_state_b sq_occupancy_a completions ticks; do
  grep -q "^\$var .* $sig " "$vcd" || { echo "VCD lacks $sig"; exit 1; }
done
# qp_state_a reached RTS (3) at some time.
id=$(awk '/^\$var .* qp_state_a /{print $4; exit}' "$vcd")
grep -q "^b11 $id\$" "$vcd" || { echo "qp_state_a never 3 (RTS)"; exit 1; }
# The NICs' own signals (model/sim/platform.h contract 10), under qptwin_platform > nicK.
expect_scopes nic0 nic1 qp0
expect_pairs link_busy qpn state sq rq
ids() { awk -v s="$1" '$1 == "$var" && $5 == s {print $4}' "$vcd"; }
for id in $(ids link_busy); do grep -q "^1$id\$" "$vcd" || { echo "a link_busy never 1"; exit 1; }; done
for id in $(ids state); do grep -q "^b11 $id\$" "$vcd" || { echo "a NIC's QP never in RTS (3)"; exit 1; }; done
# nic0's link_busy falls when the WRITE's last byte leaves, at the time the example printed
# (the engine's time, here SystemC's: the Backend was made at time 0).
left=$(sed -n "s/^verbs_in_simulation: the WRITE's last byte left mdev0's port at \([0-9]*\) ns$/\1/p" "$log")
busy_a=$(ids link_busy | head -1)
awk -v t="#$left" -v id="0$busy_a" '$0 == t {on = 1; next} /^#/ {on = 0} on && $0 == id {found = 1} END {exit !found}' "$vcd" ||
  { echo "nic0's link_busy does not fall at #$left"; exit 1; }
sq_a=$(ids sq | head -1)
grep -q "^b1 $sq_a\$" "$vcd" || { echo "nic0's QP never had a send WQE outstanding"; exit 1; }
echo "verbs_in_simulation_test: ok"
