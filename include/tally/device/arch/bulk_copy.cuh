// tally/device/arch/bulk_copy.cuh -- copies from global into shared memory that bypass the
// registers (PTX): the bulk copy of sm_90 (one instruction moves a whole range and signals
// an mbarrier) and the 16-byte asynchronous copy of sm_80.
#pragma once

#include "tally/core/macros.hpp"
#include "tally/device/arch/mbarrier.cuh"

namespace tally::detail::arch {

// One bulk copy global -> shared of `bytes` (a multiple of 16, both addresses 16-byte
// aligned), completing on `bar`.
TALLY_DEVICE TALLY_FORCEINLINE void bulk_copy(void* to, const void* from, unsigned bytes,
                                              unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          shared_address(to)),
      "l"(from), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}

// 16 bytes global -> shared, asynchronously (both addresses 16-byte aligned; cached in L2
// only). The copy has landed once this thread has waited with wait_async_copies.
TALLY_DEVICE TALLY_FORCEINLINE void copy_async_16(void* to, const void* from) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(to)), "l"(from)
               : "memory");
}
// Waits until every copy_async_16 of this thread has landed (other threads' copies need a
// barrier after their own waits).
TALLY_DEVICE TALLY_FORCEINLINE void wait_async_copies() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

}  // namespace tally::detail::arch
