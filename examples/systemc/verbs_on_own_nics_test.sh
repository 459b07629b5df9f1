#!/usr/bin/env bash
# Runs the verbs-on-the-user's-own-NICs example and checks its verdict and its VCD.
set -euo pipefail
source "$(dirname "$0")/run_example.sh"
run_example "$1" verbs_on_own_nics "verbs_on_own_nics: all checks passed"
grep -q '^\$var .* completions ' "$vcd" || { echo "VCD lacks completions"; exit 1; }
# The Nics' own signals (model/systemc/nic.h contract 5), under the modules' names.
expect_scopes nic_a nic_b qp0
expect_pairs link_busy qpn state sq rq
# nic_a's link was busy and its QP reached RTS (3); the host saw three completions.
id=$(awk '/^\$var .* link_busy /{print $4; exit}' "$vcd")
grep -q "^1$id\$" "$vcd" || { echo "nic_a's link_busy never 1"; exit 1; }
id=$(awk '/^\$var .* state /{print $4; exit}' "$vcd")
grep -q "^b11 $id\$" "$vcd" || { echo "nic_a's qp0.state never RTS"; exit 1; }
id=$(awk '/^\$var .* completions /{print $4; exit}' "$vcd")
grep -q "^b11 $id\$" "$vcd" || { echo "completions never 3"; exit 1; }
echo "verbs_on_own_nics_test: ok"
