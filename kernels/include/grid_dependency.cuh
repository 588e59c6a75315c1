// Programmatic dependent launch (sm_90+): a kernel launched with `LaunchConfig::dependent`
// (crates/groute-core/src/cuda/launch.rs) may be scheduled while the kernel before it on its
// stream finishes, once every block of that kernel has called let_dependents_launch() or exited. It
// must call wait_for_prior_grid() before its first access to global memory that an earlier
// operation on the stream writes or reads: that returns once the prior kernel has completed
// and its writes are visible. Launched any other way, or before sm_90, both do nothing.
// Self-contained (NVRTC, no toolkit headers).
#pragma once

namespace groute {

// Waits for the kernel before this one on the stream to complete (griddepcontrol.wait).
__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Lets the kernel after this one on the stream, if launched dependent, be scheduled once every
// block of this one has called this or exited (griddepcontrol.launch_dependents).
__device__ __forceinline__ void let_dependents_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace groute
