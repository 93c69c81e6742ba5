#!/usr/bin/env bash
# Session 11 diagnosis (not a change): what binds the short causal d = 64 row (b16 h16 s1024 d64 causal).
set -uo pipefail
C=.lead-carry; O0="${OUT:-/tmp}"; O="$O0/d"; mkdir -p "$O"
rm -rf /tmp/fb; mkdir -p /tmp/fb && tar xJf $C/final-bundle.tar.xz -C /tmp/fb
B=/tmp/fb/.final-bundle/bin/baton; head -1 /tmp/fb/.final-bundle/BUILD-INFO
filt() { tr '\r' '\n' | grep -v '^\[' | grep -E "^b|^NVIDIA" ; }
for opt in "" "--ctas per-tile" "--warpgroups three" "--kv-block narrow" "--grid 66" "--schedule named"; do
  echo "== $opt"; timeout 30 $B bench attention --reps 10 --filter "d64 causal" --chart /tmp/x.png $opt 2>&1 | filt
done
echo "== ncu (default options, b16 s1024 d64 causal)"
timeout 120 ncu --clock-control none --kernel-name regex:attention --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats \
  $B bench attention --reps 2 --filter "b16 h16 s1024 d64 causal" --chart /tmp/y.png > "$O/ncu.txt" 2>&1
echo "ncu rc=$?"; grep -E "Duration|SM Busy|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Grid Size|Registers|Stall|Warp Cycles Per Issued" "$O/ncu.txt" | head -40
cd "$O0" && tar czf d.tar.gz d && rm -rf d
