#!/usr/bin/env bash
# Session 20, call 1 (H200): where the fixed per-launch cost goes. Tiny GEMMs (one to a few CTAs,
# one to a few K blocks: almost nothing but fixed cost), ours vs cuBLAS in one process; ncu's
# gpu__time_duration of each kernel (ours, cuBLAS's) at tiny and small shapes; our traced
# timelines at the same shapes; a torch one-element kernel, event-timed the same way (queued,
# one event pair per launch), as the floor of any launch. Writes $OUT/r.tar.gz.
set -uo pipefail
D=.lead-carry/s20; O=$OUT/r; mkdir -p $O; SECONDS=0
mkdir -p /tmp/b && for f in baton baton-trace; do xz -dc $D/$f.xz > /tmp/b/$f; chmod +x /tmp/b/$f; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,power.limit,driver_version --format=csv | tee $O/gpu.txt
TINY="--shape 1x128x64 --shape 64x128x64 --shape 128x128x128 --shape 128x256x512 --shape 1x256x1024 --shape 128x1024x64"
SMALL="--shape 1x1024x4096 --shape 64x1024x4096 --shape 64x4104x2056 --shape 128x4096x4096"
timeout 100 /tmp/b/baton bench gemm --reps 41 $TINY $SMALL > $O/bench.txt 2>&1; echo "bench rc=$? t=${SECONDS}s"
timeout 100 /tmp/b/baton bench gemm --reps 41 $TINY $SMALL > $O/bench2.txt 2>&1; echo "bench2 rc=$? t=${SECONDS}s"
timeout 60 /tmp/b/baton-trace bench trace-gemm --reps 15 $TINY $SMALL > $O/trace.txt 2>&1; echo "trace rc=$? t=${SECONDS}s"
cat > /tmp/floor.py <<'PY'
import torch
x = torch.zeros(1, device="cuda"); a = torch.randn(1, 64, device="cuda", dtype=torch.bfloat16); b = torch.randn(128, 64, device="cuda", dtype=torch.bfloat16)
for name, f in [("add_ one element", lambda: x.add_(1)), ("torch.mm 1x128x64 bf16", lambda: a @ b.T)]:
    ev = []
    for i in range(200):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); f(); e1.record(); ev.append((e0, e1))
    torch.cuda.synchronize()
    t = sorted(e0.elapsed_time(e1) * 1000 for e0, e1 in ev[20:])
    print(f"{name}: median {t[len(t)//2]:.2f} us, min {t[0]:.2f} us (queued, one event pair per launch)")
PY
timeout 60 python3 /tmp/floor.py > $O/floor.txt 2>&1; echo "floor rc=$? t=${SECONDS}s"; cat $O/floor.txt
for s in 1x128x64 128x128x128 1x1024x4096 64x1024x4096 64x4104x2056; do
  timeout 60 ncu --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,sm__cycles_active.max,gpc__cycles_elapsed.max,launch__shared_mem_per_block_dynamic,launch__registers_per_thread -c 30 /tmp/b/baton bench gemm --shape $s --reps 3 > "$O/ncu-$s.txt" 2>&1
  echo "ncu $s rc=$? t=${SECONDS}s"
done
cd $OUT && tar czf r.tar.gz r && rm -rf r
