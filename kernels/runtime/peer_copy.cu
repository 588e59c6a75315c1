// Copy kernel for links' SM-driven copies: `bytes` bytes from `src` to `dst`, where either
// pointer may live on another device (peer access enabled, unified addressing), typically a
// local `src` read from HBM and a peer `dst` written over NVLink.
//
// The widest word W in {16, 8, 4, 1} bytes such that `dst` and `src` have the same
// misalignment modulo W is used for the body: a head of fewer than W bytes (until `dst` is
// W-aligned), then whole W-byte words, then a tail of fewer than W bytes. Head and tail are
// copied bytewise by the first threads of the grid. Each thread keeps PEER_COPY_UNROLL
// independent words in flight (all loads of a round are issued before its stores), so that
// enough bytes are outstanding to cover the latency of the peer's memory.
//
// Launch: 1-D blocks (any size), any grid; grid-stride loops, so any grid covers any length.
// `dst` and `src` must not overlap.

#define PEER_COPY_UNROLL 4

namespace {

// Copies `n` words of type W, grid-stride, PEER_COPY_UNROLL words in flight per thread.
template <typename W>
__device__ __forceinline__ void copy_words(W* __restrict__ dst, const W* __restrict__ src,
                                           unsigned long long n) {
    const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
    unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    // Whole rounds: word i + u * stride for u < UNROLL are all in range.
    for (; i + (PEER_COPY_UNROLL - 1) * stride < n; i += PEER_COPY_UNROLL * stride) {
        W v[PEER_COPY_UNROLL];
#pragma unroll
        for (int u = 0; u < PEER_COPY_UNROLL; ++u) {
            v[u] = src[i + u * stride];
        }
#pragma unroll
        for (int u = 0; u < PEER_COPY_UNROLL; ++u) {
            dst[i + u * stride] = v[u];
        }
    }
    // The last partial round.
    for (; i < n; i += stride) {
        dst[i] = src[i];
    }
}

// Copies `bytes` bytes with W-byte words in the middle; `dst` and `src` have the same
// misalignment modulo sizeof(W).
template <typename W>
__device__ __forceinline__ void copy_with(unsigned char* dst, const unsigned char* src,
                                          unsigned long long bytes) {
    const unsigned long long w = sizeof(W);
    const unsigned long long misaligned = reinterpret_cast<unsigned long long>(dst) % w;
    unsigned long long head = misaligned == 0 ? 0 : w - misaligned;
    if (head > bytes) {
        head = bytes;
    }
    const unsigned long long words = (bytes - head) / w;
    const unsigned long long body_end = head + words * w;
    const unsigned long long tail = bytes - body_end;
    const unsigned long long t =
        static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    // Head and tail: fewer than 16 bytes each, one thread per byte.
    if (t < head) {
        dst[t] = src[t];
    }
    if (t < tail) {
        dst[body_end + t] = src[body_end + t];
    }
    copy_words<W>(reinterpret_cast<W*>(dst + head), reinterpret_cast<const W*>(src + head), words);
}

}  // namespace

extern "C" __global__ void peer_copy(unsigned char* __restrict__ dst,
                                     const unsigned char* __restrict__ src,
                                     unsigned long long bytes) {
    const unsigned long long offset =
        reinterpret_cast<unsigned long long>(dst) ^ reinterpret_cast<unsigned long long>(src);
    if (offset % 16 == 0) {
        copy_with<uint4>(dst, src, bytes);
    } else if (offset % 8 == 0) {
        copy_with<uint2>(dst, src, bytes);
    } else if (offset % 4 == 0) {
        copy_with<unsigned int>(dst, src, bytes);
    } else {
        copy_with<unsigned char>(dst, src, bytes);
    }
}
