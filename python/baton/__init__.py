"""baton's Hopper (sm_90a) GEMMs on torch CUDA tensors.

Both functions are ``torch.library`` custom ops (``torch.ops.baton.gemm``,
``torch.ops.baton.gemm_fp8_blockwise``) with fake implementations, so
``torch.compile`` traces them; they read their operands in place (no copy),
run on torch's current CUDA stream, and can be captured in a CUDA graph.
Called eagerly on plain CUDA tensors (no autograd, no tracing) they skip
torch's dispatcher and call the same implementation directly.

Convention: ``b`` is ``[N, K]`` (K contiguous), as the weight of
``torch.nn.functional.linear``: the result is ``a @ b.T``.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _baton, _ops

__all__ = ["gemm", "gemm_fp8_blockwise", "ptx_info"]


def gemm(
    a: Tensor,
    b: Tensor,
    c: Optional[Tensor] = None,
    alpha: float = 1.0,
    beta: float = 0.0,
    *,
    out: Optional[Tensor] = None,
) -> Tensor:
    """``alpha * a @ b.T + beta * c`` in bf16 with fp32 accumulation.

    ``a``: bf16 ``[M, K]``, ``b``: bf16 ``[N, K]`` (``torch.addmm(c, a, b.T,
    beta=beta, alpha=alpha)``), both with K contiguous (``stride(1) == 1``;
    a row stride larger than K is fine: ``big[:, :K]``), ``c``: bf16
    ``[M, N]``, rows contiguous, required when ``beta != 0``. K and N must
    be multiples of 8, row strides multiples of 8 elements and data pointers
    16-byte aligned (TMA). Returns a new contiguous bf16 ``[M, N]`` tensor,
    or writes ``out`` (bf16 ``[M, N]``, rows contiguous; ``c`` may be
    ``out`` itself: ``out = alpha * a @ b.T + beta * out``) and returns it:
    no allocation at all (``torch.ops.baton.gemm_out``).

    Raises ``TypeError`` (dtype) or ``ValueError`` (device, shape, stride,
    alignment: the message names the rule).
    """
    r = _ops.gemm_fast(a, b, c, alpha, beta, out)
    if r is not None:
        return r
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"baton.gemm: a and b must be torch.Tensor, got {type(a).__name__}, {type(b).__name__}")
    if out is not None:
        if _ops.eager(a, b, c, out):
            return _ops.gemm_impl(a, b, c, float(alpha), float(beta), out)
        _ops.gemm_out_op(a, b, c, float(alpha), float(beta), out)
        return out
    if _ops.eager(a, b, c):
        return _ops.gemm_impl(a, b, c, float(alpha), float(beta))
    return _ops.gemm_op(a, b, c, float(alpha), float(beta))


def gemm_fp8_blockwise(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor) -> Tensor:
    """DeepSeek-style blockwise-scaled FP8 GEMM: ``(a * sa) @ (b * sb).T`` in bf16.

    ``a``: ``float8_e4m3fn`` ``[M, K]``, ``b``: ``float8_e4m3fn`` ``[N, K]``,
    both K contiguous; K a multiple of 128, N of 8. ``a_scales``: fp32
    ``[M, K/128]``, one per row and 128 of K, **M-major** (``stride(0) ==
    1``, DeepGEMM's TMA-aligned layout: ``a_scales.t().contiguous().t()``;
    with K/128 > 1 its column stride must be a multiple of 4).
    ``b_scales``: fp32 ``[ceil(N/128), K/128]``, one per 128x128 block,
    contiguous. Returns a new bf16 ``[M, N]`` tensor.

    Raises ``TypeError`` (dtype) or ``ValueError`` (device, shape, stride,
    alignment: the message names the rule).
    """
    for name, x in (("a", a), ("a_scales", a_scales), ("b", b), ("b_scales", b_scales)):
        if not isinstance(x, Tensor):
            raise TypeError(f"baton.gemm_fp8_blockwise: {name} must be a torch.Tensor, got {type(x).__name__}")
    if _ops.eager(a, a_scales, b, b_scales):
        return _ops.gemm_fp8_blockwise_impl(a, a_scales, b, b_scales)
    return _ops.gemm_fp8_blockwise_op(a, a_scales, b, b_scales)


def ptx_info():
    """``(how the PTX was built, whether the sm_90a kernels are embedded)``."""
    return _baton.ptx_info()
