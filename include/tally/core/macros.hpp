// tally/core/macros.hpp -- the few macros tally needs, all prefixed TALLY_.
#pragma once

// Functions that must be callable from host code and from device code (operators,
// identities). Under a host-only compiler the CUDA qualifiers do not exist, so the
// macro expands to nothing there.
#if defined(__CUDACC__)
#define TALLY_HOST_DEVICE __host__ __device__
#define TALLY_DEVICE __device__
#define TALLY_FORCEINLINE __forceinline__
#else
#define TALLY_HOST_DEVICE
#define TALLY_DEVICE
#define TALLY_FORCEINLINE inline __attribute__((always_inline))
#endif
