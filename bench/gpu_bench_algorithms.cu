// bench/gpu_bench_algorithms.cu -- the applications table: tally's applications of the
// scan (tally/algorithms/) beside a peer for the same formulation and a copy of the bytes
// each case must move, in one run.
//
// Cases (the operation column, then the row's variant):
//   linear_recurrence      x[i] = a[i] x[i-1] + b[i], float, 2^26 elements, x0 = 0.5:
//                          "1-d", "64x16x65536 axis 2" (the state-space models' shape),
//                          "65536x1024 axis 0"; a in [0.5, 1), b in [-1, 1)
//   line_of_sight          a random-walk terrain of float altitudes, 2^28 points
//   lexicographic_compare  two random 2^30-byte strings equal but at one byte 4097 from the
//                          end (the answer: -1)
//   spmv_csr               float, 2^22 x 2^22, 16 non-zeros a row on average at random
//                          columns (sorted in each row): row lengths U[0,32], or a power law
//                          (Lomax, shape 1.5, longest 65536), both adjusted to exactly 16
//                          a row on average, so both cases move the same bytes
//   allocate               int32 sizes U[0,1024) -> int64 offsets and the total, 2^28
//   polynomial_evaluate    degree 3 and degree 31, float coefficients and points in [-1, 1),
//                          2^24 points
// --quick: line_of_sight 2^24, the strings 2^26 bytes, spmv 2^18 rows, allocate 2^24,
// polynomial 2^20 points; linear_recurrence stays at 2^26, where its target is. --max-log2
// K caps every case at 2^K (elements, bytes, rows, points); the shapes shrink their
// outer extents first.
//
// The peers compute the same formulation as tally's call, with CUB, Thrust's iterators
// (inputs as transforms of a counting iterator, outputs as transform or tabulate output
// iterators) and cuSPARSE, never with tally's code:
//   linear_recurrence  cub::DeviceScan::InclusiveScan of the maps (a[i], b[i]) composed
//                      as affine maps, the start value applied on output; batched along
//                      the last axis cub::DeviceScan::InclusiveScanByKey with keys = the
//                      line index; along axis 0 CUB has no strided scan: the same by-key
//                      call over contiguous lines of the axis' length, the transposed
//                      layout's work (a rough peer, said in its note, checked as that)
//   line_of_sight      cub::DeviceScan::ExclusiveScan (max, from -inf) of the slopes,
//                      the comparison on output
//   lexicographic_compare  cub::DeviceReduce::Reduce of (position, sign) pairs keeping the
//                      earliest difference, and the copy of the result to the host (tally's
//                      calls return the answer, so both wait for it)
//   spmv_csr           cusparseSpMV, CUSPARSE_SPMV_CSR_ALG1 (the peer of the ratios) and
//                      CSR_ALG2, buffer sized, allocated and preprocessed before timing
//   allocate           cub::DeviceScan::ExclusiveSum of the n sizes as int64 followed by a
//                      zero (n + 1 values: the last is the total) into n + 1 offsets;
//                      tally::allocate_into writes the same n offsets and the total beside
//                      them
//   polynomial_evaluate  "horner kernel (bench)": the bench's own reference kernel, one
//                      thread per point, Horner's loop over the coefficients
//
// The floor. A case reads and writes B bytes: linear_recurrence a, b read and x written
// (12 n); line_of_sight 4 n altitudes read and n bools written; lexicographic_compare both
// strings read (2 m); spmv_csr the offsets, columns, values, x once and y (4 (rows + 1) +
// 8 nnz + 4 cols + 4 rows); allocate 4 n read and 8 (n + 1) written; polynomial_evaluate
// the points read and the values written (8 m). The floor row is a cudaMemcpyAsync device
// to device of B / 2 bytes (B / 2 read, B / 2 written), timed the same way: the time to
// move the case's bytes at the copy's bandwidth. All of a case's rows count the same B.
// (spmv's x is 16 MiB: it stays in the L2 cache, so its gathers are mostly L2 hits.)
//
// Method as the rest of the GPU part (gpu_bench.cu): CUDA events, a warm-up call, the
// median of config.reps samples, a spin kernel before each sample; a row stops early
// (after 3 samples) once its samples add up to more than 1 s (--quick) or 10 s. CUB's and
// cuSPARSE's temporary storage is allocated before timing; tally's calls run as a user
// calls them (lexicographic_compare_by_compaction allocates its scratch stream-ordered
// inside the call). Outputs are poisoned before each row's warm-up; after its timed runs
// the output is compared in full with a sequential oracle computed on the host (in
// double, exactly for the integer, boolean and string cases, for floats within a bound
// of the rounding of any association: see each check), and a tally row's also with the
// peer's output of the same case (for floats within twice the bound; the exact cases,
// equal to the oracle, are then equal to the peer's as well).
//
// Notes: every peer and tally row gives its time over the floor's and the floor's over
// its; tally's rows also the peer's time over theirs ("1.25x speedup over ..."; the vs
// peer column says the same, against the case's first peer row).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>
#include <cuda/std/limits>
#include <cusparse.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/tabulate_output_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <tally/algorithms/allocate.cuh>
#include <tally/algorithms/lexicographic_compare.cuh>
#include <tally/algorithms/line_of_sight.cuh>
#include <tally/algorithms/linear_recurrence.cuh>
#include <tally/algorithms/polynomial.cuh>
#include <tally/algorithms/spmv.cuh>
#include <utility>
#include <vector>

#include "gpu_bench_algorithms.hpp"
#include "gpu_bench_common.cuh"
#include "verify.hpp"

namespace tally_bench::gpu {

namespace {

using count_iterator = thrust::counting_iterator<std::int64_t>;

// ---- the peers' formulations: the bench's own functors (none of tally's) -----------------

// linear_recurrence: the map y -> a y + b, composed "g after f", applied to x0 on output.
struct gate {
  float a;
  float b;
};
struct compose_gates {
  __host__ __device__ gate operator()(const gate& f, const gate& g) const {
    return {g.a * f.a, g.a * f.b + g.b};
  }
};
struct gate_at {
  const float* a;
  const float* b;
  __host__ __device__ gate operator()(std::int64_t i) const { return {a[i], b[i]}; }
};
struct apply_to_start {
  float x0;
  __host__ __device__ float operator()(const gate& f) const {
    return x0 == 0.0f ? f.b : f.a * x0 + f.b;
  }
};
struct line_of_index {
  std::int64_t len;
  __host__ __device__ int operator()(std::int64_t i) const { return static_cast<int>(i / len); }
};

// line_of_sight: the slope from the observer, the largest one before, the comparison.
struct slope_at {
  const float* altitude;
  float scale;
  __host__ __device__ float operator()(std::int64_t i) const {
    if (i == 0) return -cuda::std::numeric_limits<float>::infinity();
    return (altitude[i] - altitude[0]) / (scale * static_cast<float>(i));
  }
};
struct mark_visible {
  slope_at slope;
  bool* visible;
  __host__ __device__ void operator()(std::ptrdiff_t i, float highest_before) const {
    visible[i] = i == 0 || slope(i) > highest_before;
  }
};
struct float_max {
  __host__ __device__ float operator()(float x, float y) const { return x < y ? y : x; }
};

// lexicographic_compare: (position, sign) of the first difference.
struct position_sign {
  std::int64_t position;
  int sign;
};
struct earlier_position {
  __host__ __device__ position_sign operator()(const position_sign& x,
                                               const position_sign& y) const {
    return y.position < x.position ? y : x;
  }
};
struct difference_at {
  const unsigned char* s;
  const unsigned char* t;
  std::int64_t m;
  __host__ __device__ position_sign operator()(std::int64_t i) const {
    const int sign = s[i] < t[i] ? -1 : (t[i] < s[i] ? 1 : 0);
    return {sign != 0 ? i : m, sign};
  }
};

// allocate: the sizes as int64, then a zero (the total's place).
struct size_or_zero {
  const std::int32_t* sizes;
  std::int64_t n;
  __host__ __device__ std::int64_t operator()(std::int64_t i) const {
    return i < n ? static_cast<std::int64_t>(sizes[i]) : std::int64_t{0};
  }
};

// polynomial_evaluate: the bench's reference kernel, one thread per point.
__global__ void horner_kernel(const float* coeffs, int degree, const float* xs, float* ys,
                              std::int64_t m) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= m) return;
  const float x = xs[j];
  float p = coeffs[degree];
  for (int k = degree - 1; k >= 0; --k) p = p * x + coeffs[k];
  ys[j] = p;
}

// ---- cuSPARSE -------------------------------------------------------------------------------

void sparse_check(cusparseStatus_t status, const char* what) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(what) + ": " + cusparseGetErrorString(status));
  }
}

struct sparse_handle {
  cusparseHandle_t handle = nullptr;
  sparse_handle() { sparse_check(cusparseCreate(&handle), "cusparseCreate"); }
  ~sparse_handle() { cusparseDestroy(handle); }
  sparse_handle(const sparse_handle&) = delete;
  sparse_handle& operator=(const sparse_handle&) = delete;
};

// One SpMV of CSR float A (int32 indices) with dense x and y: the descriptors and the
// buffer, made (and preprocessed) before timing.
struct sparse_spmv {
  cusparseHandle_t handle = nullptr;
  cusparseSpMVAlg_t alg{};
  cusparseConstSpMatDescr_t a = nullptr;
  cusparseConstDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  float alpha = 1.0f;
  float beta = 0.0f;
  device_buffer buffer;
  bool preprocessed = false;

  sparse_spmv(cusparseHandle_t h, cusparseSpMVAlg_t algorithm, std::int64_t rows,
              std::int64_t cols, std::int64_t nnz, const int* offsets, const int* columns,
              const float* values, const float* dx, float* dy)
      : handle(h), alg(algorithm) {
    sparse_check(cusparseCreateConstCsr(&a, rows, cols, nnz, offsets, columns, values,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F),
                 "cusparseCreateConstCsr");
    sparse_check(cusparseCreateConstDnVec(&x, cols, dx, CUDA_R_32F), "cusparseCreateConstDnVec");
    sparse_check(cusparseCreateDnVec(&y, rows, dy, CUDA_R_32F), "cusparseCreateDnVec");
    std::size_t bytes = 0;
    sparse_check(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x,
                                         &beta, y, CUDA_R_32F, alg, &bytes),
                 "cusparseSpMV_bufferSize");
    buffer.grow(std::max<std::size_t>(bytes, 1));
    // optional: speeds up the calls that follow on the same matrix (not part of the time)
    preprocessed = cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x,
                                           &beta, y, CUDA_R_32F, alg,
                                           buffer.data()) == CUSPARSE_STATUS_SUCCESS;
    cuda_check(cudaDeviceSynchronize(), "cusparseSpMV_preprocess");
  }
  ~sparse_spmv() {
    if (y != nullptr) cusparseDestroyDnVec(y);
    if (x != nullptr) cusparseDestroyDnVec(x);
    if (a != nullptr) cusparseDestroySpMat(a);
  }
  sparse_spmv(const sparse_spmv&) = delete;
  sparse_spmv& operator=(const sparse_spmv&) = delete;

  void operator()(cudaStream_t s) {
    sparse_check(cusparseSetStream(handle, s), "cusparseSetStream");
    sparse_check(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a, x, &beta, y,
                              CUDA_R_32F, alg, buffer.data()),
                 "cusparseSpMV");
  }
};

// ---- data and checks ------------------------------------------------------------------------

// A uniform float in [lo, hi) of stream `salt` at index i (24 random bits).
float uniform(std::uint64_t seed, std::uint64_t salt, std::int64_t i, float lo, float hi) {
  const std::uint64_t bits = mix64(seed ^ mix64(salt ^ mix64(static_cast<std::uint64_t>(i))));
  return lo + (hi - lo) * static_cast<float>(bits >> 40) * 0x1p-24f;
}
std::uint64_t random_bits(std::uint64_t seed, std::uint64_t salt, std::int64_t i) {
  return mix64(seed ^ mix64(salt ^ mix64(static_cast<std::uint64_t>(i))));
}

std::string pow2_text(std::int64_t n) {
  if (n > 0 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t{1} << k) < n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

std::string mib_text(double bytes) {
  char text[48];
  if (bytes >= 1024.0 * 1024) {
    std::snprintf(text, sizeof text, "%.2f MiB", bytes / (1024.0 * 1024));
  } else {
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  }
  return text;
}

template <class T>
void upload(device_buffer& device, const std::vector<T>& host) {
  device.grow(std::max<std::size_t>(host.size() * sizeof(T), 1));
  cuda_check(cudaMemcpy(device.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
             "cudaMemcpy (input)");
}

template <class T>
std::vector<T> fetch(const void* device, std::int64_t count) {
  std::vector<T> host(static_cast<std::size_t>(count));
  cuda_check(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost),
             "cudaMemcpy (check)");
  return host;
}

template <class T>
std::string value_text(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
    return text;
  } else {
    return std::to_string(v);
  }
}

// got == want everywhere; else the first difference, named.
template <class T>
std::string compare_exact(const char* name, const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() == want.size() &&
      (got.empty() || std::memcmp(got.data(), want.data(), got.size() * sizeof(T)) == 0)) {
    return {};
  }
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (!(got[i] == want[i])) {
      return std::string(name) + "[" + std::to_string(i) + "] = " + value_text(got[i]) +
             ", expected " + value_text(want[i]);
    }
  }
  return std::string(name) + ": " + std::to_string(got.size()) + " values, expected " +
         std::to_string(want.size());
}

// |got - want| <= scale * bound everywhere (NaN fails); else the first miss, named.
std::string compare_within(const char* name, const std::vector<float>& got,
                           const std::vector<float>& want, const std::vector<float>& bound,
                           float scale, const char* against) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float error = std::fabs(got[i] - want[i]);
    if (!(error <= scale * bound[i])) {
      return std::string(name) + "[" + std::to_string(i) + "] = " + value_text(got[i]) + ", " +
             against + " " + value_text(want[i]) + " (bound " + value_text(scale * bound[i]) + ")";
    }
  }
  return {};
}

constexpr float float_eps = std::numeric_limits<float>::epsilon();

// ---- one case: its floor, its peers, tally's rows ------------------------------------------

struct app_row {
  std::string impl;
  std::function<void(cudaStream_t)> call;
  std::function<std::string()> check;  // "" when the output is right
  bool is_peer = false;                // the case's reference for the speedups
  std::string note;                    // said before the ratios ("rough peer: ...")
};

struct app_case {
  operation what = operation::linear_recurrence;
  std::string type;
  std::string op;
  std::string variant;
  std::int64_t n = 0;
  double bytes = 0;        // read + written, counted by the case
  std::string produced;    // what the data is, for the floor's note
  std::vector<std::pair<void*, std::size_t>> outputs;  // poisoned before each row
  std::function<void()> reset;                          // host results, reset before each row
  std::vector<app_row> rows;                            // the peers first, then tally's
};

class applications_table {
 public:
  explicit applications_table(gpu_context& context)
      : ctx_(context), config_(*context.config) {}

  // ---- linear_recurrence: 1-d, along the last axis, along the first axis ----
  void linear_recurrence_cases(std::int64_t n) {
    const char* cub_scan = "cub::DeviceScan::InclusiveScan";
    const char* cub_by_key = "cub::DeviceScan::InclusiveScanByKey";
    if (!wanted({cub_scan, cub_by_key, "tally::linear_recurrence"})) return;
    require_memory(n * 4 * (3 + 3), "linear_recurrence");  // a, b, x, the floor's 2 x 6n bytes
    const float x0 = 0.5f;
    std::vector<float> host_a(static_cast<std::size_t>(n));
    std::vector<float> host_b(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      host_a[static_cast<std::size_t>(i)] = uniform(config_.seed, 0x47415445ull, i, 0.5f, 1.0f);
      host_b[static_cast<std::size_t>(i)] = uniform(config_.seed, 0x494E5055ull, i, -1.0f, 1.0f);
    }
    device_buffer a;
    device_buffer b;
    device_buffer x;
    upload(a, host_a);
    upload(b, host_b);
    x.grow(static_cast<std::size_t>(n) * sizeof(float));
    const float* da = static_cast<const float*>(a.data());
    const float* db = static_cast<const float*>(b.data());
    float* dx = static_cast<float*>(x.data());
    const auto gates = thrust::make_transform_iterator(count_iterator(0), gate_at{da, db});
    const auto xs = thrust::make_transform_output_iterator(dx, apply_to_start{x0});

    // The shapes: lines of 65536 (fewer when n is small), outer extents shrink first.
    const std::int64_t len = std::min<std::int64_t>(65536, n);
    const std::int64_t channels = std::min<std::int64_t>(16, n / len);
    const std::vector<std::int64_t> last_axis = {n / len / channels, channels, len};
    const std::int64_t inner = std::min<std::int64_t>(1024, std::max<std::int64_t>(1, n / len));
    const std::vector<std::int64_t> first_axis = {n / inner, inner};

    struct shape_case {
      std::string variant;
      std::vector<std::int64_t> shape;  // empty: 1-d
      int axis;
    };
    const std::vector<shape_case> shapes = {
        {"1-d", {}, 0},
        {std::to_string(last_axis[0]) + "x" + std::to_string(last_axis[1]) + "x" +
             std::to_string(last_axis[2]) + " axis 2",
         last_axis, 2},
        {std::to_string(first_axis[0]) + "x" + std::to_string(first_axis[1]) + " axis 0",
         first_axis, 0}};
    for (const shape_case& sc : shapes) {
      app_case c;
      c.what = operation::linear_recurrence;
      c.type = "float";
      c.op = "affine";
      c.variant = sc.variant;
      c.n = n;
      c.bytes = 12.0 * static_cast<double>(n);
      c.produced = "a, b read, x written; x0 = 0.5";
      c.outputs = {{dx, static_cast<std::size_t>(n) * sizeof(float)}};
      const tally::axis_view view =
          sc.shape.empty() ? tally::axis_view{1, n, 1}
                           : tally::check_shape("tally-bench", sc.shape, sc.axis);
      // the oracle: each line's recurrence in double, and the bound of its rounding
      auto want = std::make_shared<std::vector<float>>();
      auto bound = std::make_shared<std::vector<float>>();
      recurrence_oracle(host_a, host_b, x0, view, *want, *bound);
      auto peer_x = std::make_shared<std::vector<float>>();
      const std::string peer_name = sc.shape.empty() ? cub_scan : cub_by_key;
      const auto check = [=](bool is_peer, const std::shared_ptr<std::vector<float>>& oracle,
                             const std::shared_ptr<std::vector<float>>& oracle_bound) {
        return [=]() -> std::string {
          std::vector<float> got = fetch<float>(dx, n);
          // Any association of the maps rounds within a small multiple of eps times the
          // magnitudes s_i = |a_i| s_(i-1) + |b_i| (s_(-1) = |x0|) of its terms.
          std::string why = compare_within("x", got, *oracle, *oracle_bound, 256 * float_eps,
                                           "oracle");
          if (!why.empty()) return why;
          if (is_peer) {
            *peer_x = std::move(got);
          } else if (!peer_x->empty()) {
            why = compare_within("x", got, *peer_x, *oracle_bound, 512 * float_eps,
                                 peer_name.c_str());
          }
          return why;
        };
      };
      if (n <= INT_MAX) {
        const int items = static_cast<int>(n);
        if (sc.shape.empty()) {
          void* temp = nullptr;
          const std::size_t temp_bytes = cub_storage(
              [&](void* t, std::size_t& bytes) {
                return cub::DeviceScan::InclusiveScan(t, bytes, gates, xs, compose_gates{}, items);
              },
              &temp);
          c.rows.push_back({cub_scan,
                            [=](cudaStream_t s) {
                              std::size_t bytes = temp_bytes;
                              cuda_check(cub::DeviceScan::InclusiveScan(temp, bytes, gates, xs,
                                                                        compose_gates{}, items, s),
                                         "cub::DeviceScan::InclusiveScan");
                            },
                            check(true, want, bound), true, {}});
        } else {
          // keys = the line index: the by-key scan restarts at every line. Along axis 0
          // the lines are strided, which CUB cannot scan: the same call over contiguous
          // lines of the axis' length (the transposed layout's work), checked as that.
          const bool rough = view.inner > 1;
          const auto keys =
              thrust::make_transform_iterator(count_iterator(0), line_of_index{view.len});
          void* temp = nullptr;
          const std::size_t temp_bytes = cub_storage(
              [&](void* t, std::size_t& bytes) {
                return cub::DeviceScan::InclusiveScanByKey(t, bytes, keys, gates, xs,
                                                           compose_gates{}, items,
                                                           cuda::std::equal_to<>{});
              },
              &temp);
          auto rough_want = want;
          auto rough_bound = bound;
          if (rough) {
            rough_want = std::make_shared<std::vector<float>>();
            rough_bound = std::make_shared<std::vector<float>>();
            recurrence_oracle(host_a, host_b, x0, tally::axis_view{n / view.len, view.len, 1},
                              *rough_want, *rough_bound);
          }
          // a rough peer's output is another problem's: kept out of tally's check
          auto peer_check = check(!rough, rough_want, rough_bound);
          c.rows.push_back(
              {cub_by_key,
               [=](cudaStream_t s) {
                 std::size_t bytes = temp_bytes;
                 cuda_check(cub::DeviceScan::InclusiveScanByKey(temp, bytes, keys, gates, xs,
                                                                compose_gates{}, items,
                                                                cuda::std::equal_to<>{}, s),
                            "cub::DeviceScan::InclusiveScanByKey");
               },
               peer_check, true,
               rough ? "rough peer: contiguous lines of " + pow2_text(view.len) +
                           " (the transposed layout; CUB has no strided scan)"
                     : std::string("keys = line index")});
        }
      } else {
        note_once(peer_name + " skipped above n = INT_MAX (the bench passes an int count)");
      }
      const std::vector<std::int64_t> shape = sc.shape;
      const int axis = sc.axis;
      for (const bool deterministic : {false, true}) {
        std::string impl = shape.empty() ? "tally::linear_recurrence" : "tally::linear_recurrence_batched";
        if (deterministic) impl += "/deterministic";
        c.rows.push_back({impl,
                          [=](cudaStream_t s) {
                            tally::options o;
                            o.stream = s;
                            o.deterministic = deterministic;
                            if (shape.empty()) {
                              tally::linear_recurrence(da, db, dx, n, x0, o);
                            } else {
                              tally::linear_recurrence_batched(
                                  da, db, dx, std::span<const std::int64_t>(shape), axis, x0, o);
                            }
                          },
                          check(false, want, bound), false, {}});
      }
      run_case(c);
    }
  }

  // ---- line_of_sight ----
  void line_of_sight_case(std::int64_t n) {
    const char* cub_name = "cub::DeviceScan::ExclusiveScan";
    if (!wanted({cub_name, "tally::line_of_sight"})) return;
    require_memory(n * (4 + 1) * 2, "line_of_sight");
    const float scale = 0.5f;
    std::vector<float> host_alt(static_cast<std::size_t>(n));
    double walk = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      walk += uniform(config_.seed, 0x414C5449ull, i, -1.0f, 1.0f);
      host_alt[static_cast<std::size_t>(i)] = static_cast<float>(walk);
    }
    // the oracle: the same float slopes, the running maximum, left to right
    std::vector<std::uint8_t> want(static_cast<std::size_t>(n));
    std::int64_t seen = 0;
    {
      float highest = -std::numeric_limits<float>::infinity();
      for (std::int64_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::size_t>(i);
        const float slope = i == 0 ? -std::numeric_limits<float>::infinity()
                                   : (host_alt[k] - host_alt[0]) / (scale * static_cast<float>(i));
        want[k] = i == 0 || slope > highest ? 1 : 0;
        seen += want[k];
        highest = std::max(highest, slope);
      }
    }
    device_buffer alt;
    device_buffer vis;
    upload(alt, host_alt);
    vis.grow(static_cast<std::size_t>(n));
    const float* dalt = static_cast<const float*>(alt.data());
    bool* dvis = static_cast<bool*>(vis.data());

    app_case c;
    c.what = operation::line_of_sight;
    c.type = "float";
    c.op = "max";
    c.variant = "random walk";
    c.n = n;
    c.bytes = 5.0 * static_cast<double>(n);
    c.produced = "altitudes read, bools written; " + std::to_string(seen) + " visible";
    c.outputs = {{dvis, static_cast<std::size_t>(n)}};
    const auto check = [=, want = std::make_shared<std::vector<std::uint8_t>>(std::move(want))] {
      return compare_exact("visible", fetch<std::uint8_t>(dvis, n), *want);
    };
    if (n <= INT_MAX) {
      const int items = static_cast<int>(n);
      const slope_at slope{dalt, scale};
      const auto slopes = thrust::make_transform_iterator(count_iterator(0), slope);
      const auto marks = thrust::make_tabulate_output_iterator(mark_visible{slope, dvis});
      const float lowest = -std::numeric_limits<float>::infinity();
      void* temp = nullptr;
      const std::size_t temp_bytes = cub_storage(
          [&](void* t, std::size_t& bytes) {
            return cub::DeviceScan::ExclusiveScan(t, bytes, slopes, marks, float_max{}, lowest, items);
          },
          &temp);
      c.rows.push_back({cub_name,
                        [=](cudaStream_t s) {
                          std::size_t bytes = temp_bytes;
                          cuda_check(cub::DeviceScan::ExclusiveScan(temp, bytes, slopes, marks,
                                                                    float_max{}, lowest, items, s),
                                     "cub::DeviceScan::ExclusiveScan");
                        },
                        check, true, {}});
    } else {
      note_once(std::string(cub_name) + " skipped above n = INT_MAX (the bench passes an int count)");
    }
    c.rows.push_back({"tally::line_of_sight",
                      [=](cudaStream_t s) {
                        tally::options o;
                        o.stream = s;
                        tally::line_of_sight(dalt, n, scale, dvis, o);
                      },
                      check, false, {}});
    run_case(c);
  }

  // ---- lexicographic_compare: the reduction and the compaction ----
  void lexicographic_case(std::int64_t m) {
    const char* cub_name = "cub::DeviceReduce::Reduce (+ result to host)";
    if (!wanted({cub_name, "tally::lexicographic_compare"})) return;
    require_memory(m * 5, "lexicographic_compare");  // s, t, the floor's 2 x m, the scratch m
    std::vector<unsigned char> host_s(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; i += 8) {
      const std::uint64_t bits = random_bits(config_.seed, 0x53545249ull, i / 8);
      std::memcpy(host_s.data() + i, &bits, static_cast<std::size_t>(std::min<std::int64_t>(8, m - i)));
    }
    // equal but at one place near the end, where s is the smaller
    const std::int64_t at = m > 8192 ? m - 4097 : m / 2;
    host_s[static_cast<std::size_t>(at)] = 0x40;
    device_buffer s;
    device_buffer t;
    upload(s, host_s);
    host_s[static_cast<std::size_t>(at)] = 0x41;
    upload(t, host_s);
    host_s = {};
    const auto* ds = static_cast<const unsigned char*>(s.data());
    const auto* dt = static_cast<const unsigned char*>(t.data());

    app_case c;
    c.what = operation::lexicographic_compare;
    c.type = "uint8";
    c.op = "first";
    c.variant = "differ at m-" + std::to_string(m - at);
    c.n = m;
    c.bytes = 2.0 * static_cast<double>(m);
    c.produced = "both strings read; s < t at position " + std::to_string(at);
    // the answers land on the host, set before each row to values no call returns (the
    // peer's is kept for tally's checks once its row ran)
    auto answer = std::make_shared<int>(7);
    auto peer_answer = std::make_shared<position_sign>(position_sign{-1, 7});
    c.reset = [=] { *answer = 7; };
    if (m <= INT_MAX) {
      const int items = static_cast<int>(m);
      const auto pairs = thrust::make_transform_iterator(count_iterator(0), difference_at{ds, dt, m});
      result_.grow(sizeof(position_sign));
      auto* dresult = static_cast<position_sign*>(result_.data());
      c.outputs = {{dresult, sizeof(position_sign)}};
      const position_sign none{m, 0};
      void* temp = nullptr;
      const std::size_t temp_bytes = cub_storage(
          [&](void* tp, std::size_t& bytes) {
            return cub::DeviceReduce::Reduce(tp, bytes, pairs, dresult, items, earlier_position{},
                                             none);
          },
          &temp);
      c.rows.push_back(
          {cub_name,
           [=](cudaStream_t st) {
             std::size_t bytes = temp_bytes;
             cuda_check(cub::DeviceReduce::Reduce(temp, bytes, pairs, dresult, items,
                                                  earlier_position{}, none, st),
                        "cub::DeviceReduce::Reduce");
             cuda_check(cudaMemcpyAsync(peer_answer.get(), dresult, sizeof(position_sign),
                                        cudaMemcpyDeviceToHost, st),
                        "cudaMemcpyAsync (result)");
             cuda_check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
           },
           [=]() -> std::string {
             if (peer_answer->position == at && peer_answer->sign == -1) return {};
             return "first difference (" + std::to_string(peer_answer->position) + ", " +
                    std::to_string(peer_answer->sign) + "), expected (" + std::to_string(at) +
                    ", -1)";
           },
           true, {}});
    } else {
      note_once(std::string(cub_name) + " skipped above n = INT_MAX (the bench passes an int count)");
    }
    const auto check = [=]() -> std::string {
      if (*answer != -1) return "result " + std::to_string(*answer) + ", expected -1";
      if (peer_answer->sign != 7 && peer_answer->sign != *answer) {
        return "result " + std::to_string(*answer) + ", the peer's " +
               std::to_string(peer_answer->sign);
      }
      return {};
    };
    c.rows.push_back({"tally::lexicographic_compare",
                      [=](cudaStream_t st) {
                        tally::options o;
                        o.stream = st;
                        *answer = tally::lexicographic_compare(ds, m, dt, m, o);
                      },
                      check, false, {}});
    c.rows.push_back({"tally::lexicographic_compare_by_compaction",
                      [=](cudaStream_t st) {
                        tally::options o;
                        o.stream = st;
                        *answer = tally::lexicographic_compare_by_compaction(ds, m, dt, m, o);
                      },
                      check, false, "m bytes of stream-ordered scratch inside the call"});
    run_case(c);
  }

  // ---- spmv_csr: two row-length mixes of 16 a row on average ----
  void spmv_cases(std::int64_t rows) {
    const char* alg1 = "cusparseSpMV CSR_ALG1";
    const char* alg2 = "cusparseSpMV CSR_ALG2";
    if (!wanted({alg1, alg2, "tally::spmv_csr"})) return;
    const std::int64_t cols = rows;
    const std::int64_t nnz = 16 * rows;
    require_memory(4 * (rows + 1) + 8 * nnz + 8 * rows + 2 * (8 * nnz + 12 * rows), "spmv_csr");
    if (nnz > INT_MAX) {
      note_once("spmv_csr skipped above 2^31 non-zeros (int32 offsets)");
      return;
    }
    std::vector<float> host_x(static_cast<std::size_t>(cols));
    for (std::int64_t j = 0; j < cols; ++j) {
      host_x[static_cast<std::size_t>(j)] = uniform(config_.seed, 0x5645430Aull, j, -1.0f, 1.0f);
    }
    device_buffer x;
    upload(x, host_x);
    const auto* dx = static_cast<const float*>(x.data());
    const std::int64_t longest = std::min<std::int64_t>(65536, cols);
    for (const bool power_law : {false, true}) {
      // row lengths, then adjusted (random rows, one at a time) to exactly nnz in all
      std::vector<std::int64_t> length(static_cast<std::size_t>(rows));
      std::int64_t total = 0;
      for (std::int64_t r = 0; r < rows; ++r) {
        std::int64_t len = 0;
        if (power_law) {
          const double u = (static_cast<double>(random_bits(config_.seed, 0x4C4F4D41ull, r) >> 11) + 1) *
                           0x1p-53;  // (0, 1]
          len = static_cast<std::int64_t>(
              std::min(static_cast<double>(longest), 8.0 * (std::pow(u, -1.0 / 1.5) - 1.0)));
        } else {
          len = static_cast<std::int64_t>(random_bits(config_.seed, 0x554E4946ull, r) % 33);
        }
        length[static_cast<std::size_t>(r)] = len;
        total += len;
      }
      for (std::int64_t k = 0; total != nnz; ++k) {
        const auto r = static_cast<std::size_t>(random_bits(config_.seed, 0x41444A55ull, k) %
                                                static_cast<std::uint64_t>(rows));
        if (total < nnz && length[r] < longest) {
          ++length[r];
          ++total;
        } else if (total > nnz && length[r] > 0) {
          --length[r];
          --total;
        }
      }
      std::vector<std::int32_t> host_offsets(static_cast<std::size_t>(rows) + 1);
      std::vector<std::int32_t> host_cols(static_cast<std::size_t>(nnz));
      std::vector<float> host_values(static_cast<std::size_t>(nnz));
      std::vector<float> want(static_cast<std::size_t>(rows));
      std::vector<float> bound(static_cast<std::size_t>(rows));
      std::int64_t empty = 0;
      std::int64_t longest_row = 0;
      std::int64_t k = 0;
      const std::uint64_t salt = power_law ? 0x504C4157ull : 0x554E4943ull;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::size_t ri = static_cast<std::size_t>(r);
        host_offsets[ri] = static_cast<std::int32_t>(k);
        const std::int64_t end = k + length[ri];
        for (std::int64_t q = k; q < end; ++q) {
          host_cols[static_cast<std::size_t>(q)] = static_cast<std::int32_t>(
              random_bits(config_.seed, salt, q) % static_cast<std::uint64_t>(cols));
        }
        std::sort(host_cols.begin() + k, host_cols.begin() + end);
        // the oracle in double; any order of the row's sum rounds within
        // (length + 2) eps sum |v x|
        double sum = 0;
        double sum_abs = 0;
        for (std::int64_t q = k; q < end; ++q) {
          const std::size_t qi = static_cast<std::size_t>(q);
          host_values[qi] = uniform(config_.seed, salt + 1, q, -1.0f, 1.0f);
          const double p = static_cast<double>(host_values[qi]) *
                           host_x[static_cast<std::size_t>(host_cols[qi])];
          sum += p;
          sum_abs += std::fabs(p);
        }
        want[ri] = static_cast<float>(sum);
        bound[ri] = static_cast<float>(static_cast<double>(length[ri] + 2) * sum_abs) +
                    std::numeric_limits<float>::denorm_min();
        empty += length[ri] == 0 ? 1 : 0;
        longest_row = std::max(longest_row, length[ri]);
        k = end;
      }
      host_offsets[static_cast<std::size_t>(rows)] = static_cast<std::int32_t>(k);
      device_buffer offsets;
      device_buffer columns;
      device_buffer values;
      device_buffer y;
      upload(offsets, host_offsets);
      upload(columns, host_cols);
      upload(values, host_values);
      host_cols = {};
      host_values = {};
      y.grow(static_cast<std::size_t>(rows) * sizeof(float));
      const auto* doff = static_cast<const int*>(offsets.data());
      const auto* dcol = static_cast<const int*>(columns.data());
      const auto* dval = static_cast<const float*>(values.data());
      auto* dy = static_cast<float*>(y.data());

      app_case c;
      c.what = operation::spmv_csr;
      c.type = "float";
      c.op = "plus";
      c.variant = power_law ? "16/row power law" : "16/row U[0,32]";
      c.n = rows;
      c.bytes = 4.0 * static_cast<double>(rows + 1) + 8.0 * static_cast<double>(nnz) +
                4.0 * static_cast<double>(cols) + 4.0 * static_cast<double>(rows);
      c.produced = std::to_string(nnz) + " non-zeros, " + std::to_string(cols) +
                   " columns, longest row " + std::to_string(longest_row) + ", " +
                   std::to_string(empty) + " empty rows";
      c.outputs = {{dy, static_cast<std::size_t>(rows) * sizeof(float)}};
      auto oracle = std::make_shared<std::pair<std::vector<float>, std::vector<float>>>(
          std::move(want), std::move(bound));
      auto peer_y = std::make_shared<std::vector<float>>();
      const auto check = [=](bool is_peer) {
        return [=]() -> std::string {
          std::vector<float> got = fetch<float>(dy, rows);
          std::string why =
              compare_within("y", got, oracle->first, oracle->second, float_eps, "oracle");
          if (!why.empty()) return why;
          if (is_peer) {
            if (peer_y->empty()) *peer_y = std::move(got);
          } else if (!peer_y->empty()) {
            why = compare_within("y", got, *peer_y, oracle->second, 2 * float_eps, "CSR_ALG1's");
          }
          return why;
        };
      };
      if (!sparse_) sparse_ = std::make_unique<sparse_handle>();
      std::vector<std::shared_ptr<sparse_spmv>> calls;
      for (const auto& [name, alg] : {std::pair{alg1, CUSPARSE_SPMV_CSR_ALG1},
                                      std::pair{alg2, CUSPARSE_SPMV_CSR_ALG2}}) {
        if (!config_.selected(name)) continue;
        auto spmv = std::make_shared<sparse_spmv>(sparse_->handle, alg, rows, cols, nnz, doff, dcol,
                                                  dval, dx, dy);
        c.rows.push_back({name, [spmv](cudaStream_t s) { (*spmv)(s); }, check(true), true,
                          spmv->preprocessed ? "preprocessed" : "no preprocessing"});
      }
      c.rows.push_back({"tally::spmv_csr",
                        [=](cudaStream_t s) {
                          tally::options o;
                          o.stream = s;
                          tally::spmv_csr(doff, dcol, dval, dx, dy, rows, nnz, o);
                        },
                        check(false), false, {}});
      run_case(c);
    }
  }

  // ---- allocate: int32 sizes -> int64 offsets and the total ----
  void allocate_case(std::int64_t n) {
    const char* cub_name = "cub::DeviceScan::ExclusiveSum";
    if (!wanted({cub_name, "tally::allocate_into"})) return;
    require_memory(n * (4 + 8) * 2 + 8, "allocate");
    std::vector<std::int32_t> host_sizes(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      host_sizes[static_cast<std::size_t>(i)] =
          static_cast<std::int32_t>(random_bits(config_.seed, 0x53495A45ull, i) % 1024);
    }
    // the oracle: n offsets, then the total
    auto want = std::make_shared<std::vector<std::int64_t>>(static_cast<std::size_t>(n) + 1);
    std::int64_t running = 0;
    for (std::size_t i = 0; i < host_sizes.size(); ++i) {
      (*want)[i] = running;
      running += host_sizes[i];
    }
    want->back() = running;
    device_buffer sizes;
    device_buffer offsets;
    upload(sizes, host_sizes);
    host_sizes = {};
    offsets.grow((static_cast<std::size_t>(n) + 1) * sizeof(std::int64_t));
    const auto* dsizes = static_cast<const std::int32_t*>(sizes.data());
    auto* doffsets = static_cast<std::int64_t*>(offsets.data());

    app_case c;
    c.what = operation::allocate;
    c.type = "int32";
    c.op = "plus";
    c.variant = "U[0,1024) -> int64";
    c.n = n;
    c.bytes = 4.0 * static_cast<double>(n) + 8.0 * static_cast<double>(n + 1);
    c.produced = "int32 sizes read, int64 offsets and total written; total " + std::to_string(running);
    c.outputs = {{doffsets, (static_cast<std::size_t>(n) + 1) * sizeof(std::int64_t)}};
    // offsets[0, n) and the total at offsets[n], for both rows
    const auto check = [=] { return compare_exact("offsets", fetch<std::int64_t>(doffsets, n + 1), *want); };
    if (n + 1 <= INT_MAX) {
      const int items = static_cast<int>(n + 1);
      const auto in = thrust::make_transform_iterator(count_iterator(0), size_or_zero{dsizes, n});
      void* temp = nullptr;
      const std::size_t temp_bytes = cub_storage(
          [&](void* t, std::size_t& bytes) {
            return cub::DeviceScan::ExclusiveSum(t, bytes, in, doffsets, items);
          },
          &temp);
      c.rows.push_back({cub_name,
                        [=](cudaStream_t s) {
                          std::size_t bytes = temp_bytes;
                          cuda_check(cub::DeviceScan::ExclusiveSum(temp, bytes, in, doffsets, items, s),
                                     "cub::DeviceScan::ExclusiveSum");
                        },
                        check, true, "n + 1 values: the total is the last"});
    } else {
      note_once(std::string(cub_name) + " skipped above n = INT_MAX (the bench passes an int count)");
    }
    c.rows.push_back({"tally::allocate_into",
                      [=](cudaStream_t s) {
                        tally::options o;
                        o.stream = s;
                        tally::allocate_into(dsizes, n, doffsets, doffsets + n, o);
                      },
                      check, false, "the total written beside the offsets"});
    run_case(c);
  }

  // ---- polynomial_evaluate at many points ----
  void polynomial_cases(std::int64_t m) {
    const char* kernel_name = "horner kernel (bench)";
    if (!wanted({kernel_name, "tally::polynomial_evaluate"})) return;
    require_memory(m * 8 * 2, "polynomial_evaluate");
    std::vector<float> host_xs(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) {
      host_xs[static_cast<std::size_t>(j)] = uniform(config_.seed, 0x504F494Eull, j, -1.0f, 1.0f);
    }
    device_buffer xs;
    device_buffer ys;
    device_buffer coeffs;
    upload(xs, host_xs);
    ys.grow(static_cast<std::size_t>(m) * sizeof(float));
    const auto* dxs = static_cast<const float*>(xs.data());
    auto* dys = static_cast<float*>(ys.data());
    for (const int degree : {3, 31}) {
      std::vector<float> host_c(static_cast<std::size_t>(degree) + 1);
      for (int k = 0; k <= degree; ++k) {
        host_c[static_cast<std::size_t>(k)] = uniform(config_.seed, 0x434F4546ull + degree, k, -1.0f, 1.0f);
      }
      upload(coeffs, host_c);
      const auto* dc = static_cast<const float*>(coeffs.data());
      // the oracle: Horner in double; any association of the steps rounds within
      // 4 (degree + 2) eps sum |c_k| |x|^k
      auto want = std::make_shared<std::vector<float>>(static_cast<std::size_t>(m));
      auto bound = std::make_shared<std::vector<float>>(static_cast<std::size_t>(m));
      for (std::size_t j = 0; j < host_xs.size(); ++j) {
        const double x = host_xs[j];
        double p = host_c[static_cast<std::size_t>(degree)];
        double q = std::fabs(p);
        for (int k = degree - 1; k >= 0; --k) {
          p = p * x + host_c[static_cast<std::size_t>(k)];
          q = q * std::fabs(x) + std::fabs(host_c[static_cast<std::size_t>(k)]);
        }
        (*want)[j] = static_cast<float>(p);
        (*bound)[j] = static_cast<float>(4.0 * (degree + 2) * q) +
                      std::numeric_limits<float>::denorm_min();
      }
      app_case c;
      c.what = operation::polynomial_evaluate;
      c.type = "float";
      c.op = "horner";
      c.variant = "degree " + std::to_string(degree);
      c.n = m;
      c.bytes = 8.0 * static_cast<double>(m);
      c.produced = "points read, values written; " + std::to_string(degree + 1) + " coefficients";
      c.outputs = {{dys, static_cast<std::size_t>(m) * sizeof(float)}};
      auto peer_ys = std::make_shared<std::vector<float>>();
      const auto check = [=](bool is_peer) {
        return [=]() -> std::string {
          std::vector<float> got = fetch<float>(dys, m);
          std::string why = compare_within("y", got, *want, *bound, float_eps, "oracle");
          if (!why.empty()) return why;
          if (is_peer) {
            *peer_ys = std::move(got);
          } else if (!peer_ys->empty()) {
            why = compare_within("y", got, *peer_ys, *bound, 2 * float_eps, "the kernel's");
          }
          return why;
        };
      };
      const unsigned blocks = static_cast<unsigned>((m + 255) / 256);
      c.rows.push_back({kernel_name,
                        [=](cudaStream_t s) {
                          horner_kernel<<<blocks, 256, 0, s>>>(dc, degree, dxs, dys, m);
                          cuda_check(cudaGetLastError(), "horner_kernel");
                        },
                        check(true), true, "one thread per point"});
      c.rows.push_back({"tally::polynomial_evaluate",
                        [=](cudaStream_t s) {
                          tally::options o;
                          o.stream = s;
                          tally::polynomial_evaluate(dc, degree, dxs, m, dys, o);
                        },
                        check(false), false, {}});
      run_case(c);
    }
  }

 private:
  bool wanted(std::initializer_list<const char*> impls) const {
    for (const char* impl : impls) {
      if (config_.selected(impl)) return true;
    }
    return false;
  }

  void note_once(const std::string& text) {
    if (ctx_.noted->insert(text).second) ctx_.out->note("note: " + text);
  }

  // Throws (ending the case, not the run) when a case needs more than the device's free
  // memory can give.
  void require_memory(std::int64_t bytes, const char* what) const {
    if (bytes > ctx_.free_bytes / 10 * 8) {
      throw std::runtime_error(std::string(what) + " needs about " +
                               mib_text(static_cast<double>(bytes)) +
                               " of device memory, more than is free");
    }
  }

  // The x of each line of the view (outer, len, inner) in double, rounded to float, and
  // s = |a| s + |b| from |x0|: the magnitude of the terms every association adds.
  static void recurrence_oracle(const std::vector<float>& a, const std::vector<float>& b, float x0,
                                tally::axis_view v, std::vector<float>& want,
                                std::vector<float>& bound) {
    want.assign(a.size(), 0.0f);
    bound.assign(a.size(), 0.0f);
    std::vector<double> x(static_cast<std::size_t>(v.inner));
    std::vector<double> s(static_cast<std::size_t>(v.inner));
    for (std::int64_t o = 0; o < v.outer; ++o) {
      std::fill(x.begin(), x.end(), static_cast<double>(x0));
      std::fill(s.begin(), s.end(), std::fabs(static_cast<double>(x0)));
      for (std::int64_t k = 0; k < v.len; ++k) {
        const std::size_t base = static_cast<std::size_t>((o * v.len + k) * v.inner);
        for (std::size_t j = 0; j < x.size(); ++j) {
          const double ai = a[base + j];
          const double bi = b[base + j];
          x[j] = ai * x[j] + bi;
          s[j] = std::fabs(ai) * s[j] + std::fabs(bi);
          want[base + j] = static_cast<float>(x[j]);
          bound[base + j] = static_cast<float>(s[j]) + std::numeric_limits<float>::denorm_min();
        }
      }
    }
  }

  // CUB's temporary storage: `call(nullptr, bytes)` is the size query; the buffer is
  // grown before timing and *temp set to it.
  template <class Call>
  std::size_t cub_storage(Call call, void** temp) {
    std::size_t bytes = 0;
    cuda_check(call(nullptr, bytes), "cub storage query");
    cub_temp_.grow(std::max<std::size_t>(bytes, 1));
    *temp = cub_temp_.data();
    return bytes;
  }

  // ---- rows ----
  void run_case(const app_case& c) {
    const std::size_t copy_bytes = static_cast<std::size_t>((c.bytes + 1) / 2);
    if (copy_src_.bytes() < copy_bytes) {
      copy_src_.grow(copy_bytes);
      cuda_check(cudaMemset(copy_src_.data(), 1, copy_bytes), "cudaMemset (copy source)");
      cuda_check(cudaDeviceSynchronize(), "cudaMemset (copy source)");
    }
    copy_dst_.grow(std::max<std::size_t>(copy_bytes, 1));
    void* dst = copy_dst_.data();
    const void* src = copy_src_.data();
    peer_s_ = 0;
    peer_name_.clear();
    peer_impl_.clear();
    for (const app_row& r : c.rows) {
      if (r.is_peer && config_.selected(r.impl)) {
        peer_impl_ = r.impl;
        break;
      }
    }
    app_row floor;
    floor.impl = "copy (same bytes)";
    floor.call = [=](cudaStream_t s) {
      cuda_check(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice, s),
                 "cudaMemcpyAsync");
    };
    floor.note = "floor: " + mib_text(static_cast<double>(copy_bytes)) + " copied, half the " +
                 mib_text(c.bytes) + " the case reads + writes (" + c.produced + ")";
    floor_s_ = row(c, floor, true, 2.0 * static_cast<double>(copy_bytes));
    for (const app_row& r : c.rows) {
      const double t = row(c, r, false, c.bytes);
      if (r.is_peer && r.impl == peer_impl_) {
        peer_s_ = t;
        peer_name_ = r.impl;
      }
    }
  }

  // Times `r.call` (outputs poisoned first), checks it (copies: not checked) and adds the
  // row. Returns the median time, 0 when the row did not run or its check failed.
  double row(const app_case& c, const app_row& r, bool is_copy, double bytes) {
    if (!is_copy && !config_.selected(r.impl)) return 0;
    const cudaStream_t stream = ctx_.timer->stream();
    gpu_timing t;
    try {
      if (!is_copy) {
        for (const auto& [pointer, size] : c.outputs) {
          cuda_check(cudaMemsetAsync(pointer, 0x7F, size, stream), "cudaMemsetAsync (poison)");
        }
        if (c.reset) c.reset();
      }
      cuda_check(cudaStreamSynchronize(stream), "poison");
      t = ctx_.timer->measure(r.call, config_.reps, config_.quick ? 1.0 : 10.0);
    } catch (const std::invalid_argument& e) {
      note_once(r.impl + " skipped: " + e.what());
      return 0;
    } catch (const std::exception& e) {
      ctx_.out->note("error: " + r.impl + " " + c.type + " n=" + std::to_string(c.n) + " [" +
                     c.variant + "]: " + e.what());
      return 0;
    }
    result_row out;
    out.device = ctx_.device;
    out.what = is_copy ? operation::copy : c.what;
    out.type = c.type;
    out.op = is_copy ? "-" : c.op;
    out.n = c.n;
    out.variant = c.variant;
    out.peer_impl = peer_impl_;
    out.bytes = bytes;
    out.impl = r.impl;
    out.reps = t.reps;
    out.median_s = t.median_s;
    out.min_s = t.min_s;
    out.max_s = t.max_s;
    std::string note = r.note;
    if (is_copy) {
      out.check = check_status::not_checked;
    } else {
      std::string why;
      try {
        why = r.check();
      } catch (const std::exception& e) {
        why = e.what();
      }
      out.check = why.empty() ? check_status::passed : check_status::failed;
      const std::string ratios = why.empty() ? ratio_note(t.median_s, !r.is_peer) : why;
      if (!ratios.empty()) note = note.empty() ? ratios : note + "; " + ratios;
    }
    if (t.reps < config_.reps) {
      note += (note.empty() ? "" : "; ") + std::to_string(t.reps) + " samples (time budget)";
    }
    out.note = std::move(note);
    const bool passed = out.check != check_status::failed;
    ctx_.out->add(std::move(out));
    return passed ? t.median_s : 0.0;
  }

  // "1.10x floor time (90.9% of floor)" and, for tally's rows beside a peer row of the
  // same case, "; 1.25x speedup over <peer>".
  std::string ratio_note(double median_s, bool is_tally) const {
    std::string note;
    char text[160];
    if (floor_s_ > 0 && median_s > 0) {
      std::snprintf(text, sizeof text, "%.2fx floor time (%.1f%% of floor)", median_s / floor_s_,
                    100.0 * floor_s_ / median_s);
      note = text;
    }
    if (is_tally && peer_s_ > 0 && median_s > 0) {
      std::snprintf(text, sizeof text, "%s%.2fx speedup over %s", note.empty() ? "" : "; ",
                    peer_s_ / median_s, peer_name_.c_str());
      note += text;
    }
    return note;
  }

  gpu_context& ctx_;
  const bench_config& config_;
  double floor_s_ = 0;      // the current case's floor copy
  double peer_s_ = 0;       // the current case's first peer row (0: none, or its check failed)
  std::string peer_name_;
  std::string peer_impl_;   // the report's peer of the case's rows
  device_buffer cub_temp_;
  device_buffer result_;
  device_buffer copy_src_;
  device_buffer copy_dst_;
  std::unique_ptr<sparse_handle> sparse_;
};

}  // namespace

void run_applications_table(gpu_context& context) {
  const bench_config& config = *context.config;
  const operation all[] = {operation::linear_recurrence,     operation::line_of_sight,
                           operation::lexicographic_compare, operation::spmv_csr,
                           operation::allocate,              operation::polynomial_evaluate};
  if (std::none_of(std::begin(all), std::end(all),
                   [&](operation what) { return config.wants(what, {}); })) {
    return;
  }
  // 2^log2 (--quick: 2^quick_log2), capped by --max-log2
  const auto size = [&](int log2, int quick_log2) {
    int k = config.quick ? quick_log2 : log2;
    if (config.max_log2) k = std::min(k, *config.max_log2);
    return std::int64_t{1} << k;
  };
  context.out->note(
      "applications table: linear_recurrence (float; 1-d, batched along the last and the first "
      "axis), line_of_sight (float), lexicographic_compare (uint8 strings), spmv_csr (float, "
      "int32 indices, 16 non-zeros a row), allocate (int32 sizes -> int64 offsets), "
      "polynomial_evaluate (float, degree 3 and 31), each beside a floor copy of half the bytes "
      "it reads + writes and its peer (CUB, cuSPARSE, the bench's Horner kernel)");
  applications_table table(context);
  const auto run = [&](operation what, const char* name, const auto& body) {
    if (!config.wants(what, {})) return;
    // A failure outside a row (memory, data, a storage query) ends this application's
    // cases, not the run.
    try {
      body();
    } catch (const std::exception& e) {
      context.out->note(std::string("error: applications table, ") + name + ": " + e.what());
    }
  };
  run(operation::linear_recurrence, "linear_recurrence",
      [&] { table.linear_recurrence_cases(size(26, 26)); });
  run(operation::line_of_sight, "line_of_sight", [&] { table.line_of_sight_case(size(28, 24)); });
  run(operation::lexicographic_compare, "lexicographic_compare",
      [&] { table.lexicographic_case(size(30, 26)); });
  run(operation::spmv_csr, "spmv_csr", [&] { table.spmv_cases(size(22, 18)); });
  run(operation::allocate, "allocate", [&] { table.allocate_case(size(28, 24)); });
  run(operation::polynomial_evaluate, "polynomial_evaluate",
      [&] { table.polynomial_cases(size(24, 20)); });
}

}  // namespace tally_bench::gpu
