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
expect_value link_busy 1 "nic_a's link_busy never 1"
expect_value state b11 "nic_a's qp0.state never RTS"
# mdev0's driver took two CQEs, mdev1's one; mdev1's driver was woken by one interrupt.
expect_value cqes_a b10 "cqes_a never 2"
expect_value interrupts_b b1 "interrupts_b never 1"
# The set-up was 18 commands in the NICs' mailboxes (no verbs call).
expect_value commands b10010 "commands never 18"
echo "driver_on_model_test: ok"
