#!/usr/bin/env bash
# Installs the device toolchain (rustc-web + library source, ptxas, nvdisasm)
# into this checkout's .tools, idempotently. The installer ships with
# baton-build (crates/baton-build/install-device-toolchain.sh), which names it
# when a build finds no toolchain.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$ROOT/crates/baton-build/install-device-toolchain.sh" "$@"
