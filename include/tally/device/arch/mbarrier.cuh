// tally/device/arch/mbarrier.cuh -- shared-memory barriers of sm_90 (PTX): mbarriers, the
// fences that go with them, and named block barriers.
//
// An mbarrier is a 64-bit word in shared memory that counts arrivals (and, with expect_tx,
// bytes still to land from bulk copies) towards the completion of its current phase; the
// phases alternate in parity. The pipelined kernels use them as the full/empty signals of a
// ring of stages between a producer warp (issuing bulk copies) and the compute warps.
#pragma once

#include "tally/core/macros.hpp"

namespace tally::detail::arch {

TALLY_DEVICE TALLY_FORCEINLINE unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// An mbarrier whose phase completes after `count` arrivals (and, with expect_tx, the
// expected bytes of bulk copies).
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
}
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}
// Expect `bytes` more from bulk copies before the phase completes (no arrival: the thread
// arrives after it, mbarrier_arrive).
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}
// Whether the phase of parity `parity` has completed (no waiting).
TALLY_DEVICE TALLY_FORCEINLINE bool mbarrier_test(unsigned long long* bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "mbarrier.test_wait.parity.shared::cta.b64 done, [%1], %2;\n"
      "selp.u32 %0, 1, 0, done;\n"
      "}"
      : "=r"(done)
      : "r"(shared_address(bar)), "r"(parity)
      : "memory");
  return done != 0;
}
// Wait until the phase of parity `parity` has completed.
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}

// Makes the initialisation of mbarriers (by this thread) visible to the other threads and
// to the copy engine before any of them uses the barriers.
TALLY_DEVICE TALLY_FORCEINLINE void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Orders this thread's earlier generic-proxy accesses to shared memory (ordinary loads and
// stores) before later async-proxy accesses (bulk copies into the same bytes). A thread
// that is done with a stage calls it before it releases the stage to the producer.
TALLY_DEVICE TALLY_FORCEINLINE void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// Barrier `Id` (1-15; 0 is __syncthreads) among the first `Threads` threads of the block:
// the compute warps of a pipelined block synchronise without the producer warp.
template <int Id, int Threads>
TALLY_DEVICE TALLY_FORCEINLINE void named_barrier_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(Id), "n"(Threads) : "memory");
}

}  // namespace tally::detail::arch
