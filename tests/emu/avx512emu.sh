#!/usr/bin/env bash
# avx512emu.sh - runs C test programs of the core at the AVX-512 level on an
# emulated CPU that has it (./build.sh avx512emu). Slow (tens of minutes on a
# loaded machine); not part of `./build.sh test` or CI.
#
# Bochs (Debian package) emulates Intel models with AVX-512; QEMU's TCG does
# not. The guest is a Debian kernel, booted by isolinux from an ISO, with
# an initramfs holding our init (tests/emu/init.c) and the statically linked
# test programs. The programs' output goes to the emulated serial port, which
# Bochs writes to a file; init powers off when they are done.
#
# Everything comes from Debian packages: bochs, bochsbios, vgabios, xorriso,
# isolinux, syslinux-common, cpio are installed with apt-get if missing (root);
# the kernel package is only downloaded and unpacked into the scratch dir.
#
# The default model, tigerlake, has AVX512_VNNI (and VBMI, IFMA, BITALG...),
# so the quantized kernels run their VNNI forms (test-vnni compares them with
# the AVX2 ones bit for bit). It boots Debian's 6.12 kernel (bookworm-security,
# linux-image-6.12-amd64: 2 minutes to the tests on a loaded 2-core host).
# Debian's 6.1 kernel (linux-image-amd64) does not boot on tigerlake nor on
# corei7_icelake_u: while printk formats the LSM "landlock" line, a memmove
# of a negative length (rdx 0xffffffffff98cfd9) runs past the kernel image's
# end (0xffffffff84600000, .init.scratch), and the page fault handler then
# faults on its own per-CPU area (0xffff88801f41fb80: PDPE not present),
# again and again (seen with Bochs's cpu0 debug log and debugger; clearcpuid
# of UMIP and RDPID, ibt=off, nofsgsbase, lpj= did not help; the cause, an
# instruction Bochs runs differently for these models, perhaps FSRM's short
# rep movsb, was not found). 6.1 still boots corei7_skylake_x.
#
# AVX512_BF16: no model of Bochs 2.7 has it; newer Bochs's sapphire_rapids
# does (with AVX512_FP16 and VNNI; the model came in January 2024, before
# Bochs 3.0). Tried with github.com/bochs-emu/Bochs at commit 783b58fd6
# (REL_3_0_FINAL-698, August 2026; it calls itself 3.0.devel), built by
# hand outside the repository (this script does not build it) and named
# with AVX512EMU_BOCHS. Its configure line, in a build directory:
#   configure --prefix=/tmp/bochs-inst --enable-x86-64 --enable-cpu-level=6
#     --enable-avx --enable-evex --enable-all-optimizations --enable-pci
#     --with-nogui
# then make -j2 (2.5 minutes here) and make install, which puts the BIOS
# images under PREFIX/share/bochs, where this script looks for them. With
# no debugger compiled in it takes no -rc file: the script asks --help.
# Debian's 6.12 kernel boots it with the default command line below (guest
# up after 20-30 s; the default test list in 5 minutes). That Bochs's
# VCVTPS2PH rounds 2^-25 right, but its VCVTNE2PS2BF16 (all lengths) fills
# the upper half of the result from the wrong elements of the first source
# (element n instead of n - half): a kernel using it fails there and not
# on a real CPU. Changing that index in the upper-half loop of
# cpu/avx/avx512_bf16.cc mends it; VCVTNEPS2BF16 and VDPBF16PS are right.
#
# Environment:
#   AVX512EMU_CPU      Bochs CPU model (default tigerlake). corei7_skylake_x:
#                      AVX-512 F/BW/VL/DQ/CD without VNNI (the VNNI kernels are
#                      then skipped: test-vnni says so and passes).
#                      sapphire_rapids (AVX512_BF16, AVX512_FP16, VNNI) needs
#                      a newer Bochs than Debian's: AVX512EMU_BOCHS.
#   AVX512EMU_BOCHS    the Bochs binary (default Debian's bochs-bin, 2.7)
#   AVX512EMU_BIOS     its BIOS image (default: the one installed beside
#                      AVX512EMU_BOCHS, under ../share/bochs, else Debian's)
#   AVX512EMU_VGABIOS  its VGA BIOS image (found the same way)
#   AVX512EMU_DISPLAY  the bochsrc display_library line's value (default rfb
#                      with Debian's Bochs, nogui with AVX512EMU_BOCHS)
#   AVX512EMU_KERNEL   the Debian package whose dependency is the kernel image
#                      (default linux-image-6.12-amd64; linux-image-amd64 is 6.1)
#   AVX512EMU_KARGS    the kernel command line (default below)
#   AVX512EMU_TESTS    the programs and arguments, ';'-separated (default below)
#   AVX512EMU_TIMEOUT  seconds of wall clock for the whole emulation (7200)
#   AVX512EMU_NICE     nice level of the emulator (19)
#   AVX512EMU_MEGS     guest memory in MB (512)
# Usage: tests/emu/avx512emu.sh SCRATCH_DIR   (from the repository root)
set -euo pipefail
SCRATCH="$1"
work="$SCRATCH/avx512emu"
CPU="${AVX512EMU_CPU:-tigerlake}"
KPKG="${AVX512EMU_KERNEL:-linux-image-6.12-amd64}"
# The float weight types have AVX-512 kernels (mm-float.c); the quantized
# ones run the AVX2 kernels at the AVX-512 level, or their VNNI forms where
# the CPU has VNNI (test-vnni: bit for bit against AVX2); bf16 weights take
# the vdpbf16ps kernels where it has AVX512_BF16 (test-bf16-dot; a model
# with it, e.g. sapphire_rapids, runs them in every bf16 test). All types:
# AVX512EMU_TESTS='test-batch-invariance 2;test-matmul 2' (hours).
QTYPES=q4_0,q8_0,q4_1,q5_0,q4_K,q6_K
TESTS="${AVX512EMU_TESTS:-test-vnni;test-bf16-dot;test-fp16-rows 2;test-batch-invariance 2 f32,f16,bf16,$QTYPES;test-matmul 2 f32,f16,bf16,$QTYPES}"
TIMEOUT="${AVX512EMU_TIMEOUT:-7200}"
NICE="${AVX512EMU_NICE:-19}"
MEGS="${AVX512EMU_MEGS:-512}"
BOCHS="${AVX512EMU_BOCHS:-bochs-bin}"
BIOS="${AVX512EMU_BIOS:-}"
VGABIOS="${AVX512EMU_VGABIOS:-}"
# a Bochs of one's own brings its BIOS images; Debian's are the fallback
if [ -n "${AVX512EMU_BOCHS:-}" ]; then
  share="$(dirname "$BOCHS")/../share/bochs"
  [ -n "$BIOS" ] || [ ! -f "$share/BIOS-bochs-latest" ] || BIOS="$share/BIOS-bochs-latest"
  for f in "$share/VGABIOS-lgpl-latest.bin" "$share/VGABIOS-lgpl-latest"; do
    [ -n "$VGABIOS" ] || [ ! -f "$f" ] || VGABIOS="$f"
  done
fi
BIOS="${BIOS:-/usr/share/bochs/BIOS-bochs-latest}"
# Debian's Bochs has rfb (the VNC display, told not to wait for a client);
# one built --with-nogui has only nogui
DISPLAY_LIB="${AVX512EMU_DISPLAY:-nogui}"
[ -n "${AVX512EMU_BOCHS:-}" ] || DISPLAY_LIB="${AVX512EMU_DISPLAY:-rfb, options=\"timeout=0\"}"
KARGS="${AVX512EMU_KARGS:-console=ttyS0,115200 nokaslr nopku clearcpuid=pku,ospke,xsavec,xsaves,aperfmperf idle=nomwait mitigations=off lpj=800000 tsc_early_khz=200000 printk.time=1 quiet}"
mkdir -p "$work/debs"

# ---- host tools (Debian packages)
need=()
[ -n "${AVX512EMU_BOCHS:-}" ] || command -v bochs-bin >/dev/null || need+=(bochs bochsbios vgabios)
[ -f "$BIOS" ] || need+=(bochsbios)
[ -n "$VGABIOS" ] || [ -f /usr/share/vgabios/vgabios.bin ] || [ -f /usr/share/bochs/VGABIOS-lgpl-latest ] || need+=(vgabios)
command -v xorriso >/dev/null || need+=(xorriso)
command -v cpio >/dev/null || need+=(cpio)
[ -f /usr/lib/ISOLINUX/isolinux.bin ] || need+=(isolinux)
[ -f /usr/lib/syslinux/modules/bios/ldlinux.c32 ] || need+=(syslinux-common)
if [ "${#need[@]}" -gt 0 ]; then
  echo "avx512emu: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# the model must be one this Bochs knows, or it stops at its first line
if ! { "$BOCHS" --help cpu 2>&1 || true; } | grep -x "$CPU" >/dev/null; then
  echo "avx512emu: $BOCHS has no CPU model $CPU ($BOCHS --help cpu lists them)"; exit 1
fi

# ---- the guest kernel: Debian's, unpacked (not installed)
kdir="$work/kernel-$KPKG"
kernel="$(ls "$kdir"/boot/vmlinuz-* 2>/dev/null | head -1 || true)"
if [ -z "$kernel" ]; then
  pkg="$(apt-cache depends "$KPKG" | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')"
  [ -n "$pkg" ] || { apt-get update -qq; pkg="$(apt-cache depends "$KPKG" | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')"; }
  [ -n "$pkg" ] || { echo "avx512emu: no kernel image package behind $KPKG"; exit 1; }
  echo "avx512emu: downloading $pkg"
  (cd "$work/debs" && apt-get download -q "$pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
  rm -rf "$kdir" && dpkg-deb -x "$work"/debs/"$pkg"_*.deb "$kdir"
  kernel="$(ls "$kdir"/boot/vmlinuz-* | head -1)"
fi

# ---- the programs: static, optimized as the Go package builds the core
obj="$work/obj" && rm -rf "$obj" && mkdir -p "$obj"
for f in $(find csrc -name '*.c'); do
  nice -n "$NICE" "${CC:-cc}" -std=gnu11 -O2 -pthread $(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)-c "$f" -o "$obj/$(basename "$f" .c).o" &
done
wait
root="$work/root" && rm -rf "$root" && mkdir -p "$root/dev" "$root/proc" "$root/t"
nice -n "$NICE" "${CC:-cc}" -static -O2 -Wall -Wextra tests/emu/init.c -o "$root/init"
: >"$root/t/list"
IFS=';' read -ra lines <<<"$TESTS"
for line in "${lines[@]}"; do
  prog="${line%% *}"
  [ -x "$root/t/$prog" ] || nice -n "$NICE" "${CC:-cc}" -static -std=gnu11 -O2 -pthread $(for d in csrc/*/; do printf -- '-I%s ' "${d%/}"; done)-Itests/c \
    "tests/c/$prog.c" "$obj"/*.o -lm -o "$root/t/$prog" 2>&1 | grep -v -e getaddrinfo -e 'in function' || true
  [ -x "$root/t/$prog" ] || { echo "avx512emu: $prog did not build"; exit 1; }
  echo "$line" >>"$root/t/list"
done

# ---- boot medium: isolinux ISO with the kernel and the initramfs
iso="$work/iso" && rm -rf "$iso" && mkdir -p "$iso/isolinux"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$iso/initrd.gz"
cp "$kernel" "$iso/vmlinuz"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$iso/isolinux/"
# Two faults of Bochs 2.7's CPUID leaf 0xD make Linux find the XSAVE layout
# inconsistent, and then it turns XSAVE off, and with it AVX and AVX-512:
# - it offers the PKRU state in XCR0 but gives it no size or offset
#   (subleaf 9 is all zeros): nopku and clearcpuid=515,516 (PKU, OSPKE: word
#   16, bits 3 and 4) take protection keys out;
# - subleaf 1 reports the standard-format size where the compacted size
#   belongs: clearcpuid=321,323 (XSAVEC, XSAVES: word 10, bits 1 and 3) keep
#   the kernel on the standard format.
# Bochs has no APERF/MPERF MSRs though tigerlake's CPUID offers them: every
# scheduler tick would fault on them; clearcpuid=124 (APERFMPERF: word 3,
# bit 28). idle=nomwait keeps the idle loop on HLT. (6.12 takes the
# features' names: pku, ospke, xsavec, xsaves, aperfmperf.)
# tigerlake's CPUID gives the TSC 2.4 GHz, while Bochs counts it at the
# emulated instruction rate (ips below): lpj and tsc_early_khz tell the
# kernel 200 MHz, so its delay loops (the serial console's, per character)
# are not 12 times too long.
cat >"$iso/isolinux/isolinux.cfg" <<CFG
DEFAULT emu
PROMPT 0
TIMEOUT 0
LABEL emu
  KERNEL /vmlinuz
  INITRD /initrd.gz
  APPEND $KARGS
CFG
xorriso -as mkisofs -quiet -o "$work/emu.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
  -no-emul-boot -boot-load-size 4 -boot-info-table "$iso" 2>/dev/null

# ---- Bochs: no display (the VNC display waits for no client), no sound;
# the clock follows the instruction count, so the guest's timeouts do not
# fire early however slowly the host runs it. The Debian build has the
# debugger compiled in: the rc file tells it to continue, then to quit.
vga="$VGABIOS"
[ -n "$vga" ] || vga=/usr/share/bochs/VGABIOS-lgpl-latest
[ -f "$vga" ] || vga=/usr/share/vgabios/vgabios.bin
cat >"$work/bochsrc" <<RC
megs: $MEGS
cpu: model=$CPU, count=1, ips=200000000
romimage: file=$BIOS
vgaromimage: file=$vga
ata0-master: type=cdrom, path=$work/emu.iso, status=inserted
boot: cdrom
display_library: $DISPLAY_LIB
speaker: enabled=0
com1: enabled=1, mode=file, dev=$work/serial.out
log: $work/bochs.log
panic: action=fatal
error: action=report
info: action=ignore
clock: sync=none, time0=local
RC
printf 'c\nquit\n' >"$work/dbg.rc"
rc=()
if { "$BOCHS" --help 2>&1 || true; } | grep -- '-rc filename' >/dev/null; then rc=(-rc "$work/dbg.rc"); fi
rm -f "$work/serial.out"
echo "avx512emu: booting $BOCHS (cpu model $CPU); serial output in $work/serial.out"
start=$(date +%s)
nice -n "$NICE" "$BOCHS" -q -f "$work/bochsrc" "${rc[@]}" >"$work/bochs.stdout" 2>&1 </dev/null &
pid=$!
booted=""
while kill -0 "$pid" 2>/dev/null; do
  sleep 5
  now=$(date +%s)
  if [ -z "$booted" ] && grep -q '^EMU-BOOTED' "$work/serial.out" 2>/dev/null; then
    booted=$((now - start)); echo "avx512emu: guest up after ${booted}s"
  fi
  grep -q '^EMU-DONE' "$work/serial.out" 2>/dev/null && { sleep 5; break; }
  if [ $((now - start)) -gt "$TIMEOUT" ]; then echo "avx512emu: timeout after ${TIMEOUT}s"; break; fi
done
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
echo "avx512emu: $(( $(date +%s) - start ))s in the emulator"
tr -d '\r' <"$work/serial.out" | sed -n '/^EMU-BOOTED/,$p' | grep -v '^flags' | tee "$work/result.txt"
tr -d '\r' <"$work/serial.out" | grep -m1 '^flags' | tr ' ' '\n' | grep '^avx512' | tr '\n' ' ' | sed 's/^/guest avx512 flags: /; s/$/\n/'
# a program that finds no AVX-512 skips the level and passes: not a pass here
if ! tr -d '\r' <"$work/serial.out" | grep -m1 '^flags' | grep -qw avx512f; then
  echo "avx512emu: FAILED: the guest has no AVX-512 (see $work/serial.out)"; exit 1
fi
if grep -q 'level 2 not available' "$work/result.txt"; then echo "avx512emu: FAILED: level 2 skipped"; exit 1; fi
# likewise test-vnni's skip where the guest has VNNI
if tr -d '\r' <"$work/serial.out" | grep -m1 '^flags' | grep -qw avx512_vnni && grep -q '^SKIP: no AVX512_VNNI' "$work/result.txt"; then
  echo "avx512emu: FAILED: the guest has AVX512_VNNI but test-vnni skipped"; exit 1
fi
# and test-bf16-dot's where it has AVX512_BF16
if tr -d '\r' <"$work/serial.out" | grep -m1 '^flags' | grep -qw avx512_bf16 && grep -q '^SKIP: no AVX512_BF16' "$work/result.txt"; then
  echo "avx512emu: FAILED: the guest has AVX512_BF16 but test-bf16-dot skipped"; exit 1
fi
# Bochs 2.7's VCVTPS2PH rounds 2^-25 (the tie between zero and the least fp16
# subnormal) up to that subnormal instead of to the even zero, at the AVX2
# level too (where real CPUs pass test-fp16-rows): such failures, and only
# they, are the emulator's.
known='fp32_to_fp16_row level [12] .*input 0x[3b]3000000 gives 0x0000[08]001'
if grep -q '^EMU-END test-fp16-rows rc=1' "$work/result.txt" && ! grep '^FAIL ' "$work/result.txt" | grep -qv "$known"; then
  echo "avx512emu: test-fp16-rows: only the known Bochs VCVTPS2PH fault (2^-25 rounds up)"
  sed -i 's/^EMU-END test-fp16-rows rc=1/EMU-END test-fp16-rows rc=0 (known emulator fault)/; s/^EMU-DONE fails=\([0-9]*\)/echo "EMU-DONE fails=$((\1-1))"/e' "$work/result.txt"
fi
grep -q '^EMU-DONE fails=0' "$work/result.txt" || { echo "avx512emu: FAILED"; exit 1; }
echo "avx512emu: all programs passed at the AVX-512 level ($CPU)"
