#!/usr/bin/env bash
# build.sh - developer and CI tasks for ggml-go.
#
#   ./build.sh test     go vet + the full test suite (what CI runs)
#   ./build.sh levels   the tests again with each SIMD level forced (scalar, avx2, avx512)
#   ./build.sh race     the test suite under the race detector
#   ./build.sh ctest    the C core's own test programs (tests/c), plain cc, no Go
#   ./build.sh asan     the C test programs under AddressSanitizer + UBSan
#   ./build.sh bench    Go benchmarks (set BENCH=regexp to narrow)
#   ./build.sh fuzz     short runs of every fuzz target (FUZZTIME=30s each)
#   ./build.sh cwarn    compile the C core with -Wall -Wextra -Werror
set -euo pipefail
cd "$(dirname "$0")"
PARITY="${GGML_PARITY_DIR:-../shared/parity}"
CC="${CC:-cc}"

cwarn() {
  for f in csrc/*.c; do
    "$CC" -std=gnu11 -O2 -Wall -Wextra -Werror -Icsrc -c "$f" -o /dev/null
  done
  echo "cwarn: csrc compiles cleanly with -Wall -Wextra"
}

# Builds and runs each tests/c program; extra flags come from $1.
ctests() {
  local flags="$1" out=/tmp/ggml-ctest
  mkdir -p "$out"
  python3 tests/c/quant-json2bin.py "$PARITY/quant" /tmp/lm-quant-parity >/dev/null
  local pass=0 fail=0
  for t in tests/c/test-*.c; do
    local name; name=$(basename "$t" .c)
    "$CC" -std=gnu11 -O1 -g $flags -pthread -Icsrc "$t" csrc/*.c -lm -o "$out/$name"
    if (cd "$PWD" && "$out/$name" >"$out/$name.log" 2>&1); then
      pass=$((pass+1)); echo "ok   $name"
    else
      fail=$((fail+1)); echo "FAIL $name"; tail -20 "$out/$name.log"
    fi
  done
  echo "ctest: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

case "${1:-test}" in
  test)
    go vet ./...
    cwarn
    go test -count=1 ./...
    ;;
  levels)
    for l in scalar avx2 avx512; do
      echo "== LM_GGML_CPU_LEVEL=$l"
      LM_GGML_CPU_LEVEL=$l go test -count=1 ./...
    done
    ;;
  race)
    go test -race -count=1 ./...
    ;;
  ctest)
    ctests ""
    ;;
  asan)
    ASAN_OPTIONS=detect_leaks=0 ctests "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    ;;
  bench)
    go test -run '^$' -bench "${BENCH:-.}" -benchmem ./...
    ;;
  fuzz)
    for pkg in . ./gguf; do
      for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
        go test -run '^$' -fuzz "^$f\$" -fuzztime "${FUZZTIME:-30s}" "$pkg"
      done
    done
    ;;
  cwarn)
    cwarn
    ;;
  *)
    sed -n '2,13p' "$0"
    exit 2
    ;;
esac
