"""baton's blockwise FP8 GEMM through the Python package, for the DeepGEMM
anchor's harness: `python3 run.py --extra <this file>` (see the anchor's
README). The harness passes a [M,K] e4m3, sa [M,K/128] fp32 row-major,
b [N,K] e4m3, sb [ceil(N/128),K/128] fp32. `baton_py` passes the A
scales M-major with a 16-byte aligned column stride (DeepGEMM's
TMA-aligned layout, read in place); `baton_py_torch_sa` in torch's own
M-major layout (`sa.t().contiguous().t()`: column stride M, which the
plan copies into an aligned buffer on each call when M is not a multiple
of 4). Both made once per input set, outside the timed region."""

import torch

import baton


def _m_major(sa):
    m, kb = sa.shape
    buf = torch.empty(kb, (m + 3) // 4 * 4, device=sa.device, dtype=sa.dtype)
    buf[:, :m] = sa.t()
    return buf.t()[:m]


def make(a, sa, b, sb):
    sa_t = _m_major(sa)
    sb_c = sb.contiguous()

    def run():
        return baton.gemm_fp8_blockwise(a, sa_t, b, sb_c)

    return run


def make_torch_layout(a, sa, b, sb):
    sa_t = sa.t().contiguous().t()
    sb_c = sb.contiguous()

    def run():
        return baton.gemm_fp8_blockwise(a, sa_t, b, sb_c)

    return run


KERNELS = {"baton_py": make, "baton_py_torch_sa": make_torch_layout}
