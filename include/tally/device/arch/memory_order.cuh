// tally/device/arch/memory_order.cuh -- loads and stores of global memory at device (gpu)
// scope with a stated memory order (PTX), for the tile descriptors of the single-pass
// engine (single_pass/tile_state.cuh says which order each access needs and why).
//
// `relaxed` (not `weak`): the compiler may neither cache nor split these accesses, and a
// spinning reader eventually sees the writer's store. No ordering is implied; where
// ordering is needed (the descriptor format of values over 64 bytes) release/acquire say so.
#pragma once

#include "tally/core/macros.hpp"

namespace tally::detail::arch {

TALLY_DEVICE TALLY_FORCEINLINE unsigned long long load_relaxed(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
TALLY_DEVICE TALLY_FORCEINLINE void store_relaxed(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// 16 bytes in one access (p 16-byte aligned): a reader never sees half of a store.
TALLY_DEVICE TALLY_FORCEINLINE void load_relaxed_16(const unsigned long long* p,
                                                    unsigned long long& lo, unsigned long long& hi) {
  asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(lo), "=l"(hi) : "l"(p) : "memory");
}
TALLY_DEVICE TALLY_FORCEINLINE void store_relaxed_16(unsigned long long* p, unsigned long long lo,
                                                     unsigned long long hi) {
  asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(lo), "l"(hi) : "memory");
}
TALLY_DEVICE TALLY_FORCEINLINE void store_relaxed_32(unsigned* p, unsigned v) {
  asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
// acquire: no later access of this thread is performed before this load.
TALLY_DEVICE TALLY_FORCEINLINE unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
// release: every earlier access of this thread is performed before this store.
TALLY_DEVICE TALLY_FORCEINLINE void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

}  // namespace tally::detail::arch
