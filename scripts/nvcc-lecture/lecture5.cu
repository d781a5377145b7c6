// The CUDA MODE lecture 5 matmul kernels in the lecture's own CUDA C, with a stand-alone
// `main` that times them the way our Rust host does, for scripts/nvcc-lecture/compare.sh.
//
// The kernels are transcribed from the lecture's notebook (gpu-mode/lectures,
// lecture_005/matmul_l5.ipynb; shared/seeds/lecture5-matmul-notebook.txt, cells 13, 40, 50
// and 56) with their names, argument lists and bodies unchanged. Each notebook cell was
// its own extension module, so several kernels there share the name `matmul_k`; here
// each cell's code sits in its own namespace instead. One change: the lecture's
// static-shared-memory kernel exists only at tile width 16 (`constexpr int tw = 16`), so
// `lecture_static::matmul_ks<tw>` takes `tw` as a template parameter, to compare tile
// widths 8 and 32 as well; at 16 it is the lecture's kernel.
//
// Launch shapes are the lecture's, which are also our Rust host's: 16×16 blocks for the
// naive kernel, tw×tw blocks for the tiled ones, grid (cdiv(w, bx), cdiv(h, by)), and
// 2·tw²·4 bytes of dynamic shared memory for the two dynamic kernels.
//
// Build: nvcc -O3 -arch=sm_90 -o lecture5 lecture5.cu
// Run:   ./lecture5 [M K N [ITERS [WARMUP]]]     (default 5120 256 5120 30 5)
//
// For every kernel and tile width it checks one launch, then runs WARMUP untimed launches
// and ITERS launches each between two CUDA events, and prints the median as one JSON
// object per line with the keys of the Rust binary's `--json` rows:
//   {"kernel":"naive","tw":null,"m":5120,"k":256,"n":5120,"ms_median":...,"gflops":...,
//    "max_abs_err":...,"max_rel_err":...,"ok":true}
// Here max_abs_err and max_rel_err compare a 64×64 sample of the output elements with an
// f64 reference computed on the host (the Rust binary compares every element), and `ok`
// also requires the whole output to match the naive kernel's to 1e-4 of its largest
// magnitude. Progress and the comparison with the naive kernel go to stderr.
// Exit status: 0 when every result checked out, 2 when some did not (all rows are still
// printed), 1 on a CUDA error or bad arguments.

#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

// From the lecture's utils.py (`cuda_begin`): the only helper the kernels use.
__host__ __device__ inline unsigned int cdiv(unsigned int a, unsigned int b) { return (a+b-1)/b;}

// ---------------------------------------------------------------------------------------
// The lecture's kernels
// ---------------------------------------------------------------------------------------

// Cell 13 ("CUDA"): one thread per output element, global memory only.
namespace lecture_naive {
__global__ void matmul_k(float* m, float* n, float* out, int h, int w, int k) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;

    if (r >= h || c >= w) return;
    float o = 0;
    for (int i = 0; i<k; i++) o += m[r*k+i] * n[i*w+c];
    out[r*w+c] = o;
}
}  // namespace lecture_naive

// Cell 40 ("CUDA dynamic shared"): dynamic shared memory, tile width a run-time argument.
// (The `: 0.0` double literals are the lecture's; the later kernels write 0.0f.)
namespace lecture_dynamic {
__global__ void matmul_k(float *m, float *n, float *out, int h, int w, int k, int tw) {
    int tc = threadIdx.x;
    int tr = threadIdx.y;
    int r = blockIdx.y * blockDim.y + tr;
    int c = blockIdx.x * blockDim.x + tc;

    extern __shared__ float ms[];
    float *ns = &ms[tw * tw];

    float p = 0.0f;
    for (int ph = 0; ph < cdiv(k, tw); ++ph) {
        int idx = ph * tw;
        ms[tr * tw + tc] = r < h && idx + tc < k ? m[tc + idx + r * k] : 0.0;
        ns[tr * tw + tc] = c < w && idx + tr < k ? n[(tr + idx) * w + c] : 0.0;
        __syncthreads();
        for (int i = 0; i < tw; ++i) {
            p += ms[tr * tw + i] * ns[tw * i + tc];
        }
        __syncthreads();
    }

    if (r < h && c < w) {
        out[r * w + c] = p;
    }
}
}  // namespace lecture_dynamic

// Cell 50 ("CUDA static shared"): static shared arrays. The lecture has it at tile width 16
// only (`constexpr int tw = 16`); here `tw` is a template parameter, the body unchanged, so
// that tile widths 8 and 32 can be compared with our `tiled_static::<8>` and `::<32>`.
namespace lecture_static {
template<int tw>
__global__ void matmul_ks(float *m, float *n, float *out, int h, int w, int k) {
    __shared__ float ms[tw][tw], ns[tw][tw];
    int tc = threadIdx.x;
    int tr = threadIdx.y;
    int r = blockIdx.y * blockDim.y + tr;
    int c = blockIdx.x * blockDim.x + tc;

    float p = 0.0f;
    for (int ph = 0; ph < cdiv(k, tw); ++ph) {
        int idx = ph * tw;
        ms[tr][tc] = r < h && idx + tc < k ? m[tc + idx + r * k] : 0.0f;
        ns[tr][tc] = c < w && idx + tr < k ? n[(tr + idx) * w + c] : 0.0f;
        __syncthreads();
        for (int i = 0; i < tw; ++i) {
            p += ms[tr][i] * ns[i][tc];
        }
        __syncthreads();
    }

    if (r < h && c < w) {
        out[r * w + c] = p;
    }
}
}  // namespace lecture_static

// Cell 56 ("Extra: Optimized Dynamic CUDA with Template"): dynamic shared memory, tile
// width a template parameter.
namespace lecture_dynamic_template {
template<int tw>
__global__ void matmul_k(float *m, float *n, float *out, int h, int w, int k) {
    int tc = threadIdx.x;
    int tr = threadIdx.y;
    int r = blockIdx.y * blockDim.y + tr;
    int c = blockIdx.x * blockDim.x + tc;

    extern __shared__ float ms[];
    float *ns = &ms[tw * tw];

    float p = 0.0f;
    for (int ph = 0; ph < cdiv(k, tw); ++ph) {
        int idx = ph * tw;
        ms[tr * tw + tc] = r < h && idx + tc < k ? m[tc + idx + r * k] : 0.0f;
        ns[tr * tw + tc] = c < w && idx + tr < k ? n[(tr + idx) * w + c] : 0.0f;
        __syncthreads();
        for (int i = 0; i < tw; ++i) {
            p += ms[tr * tw + i] * ns[tw * i + tc];
        }
        __syncthreads();
    }

    if (r < h && c < w) {
        out[r * w + c] = p;
    }
}
}  // namespace lecture_dynamic_template

// ---------------------------------------------------------------------------------------
// Host side
// ---------------------------------------------------------------------------------------

#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            fprintf(stderr, "lecture5: CUDA error %s (%s) at %s:%d in %s\n",          \
                    cudaGetErrorName(err_), cudaGetErrorString(err_), __FILE__,       \
                    __LINE__, #call);                                                 \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

static void die(const char* msg) {
    fprintf(stderr, "lecture5: %s\n", msg);
    exit(1);
}

enum Kernel { NAIVE, TILED_DYNAMIC, TILED_STATIC, TILED_DYNAMIC_CONST };

// The names our Rust binary reports.
static const char* kernel_name(Kernel kern) {
    switch (kern) {
        case NAIVE: return "naive";
        case TILED_DYNAMIC: return "tiled-dynamic";
        case TILED_STATIC: return "tiled-static";
        case TILED_DYNAMIC_CONST: return "tiled-dynamic-const";
    }
    return "?";
}

// One launch on the legacy default stream, shaped as the lecture's host functions shape it
// (`matmul`, `matmul_dyn`, `matmul_static`, `matmul_dyn1`), with the tile width `tw` in
// place of their hard-coded 16. The naive kernel ignores `tw`.
static void launch(Kernel kern, int tw, float* m, float* n, float* out, int h, int w, int k) {
    switch (kern) {
        case NAIVE: {
            dim3 tpb(16, 16);
            dim3 blocks(cdiv(w, tpb.x), cdiv(h, tpb.y));
            lecture_naive::matmul_k<<<blocks, tpb>>>(m, n, out, h, w, k);
            break;
        }
        case TILED_DYNAMIC: {
            int TW = tw;
            size_t size = TW*TW * 2 * sizeof(float);
            dim3 tpb(TW,TW);
            dim3 blocks(cdiv(w, tpb.x), cdiv(h, tpb.y));
            lecture_dynamic::matmul_k<<<blocks, tpb, size>>>(m, n, out, h, w, k, TW);
            break;
        }
        case TILED_STATIC: {
            dim3 tpb(tw, tw);
            dim3 blocks(cdiv(w, tpb.x), cdiv(h, tpb.y));
            switch (tw) {
                case 8: lecture_static::matmul_ks<8><<<blocks, tpb>>>(m, n, out, h, w, k); break;
                case 16: lecture_static::matmul_ks<16><<<blocks, tpb>>>(m, n, out, h, w, k); break;
                case 32: lecture_static::matmul_ks<32><<<blocks, tpb>>>(m, n, out, h, w, k); break;
                default: die("tiled-static: tile width must be 8, 16 or 32");
            }
            break;
        }
        case TILED_DYNAMIC_CONST: {
            int TW = tw;
            // The lecture allocates one byte more (`+ 1`); our Rust host launches with
            // exactly the two tiles, and so does this comparison.
            size_t size = TW*TW * 2 * sizeof(float);
            dim3 tpb(TW,TW);
            dim3 blocks(cdiv(w, tpb.x), cdiv(h, tpb.y));
            auto f = [&](auto kf) { kf<<<blocks, tpb, size>>>(m, n, out, h, w, k); };
            switch(TW) {
                case 8: f(lecture_dynamic_template::matmul_k<8>); break;
                case 16: f(lecture_dynamic_template::matmul_k<16>); break;
                case 32: f(lecture_dynamic_template::matmul_k<32>); break;
                default: die("tiled-dynamic-const: tile width must be 8, 16 or 32");
            }
            break;
        }
    }
    CUDA_CHECK(cudaGetLastError());
}

// SplitMix64, the generator of our Rust host (host/src/data.rs); mapped to [-1, 1) here.
struct Rng {
    uint64_t s;
    uint64_t next_u64() {
        s += 0x9e3779b97f4a7c15ULL;
        uint64_t z = s;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // 24 random bits: uniform in [0, 1), then 2x - 1 (exact in f32) gives [-1, 1).
    float next_f32() {
        float u = (float)(next_u64() >> 40) / (float)(1u << 24);
        return 2.0f * u - 1.0f;
    }
};

// The median as our Rust host takes it: the mean of the two middle values for an even count.
static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t mid = v.size() / 2;
    return v.size() % 2 == 0 ? (v[mid - 1] + v[mid]) / 2.0 : v[mid];
}

// Positional argument `i`, or `fallback` if absent; must be an integer in [lo, hi].
static long arg_or(int argc, char** argv, int i, long fallback, long lo, long hi) {
    if (i >= argc) return fallback;
    char* end = nullptr;
    long v = strtol(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "lecture5: argument %d (`%s`) must be an integer in [%ld, %ld]\n", i,
                argv[i], lo, hi);
        fprintf(stderr, "usage: %s [M K N [ITERS [WARMUP]]]   (default 5120 256 5120 30 5)\n",
                argv[0]);
        exit(1);
    }
    return v;
}

// The f64 reference at a sample of output elements: value and Σ|a||b| (the rounding scale).
struct Sample {
    int r, c;
    double value, magnitude;
};

int main(int argc, char** argv) {
    if (argc > 6 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: %s [M K N [ITERS [WARMUP]]]   (default 5120 256 5120 30 5)\n",
                argv[0]);
        return argc > 1 && (argv[1][1] == 'h' || argv[1][1] == '-') ? 0 : 1;
    }
    if (argc == 2 || argc == 3) die("give all of M K N, or none");
    const long M = arg_or(argc, argv, 1, 5120, 1, INT32_MAX);
    const long K = arg_or(argc, argv, 2, 256, 1, INT32_MAX);
    const long N = arg_or(argc, argv, 3, 5120, 1, INT32_MAX);
    const int iters = (int)arg_or(argc, argv, 4, 30, 1, 1000000);
    const int warmup = (int)arg_or(argc, argv, 5, 5, 0, 1000000);
    // The kernels index with `int`: every matrix must have fewer than 2^31 elements.
    if (M * K > INT32_MAX || K * N > INT32_MAX || M * N > INT32_MAX)
        die("each of M*K, K*N and M*N must be below 2^31 (the kernels index with int)");
    const int h = (int)M, k = (int)K, w = (int)N;

    int dev = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    fprintf(stderr,
            "device: %s (sm_%d%d, %d SMs), driver API %d.%d, runtime %d.%d: %ldx%ldx%ld, "
            "median of %d runs after %d warm-up\n",
            prop.name, prop.major, prop.minor, prop.multiProcessorCount, driver / 1000,
            driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, M, K, N, iters, warmup);

    // Inputs: m is h×k, n is k×w, row-major.
    const size_t len_m = (size_t)h * k, len_n = (size_t)k * w, len_out = (size_t)h * w;
    std::vector<float> hm(len_m), hn(len_n);
    Rng rng{42};
    for (auto& x : hm) x = rng.next_f32();
    for (auto& x : hn) x = rng.next_f32();

    // The f64 reference on a 64×64 grid of output elements, corners included.
    std::vector<Sample> samples;
    for (int i = 0; i < 64; ++i) {
        int r = (int)((long long)i * (h - 1) / 63);
        for (int j = 0; j < 64; ++j) {
            int c = (int)((long long)j * (w - 1) / 63);
            double v = 0, g = 0;
            for (int x = 0; x < k; ++x) {
                double p = (double)hm[(size_t)r * k + x] * (double)hn[(size_t)x * w + c];
                v += p;
                g += std::fabs(p);
            }
            samples.push_back({r, c, v, g});
        }
    }

    float *dm = nullptr, *dn = nullptr, *dout = nullptr;
    CUDA_CHECK(cudaMalloc(&dm, len_m * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dn, len_n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dout, len_out * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dm, hm.data(), len_m * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dn, hn.data(), len_n * sizeof(float), cudaMemcpyHostToDevice));

    struct Run {
        Kernel kern;
        int tw;
    };
    const Run runs[] = {
        {NAIVE, 16},
        {TILED_DYNAMIC, 8},       {TILED_DYNAMIC, 16},       {TILED_DYNAMIC, 32},
        {TILED_STATIC, 8},        {TILED_STATIC, 16},        {TILED_STATIC, 32},
        {TILED_DYNAMIC_CONST, 8}, {TILED_DYNAMIC_CONST, 16}, {TILED_DYNAMIC_CONST, 32},
    };

    std::vector<float> naive_out, out(len_out);
    double naive_max_mag = 0;
    bool all_ok = true;
    const double bound = (double)k * FLT_EPSILON;  // the Rust host's f32 dot-product bound
    std::vector<cudaEvent_t> start(iters), stop(iters);
    for (int i = 0; i < iters; ++i) {
        CUDA_CHECK(cudaEventCreate(&start[i]));
        CUDA_CHECK(cudaEventCreate(&stop[i]));
    }

    for (const Run& run : runs) {
        const char* name = kernel_name(run.kern);
        // NaN poison (all bits set): an element the kernel fails to write stays non-finite.
        CUDA_CHECK(cudaMemset(dout, 0xff, len_out * sizeof(float)));
        launch(run.kern, run.tw, dm, dn, dout, h, w, k);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(out.data(), dout, len_out * sizeof(float), cudaMemcpyDeviceToHost));

        // Against the f64 reference at the sampled elements, as the Rust host measures.
        double max_abs = 0, max_rel = 0, max_scaled = 0;
        size_t non_finite = 0;
        for (const Sample& s : samples) {
            double o = out[(size_t)s.r * w + s.c];
            if (!std::isfinite(o)) {
                ++non_finite;
                continue;
            }
            double err = std::fabs(o - s.value);
            max_abs = std::max(max_abs, err);
            if (s.value != 0) max_rel = std::max(max_rel, err / std::fabs(s.value));
            double scaled = s.magnitude > 0 ? err / s.magnitude : (err > 0 ? INFINITY : 0.0);
            max_scaled = std::max(max_scaled, scaled);
        }
        // Every element against the naive kernel's output (the naive one: finite everywhere).
        double diff = 0;
        for (size_t i = 0; i < len_out; ++i) {
            if (!std::isfinite(out[i])) {
                ++non_finite;
                continue;
            }
            if (run.kern == NAIVE)
                naive_max_mag = std::max(naive_max_mag, (double)std::fabs(out[i]));
            else
                diff = std::max(diff, (double)std::fabs(out[i] - naive_out[i]));
        }
        if (run.kern == NAIVE) naive_out = out;
        const double tol = 1e-4 * std::max(naive_max_mag, (double)FLT_MIN);
        const bool ok = non_finite == 0 && max_scaled <= bound && diff <= tol;
        all_ok = all_ok && ok;
        fprintf(stderr,
                "%-20s tw %-2d: vs f64 reference (%zu samples) max_abs %.3e max_rel %.3e; "
                "vs naive (all %zu elements) max_abs_diff %.3e (tolerance %.3e); "
                "non-finite %zu: %s\n",
                name, run.tw, samples.size(), max_abs, max_rel, len_out, diff, tol, non_finite,
                ok ? "ok" : "MISMATCH");

        // Timing, as the Rust host does it: warm-up, then each launch between two events.
        for (int i = 0; i < warmup; ++i) launch(run.kern, run.tw, dm, dn, dout, h, w, k);
        CUDA_CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < iters; ++i) {
            CUDA_CHECK(cudaEventRecord(start[i], 0));
            launch(run.kern, run.tw, dm, dn, dout, h, w, k);
            CUDA_CHECK(cudaEventRecord(stop[i], 0));
        }
        CUDA_CHECK(cudaEventSynchronize(stop[iters - 1]));
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<double> ms(iters);
        for (int i = 0; i < iters; ++i) {
            float t = 0;
            CUDA_CHECK(cudaEventElapsedTime(&t, start[i], stop[i]));
            ms[i] = t;
        }
        const double med = median(ms);
        char gflops_json[32];
        if (med > 0)
            snprintf(gflops_json, sizeof gflops_json, "%.3f",
                     2.0 * (double)M * (double)K * (double)N / (med * 1e-3) / 1e9);
        else
            snprintf(gflops_json, sizeof gflops_json, "null");

        char tw_json[16];
        if (run.kern == NAIVE)
            snprintf(tw_json, sizeof tw_json, "null");
        else
            snprintf(tw_json, sizeof tw_json, "%d", run.tw);
        printf("{\"kernel\":\"%s\",\"tw\":%s,\"m\":%ld,\"k\":%ld,\"n\":%ld,\"ms_median\":%.6f,"
               "\"gflops\":%s,\"max_abs_err\":%.6e,\"max_rel_err\":%.6e,\"ok\":%s}\n",
               name, tw_json, M, K, N, med, gflops_json, max_abs, max_rel, ok ? "true" : "false");
        fflush(stdout);
    }

    for (int i = 0; i < iters; ++i) {
        CUDA_CHECK(cudaEventDestroy(start[i]));
        CUDA_CHECK(cudaEventDestroy(stop[i]));
    }
    CUDA_CHECK(cudaFree(dm));
    CUDA_CHECK(cudaFree(dn));
    CUDA_CHECK(cudaFree(dout));
    if (!all_ok) {
        fprintf(stderr, "lecture5: some results did not check out (see MISMATCH above)\n");
        return 2;
    }
    return 0;
}
