#!/usr/bin/env bash
# Runs the two-host SystemC example and checks its verdict line and its VCD's signals.
set -euo pipefail
source "$(dirname "$0")/run_example.sh"
run_example "$1" two_hosts "PASS: two_hosts example"
# sc_trace names "nic_a.qp1.state" become scopes nic_a > qp1 and the variable state.
expect_scopes nic_a nic_b qp1
expect_pairs link_busy tx_queue state sq_occupancy rq_occupancy
# The link was busy at some time: a 1 after the header for a link_busy identifier.
id=$(awk '/^\$var .* link_busy /{print $4; exit}' "$vcd")
grep -q "^1$id\$" "$vcd" || { echo "link_busy never 1"; exit 1; }
echo "two_hosts_test: ok"
