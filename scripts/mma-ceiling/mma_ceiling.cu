// The throughput ceiling of TF32 `mma.sync.aligned.m16n8k8` on this GPU, with nothing else
// in the loop: no loads, no stores, no conversions. Each warp keeps ACC independent
// accumulator fragments (so one mma never waits for the last) and issues ITERS rounds of
// one mma into each; blocks of WARPS warps, BLOCKS_PER_SM blocks per SM. The operands are
// whatever the registers hold (the rate does not depend on the values).
//
// Build and run on a GPU machine:
//   nvcc -O3 -arch=sm_90 -o mma_ceiling scripts/mma-ceiling/mma_ceiling.cu && ./mma_ceiling
// It prints the best of five timed launches, in TFLOP/s (2·16·8·8 FLOP per mma), for a few
// warps-per-SM settings; compare with the GEMM figures of the same GPU.
#include <cstdio>
#include <cuda_runtime.h>

#define ACC 16
#define ITERS 4096

__global__ void mma_loop(float *sink, unsigned seed) {
    unsigned a0 = seed ^ threadIdx.x, a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u;
    unsigned b0 = a0 * 11u, b1 = a0 * 13u;
    float c[ACC][4];
    for (int j = 0; j < ACC; ++j)
        for (int e = 0; e < 4; ++e) c[j][e] = 0.0f;
    for (int it = 0; it < ITERS; ++it) {
#pragma unroll
        for (int j = 0; j < ACC; ++j) {
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
    }
    float s = 0.0f;
    for (int j = 0; j < ACC; ++j)
        for (int e = 0; e < 4; ++e) s += c[j][e];
    if (s == 12345.678f) sink[threadIdx.x] = s;  // keeps the loop; never true in practice
}

int main() {
    int dev = 0, sms = 0;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, dev);
    sms = prop.multiProcessorCount;
    float *sink;
    cudaMalloc(&sink, 1024 * sizeof(float));
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    printf("%s, %d SMs\n", prop.name, sms);
    const int settings[][2] = {{4, 1}, {4, 2}, {8, 1}, {4, 4}, {8, 2}, {16, 1}};
    for (auto &s : settings) {
        int warps = s[0], per_sm = s[1];
        int blocks = sms * per_sm;
        mma_loop<<<blocks, warps * 32>>>(sink, 1u);  // warm-up
        float best = 1e30f;
        for (int r = 0; r < 5; ++r) {
            cudaEventRecord(start);
            mma_loop<<<blocks, warps * 32>>>(sink, (unsigned)r);
            cudaEventRecord(stop);
            cudaEventSynchronize(stop);
            float ms = 0;
            cudaEventElapsedTime(&ms, start, stop);
            if (ms < best) best = ms;
        }
        double flop = 2.0 * 16 * 8 * 8 * (double)ACC * ITERS * warps * (double)blocks;
        printf("%2d warps x %d blocks per SM (%2d warps/SM): %8.3f ms  %7.1f TFLOP/s\n", warps,
               per_sm, warps * per_sm, best, flop / (best * 1e-3) / 1e12);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) {
        printf("CUDA error: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}
