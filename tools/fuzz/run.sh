#!/bin/bash
# Builds sequence_fuzzer (build.sh) and fuzzes for SECONDS (default 60) from the seed corpus;
# fails (exit 1) when the fuzzer finds a crash, printing the sequence and the rule it broke.
#   tools/fuzz/run.sh [SECONDS]          CI: tools/fuzz/run.sh 60
# Honours build.sh's variables ($CXX, $OUT, $WORK, ...). The corpus grows in $WORK/corpus and
# is kept between runs; crash inputs are written to $WORK/artifacts/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -eq 0 ]]; then
  echo "run.sh: SECONDS must be a positive integer, not '$seconds'" >&2
  exit 2
fi
export OUT="${OUT:-/tmp/qptwin-fuzz/out}"
export WORK="${WORK:-/tmp/qptwin-fuzz/work}"

if [[ -z "${CXX:-}" && -x "$root/tools/install-deps" ]]; then
  "$root/tools/install-deps" --quiet --fuzz  # Debian's clang and libFuzzer
fi
"$root/tools/fuzz/build.sh"

corpus="$WORK/corpus"
artifacts="$WORK/artifacts"
mkdir -p "$corpus" "$artifacts"
unzip -q -o "$OUT/sequence_fuzzer_seed_corpus.zip" -d "$corpus"
log="$WORK/fuzz.log"

# The .options file's [libfuzzer] settings as flags (as OSS-Fuzz passes them).
opts=()
while IFS='=' read -r key value; do
  key="$(echo "$key" | tr -d ' ')"
  [[ -z "$key" || "$key" == \#* || "$key" == \[* ]] && continue
  opts+=("-$key=$(echo "$value" | tr -d ' ')")
done < "$OUT/sequence_fuzzer.options"

echo "run.sh: fuzzing for ${seconds} s (${opts[*]}); log in $log" >&2
set +e
"$OUT/sequence_fuzzer" "${opts[@]}" -max_total_time="$seconds" -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1
rc=$?
set -e
grep -E '^#[0-9]+ +DONE|^stat::number_of_executed_units|^stat::average_exec_per_sec|known open bug' \
  "$log" >&2 || true
if grep -q "SystemC's main() ran" "$log"; then
  echo "run.sh: SystemC's main() ran instead of libFuzzer's (see $log)" >&2
  exit 1
fi
if [[ $rc -ne 0 ]]; then
  grep -A40 -E 'sequence_fuzzer: profile .* broke a rule|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error' \
    "$log" | head -80 >&2 || tail -40 "$log" >&2
  echo "run.sh: the fuzzer found a crash (exit $rc); inputs in $artifacts/, full log $log" >&2
  echo "run.sh: replay one with: $OUT/sequence_fuzzer $artifacts/crash-..." >&2
  exit 1
fi
if ! grep -q 'stat::number_of_executed_units' "$log"; then
  tail -20 "$log" >&2
  echo "run.sh: the fuzzer did not run (full log $log)" >&2
  exit 1
fi
echo "run.sh: no crash in ${seconds} s" >&2
