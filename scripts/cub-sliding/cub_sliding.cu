// What the best-known library scan reaches on the same problem: the sliding average as
// CUB's one-pass decoupled look-back scan (`cub::DeviceScan::InclusiveSum`) of the
// differences e[p] = a[p] - a[p - window], as `kernels_gpu::sliding::scan` defines them,
// summed in f64 (and, for comparison, in f32), with each mean written as an f32. Also CUB's
// plain f32 inclusive sum of the same input, which moves a copy's bytes and nothing else.
// Every figure is a percentage of `cudaMemcpyAsync` device-to-device of the same 2^28
// floats in the same process (the CLI's ceiling is `cuMemcpyDtoD`), bytes counted as the
// CLI counts them (read + written); median of 20 launches after one warm-up. Non-finite
// inputs are not handled here (the input is uniform in [-1, 1)); 64 outputs are checked
// against f64 window sums on the host.
//
// Build and run on a GPU machine (CUDA 12 or later, for CUB and Thrust):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub_sliding scripts/cub-sliding/cub_sliding.cu
//   ./cub_sliding
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

__global__ void fill(float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned x = (unsigned)i * 2654435761u + 12345u;
    x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
    a[i] = (x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

template <typename Acc>
struct Diff {
  const float* a; long w;
  __host__ __device__ Acc operator()(long p) const {
    Acc x = (Acc)a[p];
    return p >= w ? x - (Acc)a[p - w] : x;
  }
};
template <typename Acc>
struct Mean {
  Acc inv;
  __host__ __device__ float operator()(Acc s) const { return (float)(s * inv); }
};

template <typename F>
float median_ms(F f, int runs = 20) {
  cudaEvent_t b, e; CK(cudaEventCreate(&b)); CK(cudaEventCreate(&e));
  f(); CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < runs; r++) {
    CK(cudaEventRecord(b)); f(); CK(cudaEventRecord(e)); CK(cudaEventSynchronize(e));
    float ms; CK(cudaEventElapsedTime(&ms, b, e)); t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[runs / 2];
}

template <typename Acc>
void sliding(const char* name, const float* a, float* out, long n, long w, float copy_gbps,
             const std::vector<float>& h) {
  auto in = thrust::make_transform_iterator(thrust::make_counting_iterator<long>(0), Diff<Acc>{a, w});
  auto o = thrust::make_transform_output_iterator(out, Mean<Acc>{(Acc)1 / (Acc)w});
  size_t bytes = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, o, n));
  void* tmp; CK(cudaMalloc(&tmp, bytes));
  float ms = median_ms([&] { CK(cub::DeviceScan::InclusiveSum(tmp, bytes, in, o, n)); });
  double gbps = 8.0 * n / (ms * 1e-3) / 1e9;
  // Spot checks against f64 window sums on the host.
  std::vector<float> got(n); CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int k = 0; k < 64; k++) {
    long p = (long)((k * 0.015625 + 0.0078) * n);
    if (p < w) p = w + k;
    double s = 0; for (long q = p - w + 1; q <= p; q++) s += h[q];
    worst = std::max(worst, std::fabs(s / w - got[p]));
  }
  printf("%s w%ld ms %.4f gbps %.1f pct_of_copy %.4f max_abs_err %.3g\n", name, w, ms, gbps,
         gbps / copy_gbps, worst);
  CK(cudaFree(tmp));
}

int main() {
  long n = 1L << 28;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, CUDA runtime %d, CCCL %d.%d.%d\n", prop.name, CUDART_VERSION, CCCL_MAJOR_VERSION,
         CCCL_MINOR_VERSION, CCCL_PATCH_VERSION);
  float *a, *out, *c;
  CK(cudaMalloc(&a, n * 4)); CK(cudaMalloc(&out, n * 4)); CK(cudaMalloc(&c, n * 4));
  fill<<<(n + 255) / 256, 256>>>(a, n); CK(cudaDeviceSynchronize());
  std::vector<float> h(n); CK(cudaMemcpy(h.data(), a, n * 4, cudaMemcpyDeviceToHost));
  float cms = median_ms([&] { CK(cudaMemcpyAsync(c, a, n * 4, cudaMemcpyDeviceToDevice)); });
  float copy_gbps = 8.0 * n / (cms * 1e-3) / 1e9;
  printf("copy ms %.4f gbps %.1f\n", cms, copy_gbps);
  {
    size_t bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, a, out, n));
    void* tmp; CK(cudaMalloc(&tmp, bytes));
    float ms = median_ms([&] { CK(cub::DeviceScan::InclusiveSum(tmp, bytes, a, out, n)); });
    double gbps = 8.0 * n / (ms * 1e-3) / 1e9;
    printf("cub-inclusive-sum-f32 ms %.4f gbps %.1f pct_of_copy %.4f\n", ms, gbps, gbps / copy_gbps);
    CK(cudaFree(tmp));
  }
  for (int r = 0; r < 2; r++) {
    for (long w : {2L, 1024L, 4097L, 100000L, 135169L}) sliding<double>("cub-sliding-f64", a, out, n, w, copy_gbps, h);
    for (long w : {2L, 100000L}) sliding<float>("cub-sliding-f32", a, out, n, w, copy_gbps, h);
  }
  return 0;
}
