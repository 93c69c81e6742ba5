#!/usr/bin/env bash
# Builds, here, everything the GPU suite runs on the device machine (which has
# no package registry and no Rust toolchain) and copies it into a bundle:
#
#   <bundle>/bin/baton              the CLI (release)
#   <bundle>/tests/<name>           every workspace test executable (release)
#   <bundle>/tests.tsv              name <TAB> relative path, one per line
#   <bundle>/ptx/*.ptx, *.ptxas.txt the kernels' PTX and ptxas reports
#   <bundle>/examples/<name>        every example's host binary (release)
#   <bundle>/examples.tsv           example::<name> <TAB> relative path
#   <bundle>/BUILD-INFO             commit, date, toolchain
#
# Then, through the device tool: run with carry [".device-bundle"] and
# command `bash tools/gpu-suite.sh .device-bundle`. See docs/GPU-SUITE.md.
#
# Usage: tools/make-device-bundle.sh [bundle-dir]   (default .device-bundle)
#
# Only the test executables whose name matches $BUNDLE_TESTS (a Python
# regex, default `gpu`: the tests that need the device; CI runs the rest)
# go in (baton-reference::gpu_gemm*, baton-selftest::gpu_*, baton-cli::gpu_*,
# xtask::linear_stage_gpu_build). Every test executable embeds the PTX, so a
# bundle over the device tool's 64 MiB carry limit is also packed into
# <bundle-dir>.tar.xz (PTX packs well: 194 MiB into 16), which gpu-suite.sh
# takes in place of the folder.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUNDLE="${1:-$ROOT/.device-bundle}"
LIMIT_MB=60
cd "$ROOT"

if [[ "$(uname -m)" != x86_64 ]]; then
    echo "make-device-bundle: this machine is $(uname -m); the device machine is x86_64 — build the bundle on x86_64" >&2
    exit 1
fi

say() { printf 'make-device-bundle: %s\n' "$*"; }

# The PTX is embedded by baton-runtime's build script; without the device
# toolchain the bundle would only skip. Refuse early.
if ! bash tools/build-ptx.sh --check --out-dir "$ROOT/target/ptx" >/dev/null; then
    echo "make-device-bundle: building the PTX failed (see above); run tools/install-device-toolchain.sh first" >&2
    exit 1
fi

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/tests" "$BUNDLE/ptx"

say "building the CLI and the test executables (release)"
cargo build --release --quiet -p baton-cli --bin baton
JSON="$(mktemp)"
trap 'rm -f "$JSON"' EXIT
cargo test --release --workspace --no-run --message-format=json --quiet > "$JSON"

cp target/release/baton "$BUNDLE/bin/baton"
python3 - "$JSON" "$BUNDLE" "${BUNDLE_TESTS:-gpu}" <<'PY'
import json, os, re, shutil, sys
src, bundle, keep = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
rows, seen = [], set()
for line in open(src):
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("profile", {}).get("test") or not m.get("executable"):
        continue
    t = m["target"]
    pkg = m["package_id"].split("#")[0].rstrip("/").split("/")[-1]
    name = f"{pkg}::{t['name']}" if "lib" not in t["kind"] and "bin" not in t["kind"] else f"{pkg}::{t['name']}[{t['kind'][0]}]"
    if name in seen or not keep.search(name):
        continue
    seen.add(name)
    dst = os.path.join("tests", name.replace("::", "__").replace("[", "_").replace("]", ""))
    shutil.copy2(m["executable"], os.path.join(bundle, dst))
    rows.append((name, dst))
with open(os.path.join(bundle, "tests.tsv"), "w") as f:
    for n, p in sorted(rows):
        f.write(f"{n}\t{p}\n")
print(f"make-device-bundle: {len(rows)} test executables")
PY
cp target/ptx/*.ptx target/ptx/*.ptxas.txt "$BUNDLE/ptx/"
say "building the examples' host binaries (tools/test-examples.sh --bundle)"
bash tools/test-examples.sh --bundle "$BUNDLE"
if command -v strip >/dev/null; then
    strip --strip-debug "$BUNDLE/bin/baton" "$BUNDLE"/tests/* 2>/dev/null || true
fi
{
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (+ uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm)"
    echo "rustc: $(rustc --version)"
    echo "device rustc: $(/usr/bin/rustc --version 2>/dev/null || echo none)"
} > "$BUNDLE/BUILD-INFO"

SIZE_MB=$(( $(du -sk "$BUNDLE" | cut -f1) / 1024 ))
if (( SIZE_MB < LIMIT_MB )); then
    say "bundle ready: $BUNDLE (${SIZE_MB} MiB)"
    say "run it on the device machine: bash tools/gpu-suite.sh ${BUNDLE#"$ROOT"/}"
    exit 0
fi
# Every test executable embeds the kernels' PTX, so a bundle of several is
# mostly the same text many times over: xz packs 194 MiB (8 GEMM test
# executables) into 16. gpu-suite.sh takes the archive in place of the
# folder and unpacks it on the device machine.
ARCHIVE="$BUNDLE.tar.xz"
say "bundle is ${SIZE_MB} MiB, over the ${LIMIT_MB} MiB carry budget: packing it into $ARCHIVE"
tar -C "$(dirname "$BUNDLE")" -cf - "$(basename "$BUNDLE")" | xz -T0 -6 > "$ARCHIVE"
PACKED_MB=$(( $(du -sk "$ARCHIVE" | cut -f1) / 1024 ))
if (( PACKED_MB >= LIMIT_MB )); then
    echo "make-device-bundle: even packed, the bundle is ${PACKED_MB} MiB, over the ${LIMIT_MB} MiB budget (the device tool carries at most 64 MiB in all); narrow BUNDLE_TESTS" >&2
    exit 1
fi
say "bundle ready: $ARCHIVE (${PACKED_MB} MiB packed, ${SIZE_MB} MiB unpacked)"
say "carry it and run on the device machine: bash tools/gpu-suite.sh ${ARCHIVE#"$ROOT"/}"
