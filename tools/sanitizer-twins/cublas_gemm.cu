// CUDA C++ twin of the cuBLAS reference in baton's GEMM tests
// (baton_runtime::gemm::cublas_gemm_bf16): one cublasGemmEx, bf16 in and
// out, fp32 compute, "TN", on fresh random data, checked against a host
// f64 reference at sampled points. No baton code at all: if this faults
// under `compute-sanitizer --tool racecheck` the way baton's
// cuBLAS-comparison tests do, the fault is the sanitizer's with cuBLAS's
// kernels, not baton's (issue #21, docs/SANITIZERS.md).
//
// Build: nvcc -O2 -arch=sm_90a -o cublas_gemm cublas_gemm.cu -lcublas
// Run:   compute-sanitizer --tool racecheck ./cublas_gemm [size, default 512]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                             \
    do {                                                                                     \
        auto e_ = (x);                                                                       \
        if (e_ != 0) {                                                                       \
            fprintf(stderr, "%s:%d: %s failed with %d\n", __FILE__, __LINE__, #x, int(e_)); \
            return 2;                                                                        \
        }                                                                                    \
    } while (0)

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 512;  // M = N = K = n
    std::vector<__nv_bfloat16> a(size_t(n) * n), b(size_t(n) * n), d(size_t(n) * n);
    uint64_t x = 0x2545F4914F6CDD1Dull;
    auto rnd = [&] {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        return float(x >> 40) / float(1 << 24) * 2.0f - 1.0f;
    };
    for (auto &v : a) v = __float2bfloat16(rnd());
    for (auto &v : b) v = __float2bfloat16(rnd());
    __nv_bfloat16 *a_d, *b_d, *d_d;
    const size_t bytes = size_t(n) * n * sizeof(__nv_bfloat16);
    CHECK(cudaMalloc(&a_d, bytes));
    CHECK(cudaMalloc(&b_d, bytes));
    CHECK(cudaMalloc(&d_d, bytes));
    CHECK(cudaMemcpy(a_d, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b_d, b.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_d, 0xFF, bytes));
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    const float alpha = 1.0f, beta = 0.0f;
    // Row-major D (M x N) = A (M x K) . B^T (B is N x K), as baton calls it.
    CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, b_d, CUDA_R_16BF, n, a_d,
                       CUDA_R_16BF, n, &beta, d_d, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(d.data(), d_d, bytes, cudaMemcpyDeviceToHost));
    int wrong = 0, checked = 0;
    for (int i = 0; i < n; i += 37) {
        for (int j = 0; j < n; j += 41) {
            double want = 0;
            for (int k = 0; k < n; ++k)
                want += double(__bfloat162float(a[size_t(i) * n + k])) * __bfloat162float(b[size_t(j) * n + k]);
            const double got = __bfloat162float(d[size_t(i) * n + j]);
            ++checked;
            if (!(std::fabs(got - want) <= 1e-2 * std::sqrt(double(n)) + 1e-2 * std::fabs(want))) ++wrong;
        }
    }
    printf("cublas_gemm %d^3: %d of %d sampled outputs wrong\n", n, wrong, checked);
    cublasDestroy(h);
    return wrong == 0 ? 0 : 1;
}
