"""Argument validation without a GPU: every wrong dtype, device, shape,
stride and alignment raises the documented exception whose message names
the rule. Shapes and strides are checked on meta tensors (the fake
implementations) and on plain numbers (the native checks)."""

import pytest
import torch

import baton
from baton import _baton

BF16, E4M3, F32 = torch.bfloat16, torch.float8_e4m3fn, torch.float32


def meta(*shape, dtype=BF16):
    return torch.empty(*shape, dtype=dtype, device="meta")


# Meta tensors reach the fake implementations through the ops; the eager
# path (baton.gemm on plain CUDA tensors) runs the same checks.
def gemm(a, b, c=None, alpha=1.0, beta=0.0):
    return torch.ops.baton.gemm(a, b, c, alpha, beta)


def gemm_fp8(a, sa, b, sb):
    return torch.ops.baton.gemm_fp8_blockwise(a, sa, b, sb)


def test_ops_are_registered_with_fakes():
    assert hasattr(torch.ops.baton, "gemm")
    assert hasattr(torch.ops.baton, "gemm_fp8_blockwise")
    out = torch.ops.baton.gemm(meta(64, 128), meta(32, 128), None, 1.0, 0.0)
    assert out.shape == (64, 32) and out.dtype == BF16 and out.device.type == "meta"
    a, b = meta(64, 256, dtype=E4M3), meta(40, 256, dtype=E4M3)
    sa = meta(2, 64, dtype=F32).t()  # [M, K/128], M-major
    sb = meta(1, 2, dtype=F32)
    out = torch.ops.baton.gemm_fp8_blockwise(a, sa, b, sb)
    assert out.shape == (64, 40) and out.dtype == BF16


def test_ptx_info_names_the_build():
    source, embedded = baton.ptx_info()
    assert isinstance(source, str) and source
    assert isinstance(embedded, bool)


@pytest.mark.parametrize(
    "a_dtype,b_dtype,name",
    [(torch.float16, BF16, "a"), (BF16, torch.float32, "b")],
)
def test_gemm_wrong_dtype_is_type_error(a_dtype, b_dtype, name):
    with pytest.raises(TypeError, match=rf"{name} must be torch.bfloat16, got"):
        gemm(meta(64, 64, dtype=a_dtype), meta(64, 64, dtype=b_dtype))


def test_gemm_cpu_tensor_is_value_error():
    a = torch.randn(64, 64).to(BF16)
    with pytest.raises(ValueError, match="a is on cpu; baton's kernels run on CUDA tensors"):
        baton.gemm(a, a)
    with pytest.raises(ValueError, match="a is on cpu; baton's kernels run on CUDA tensors"):
        gemm(a, a)


def test_gemm_not_a_tensor_is_type_error():
    with pytest.raises(TypeError, match="a and b must be torch.Tensor, got list"):
        baton.gemm([[1.0]], meta(8, 8))
    with pytest.raises(TypeError, match="b_scales must be a torch.Tensor, got int"):
        baton.gemm_fp8_blockwise(meta(8, 128, dtype=E4M3), meta(8, 1, dtype=F32), meta(8, 128, dtype=E4M3), 3)


def test_eager_path_only_for_plain_tensors_without_grad_or_tracing():
    from torch._subclasses.fake_tensor import FakeTensorMode

    from baton._ops import eager

    x = torch.empty(8, 8)
    assert eager(x, x, None)
    assert not eager(x, torch.empty(8, 8, requires_grad=True))
    with FakeTensorMode():
        y = torch.empty(8, 8)
        assert not eager(y)


def test_gemm_rank_is_value_error():
    with pytest.raises(ValueError, match="a must be 2-D, got 3-D"):
        gemm(meta(2, 64, 64), meta(64, 64))


def test_gemm_beta_needs_c():
    with pytest.raises(ValueError, match="beta != 0 needs c"):
        gemm(meta(64, 64), meta(64, 64), beta=0.5)


def test_gemm_k_not_multiple_of_8():
    with pytest.raises(ValueError, match="K must be a multiple of 8"):
        gemm(meta(64, 30), meta(64, 30))


def test_gemm_n_not_multiple_of_8():
    with pytest.raises(ValueError, match="N must be a multiple of 8"):
        gemm(meta(64, 64), meta(12, 64))


def test_gemm_k_mismatch():
    with pytest.raises(ValueError, match=r"b: shape \(16, 72\) does not match the \(16, 64\)"):
        gemm(meta(64, 64), meta(16, 72))


def test_gemm_transposed_operands_pass_and_strided_both_ways_is_refused():
    b = meta(64, 16).t()  # [16, 64] with strides (1, 16): N-major B (w.T of a [K, N] weight)
    a = meta(64, 64).t()  # strides (1, 64): M-major A
    assert gemm(a, b).shape == (64, 16)
    neither = meta(64, 32)[::2, ::2]  # [32, 16], strides (64, 2): no dimension contiguous
    with pytest.raises(ValueError, match=r"b: column stride is 2; .*contiguous K or N"):
        gemm(meta(64, 16), neither)


def test_gemm_misaligned_row_stride():
    a = meta(64, 100)[:, :64]  # row stride 100 elements = 200 bytes
    with pytest.raises(ValueError, match="a: row stride 100 elements = 200 bytes is not a multiple of 16 bytes"):
        gemm(a, meta(64, 64))


def test_gemm_strided_views_pass_the_checks():
    a = meta(64, 200)[:, 8:136]  # row stride 200 (400 bytes), K = 128
    b = meta(32, 136)[:, :128]
    c = meta(64, 48)[:, :32]
    out = gemm(a, b, c, beta=1.0)
    assert out.shape == (64, 32)


def test_gemm_c_shape_mismatch():
    with pytest.raises(ValueError, match=r"c: shape \(64, 16\) does not match the \(64, 32\)"):
        gemm(meta(64, 64), meta(32, 64), meta(64, 16), beta=1.0)


def test_native_alignment_and_overlap_rules():
    # (ptr, size0, size1, stride0, stride1): the native checks without a GPU.
    with pytest.raises(ValueError, match="row stride 4 is less than its 64 columns"):
        _baton.check_gemm((0, 64, 64, 4, 1), (0, 64, 64, 64, 1), None, (0, 64, 64, 64, 1), 0.0)
    with pytest.raises(ValueError, match=r"GEMM shape \(0, 64, 64\) \(M, N, K\) has a zero dimension"):
        _baton.check_gemm((0, 0, 64, 64, 1), (0, 64, 64, 64, 1), None, (0, 0, 64, 64, 1), 0.0)


def fp8_args(m=64, n=40, k=256):
    a, b = meta(m, k, dtype=E4M3), meta(n, k, dtype=E4M3)
    sa = meta(k // 128, m, dtype=F32).t()
    sb = meta((n + 127) // 128, k // 128, dtype=F32)
    return a, sa, b, sb


def test_fp8_wrong_dtypes():
    a, sa, b, sb = fp8_args()
    with pytest.raises(TypeError, match="a must be torch.float8_e4m3fn, got torch.bfloat16"):
        gemm_fp8(a.to(BF16), sa, b, sb)
    with pytest.raises(TypeError, match="b_scales must be torch.float32, got torch.bfloat16"):
        gemm_fp8(a, sa, b, sb.to(BF16))


def test_fp8_k_not_multiple_of_128():
    a, sa, b, sb = fp8_args(k=192)
    with pytest.raises(ValueError, match="K = 192"):
        gemm_fp8(a, sa, b, sb)


def test_fp8_row_major_a_scales_names_the_m_major_rule():
    a, sa, b, sb = fp8_args()
    with pytest.raises(ValueError, match=r"a_scales: column stride is 2; .*M-major: a_scales.stride\(0\) == 1"):
        gemm_fp8(a, sa.contiguous(), b, sb)


def test_fp8_a_scales_take_any_column_stride_of_at_least_m():
    a, _, b, sb = fp8_args(m=66)
    # torch's own layout (a_scales.t().contiguous().t()): column stride 66
    # floats = 264 bytes, which TMA cannot read in place; the plan copies it.
    assert gemm_fp8(a, meta(2, 66, dtype=F32).t(), b, sb).shape == (66, 40)
    # DeepGEMM's TMA-aligned layout, read in place, and an odd stride.
    assert gemm_fp8(a, meta(2, 68, dtype=F32).t()[:66], b, sb).shape == (66, 40)
    assert gemm_fp8(a, meta(2, 67, dtype=F32).t()[:66], b, sb).shape == (66, 40)
    # Columns that overlap the next one's are refused.
    sa = torch.empty_strided((66, 2), (1, 64), dtype=F32, device="meta")
    with pytest.raises(ValueError, match="a_scales: row stride 64 is less than its 66 columns"):
        gemm_fp8(a, sa, b, sb)


def test_fp8_b_scales_shape_and_contiguity():
    a, sa, b, _ = fp8_args(n=200)
    with pytest.raises(ValueError, match=r"b_scales: shape \(1, 2\) does not match the \(2, 2\)"):
        gemm_fp8(a, sa, b, meta(1, 2, dtype=F32))
    with pytest.raises(ValueError, match="b_scales: row stride 4 but 2 columns"):
        gemm_fp8(a, sa, b, meta(2, 4, dtype=F32)[:, :2])


def test_torch_compile_traces_through_the_fakes():
    # Dynamo + the fake implementations on meta-free CPU tracing: the
    # graph must hold the custom op (no GPU needed to trace).
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(64, 128, dtype=BF16, device="cuda")
        b = torch.empty(32, 128, dtype=BF16, device="cuda")
        out = torch.ops.baton.gemm(a, b, None, 1.0, 0.0)
        assert out.shape == (64, 32) and out.device.type == "cuda"
        with pytest.raises(ValueError, match="N must be a multiple of 8"):
            torch.ops.baton.gemm(a, b[:30], None, 1.0, 0.0)


def test_gemm_out_checks_shape_and_dtype():
    a, b = meta(64, 64), meta(32, 64)
    torch.ops.baton.gemm_out(a, b, None, 1.0, 0.0, meta(64, 32))
    with pytest.raises(ValueError, match=r"out: shape \(64, 16\) does not match the \(64, 32\)"):
        torch.ops.baton.gemm_out(a, b, None, 1.0, 0.0, meta(64, 16))
    with pytest.raises(TypeError, match="out must be torch.bfloat16, got torch.float32"):
        torch.ops.baton.gemm_out(a, b, None, 1.0, 0.0, meta(64, 32, dtype=F32))


def test_native_eager_path_declines_what_it_cannot_launch():
    # CPU tensors, meta tensors, other dtypes, non-tensors, grads: None, so
    # that baton.gemm runs the full checks (or the op) instead.
    x = torch.empty(8, 8, dtype=BF16)
    for args in [
        (x, x, None, None, 1.0, 0.0),
        (meta(8, 8), meta(8, 8), None, None, 1.0, 0.0),
        (x.float(), x, None, None, 1.0, 0.0),
        ([[1.0]], x, None, None, 1.0, 0.0),
        (x.requires_grad_(False).clone().requires_grad_(True), x, None, None, 1.0, 0.0),
        (x, x, None, None, 1.0, 0.5),  # beta without c
    ]:
        assert _baton.gemm_eager(*args) is None


def test_attention_op_is_registered_with_a_fake():
    q, kv = meta(2, 8, 100, 128), meta(2, 2, 70, 128)
    out, lse = torch.ops.baton.attention(q, kv, kv, True, None)
    assert out.shape == (2, 8, 100, 128) and out.dtype == BF16 and out.device.type == "meta"
    assert lse.shape == (2, 8, 100) and lse.dtype == F32
    bshd = meta(2, 100, 8, 64).transpose(1, 2)
    out, _ = torch.ops.baton.attention(bshd, meta(2, 1, 7, 64), meta(2, 1, 7, 64), False, 0.1)
    assert out.shape == bshd.shape and out.stride() == bshd.stride()


@pytest.mark.parametrize(
    "q,k,v,exc,match",
    [
        (meta(1, 2, 8, 64, dtype=torch.float16), meta(1, 2, 8, 64), meta(1, 2, 8, 64), TypeError, "q must be torch.bfloat16"),
        (meta(2, 8, 64), meta(1, 2, 8, 64), meta(1, 2, 8, 64), ValueError, "q must be 4-D"),
        (meta(1, 2, 8, 96), meta(1, 2, 8, 96), meta(1, 2, 8, 96), ValueError, "head_dim 96 is not supported"),
        (meta(1, 6, 8, 64), meta(1, 4, 8, 64), meta(1, 4, 8, 64), ValueError, "kv_heads 4 does not divide q_heads 6"),
        (meta(1, 2, 8, 64), meta(1, 2, 9, 64), meta(1, 2, 8, 64), ValueError, "k and v must have the same shape"),
        (meta(2, 2, 8, 64), meta(1, 2, 8, 64), meta(1, 2, 8, 64), ValueError, "must share batch and head_dim"),
        (meta(1, 2, 0, 64), meta(1, 2, 8, 64), meta(1, 2, 8, 64), ValueError, "SeqQ is 0"),
        (meta(1, 2, 8, 64).transpose(2, 3), meta(1, 2, 64, 8), meta(1, 2, 64, 8), ValueError, "head dimension must be contiguous"),
        (meta(1, 2, 8, 128)[..., :64], meta(1, 2, 8, 64), meta(1, 2, 8, 64), None, None),
        (meta(1, 2, 8, 68)[..., :64], meta(1, 2, 8, 64), meta(1, 2, 8, 64), ValueError, "seq stride 68"),
    ],
)
def test_attention_refuses_bad_arguments(q, k, v, exc, match):
    if exc is None:
        torch.ops.baton.attention(q, k, v, False, None)
        return
    with pytest.raises(exc, match=match):
        torch.ops.baton.attention(q, k, v, False, None)


def test_attention_refuses_cpu_tensors():
    x = torch.zeros(1, 2, 8, 64, dtype=BF16)
    with pytest.raises(ValueError, match="baton's kernels run on CUDA tensors"):
        baton.attention(x, x, x)
