#!/usr/bin/env bash
# Runs the driver-on-the-model example and checks its verdict and its VCD's signals.
set -euo pipefail
source "$(dirname "$0")/run_example.sh"
run_example "$1" driver_on_model "driver_on_model: all checks passed"
for sig in cqes_a cqes_b doorbells interrupts_b commands; do
  grep -q "^\$var .* $sig " "$vcd" || { echo "VCD lacks $sig"; exit 1; }
done
# The NICs' own signals (model/systemc/nic.h contract 5), under the modules' names.
expect_scopes nic_a nic_b qp0
expect_pairs link_busy qpn state sq rq
# nic_a's link was busy (the WRITE and the SEND left), and its QP reached RTS (3).
id=$(awk '/^\$var .* link_busy /{print $4; exit}' "$vcd")
grep -q "^1$id\$" "$vcd" || { echo "nic_a's link_busy never 1"; exit 1; }
id=$(awk '/^\$var .* state /{print $4; exit}' "$vcd")
grep -q "^b11 $id\$" "$vcd" || { echo "nic_a's qp0.state never RTS"; exit 1; }
# mdev0's driver took two CQEs, mdev1's one.
id=$(awk '/^\$var .* cqes_a /{print $4; exit}' "$vcd")
grep -q "^b10 $id\$" "$vcd" || { echo "cqes_a never 2"; exit 1; }
# mdev1's driver was woken by one interrupt.
id=$(awk '/^\$var .* interrupts_b /{print $4; exit}' "$vcd")
grep -q "^b1 $id\$" "$vcd" || { echo "interrupts_b never 1"; exit 1; }
# The set-up was 18 commands in the NICs' mailboxes (no verbs call).
id=$(awk '/^\$var .* commands /{print $4; exit}' "$vcd")
grep -q "^b10010 $id\$" "$vcd" || { echo "commands never 18"; exit 1; }
echo "driver_on_model_test: ok"
