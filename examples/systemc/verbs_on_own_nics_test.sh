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
expect_value link_busy 1 "nic_a's link_busy never 1"
expect_value state b11 "nic_a's qp0.state never RTS"
expect_value completions b11 "completions never 3"
echo "verbs_on_own_nics_test: ok"
