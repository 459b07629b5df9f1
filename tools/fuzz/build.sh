#!/bin/bash -eu
# Builds the libFuzzer target sequence_fuzzer outside Bazel (Bazel here uses gcc), in OSS-Fuzz
# style: honours $CC $CXX $CFLAGS $CXXFLAGS $LIB_FUZZING_ENGINE $OUT (and $WORK for objects).
# Defaults: Debian's clang with -fsanitize=fuzzer,address,undefined; OUT=/tmp/qptwin-fuzz/out.
#
#   tools/fuzz/build.sh          -> $OUT/sequence_fuzzer, sequence_fuzzer.options,
#                                   sequence_fuzzer_seed_corpus.zip
#
# Compiles spec/, the model (model/**/*.cc but tests, benches and mains) and the sequence
# reference (spec/reference/) directly, and links -lsystemc. Objects are reused while their
# source and every header are older than them.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

CC="${CC:-clang}"
CXX="${CXX:-clang++}"
sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
CFLAGS="${CFLAGS:--O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $sanitizers}"
CXXFLAGS="${CXXFLAGS:-$CFLAGS}"
LIB_FUZZING_ENGINE="${LIB_FUZZING_ENGINE:--fsanitize=fuzzer $sanitizers}"
OUT="${OUT:-/tmp/qptwin-fuzz/out}"
WORK="${WORK:-/tmp/qptwin-fuzz/work}"

if ! command -v "${CXX%% *}" >/dev/null; then
  echo "build.sh: $CXX not found (install it: tools/install-deps --fuzz)" >&2
  exit 2
fi

# The libraries by directory (as //spec, //spec/reference and //model hold them), so a file
# added there is picked up without editing this list.
sources=(tools/fuzz/known_bugs.cc tools/fuzz/sequence_fuzzer.cc)
while IFS= read -r f; do sources+=("$f"); done < <(
  find spec spec/reference -maxdepth 1 -name '*.cc' ! -name '*_test.cc' | sort
  find model -name '*.cc' ! -name '*_test.cc' ! -name '*_bench.cc' ! -name '*main*.cc' | sort)

mkdir -p "$OUT" "$WORK/obj"
newest_header="$(find spec model tests tools/fuzz -name '*.h' -printf '%T@ %p\n' | sort -n |
                 tail -1 | cut -d' ' -f2)"
flags_file="$WORK/obj/flags"
flags="$CXX -std=c++17 $CXXFLAGS"
if [[ ! -f "$flags_file" || "$(cat "$flags_file")" != "$flags" ]]; then
  rm -f "$WORK"/obj/*.o
  echo "$flags" > "$flags_file"
fi

# Compile what is out of date, two at a time (the machine is shared).
stale=()
for src in "${sources[@]}"; do
  obj="$WORK/obj/$(echo "${src%.cc}" | tr / _).o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" || "$newest_header" -nt "$obj" ]]; then
    stale+=("$src")
  fi
done
echo "build.sh: compiling ${#stale[@]} of ${#sources[@]} sources with $CXX" >&2
compile() {
  local src="$1"
  local obj="$WORK/obj/$(echo "${src%.cc}" | tr / _).o"
  # shellcheck disable=SC2086
  $CXX -std=c++17 $CXXFLAGS -I"$root" -c "$src" -o "$obj.tmp" && mv "$obj.tmp" "$obj"
}
export -f compile
export CXX CXXFLAGS WORK root
if [[ ${#stale[@]} -gt 0 ]]; then
  printf '%s\n' "${stale[@]}" | xargs -P 2 -I{} bash -c 'compile "$1"' _ {}
fi

objs=()
for src in "${sources[@]}"; do objs+=("$WORK/obj/$(echo "${src%.cc}" | tr / _).o"); done
# shellcheck disable=SC2086
$CXX $CXXFLAGS "${objs[@]}" $LIB_FUZZING_ENGINE -lsystemc -lpthread -o "$OUT/sequence_fuzzer"

# libsystemc.so exports main(): libFuzzer's must be the executable's own.
if ! nm "$OUT/sequence_fuzzer" | grep -q ' T main$'; then
  echo "build.sh: sequence_fuzzer does not define main(); SystemC's would run" >&2
  exit 1
fi

cp tools/fuzz/sequence_fuzzer.options "$OUT/"
rm -f "$OUT/sequence_fuzzer_seed_corpus.zip"
(cd tools/fuzz/corpus && zip -q -X "$OUT/sequence_fuzzer_seed_corpus.zip" ./*)
echo "build.sh: built $OUT/sequence_fuzzer" >&2
