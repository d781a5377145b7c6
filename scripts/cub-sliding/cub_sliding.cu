// What the best-known library scan reaches on the same problem: the sliding average as
// CUB's one-pass decoupled look-back scan (`cub::DeviceScan::InclusiveSum`) of the
// differences e[p] = a[p] - a[p - window], as `kernels_gpu::sliding::scan` defines them,
// summed in f64 (and, for comparison, in f32), with each mean written as an f32. Also CUB's
// plain f32 inclusive sum of the same input, which moves a copy's bytes and nothing else.
//
// It prints one JSON row per measurement, shaped like our CLI's `--json` rows: the device
// copy (`cudaMemcpyAsync` device to device, the CLI's `cuMemcpyDtoD`), then per window the
// f64 and f32 scans, each with its median time over 20 launches after one warm-up, its
// GB/s with bytes counted as the CLI counts them (every input read once and every output
// written once: 8 bytes per value) and its fraction of the copy's GB/s. Each scan's
// `max_abs_err` is the largest difference from f64 window sums at 64 positions, computed
// on the host. Non-finite inputs are not handled (the input is uniform in [-1, 1)); each of
// the n outputs is the mean of the window ending there, the first window - 1 of them over
// fewer than `window` values (the CLI's kernel writes only the n - window + 1 full windows).
//
// Build and run on a GPU machine (CUDA 12 or later, for CUB and Thrust):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cub_sliding scripts/cub-sliding/cub_sliding.cu
//   ./cub_sliding [N [WINDOW ...]]
// N defaults to 2^28 values and the windows to 2 16 64 1024 4097 100000 135169.
// `compare.sh` in this folder runs it beside our binary and prints a table.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "cub_sliding: CUDA error %s at %s:%d\n", cudaGetErrorString(e_),  \
              __FILE__, __LINE__);                                                       \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

// A fixed pseudo-random input, uniform in [-1, 1).
__global__ void fill(float* a, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned x = (unsigned)i * 2654435761u + 12345u;
    x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
    a[i] = (x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  }
}

// e[p] in the accumulator's type (exact in f64).
template <typename Acc>
struct Diff {
  const float* a;
  long w;
  __host__ __device__ Acc operator()(long p) const {
    Acc x = (Acc)a[p];
    return p >= w ? x - (Acc)a[p - w] : x;
  }
};

// The window sum to its mean, as an f32.
template <typename Acc>
struct Mean {
  Acc inv;
  __host__ __device__ float operator()(Acc s) const { return (float)(s * inv); }
};

const int RUNS = 20;

template <typename F>
float median_ms(F f) {
  cudaEvent_t b, e;
  CK(cudaEventCreate(&b));
  CK(cudaEventCreate(&e));
  f();
  CK(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int r = 0; r < RUNS; r++) {
    CK(cudaEventRecord(b));
    f();
    CK(cudaEventRecord(e));
    CK(cudaEventSynchronize(e));
    float ms;
    CK(cudaEventElapsedTime(&ms, b, e));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(b));
  CK(cudaEventDestroy(e));
  return t[RUNS / 2];
}

// Times a CUB call `scan(temp, temp_bytes)`: asks for its temporary storage, then
// `median_ms` of its launches.
template <typename Scan>
float time_cub(Scan scan) {
  size_t bytes = 0;
  CK(scan(nullptr, bytes));
  void* tmp;
  CK(cudaMalloc(&tmp, bytes));
  float ms = median_ms([&] { CK(scan(tmp, bytes)); });
  CK(cudaFree(tmp));
  return ms;
}

// GB/s as the CLI counts them: n values read and n written, 4 bytes each.
double gbps_of(long n, float ms) { return 8.0 * n / (ms * 1e-3) / 1e9; }

void row(const char* kernel, long n, long window, float ms, double copy_gbps, double err) {
  double gbps = gbps_of(n, ms);
  printf("{\"kernel\":\"%s\",\"n\":%ld,\"window\":", kernel, n);
  if (window > 0) printf("%ld", window); else printf("null");
  printf(",\"ms_median\":%.6f,\"runs\":%d,\"gbps\":%.3f,\"copy_gbps\":%.3f,\"pct_of_copy\":%.6f",
         ms, RUNS, gbps, copy_gbps > 0 ? copy_gbps : gbps, copy_gbps > 0 ? gbps / copy_gbps : 1.0);
  if (err >= 0) printf(",\"max_abs_err\":%.3e}\n", err); else printf(",\"max_abs_err\":null}\n");
  fflush(stdout);
}

template <typename Acc>
void sliding(const char* kernel, const float* a, float* out, long n, long w, double copy_gbps,
             const std::vector<float>& h, std::vector<float>& got) {
  auto in = thrust::make_transform_iterator(thrust::make_counting_iterator<long>(0), Diff<Acc>{a, w});
  auto o = thrust::make_transform_output_iterator(out, Mean<Acc>{(Acc)1 / (Acc)w});
  float ms = time_cub([&](void* tmp, size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(tmp, bytes, in, o, n);
  });
  CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int k = 0; k < 64; k++) {
    long p = w - 1 + (long)((n - w) * (k / 64.0));
    double s = 0;
    for (long q = p - w + 1; q <= p; q++) s += h[q];
    worst = std::max(worst, std::fabs(s / w - got[p]));
  }
  row(kernel, n, w, ms, copy_gbps, worst);
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 1L << 28;
  std::vector<long> windows;
  for (int i = 2; i < argc; i++) windows.push_back(atol(argv[i]));
  if (windows.empty()) windows = {2, 16, 64, 1024, 4097, 100000, 135169};
  if (n < 1 || n > (1L << 31)) {
    fprintf(stderr, "cub_sliding: N must be between 1 and 2^31, not %s\n", argv[1]);
    return 2;
  }
  for (long w : windows)
    if (w < 1 || w > n) {
      fprintf(stderr, "cub_sliding: each window must be between 1 and N = %ld, not %ld\n", n, w);
      return 2;
    }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  fprintf(stderr, "cub_sliding: %s, CUDA runtime %d, CCCL %d.%d.%d, %ld values\n", prop.name,
          CUDART_VERSION, CCCL_MAJOR_VERSION, CCCL_MINOR_VERSION, CCCL_PATCH_VERSION, n);

  float *a, *out, *c;
  CK(cudaMalloc(&a, n * 4));
  CK(cudaMalloc(&out, n * 4));
  CK(cudaMalloc(&c, n * 4));
  fill<<<(n + 255) / 256, 256>>>(a, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> h(n), got(n);
  CK(cudaMemcpy(h.data(), a, n * 4, cudaMemcpyDeviceToHost));

  float copy_ms = median_ms([&] { CK(cudaMemcpyAsync(c, a, n * 4, cudaMemcpyDeviceToDevice)); });
  double copy_gbps = gbps_of(n, copy_ms);
  row("copy", n, 0, copy_ms, 0, -1);
  float plain_ms = time_cub([&](void* tmp, size_t& bytes) {
    return cub::DeviceScan::InclusiveSum(tmp, bytes, a, out, n);
  });
  row("cub-inclusive-sum-f32", n, 0, plain_ms, copy_gbps, -1);
  for (long w : windows) {
    sliding<double>("cub-sliding-f64", a, out, n, w, copy_gbps, h, got);
    sliding<float>("cub-sliding-f32", a, out, n, w, copy_gbps, h, got);
  }
  CK(cudaFree(a));
  CK(cudaFree(out));
  CK(cudaFree(c));
  return 0;
}
