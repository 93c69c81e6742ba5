#!/usr/bin/env bash
# Session 25, call 7 (H200): call 6's ours-vs-cuBLASLt run stopped at its
# 110 s limit after the 12 M = 64/128 shapes; the 8 large ones here, same
# CLI and method. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s25; O=$OUT/r; mkdir -p $O; SECONDS=0
xz -dc $D/baton.xz > /tmp/baton; chmod +x /tmp/baton
a=(); for s in 4096x2112x7168 4096x24576x1536 4096x32768x512 4096x7168x16384 4096x4096x7168 4096x7168x2048 4096x4096x4096 8192x8192x8192; do a+=(--shape $s); done
timeout 150 /tmp/baton bench gemm-fp8 --flush-l2 "${a[@]}" --json $O/ours-large.json > $O/ours-large.txt 2>&1; echo "ours rc=$? t=${SECONDS}s"; tail -3 $O/ours-large.txt
cd $OUT && tar czf r.tar.gz r && rm -rf r
