// tally/device/arch/grid_dependency.cuh -- programmatic dependent launch on the device side
// (griddepcontrol, PTX of sm_90): a kernel launched behind another with the
// programmatic-stream-serialization attribute starts early and waits here for its
// prerequisite. The host side is device/detail/dependent_launch.cuh.
#pragma once

#include "tally/core/macros.hpp"

namespace tally::detail {

// In a kernel launched by launch_after_clear: waits until the clear before it has
// completed and its stores are visible to this thread. Every thread that touches the
// state calls it (the guarantee is per thread). A no-op in a plain launch.
TALLY_DEVICE TALLY_FORCEINLINE void wait_for_prerequisite_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the kernel launched behind this one as its programmatic dependent start its
// blocks (griddepcontrol.launch_dependents): once every block of this grid has called it
// or ended. A no-op without such a dependent.
TALLY_DEVICE TALLY_FORCEINLINE void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace tally::detail
