"""baton's Hopper (sm_90a) GEMMs and attention forward on torch CUDA tensors.

The functions are ``torch.library`` custom ops (``torch.ops.baton.gemm``,
``torch.ops.baton.gemm_fp8_blockwise``, ``torch.ops.baton.attention``) with
fake implementations, so ``torch.compile`` traces them; they read their
operands in place (no copy) and run on torch's current CUDA stream. The
GEMMs can be captured in a CUDA graph; ``attention`` cannot yet (it uploads
its tensor maps on each call) and says so when called under capture.
Called eagerly on plain CUDA tensors (no autograd, no tracing) they skip
torch's dispatcher and call the same implementation directly.

Convention: ``b`` is ``[N, K]`` (K contiguous), as the weight of
``torch.nn.functional.linear``: the result is ``a @ b.T``.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _baton, _ops

__all__ = ["attention", "gemm", "gemm_fp8_blockwise", "ptx_info"]


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
    beta=beta, alpha=alpha)``), each with K contiguous (``stride(1) == 1``;
    a row stride larger than K is fine: ``big[:, :K]``) or with its first
    dimension contiguous (``b = w.T`` of a ``[K, N]`` weight ``w``, ``a =
    x.T`` of a ``[K, M]`` tensor: read in place, no copy), ``c``: bf16
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
    1``: ``a_scales.t().contiguous().t()``, or DeepGEMM's TMA-aligned
    layout, whose column stride is a multiple of 4 and is read in place;
    other column strides (at least M) cost one small copy per call).
    ``b_scales``: fp32 ``[ceil(N/128), K/128]``, one per 128x128 block,
    contiguous. Returns a new bf16 ``[M, N]`` tensor. The kernel and its
    split-K count are the Rust API's plan for the shape (small M with long K
    splits K across the SMs). Under CUDA-graph capture the A scales must be
    read in place (TMA-aligned) and no split-K runs.

    Raises ``TypeError`` (dtype) or ``ValueError`` (device, shape, stride,
    alignment: the message names the rule).
    """
    for name, x in (("a", a), ("a_scales", a_scales), ("b", b), ("b_scales", b_scales)):
        if not isinstance(x, Tensor):
            raise TypeError(f"baton.gemm_fp8_blockwise: {name} must be a torch.Tensor, got {type(x).__name__}")
    if _ops.eager(a, a_scales, b, b_scales):
        return _ops.gemm_fp8_blockwise_impl(a, a_scales, b, b_scales)
    return _ops.gemm_fp8_blockwise_op(a, a_scales, b, b_scales)


def attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    causal: bool = False,
    scale: Optional[float] = None,
    return_lse: bool = False,
):
    """FlashAttention-style forward: ``softmax(scale * q @ k.transpose(-2, -1)
    [+ causal mask]) @ v`` in bf16 with fp32 accumulation, as
    ``torch.nn.functional.scaled_dot_product_attention(q, k, v,
    is_causal=causal, scale=scale, enable_gqa=True)``.

    ``q``: bf16 ``[batch, heads, seq_q, head_dim]``; ``k``, ``v``: bf16
    ``[batch, kv_heads, seq_kv, head_dim]`` with ``kv_heads`` dividing
    ``heads`` (GQA/MQA). Any strides with the head dimension contiguous:
    ``x.view(b, s, h, d).transpose(1, 2)`` (FlashAttention's ``[b, s, h,
    d]`` memory) works without a copy; strides must be multiples of 8
    elements and data pointers 16-byte aligned (TMA). ``head_dim`` 64, 128
    or 256; ``seq_q`` and ``seq_kv`` any ≥ 1 and may differ; ``causal``
    masks key ``j > i`` for query ``i`` (top-left aligned, as SDPA's
    ``is_causal``); ``scale`` defaults to ``1 / sqrt(head_dim)``.

    Returns the output (q's shape and memory layout) or, with
    ``return_lse``, ``(output, logsumexp)`` with the fp32 natural-log
    logsumexp ``[batch, heads, seq_q]`` of the scaled scores.

    Raises ``TypeError`` (dtype) or ``ValueError`` (device, shape, stride,
    alignment, head_dim: the message names the rule).
    """
    if _ops.eager(q, k, v):
        out, lse = _ops.attention_impl(q, k, v, causal, scale)
    else:
        out, lse = _ops.attention_op(q, k, v, bool(causal), None if scale is None else float(scale))
    return (out, lse) if return_lse else out


def ptx_info():
    """``(how the PTX was built, whether the sm_90a kernels are embedded)``."""
    return _baton.ptx_info()
