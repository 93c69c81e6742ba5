"""The torch.library ops ``baton::gemm`` and ``baton::gemm_fp8_blockwise``,
and the eager path that calls their implementation directly.

Each implementation checks dtypes and devices here (``TypeError`` /
``ValueError``), then shapes and strides in the native module
(``ValueError`` with the rule's text from baton's typed errors), allocates
its output with torch (so CUDA-graph capture takes it from the graph's
pool) and enqueues the kernel on torch's current stream of the tensors'
device: zero copies, no synchronization. The fake implementations run the
same checks on sizes and strides and return an empty output, so
``torch.compile`` traces the ops.

Going through torch's dispatcher to a Python op costs about 40 µs of host
time per call (measured on an H100 host, BENCHMARKS.md); :func:`eager`
says when nothing needs the dispatcher (plain CUDA tensors, no autograd,
no tracing, no torch function or dispatch mode), and the public functions
then call the implementation directly.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _baton

_BF16 = torch.bfloat16
_E4M3 = torch.float8_e4m3fn
_F32 = torch.float32
_Tensor = torch.Tensor

try:  # the raw handle of the current stream, without a Python Stream object
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - older torch

    def _raw_stream(index: int) -> int:
        return torch.cuda.current_stream(index).cuda_stream


_is_compiling = torch.compiler.is_compiling
_function_mode = torch._C._is_torch_function_mode_enabled
_dispatch_modes = torch._C._len_torch_dispatch_stack


def eager(*tensors) -> bool:
    """Whether a call may skip the dispatcher: every operand a plain
    ``torch.Tensor`` (not a FakeTensor or other subclass) that needs no
    gradient, outside ``torch.compile`` tracing and torch function or
    dispatch modes. Otherwise the call goes through the op, which records
    it, traces it with the fake, or refuses autograd."""
    if _is_compiling() or _function_mode() or _dispatch_modes():
        return False
    for x in tensors:
        if x is not None and (type(x) is not _Tensor or x.requires_grad):
            return False
    return True


_baton.init_eager(torch.Tensor, _BF16, _raw_stream)


def gemm_fast(a, b, c, alpha, beta, out):
    """The eager call of :func:`baton.gemm`: outside tracing and torch
    function or dispatch modes, the native module reads the operands'
    attributes and launches when all are plain bf16 CUDA tensors of rank 2
    on one device that need no gradient; ``None`` otherwise (the caller
    then runs the full checks, which raise the descriptive error, or the
    op)."""
    if _is_compiling() or _function_mode() or _dispatch_modes():
        return None
    return _baton.gemm_eager(a, b, c, out, alpha, beta)


def _fake(x: Tensor):
    # Tracing only: symbolic sizes are specialized to their hints.
    return (0, *(int(v) for v in x.shape), *(int(v) for v in x.stride()))


def _check_tensors(op: str, named, dtype_list, fake: bool = False) -> None:
    """Rank, dtype and device rules (shape rules are the native module's).
    ``fake``: tracing (FakeTensor or meta tensors stand in for CUDA ones).
    The common case (all fine) reads only cheap attributes."""
    device = None
    for (name, x), dtype in zip(named, dtype_list):
        if x is None:
            continue
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dtype is not dtype:
            raise TypeError(f"{op}: {name} must be {dtype}, got {x.dtype}")
        if x.dim() != 2:
            raise ValueError(f"{op}: {name} must be 2-D, got {x.dim()}-D of shape {tuple(x.shape)}")
        if not x.is_cuda and not (fake and x.is_meta):
            raise ValueError(f"{op}: {name} is on {x.device}; baton's kernels run on CUDA tensors (a Hopper GPU)")
        if device is None:
            device = x.device if fake else x.get_device()
        elif (x.device if fake else x.get_device()) != device:
            raise ValueError(
                f"{op}: {name} is on {x.device} but the first operand on {named[0][1].device}; all must be on one device"
            )


def _check_gemm(a, b, c, beta, fake=False) -> None:
    _check_tensors("baton.gemm", (("a", a), ("b", b), ("c", c)), (_BF16, _BF16, _BF16), fake)
    if beta != 0.0 and c is None:
        raise ValueError("baton.gemm: beta != 0 needs c (D = alpha * a @ b.T + beta * c)")


def _check_out(op: str, out: Tensor, a: Tensor) -> None:
    _check_tensors(op, (("a", a), ("out", out)), (a.dtype, _BF16))


def gemm_impl(
    a: Tensor, b: Tensor, c: Optional[Tensor], alpha: float, beta: float, out: Optional[Tensor] = None
) -> Tensor:
    """The implementation of ``baton::gemm`` (``out``: of ``baton::gemm_out``)
    on CUDA tensors."""
    _check_gemm(a, b, c, beta)
    if out is None:
        out = a.new_empty((a.shape[0], b.shape[0]))
    else:
        _check_out("baton.gemm", out, a)
    index = a.get_device()
    _baton.gemm(
        index,
        _raw_stream(index),
        (a.data_ptr(), *a.shape, *a.stride()),
        (b.data_ptr(), *b.shape, *b.stride()),
        None if c is None else (c.data_ptr(), *c.shape, *c.stride()),
        (out.data_ptr(), *out.shape, *out.stride()),
        alpha,
        beta,
    )
    return out


@torch.library.custom_op("baton::gemm", mutates_args=())
def gemm_op(a: Tensor, b: Tensor, c: Optional[Tensor], alpha: float, beta: float) -> Tensor:
    """``alpha * a @ b.T + beta * c`` (see :func:`baton.gemm`)."""
    return gemm_impl(a, b, c, alpha, beta)


@gemm_op.register_fake
def _gemm_fake(a, b, c, alpha, beta):
    _check_gemm(a, b, c, beta, fake=True)
    out = a.new_empty((a.size(0), b.size(0)))
    _baton.check_gemm(_fake(a), _fake(b), None if c is None else _fake(c), _fake(out), float(beta))
    return out


@torch.library.custom_op("baton::gemm_out", mutates_args=("out",))
def gemm_out_op(a: Tensor, b: Tensor, c: Optional[Tensor], alpha: float, beta: float, out: Tensor) -> None:
    """``out = alpha * a @ b.T + beta * c`` in place (``c`` may be ``out``)."""
    gemm_impl(a, b, c, alpha, beta, out)


@gemm_out_op.register_fake
def _gemm_out_fake(a, b, c, alpha, beta, out):
    _check_gemm(a, b, c, beta, fake=True)
    _check_tensors("baton.gemm", (("a", a), ("out", out)), (_BF16, _BF16), fake=True)
    _baton.check_gemm(_fake(a), _fake(b), None if c is None else _fake(c), _fake(out), float(beta))


def _check_fp8(a, a_scales, b, b_scales, fake=False) -> None:
    _check_tensors(
        "baton.gemm_fp8_blockwise",
        (("a", a), ("a_scales", a_scales), ("b", b), ("b_scales", b_scales)),
        (_E4M3, _F32, _E4M3, _F32),
        fake,
    )


def gemm_fp8_blockwise_impl(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor) -> Tensor:
    """The implementation of ``baton::gemm_fp8_blockwise`` on CUDA tensors."""
    _check_fp8(a, a_scales, b, b_scales)
    out = a.new_empty((a.shape[0], b.shape[0]), dtype=_BF16)
    index = a.get_device()
    _baton.gemm_fp8_blockwise(
        index,
        _raw_stream(index),
        (a.data_ptr(), *a.shape, *a.stride()),
        (a_scales.data_ptr(), *a_scales.shape, *a_scales.stride()),
        (b.data_ptr(), *b.shape, *b.stride()),
        (b_scales.data_ptr(), *b_scales.shape, *b_scales.stride()),
        (out.data_ptr(), *out.shape, *out.stride()),
    )
    return out


@torch.library.custom_op("baton::gemm_fp8_blockwise", mutates_args=())
def gemm_fp8_blockwise_op(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor) -> Tensor:
    """``(a * a_scales) @ (b * b_scales).T`` in bf16 (see :func:`baton.gemm_fp8_blockwise`)."""
    return gemm_fp8_blockwise_impl(a, a_scales, b, b_scales)


@gemm_fp8_blockwise_op.register_fake
def _gemm_fp8_blockwise_fake(a, a_scales, b, b_scales):
    _check_fp8(a, a_scales, b, b_scales, fake=True)
    out = a.new_empty((a.size(0), b.size(0)), dtype=_BF16)
    _baton.check_gemm_fp8_blockwise(_fake(a), _fake(a_scales), _fake(b), _fake(b_scales), _fake(out))
    return out


def _check_attention(q, k, v, fake=False) -> None:
    """Rank, dtype and device rules of :func:`baton.attention` (shape,
    stride and head-dimension rules are the native module's)."""
    device = None
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, Tensor):
            raise TypeError(f"baton.attention: {name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dtype is not _BF16:
            raise TypeError(f"baton.attention: {name} must be {_BF16}, got {x.dtype}")
        if x.dim() != 4:
            raise ValueError(
                f"baton.attention: {name} must be 4-D [batch, heads, seq, head_dim], got {x.dim()}-D of shape {tuple(x.shape)}"
            )
        if not x.is_cuda and not (fake and x.is_meta):
            raise ValueError(f"baton.attention: {name} is on {x.device}; baton's kernels run on CUDA tensors (a Hopper GPU)")
        d = x.device if fake else x.get_device()
        if device is None:
            device = d
        elif d != device:
            raise ValueError(f"baton.attention: {name} is on {x.device} but q on {q.device}; all must be on one device")


def _t4(x: Tensor, fake: bool = False):
    return (0 if fake else x.data_ptr(), tuple(int(s) for s in x.shape), tuple(int(s) for s in x.stride()))


def _attention_outputs(q: Tensor):
    """The output in q's memory layout (``[b, s, h, d]`` memory when q's
    head stride is below its sequence stride, FlashAttention's layout;
    ``[b, h, s, d]`` otherwise) and the fp32 logsumexp ``[b, h, s_q]``."""
    b, h, s, d = q.shape
    if h > 1 and s > 1 and q.stride(1) < q.stride(2):
        out = q.new_empty((b, s, h, d)).transpose(1, 2)
    else:
        out = q.new_empty((b, h, s, d))
    return out, q.new_empty((b, h, s), dtype=_F32)


def attention_impl(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: Optional[float]):
    """The implementation of ``baton::attention`` on CUDA tensors."""
    _check_attention(q, k, v)
    out, lse = _attention_outputs(q)
    index = q.get_device()
    _baton.attention(
        index,
        _raw_stream(index),
        _t4(q),
        _t4(k),
        _t4(v),
        _t4(out),
        (lse.data_ptr(), lse.numel()),
        bool(causal),
        None if scale is None else float(scale),
    )
    return out, lse


@torch.library.custom_op("baton::attention", mutates_args=())
def attention_op(q: Tensor, k: Tensor, v: Tensor, causal: bool, scale: Optional[float]) -> tuple[Tensor, Tensor]:
    """``(softmax(scale * q @ k.T [+ causal mask]) @ v, logsumexp)`` (see :func:`baton.attention`)."""
    return attention_impl(q, k, v, causal, scale)


@attention_op.register_fake
def _attention_fake(q, k, v, causal, scale):
    _check_attention(q, k, v, fake=True)
    out, lse = _attention_outputs(q)
    _baton.check_attention(_t4(q, True), _t4(k, True), _t4(v, True), _t4(out, True))
    return out, lse
