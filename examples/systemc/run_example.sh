# Sourced by the SystemC examples' tests: run_example BIN NAME VERDICT runs BIN with an
# output directory, prints its log, fails unless a line starts with VERDICT (a binary whose
# sc_main never ran prints none), and sets $log and $vcd (OUT/NAME.log, OUT/NAME.vcd, which
# must exist and not be empty).
run_example() {
  local bin="$1" name="$2" verdict="$3" out="${TEST_TMPDIR:-$(mktemp -d)}"
  log="$out/$name.log"
  SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$bin" "$out" >"$log" 2>&1 || { cat "$log"; echo "example failed"; exit 1; }
  cat "$log"
  grep -q "^$verdict" "$log" || { echo "no verdict line '$verdict': sc_main did not run?"; exit 1; }
  vcd="$out/$name.vcd"
  [[ -s "$vcd" ]] || { echo "no VCD at $vcd"; exit 1; }
}

# expect_scopes S...: the VCD has a module scope of each name.
expect_scopes() {
  local s
  for s in "$@"; do
    grep -q "^\$scope module $s \$end" "$vcd" || { echo "VCD lacks scope $s"; exit 1; }
  done
}

# expect_pairs V...: the VCD has exactly two variables of each name (one per NIC).
expect_pairs() {
  local v
  for v in "$@"; do
    [[ $(grep -c "^\$var .* $v " "$vcd") -eq 2 ]] || { echo "VCD lacks $v of both NICs"; exit 1; }
  done
}

# expect_value V VALUE WHAT: the first VCD variable named V takes VALUE at some time (VALUE as
# the VCD writes it: "1" for a bool, "b11" for an integer 3); else fails saying WHAT.
expect_value() {
  local id
  id=$(awk -v v="$1" '$1 == "$var" && $5 == v {print $4; exit}' "$vcd")
  [[ -n "$id" ]] || { echo "VCD lacks $1"; exit 1; }
  if [[ "$2" == b* ]]; then
    grep -q "^$2 $id\$" "$vcd" || { echo "$3"; exit 1; }
  else
    grep -q "^$2$id\$" "$vcd" || { echo "$3"; exit 1; }
  fi
}
