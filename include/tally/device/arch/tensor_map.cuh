// tally/device/arch/tensor_map.cuh -- 2-D tiles of a row-major array copied into shared
// memory by the tensor memory accelerator (TMA, sm_90): one instruction a tile, whatever
// the array's row pitch.
//
// Why. A bulk copy (cp.async.bulk, arch/bulk_copy.cuh) moves one contiguous range. A tile
// of R rows x 128 bytes cut out of rows wider than 128 bytes (the column tiles of a batched
// scan along axis 0 with several column groups) is R ranges at a fixed pitch; copied row by
// row (R bulk copies, or 16-byte cp.async copies by many threads) they cost more than the
// tile kernel gains (docs/performance.md, "What each path earns"). A tensor copy takes the
// whole box in one instruction: the TMA unit walks the rows itself, reading the map that
// says where the array lies, its sizes and its pitch.
//
//   row_tensor_map   the host side: the map of a (rows, columns) array of 4- or 8-byte
//                    values with boxes of (box_rows, box_columns), encoded by the
//                    driver's cuTensorMapEncodeTiled (found at run time through the
//                    runtime's cudaGetDriverEntryPointByVersion, so tally links no
//                    driver library); no map (false) where the driver lacks the entry
//                    point or refuses the shape, and the caller takes another kernel
//   tensor_copy_2d   the device side: one box into shared memory, completing on an
//                    mbarrier as a bulk copy does (the bytes announced with
//                    arch::mbarrier_expect first)
//
// The map is a kernel parameter (`const __grid_constant__ CUtensorMap`): a copy in the
// parameter space that the TMA unit reads through its generic address, valid for the
// whole launch, with nothing to allocate or free.
#pragma once

#include <cstdint>

#include <cuda.h>  // CUtensorMap and its enumerations (types only: no driver library linked)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include "tally/core/macros.hpp"

namespace tally::detail::tensor_map {

// cuTensorMapEncodeTiled, looked up once per process (nullptr where the driver lacks it).
inline PFN_cuTensorMapEncodeTiled_v12000 encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return static_cast<PFN_cuTensorMapEncodeTiled_v12000>(nullptr);
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// The map of `rows` rows of `columns` values of Bytes (4 or 8) bytes each, rows
// `columns` values apart, at `base` (16-byte aligned; the row pitch columns * Bytes a
// multiple of 16), read in boxes of box_rows x box_columns (each at most 256, the box's
// row box_columns * Bytes a multiple of 16 bytes). Values are copied as bits (unsigned
// integer types: no float conversion, nothing flushed). Every box tally copies lies inside
// the array, so the out-of-bounds fill never applies. L2 promotion of 128 bytes: a box's
// row is one 128-byte line in the column tiles. Returns whether the map was made.
// swizzle: CU_TENSOR_MAP_SWIZZLE_128B lands each box row of 128 bytes with its 16-byte
// chunks permuted (chunk c of the shared-memory line l goes to chunk c ^ (l % 8), the
// destination 1024-byte aligned).
template <int Bytes>
bool row_tensor_map(CUtensorMap& map, const void* base, std::int64_t rows, std::int64_t columns,
                    unsigned box_rows, unsigned box_columns,
                    CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE) {
  static_assert(Bytes == 4 || Bytes == 8, "4- and 8-byte values");
  const auto encode = encoder();
  if (encode == nullptr) return false;
  // the driver's limits: each size at most 2^32, the pitch under 2^40 bytes; the copy's
  // coordinates are 32-bit signed (tensor_copy_2d), so rows and columns below 2^31
  if (rows <= 0 || columns <= 0 || rows > 0x7fffffff || columns > 0x7fffffff) return false;
  const cuuint64_t size[2] = {static_cast<cuuint64_t>(columns), static_cast<cuuint64_t>(rows)};
  const cuuint64_t pitch[1] = {static_cast<cuuint64_t>(columns) * Bytes};
  const cuuint32_t box[2] = {box_columns, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult r =
      encode(&map, Bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32 : CU_TENSOR_MAP_DATA_TYPE_UINT64, 2,
             const_cast<void*>(base), size, pitch, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
             swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS;
}

// One box of the map, its first value at (row, column), into shared memory at `to`
// (128-byte aligned), row-major and dense (box_rows rows of box_columns values), its bytes
// counted on the mbarrier `bar` (shared memory). `map` is the kernel parameter's address.
TALLY_DEVICE TALLY_FORCEINLINE void tensor_copy_2d(void* to, const CUtensorMap* map, int row, int column,
                                                   unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(to))),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(column), "r"(row),
      "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
      : "memory");
}

}  // namespace tally::detail::tensor_map
