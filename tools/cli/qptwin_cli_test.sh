#!/bin/bash
# Runs the real qptwin binary: exit codes 0/1/2 and check's output for a few lines.
set -u
QPTWIN="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/qptwin"
failures=0

expect_exit() {  # expect_exit CODE ARGS...
  local want=$1
  shift
  "$QPTWIN" "$@" >/dev/null 2>&1 </dev/null
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: qptwin $* exited $got, want $want"
    failures=$((failures + 1))
  fi
}

expect_exit 0 help
expect_exit 0
expect_exit 0 --help
expect_exit 2 frobnicate
expect_exit 0 explain --type RC --from INIT --to RTR \
  --attrs STATE,AV,PATH_MTU,DEST_QPN,RQ_PSN,MAX_DEST_RD_ATOMIC,MIN_RNR_TIMER
expect_exit 1 explain --type RC --from RESET --to RTR --attrs STATE
expect_exit 2 explain --type RD --from RESET --to RTR --attrs STATE
expect_exit 0 table --format json
expect_exit 2 table --format yaml
expect_exit 0 diagram --type UD
expect_exit 2 diagram --type UD --format png

err=$("$QPTWIN" frobnicate 2>&1 >/dev/null)
if [[ "$err" != "qptwin: unknown command 'frobnicate' (valid: explain, check, table, diagram, demo"* ]]; then
  echo "FAIL: unknown command message: $err"
  failures=$((failures + 1))
fi

input='# comment
RC INIT RTR 0x1a1
rc reset init STATE|PKEY_INDEX|PORT|ACCESS_FLAGS

UD RESET INIT IBV_QP_STATE|IBV_QP_PKEY_INDEX|IBV_QP_PORT|IBV_QP_QKEY
RC RESET RTR 0x1
RC INIT RTR PKEY_INDEX'
want='illegal missing required RQ_PSN|MIN_RNR_TIMER|MAX_DEST_RD_ATOMIC|DEST_QPN; forbidden PORT (not allowed for RC INIT->RTR)
legal
legal
illegal invalid transition RESET->RTR
legal'
got=$(printf '%s\n' "$input" | "$QPTWIN" check)
code=$?
if [[ $code -ne 0 || "$got" != "$want" ]]; then
  echo "FAIL: check exited $code with output:"
  echo "$got"
  failures=$((failures + 1))
fi

got=$(printf 'RC INIT RTR 0x1\nRD INIT RTR 0x1\n' | "$QPTWIN" check)
code=$?
if [[ $code -ne 2 || "$got" != "illegal missing required "*$'\n'"error unknown QP type 'RD' (valid: "* ]]; then
  echo "FAIL: check with a malformed line exited $code with output:"
  echo "$got"
  failures=$((failures + 1))
fi

lines=$("$QPTWIN" check --sweep RC INIT RTR | "$QPTWIN" check | grep -c '^legal$')
if [[ "$lines" != 16 ]]; then
  echo "FAIL: the RC INIT RTR sweep has $lines legal masks, want 16"
  failures=$((failures + 1))
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
