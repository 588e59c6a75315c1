// Self-check and latency probe of kernels/include/peer_group.cuh and peer_post.cuh (groute-core's
// cuda::peer_group_probe): one block per device runs `exchanges` rounds; in round e every
// device stores a value of (its rank, e) into every other device's inbox slot of parity e & 1
// (peer stores), then all-reduces (rank + 1, e * (rank + 1)), then checks the sums and the
// values its peers stored. It counts mismatches instead of trusting them, so the host test
// fails on any lost or early-read write. `posted`: the all-reduce is peer_post_allreduce_sum
// over `postboxes` (one address per device, POST_WORDS u64 each, zeroed), else
// peer_allreduce_sum. Every member arrives at the start gate first (peer_group.cuh): a member
// launched alone has its start cancelled at exchange 0 (status PEER_CANCELLED).
#include "peer_group.cuh"
#include "peer_post.cuh"

namespace {

__device__ __forceinline__ unsigned long long probe_value(unsigned int rank, unsigned int e,
                                                          unsigned int k) {
    return (static_cast<unsigned long long>(rank + 1u) << 40) ^
           (static_cast<unsigned long long>(e) << 8) ^ k;
}

}  // namespace

// inboxes: one address per device, each of 2 * PEER_MAX_DEVICES * words u64 (parity, sender,
// word) on that device; out (this device's memory): [status, mismatches, elapsed_ns,
// exchanges done].
extern "C" __global__ void peer_group_probe(groute::PeerGroup g,
                                            unsigned long long* const* inboxes,
                                            unsigned int words, unsigned int exchanges,
                                            unsigned long long* out,
                                            unsigned long long* const* postboxes,
                                            unsigned int posted) {
    using namespace groute;
    if (threadIdx.x == 0) {
        peer_start_arrive(g);
    }
    __shared__ unsigned int status;
    __shared__ unsigned long long sums[2];
    unsigned long long mismatches = 0;
    if (threadIdx.x == 0) {
        status = PEER_OK;
    }
    __syncthreads();
    const unsigned long long started = peer_clock_ns();
    unsigned int e = 0;
    for (; e < exchanges; ++e) {
        const unsigned int parity = e & 1u;
        for (unsigned int p = 0; p < g.size; ++p) {
            if (p == g.rank) {
                continue;
            }
            unsigned long long* dst =
                inboxes[p] + (parity * PEER_MAX_DEVICES + g.rank) * words;
            for (unsigned int k = threadIdx.x; k < words; k += blockDim.x) {
                dst[k] = probe_value(g.rank, e, k);
            }
        }
        __threadfence_system();
        __syncthreads();
        if (threadIdx.x == 0) {
            const unsigned long long mine[2] = {g.rank + 1ull,
                                                static_cast<unsigned long long>(e) * (g.rank + 1ull)};
            unsigned long long s[2];
            status = posted != 0u ? peer_post_allreduce_sum(g, postboxes, e, mine, s, 2u)
                                  : peer_allreduce_sum(g, e, mine, s, 2u);
            sums[0] = s[0];
            sums[1] = s[1];
        }
        __syncthreads();
        if (status != PEER_OK) {
            break;
        }
        const unsigned long long total = g.size * (g.size + 1ull) / 2ull;
        if (threadIdx.x == 0 && (sums[0] != total || sums[1] != e * total)) {
            ++mismatches;
        }
        const unsigned long long* own = inboxes[g.rank];
        for (unsigned int q = 0; q < g.size; ++q) {
            if (q == g.rank) {
                continue;
            }
            const unsigned long long* src = own + (parity * PEER_MAX_DEVICES + q) * words;
            for (unsigned int k = threadIdx.x; k < words; k += blockDim.x) {
                if (src[k] != probe_value(q, e, k)) {
                    ++mismatches;
                }
            }
        }
    }
    atomicAdd(out + 1, mismatches);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = status;
        out[2] = peer_clock_ns() - started;
        out[3] = e;
    }
}
