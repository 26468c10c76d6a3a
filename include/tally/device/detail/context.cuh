// tally/device/detail/context.cuh -- which CUDA context a call runs in.
//
//   context_ref          a context's handle and its id (cuCtxGetId: unique for the life of
//                        the process, never reused)
//   current_context      the calling thread's current context (made current first if the
//                        runtime has not done it yet on this thread)
//   current_context_id   only its id (one driver call instead of two)
//   context_alive        whether a context seen before still exists (the same handle still
//                        carries the same id)
//
// Why tally needs this: it keeps two kinds of memory from one call to the next that
// belong to the context they were allocated in: the reduce's finish-word rings (cudaMalloc)
// and the pinned slot tally::reduce returns its value through (cudaHostAlloc).
// cudaDeviceReset destroys the device's primary context with everything in it, and the
// next runtime call makes a new one under the same handle; memory kept from the old one is
// then freed, and its address may come back for somebody else's allocation. A reduce that
// wrote into such a ring would fail with an illegal address, which poisons the new context
// too (docs/api.md, "State kept between calls, and cudaDeviceReset"). So each such piece
// records the context it was made in, and a call whose context is another one sets up its
// own. What outlives a reset: memory pools and their allocations (the scratch pool, and the
// per-stream tile states, which come from it), and a kernel's dynamic shared-memory limit
// (the runtime sets it again in the new context); these need no check.
//
// tally calls the driver through the runtime's driver entry points, so it links against
// the runtime only.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "tally/core/error.hpp"
#include "tally/device/detail/cuda_check.cuh"

namespace tally::detail {

struct context_ref {
  CUcontext handle = nullptr;
  unsigned long long id = 0;  // cuCtxGetId's ids start at 1: 0 means "none"
};

namespace context_entry {

using get_current_fn = CUresult (*)(CUcontext*);
using get_id_fn = CUresult (*)(CUcontext, unsigned long long*);

struct functions {
  get_current_fn get_current = nullptr;
  get_id_fn get_id = nullptr;
};

// Looked up once (a function-local static: thread-safe initialisation). cuCtxGetId needs a
// driver of CUDA 12.0 or later; the runtime tally is built with needs a newer one anyway.
inline const functions& driver(const char* function) {
  static const functions f = [] {
    functions r;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", reinterpret_cast<void**>(&r.get_current),
                                         12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      r.get_current = nullptr;
    }
    if (cudaGetDriverEntryPointByVersion("cuCtxGetId", reinterpret_cast<void**>(&r.get_id), 12000,
                                         cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      r.get_id = nullptr;
    }
    (void)cudaGetLastError();
    return r;
  }();
  if (f.get_current == nullptr || f.get_id == nullptr) {
    throw tally::error(static_cast<int>(cudaErrorNotSupported),
                       std::string("tally::") + function +
                           ": the CUDA driver lacks cuCtxGetCurrent / cuCtxGetId (CUDA 12.0 or later needed)");
  }
  return f;
}

inline bool read(const functions& f, context_ref& r) {
  return f.get_current(&r.handle) == CUDA_SUCCESS && r.handle != nullptr &&
         f.get_id(r.handle, &r.id) == CUDA_SUCCESS;
}

}  // namespace context_entry

// The calling thread's current context. A thread whose runtime has not made a context
// current yet (its first CUDA call was cudaGetDevice, which does not), or whose context a
// cudaDeviceReset has just destroyed (the handle is still current, its id query fails
// until the next runtime call makes the new context), gets it made current here by
// cudaSetDevice on the current device, which since CUDA 12.0 initialises the primary
// context at once; then it is asked again.
inline context_ref current_context(const char* function) {
  const context_entry::functions& f = context_entry::driver(function);
  context_ref r;
  if (context_entry::read(f, r)) return r;
  int device = 0;
  TALLY_CUDA_CHECK(cudaGetDevice(&device), function);
  TALLY_CUDA_CHECK(cudaSetDevice(device), function);
  if (!context_entry::read(f, r)) {
    throw tally::error(static_cast<int>(cudaErrorInvalidResourceHandle),
                       std::string("tally::") + function + ": no CUDA context is current on this thread");
  }
  return r;
}

// The id of current_context(function), in one driver call where a context is current.
inline unsigned long long current_context_id(const char* function) {
  unsigned long long id = 0;
  if (context_entry::driver(function).get_id(nullptr, &id) == CUDA_SUCCESS && id != 0) return id;
  return current_context(function).id;
}

// Whether the context `r` was taken from still exists: its handle answers with the same
// id. After cudaDeviceReset the primary context's handle answers with the new context's
// id, so a reset shows as "not alive".
inline bool context_alive(const context_ref& r, const char* function) {
  if (r.handle == nullptr) return false;
  unsigned long long id = 0;
  return context_entry::driver(function).get_id(r.handle, &id) == CUDA_SUCCESS && id == r.id;
}

}  // namespace tally::detail
