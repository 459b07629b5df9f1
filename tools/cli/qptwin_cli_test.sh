#!/bin/bash
# Runs the real qptwin binary: the exit codes and error lines of tools/cli/README.md ("Exit
# codes and errors"), case by case, and check's output for a few lines.
set -u
QPTWIN="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/qptwin"
TMP="${TEST_TMPDIR:-$(mktemp -d)}"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

expect_exit() {  # expect_exit CODE ARGS...
  local want=$1
  shift
  "$QPTWIN" "$@" >/dev/null 2>&1 </dev/null
  local got=$?
  if [[ $got -ne $want ]]; then
    fail "qptwin $* exited $got, want $want"
  fi
}

# expect_error CODE NEEDLE ARGS...: exits CODE with exactly one stderr line, which starts
# with "qptwin: " and contains NEEDLE. stdin is $STDIN (default /dev/null).
expect_error() {
  local want=$1 needle=$2
  shift 2
  "$QPTWIN" "$@" >"$TMP/out" 2>"$TMP/err" <"${STDIN:-/dev/null}"
  local got=$?
  local err
  err=$(cat "$TMP/err")
  if [[ $got -ne $want ]]; then
    fail "qptwin $* exited $got, want $want (stderr: $err)"
  elif [[ $(wc -l <"$TMP/err") -ne 1 || "$err" != "qptwin: "* ]]; then
    fail "qptwin $* stderr is not one 'qptwin: ' line: $err"
  elif [[ "$err" != *"$needle"* ]]; then
    fail "qptwin $* stderr lacks '$needle': $err"
  fi
}

GOOD_QPS="$TMP/good.qps"
printf 'device d profile=rxe\npd p\ncq c\nqp a type=RC pd=p send_cq=c recv_cq=c\nmodify a state=INIT pkey_index=0 port=1 access=0 expect=ok\n' >"$GOOD_QPS"
FAILING_QPS="$TMP/failing.qps"
printf 'device d\npd p\ncq c\nqp a type=RC pd=p send_cq=c recv_cq=c\nmodify a state=RTR expect=ok\n' >"$FAILING_QPS"
BAD_QPS="$TMP/bad.qps"
printf 'device d\npd p\nmr m pd=p\n' >"$BAD_QPS"
DIR="$TMP/a_directory"
mkdir -p "$DIR"

# --- 0: success; help on stdout for every subcommand -----------------------------------
expect_exit 0 help
expect_exit 0
expect_exit 0 --help
for cmd in explain check table diagram demo run diff report fuzz bench; do
  for h in --help -h; do
    out=$("$QPTWIN" "$cmd" "$h" 2>"$TMP/err")
    code=$?
    if [[ $code -ne 0 || "$out" != "usage: qptwin $cmd"* || -s "$TMP/err" ]]; then
      fail "qptwin $cmd $h: exit $code, stdout '${out:0:40}', stderr '$(cat "$TMP/err")'"
    fi
  done
done
expect_exit 0 explain --type RC --from INIT --to RTR \
  --attrs STATE,AV,PATH_MTU,DEST_QPN,RQ_PSN,MAX_DEST_RD_ATOMIC,MIN_RNR_TIMER
expect_exit 0 table --format json
expect_exit 0 diagram --type UD
expect_exit 0 run "$GOOD_QPS"

# --- 1: an illegal request (explain), a failed expectation (run, report) ----------------
expect_exit 1 explain --type RC --from RESET --to RTR --attrs STATE
"$QPTWIN" run "$FAILING_QPS" >/dev/null 2>"$TMP/err"
code=$?
if [[ $code -ne 1 || "$(cat "$TMP/err")" != "qptwin: run: $FAILING_QPS: line 5: expected ok, got EINVAL"* ]]; then
  fail "run with a failed expectation: exit $code, stderr $(cat "$TMP/err")"
fi
expect_exit 1 report "$FAILING_QPS" -o "$TMP/failing.html"

# --- 2: bad usage, one line ----------------------------------------------------------------
expect_error 2 "unknown command 'frobnicate' (valid: explain, check, table, diagram, demo" frobnicate
for cmd in explain check table diagram demo run diff report fuzz bench; do
  expect_error 2 "qptwin: $cmd: unknown flag '--bogus-flag' (valid: " "$cmd" --bogus-flag
done
expect_error 2 "unknown QP type 'RD'" explain --type RD --from RESET --to RTR --attrs STATE
expect_error 2 "unknown table format 'yaml'" table --format yaml
expect_error 2 "unknown diagram format 'png'" diagram --type UD --format png
expect_error 2 "unknown flag '--frobnicate'" check --frobnicate
expect_error 2 "run: unknown flag '--frobnicate'" run --frobnicate "$GOOD_QPS"
expect_error 2 "run: no scenario FILE given" run
expect_error 2 "diff: missing --against" diff "$GOOD_QPS"
expect_error 2 "report: missing -o" report "$GOOD_QPS"
expect_error 2 "unknown backend 'fpga' (valid: model, hw)" run --backend fpga "$GOOD_QPS"
expect_error 2 "unknown backend 'fpga' (valid: model, hw)" fuzz --backend fpga
expect_error 2 "unknown backend 'fpga' (valid: model, hw)" bench write_bw --backend fpga
expect_error 2 "unknown model profile 'nosuch' (valid: " run --profile nosuch "$GOOD_QPS"
expect_error 2 "unknown model profile 'nosuch' (valid: " bench write_bw --profile nosuch
expect_error 2 "bench: unknown test 'ping_bw'" bench ping_bw
expect_error 2 "bench report: unknown flag '--bogus' (valid: --out VALUE, --speed-vs-qps, --help)" bench report --bogus
expect_error 2 "no device 'bogus' (found: mdev0, mdev1)" bench write_bw -d bogus -n 10
expect_error 2 "no device 'bogus' (found: mdev0)" run --device bogus "$GOOD_QPS"
expect_error 2 "$BAD_QPS:3: missing len=" run "$BAD_QPS"
expect_error 2 "$BAD_QPS:3: missing len=" report "$BAD_QPS" -o "$TMP/bad.html"
if [[ ! -e /sys/class/infiniband ]] || [[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]]; then
  expect_error 2 "--backend hw: no RDMA device found" run --backend hw "$GOOD_QPS"
  expect_error 2 "--backend hw: no RDMA device found" fuzz --backend hw --seconds 1
  expect_error 2 "--backend hw: no RDMA device found" bench write_bw --backend hw -d bogus
  # The server fails at once instead of waiting for a client.
  STDIN=/dev/null expect_error 2 "--backend hw: no RDMA device found" \
    bench write_bw --backend hw --server --port 18999
fi

# --- 2: unreadable input, named with strerror's words -------------------------------------
expect_error 2 "run: cannot read $DIR: is a directory" run "$DIR"
expect_error 2 "diff: cannot read $DIR: is a directory" diff --against model "$DIR"
expect_error 2 "report: cannot read $DIR: is a directory" report "$DIR" -o "$TMP/dir.html"
expect_error 2 "cannot read $TMP/none.qps: no such file or directory" run "$TMP/none.qps"
STDIN="$DIR" expect_error 2 "check: cannot read standard input: is a directory" check
STDIN="$DIR" expect_error 2 "run: cannot read standard input: is a directory" run -
"$QPTWIN" check <&- >/dev/null 2>"$TMP/err"
[[ $? -eq 2 && "$(cat "$TMP/err")" == "qptwin: check: cannot read standard input: bad file descriptor" ]] ||
  fail "check <&-: $(cat "$TMP/err")"
if [[ $(id -u) -ne 0 ]]; then
  printf 'device d\n' >"$TMP/secret.qps"
  chmod 000 "$TMP/secret.qps"
  expect_error 2 "cannot read $TMP/secret.qps: permission denied" run "$TMP/secret.qps"
fi

# --- 2: unwritable output: stdout, -o files, --plot ---------------------------------------
"$QPTWIN" table >/dev/full 2>"$TMP/err"
[[ $? -eq 2 && "$(cat "$TMP/err")" == "qptwin: cannot write standard output: no space left on device" ]] ||
  fail "table >/dev/full: $(cat "$TMP/err")"
"$QPTWIN" table >&- 2>"$TMP/err"
[[ $? -eq 2 && "$(cat "$TMP/err")" == "qptwin: cannot write standard output: bad file descriptor" ]] ||
  fail "table >&-: $(cat "$TMP/err")"
"$QPTWIN" check --sweep RC INIT RTR >/dev/full 2>"$TMP/err"
[[ $? -eq 2 && "$(cat "$TMP/err")" == "qptwin: check: cannot write standard output: no space left on device" ]] ||
  fail "check --sweep >/dev/full: $(cat "$TMP/err")"
"$QPTWIN" run - <"$GOOD_QPS" >/dev/full 2>"$TMP/err"
[[ $? -eq 2 && "$(cat "$TMP/err")" == "qptwin: cannot write standard output: no space left on device" ]] ||
  fail "run - >/dev/full: $(cat "$TMP/err")"
"$QPTWIN" report "$GOOD_QPS" -o - >/dev/full 2>"$TMP/err"
[[ $? -eq 2 && "$(cat "$TMP/err")" == "qptwin: report: cannot write standard output: no space left on device" ]] ||
  fail "report -o - >/dev/full: $(cat "$TMP/err")"
expect_error 2 "diagram: cannot write /dev/full: no space left on device" diagram --type RC -o /dev/full
expect_error 2 "diagram: cannot write $DIR: is a directory" diagram --type RC -o "$DIR"
expect_error 2 "diagram: cannot write $TMP/no/x.dot: no such file or directory" \
  diagram --type RC -o "$TMP/no/x.dot"
expect_error 2 "report: cannot write /dev/full: no space left on device" \
  report "$GOOD_QPS" -o /dev/full
expect_error 2 "run: --vcd: cannot write $DIR: is a directory" run --vcd "$DIR" "$GOOD_QPS"
expect_error 2 "bench: --plot: cannot write /dev/full: no space left on device" \
  bench write_bw -n 20 --plot /dev/full
expect_error 2 "bench: --plot: cannot write $TMP/no/p.svg: no such file or directory" \
  bench write_bw -n 20 --plot "$TMP/no/p.svg"

# report -o - writes the page to stdout, and no file named '-'.
(cd "$TMP" && "$QPTWIN" report "$GOOD_QPS" -o - >"$TMP/page.html" 2>"$TMP/err")
code=$?
if [[ $code -ne 0 || "$(head -c 15 "$TMP/page.html")" != "<!DOCTYPE html>" || -e "$TMP/-" || -s "$TMP/err" ]]; then
  fail "report -o -: exit $code, page '$(head -c 40 "$TMP/page.html")', stderr $(cat "$TMP/err")"
fi

# --- control bytes are escaped wherever input is echoed -----------------------------------
"$QPTWIN" explain --type $'\e[31mRC' --from INIT --attrs STATE 2>"$TMP/err" >/dev/null
if grep -q $'\e' "$TMP/err" || ! grep -qF "'\\x1b[31mRC'" "$TMP/err"; then
  fail "explain echoes raw ESC: $(cat -v "$TMP/err")"
fi
printf 'RC\001 INIT RTR 0x1\n' | "$QPTWIN" check >"$TMP/out" 2>"$TMP/err"
if grep -q $'\001' "$TMP/out" "$TMP/err" || ! grep -qF "'RC\\x01'" "$TMP/out"; then
  fail "check echoes raw control bytes: $(cat -v "$TMP/out" "$TMP/err")"
fi
printf 'RC INIT RTR 0x1\0\n' | "$QPTWIN" check >"$TMP/out" 2>"$TMP/err"
if [[ $(tr -cd '\000' <"$TMP/out" | wc -c) -ne 0 ]] || ! grep -qF "'0x1\\x00'" "$TMP/out"; then
  fail "check echoes a raw NUL: $(cat -v "$TMP/out")"
fi
expect_error 2 "unexpected argument '\\x1b]0;x\\x07'" table $'\e]0;x\a'

# --- check: verdicts on stdout; malformed lines also on stderr with their line number -----
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
  fail "check exited $code with output: $got"
fi

got=$(printf '# header\nRC INIT RTR 0x1\nRD INIT RTR 0x1\n' | "$QPTWIN" check 2>"$TMP/err")
code=$?
if [[ $code -ne 2 || "$got" != "illegal missing required "*$'\n'"error unknown QP type 'RD' (valid: "* ]]; then
  fail "check with a malformed line exited $code with output: $got"
fi
if [[ "$(cat "$TMP/err")" != "qptwin: check: line 3: unknown QP type 'RD' (valid: "* ]]; then
  fail "check's malformed line on stderr: $(cat "$TMP/err")"
fi

lines=$("$QPTWIN" check --sweep RC INIT RTR | "$QPTWIN" check | grep -c '^legal$')
if [[ "$lines" != 16 ]]; then
  fail "the RC INIT RTR sweep has $lines legal masks, want 16"
fi

if [[ $failures -ne 0 ]]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
