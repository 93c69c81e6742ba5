// CUDA C++ twin of baton's `baton_epi_load_roundtrip` kernel
// (kernels/src/pipeline.rs), for compute-sanitizer racecheck (issue #21).
//
// Same block (5 warps: warp 0 producer, warps 1..=4 = 128 consumer
// threads), same shared-memory layout (2 stages: 4 mbarriers, then two
// 128 x 32 u32 tiles at offset 1024), same PTX synchronization
// instructions as baton emits (mbarrier.init / fence.mbarrier_init /
// mbarrier.try_wait.parity loop / bar.warp.sync / elect.sync /
// mbarrier.arrive, all .shared::cta, default .release/.acquire at CTA
// scope), so racecheck sees the same pattern. Only the hand-off varies:
//
//   elected     baton's pattern: all 32 producer lanes st.shared the tile,
//               bar.warp.sync, one elect.sync lane arrives on full[s]
//               (count 1, as a TMA's arrive.expect_tx would be); every
//               consumer thread arrives on empty[s] (count 128).
//   all_lanes   as elected, but every producer lane arrives (count 32).
//   one_writer  one elected lane writes the whole tile and arrives (count 1).
//   warp_reader the consumer side's mirror (as baton_pipeline_explicit):
//               one producer thread writes and arrives (count 1); each
//               consumer warp reads, bar.warp.sync, lane 0 arrives on
//               empty[s] (count 4).
//
// Under the PTX memory model all four are race-free: bar.warp.sync orders
// memory among the warp's lanes, and mbarrier.arrive (release) /
// try_wait (acquire) order the rest. Every run checks every output word
// against the host's recomputation and exits 1 on any mismatch.
//
// Build: nvcc -O3 -arch=sm_90a -lineinfo -o epi_load_handoff epi_load_handoff.cu
// Run:   compute-sanitizer --tool racecheck ./epi_load_handoff elected
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <vector>

enum Variant { ELECTED = 0, ALL_LANES = 1, ONE_WRITER = 2, WARP_READER = 3 };
static const char *kNames[] = {"elected", "all_lanes", "one_writer", "warp_reader"};

constexpr int STAGES = 2;
constexpr unsigned ROWS = 128, COLS = 32, TILE = ROWS * COLS;
constexpr unsigned SMEM = 1024 + STAGES * TILE * 4;

__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t *bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t *bar, unsigned parity) {
    asm volatile(
        "{ .reg .pred p; TWIN_WAIT: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra TWIN_WAIT; }"
        ::"r"(smem_addr(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void warp_sync() {
    asm volatile("bar.warp.sync 0xffffffff;" ::: "memory");
}
__device__ __forceinline__ bool elect_one() {
    unsigned r;
    asm volatile("{ .reg .pred p; elect.sync _|p, 0xffffffff; selp.u32 %0, 1, 0, p; }" : "=r"(r));
    return r != 0;
}
__device__ __forceinline__ void st_shared(unsigned *p, unsigned v) {
    asm volatile("st.shared.u32 [%0], %1;" ::"r"(smem_addr(p)), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned ld_shared(const unsigned *p) {
    unsigned v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(smem_addr(p)) : "memory");
    return v;
}

__host__ __device__ inline float accum(unsigned t, unsigned r, unsigned c) {
    return float((t * 7 + r * 3 + c) % 1024) * 0.25f - 64.0f;
}

__global__ void __launch_bounds__(160) twin(float *d, const float *c, unsigned tiles, float beta, int variant) {
    extern __shared__ __align__(1024) unsigned char smem[];
    uint64_t *full = reinterpret_cast<uint64_t *>(smem);  // full[0..2), empty[2..4)
    uint64_t *empty = full + STAGES;
    unsigned *tile0 = reinterpret_cast<unsigned *>(smem + 1024);
    const unsigned full_count = variant == ALL_LANES ? 32 : 1;
    const unsigned empty_count = variant == WARP_READER ? 4 : 128;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], full_count);
            mbar_init(&empty[s], empty_count);
        }
        fence_init();
    }
    __syncthreads();
    const unsigned lane = threadIdx.x % 32;
    unsigned stage = 0, phase = 0;
    if (threadIdx.x < 32) {
        // Producer: starts at phase 1 on the empty barriers.
        phase = 1;
        for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
            mbar_wait(&empty[stage], phase);
            unsigned *tile = tile0 + stage * TILE;
            const float *src = c + size_t(t) * TILE;
            if (variant == ELECTED || variant == ALL_LANES) {
                for (unsigned i = lane; i < TILE; i += 32) st_shared(&tile[i], __float_as_uint(src[i]));
                if (variant == ELECTED) {
                    warp_sync();
                    if (elect_one()) mbar_arrive(&full[stage]);
                } else {
                    mbar_arrive(&full[stage]);
                }
            } else {
                if (elect_one()) {
                    for (unsigned i = 0; i < TILE; ++i) st_shared(&tile[i], __float_as_uint(src[i]));
                    mbar_arrive(&full[stage]);
                }
            }
            if (++stage == STAGES) { stage = 0; phase ^= 1; }
        }
        // Producer tail: wait until the consumers released every stage.
        for (int s = 0; s < STAGES; ++s) {
            mbar_wait(&empty[stage], phase);
            if (++stage == STAGES) { stage = 0; phase ^= 1; }
        }
    } else {
        const unsigned r = threadIdx.x - 32;
        for (unsigned t = blockIdx.x; t < tiles; t += gridDim.x) {
            mbar_wait(&full[stage], phase);
            const unsigned *tile = tile0 + stage * TILE;
            float *dst = d + size_t(t) * TILE + r * COLS;
            for (unsigned col = 0; col < COLS; ++col)
                dst[col] = accum(t, r, col) + beta * __uint_as_float(ld_shared(&tile[r * COLS + col]));
            if (variant == WARP_READER) {
                warp_sync();
                if (lane == 0) mbar_arrive(&empty[stage]);
            } else {
                mbar_arrive(&empty[stage]);
            }
            if (++stage == STAGES) { stage = 0; phase ^= 1; }
        }
    }
}

#define CHECK(x)                                                                          \
    do {                                                                                  \
        cudaError_t e_ = (x);                                                             \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            return 2;                                                                     \
        }                                                                                 \
    } while (0)

int main(int argc, char **argv) {
    int variant = -1;
    for (int v = 0; v < 4; ++v)
        if (argc > 1 && !strcmp(argv[1], kNames[v])) variant = v;
    if (variant < 0) {
        fprintf(stderr, "usage: %s elected|all_lanes|one_writer|warp_reader [blocks] [tiles]\n", argv[0]);
        return 2;
    }
    const unsigned blocks = argc > 2 ? atoi(argv[2]) : 4, tiles = argc > 3 ? atoi(argv[3]) : 24;
    const float beta = 0.5f;
    const size_t n = size_t(tiles) * TILE;
    std::vector<float> c(n), d(n);
    uint64_t x = 0x9E3779B97F4A7C15ull ^ uint64_t(variant);
    for (auto &v : c) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        v = float(x >> 40) / float(1 << 24) * 8.0f - 4.0f;
    }
    float *c_d, *d_d;
    CHECK(cudaMalloc(&c_d, n * 4));
    CHECK(cudaMalloc(&d_d, n * 4));
    CHECK(cudaMemcpy(c_d, c.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_d, 0xFF, n * 4));  // NaN poison
    CHECK(cudaFuncSetAttribute(twin, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    twin<<<blocks, 160, SMEM>>>(d_d, c_d, tiles, beta, variant);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(d.data(), d_d, n * 4, cudaMemcpyDeviceToHost));
    size_t wrong = 0;
    for (size_t i = 0; i < n; ++i) {
        unsigned t = unsigned(i / TILE), r = unsigned(i / COLS % ROWS), col = unsigned(i % COLS);
        float want = accum(t, r, col) + beta * c[i];
        if (!(d[i] == want)) ++wrong;  // NaN never passes
    }
    printf("twin %s: %u blocks, %u tiles, %zu outputs, %zu wrong\n", kNames[variant], blocks, tiles, n, wrong);
    CHECK(cudaFree(c_d));
    CHECK(cudaFree(d_d));
    return wrong == 0 ? 0 : 1;
}
