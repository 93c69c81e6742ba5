"""The torch.library ops ``baton::gemm`` and ``baton::gemm_fp8_blockwise``.

Each op checks dtypes and devices here (``TypeError`` / ``ValueError``),
then shapes and strides in the native module (``ValueError`` with the
rule's text from baton's typed errors), allocates its output with torch
(so CUDA-graph capture takes it from the graph's pool) and enqueues the
kernel on torch's current stream of the tensors' device: zero copies, no
synchronization. The fake (meta) implementations run the same checks on
sizes and strides and return an empty output, so ``torch.compile`` traces
the ops.
"""

from typing import Optional

import torch
from torch import Tensor

from . import _baton

_BF16 = torch.bfloat16
_E4M3 = torch.float8_e4m3fn
_F32 = torch.float32

try:  # the raw handle of the current stream, without a Python Stream object
    _raw_stream = torch._C._cuda_getCurrentRawStream
except AttributeError:  # pragma: no cover - older torch

    def _raw_stream(index: int) -> int:
        return torch.cuda.current_stream(index).cuda_stream


def _dims(x: Tensor, ptr: int):
    return (ptr, int(x.size(0)), int(x.size(1)), int(x.stride(0)), int(x.stride(1)))


def _real(x: Tensor):
    return _dims(x, x.data_ptr())


def _fake(x: Tensor):
    return _dims(x, 0)


def _check_tensors(op: str, named, dtypes, fake: bool = False) -> None:
    """Rank, dtype and device rules (shape rules are the native module's).
    ``fake``: tracing (FakeTensor or meta tensors stand in for CUDA ones)."""
    devices = ("cuda", "meta") if fake else ("cuda",)
    device = None
    for (name, x), dtype in zip(named, dtypes):
        if x is None:
            continue
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}: {name} must be a torch.Tensor, got {type(x).__name__}")
        if x.dtype != dtype:
            raise TypeError(f"{op}: {name} must be {dtype}, got {x.dtype}")
        if x.dim() != 2:
            raise ValueError(f"{op}: {name} must be 2-D, got {x.dim()}-D of shape {tuple(x.shape)}")
        if x.device.type not in devices:
            raise ValueError(
                f"{op}: {name} is on {x.device}; baton's kernels run on CUDA tensors (a Hopper GPU)"
            )
        if device is None:
            device = x.device
        elif x.device != device:
            raise ValueError(f"{op}: {name} is on {x.device} but the first operand on {device}; all must be on one device")


def _check_gemm(a, b, c, beta, fake=False) -> None:
    _check_tensors("baton.gemm", [("a", a), ("b", b), ("c", c)], [_BF16] * 3, fake)
    if beta != 0.0 and c is None:
        raise ValueError("baton.gemm: beta != 0 needs c (D = alpha * a @ b.T + beta * c)")


@torch.library.custom_op("baton::gemm", mutates_args=())
def gemm_op(a: Tensor, b: Tensor, c: Optional[Tensor], alpha: float, beta: float) -> Tensor:
    """``alpha * a @ b.T + beta * c`` (see :func:`baton.gemm`)."""
    _check_gemm(a, b, c, beta)
    out = torch.empty((a.size(0), b.size(0)), dtype=_BF16, device=a.device)
    index = a.device.index if a.device.index is not None else torch.cuda.current_device()
    _baton.gemm(
        index,
        _raw_stream(index),
        _real(a),
        _real(b),
        None if c is None else _real(c),
        _real(out),
        float(alpha),
        float(beta),
    )
    return out


@gemm_op.register_fake
def _gemm_fake(a, b, c, alpha, beta):
    _check_gemm(a, b, c, beta, fake=True)
    out = a.new_empty((a.size(0), b.size(0)))
    _baton.check_gemm(_fake(a), _fake(b), None if c is None else _fake(c), _fake(out), float(beta))
    return out


def _check_fp8(a, a_scales, b, b_scales, fake=False) -> None:
    _check_tensors(
        "baton.gemm_fp8_blockwise",
        [("a", a), ("a_scales", a_scales), ("b", b), ("b_scales", b_scales)],
        [_E4M3, _F32, _E4M3, _F32],
        fake,
    )


@torch.library.custom_op("baton::gemm_fp8_blockwise", mutates_args=())
def gemm_fp8_blockwise_op(a: Tensor, a_scales: Tensor, b: Tensor, b_scales: Tensor) -> Tensor:
    """``(a * a_scales) @ (b * b_scales).T`` in bf16 (see :func:`baton.gemm_fp8_blockwise`)."""
    _check_fp8(a, a_scales, b, b_scales)
    out = torch.empty((a.size(0), b.size(0)), dtype=_BF16, device=a.device)
    index = a.device.index if a.device.index is not None else torch.cuda.current_device()
    _baton.gemm_fp8_blockwise(
        index,
        _raw_stream(index),
        _real(a),
        _real(a_scales),
        _real(b),
        _real(b_scales),
        _real(out),
    )
    return out


@gemm_fp8_blockwise_op.register_fake
def _gemm_fp8_blockwise_fake(a, a_scales, b, b_scales):
    _check_fp8(a, a_scales, b, b_scales, fake=True)
    out = a.new_empty((a.size(0), b.size(0)), dtype=_BF16)
    _baton.check_gemm_fp8_blockwise(_fake(a), _fake(a_scales), _fake(b), _fake(b_scales), _fake(out))
    return out
