// bench/gpu_bench_algorithms.hpp -- the applications table (gpu_bench_algorithms.cu).
#pragma once

namespace tally_bench::gpu {

struct gpu_context;

// The applications of tally/algorithms/ on the device, each case beside a device-to-device
// copy of half the bytes it reads + writes (the floor, "copy (same bytes)"), its peer and
// tally's call, in one run:
//   linear_recurrence    float, 2^26 elements: 1-d (cub::DeviceScan::InclusiveScan of the
//                        same affine maps), 64x16x65536 along axis 2 (InclusiveScanByKey,
//                        keys = line index) and 65536x1024 along axis 0 (a rough peer:
//                        the by-key scan over contiguous lines, CUB has no strided scan)
//   line_of_sight        float altitudes, 2^28 points (cub::DeviceScan::ExclusiveScan, max)
//   lexicographic_compare  two 2^30-byte strings differing near the end
//                        (cub::DeviceReduce::Reduce of the same (position, sign) pairs)
//   spmv_csr             float, 2^22 rows of 16 non-zeros on average, two row-length mixes
//                        (cusparseSpMV, CSR_ALG1 and CSR_ALG2)
//   allocate             int32 sizes -> int64 offsets and total, 2^28
//                        (cub::DeviceScan::ExclusiveSum of n + 1 int64 values)
//   polynomial_evaluate  degree 3 and 31 at 2^24 float points (the bench's own
//                        one-thread-per-point Horner kernel)
// --quick runs smaller sizes (linear_recurrence stays at 2^26), --max-log2 K caps every
// case at 2^K elements (rows for spmv_csr). Every output is compared with a sequential
// oracle computed on the host, and tally's also with the peer's. Runs only for the
// operations --operations names (`applications`: all six).
void run_applications_table(gpu_context& context);

}  // namespace tally_bench::gpu
