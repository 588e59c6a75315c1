// The data the host and the kernels share: kernel parameters passed as one struct, and the
// layouts of the blocks of words both sides read and write (control blocks, state blocks).
//
// Every struct here has a `#[repr(C)]` twin in the Rust module `groute_kernels::abi`
// (kernels/abi/), and kernels/tests/abi.rs compiles this header with the host's C compiler
// against the Rust layouts: same size, same field offsets, no implicit padding (pad fields are
// named). A block of words the kernels index by number (a state block, a control block) has
// its word numbers in an enum beside its struct, each checked against its field's offset by
// GROUTE_WORD_AT when the header is compiled as C (NVRTC has no offsetof); the host addresses
// the same words by field (groute_kernels::abi_word!).
//
// Plain C and C++: fixed-size unsigned types, `struct` tags, no toolkit headers. In C++ (NVRTC)
// the structs live in namespace `groute`.
#ifndef GROUTE_ABI_H
#define GROUTE_ABI_H

#ifdef __cplusplus
// An enum of word numbers or codes: unsigned in C++, as the kernels compute with them.
#define GROUTE_ENUM(NAME) enum NAME : unsigned int
// Checked by the host's C compiler only (kernels/tests/abi.rs).
#define GROUTE_WORD_AT(STRUCT, FIELD, WORD)
#define GROUTE_WORD_COUNT(STRUCT, WORDS)
#define GROUTE_WORD64_AT(STRUCT, FIELD, WORD)
#define GROUTE_WORD64_COUNT(STRUCT, WORDS)
#else
#include <stddef.h>
#define GROUTE_ENUM(NAME) enum NAME
// Word WORD of a block of words is field FIELD of STRUCT.
#define GROUTE_WORD_AT(STRUCT, FIELD, WORD)                 \
    _Static_assert(offsetof(struct STRUCT, FIELD) == 4 * (WORD), \
                   #STRUCT "." #FIELD " is not word " #WORD)
// STRUCT is WORDS words long.
#define GROUTE_WORD_COUNT(STRUCT, WORDS) \
    _Static_assert(sizeof(struct STRUCT) == 4 * (WORDS), #STRUCT " is not " #WORDS " words")
// The same for a block of 64-bit words.
#define GROUTE_WORD64_AT(STRUCT, FIELD, WORD)                    \
    _Static_assert(offsetof(struct STRUCT, FIELD) == 8 * (WORD), \
                   #STRUCT "." #FIELD " is not u64 word " #WORD)
#define GROUTE_WORD64_COUNT(STRUCT, WORDS) \
    _Static_assert(sizeof(struct STRUCT) == 8 * (WORDS), #STRUCT " is not " #WORDS " u64 words")
#endif

#ifdef __cplusplus
namespace groute {
#endif

// A packed item of the label-correcting traversals: (vertex, value), vertex first
// (groute_kernels::abi::VertexValue).
struct VertexValue {
    unsigned int vertex;
    unsigned int value;
};

// A device's view of its peer group (peer_group.cuh), a kernel parameter of device-driven runs
// (groute_kernels::abi::PeerGroup).
struct PeerGroup {
    unsigned long long* mailbox;  // device 0's memory, PEER_MAILBOX_WORDS words
    const unsigned int* abort;    // the host's abort word (mapped host memory), or null
    unsigned int rank;            // this device
    unsigned int size;            // devices in the group
    unsigned long long timeout_ns;
};

// The grid barrier's words (grid_barrier.cuh), zeroed by the host before a launch: 64 words at
// the start of the fused traversal's and PageRank's state blocks, and the direction-optimizing
// BFS's barrier block.
struct GridBarrierWords {
    unsigned int count;              // arrivals so far, never reset (own 128-byte line)
    unsigned int count_line[31];
    unsigned int generation;         // barrier generation, bumped to release (own line)
    unsigned int generation_line[7];
    // The release record: what a barrier's action hands every block, each value a 64-bit word
    // (generation << 32 | value), on the generation's line.
    unsigned long long record[9];
    unsigned int record_line[6];
};

// GridBarrierWords by word; a kernel's own words follow FUSED_BARRIER_WORDS.
GROUTE_ENUM(FusedBarrierWord){
    FUSED_BARRIER_COUNT = 0,
    FUSED_BARRIER_GEN = 32,
    FUSED_RECORD = 40,
    FUSED_RECORD_WORDS = 9,  // values of the record
    FUSED_BARRIER_WORDS = 64,
};
GROUTE_WORD_AT(GridBarrierWords, count, FUSED_BARRIER_COUNT);
GROUTE_WORD_AT(GridBarrierWords, generation, FUSED_BARRIER_GEN);
GROUTE_WORD_AT(GridBarrierWords, record, FUSED_RECORD);
GROUTE_WORD_AT(GridBarrierWords, record_line, FUSED_RECORD + 2 * FUSED_RECORD_WORDS);
GROUTE_WORD_COUNT(GridBarrierWords, FUSED_BARRIER_WORDS);

// How blocks wait at the grid barrier (FusedBarrierConfig::flags).
GROUTE_ENUM(FusedBarrierFlag){
    // Barrier memory ordering by __threadfence() around relaxed atomics and volatile polling
    // (the pattern of cooperative groups' grid sync) instead of the default single PTX
    // acquire/release operations (atom.acq_rel arrival, st.release release, ld.acquire poll).
    FUSED_BARRIER_FENCED = 1,
    // Waiting blocks poll the release record itself (every value tagged with the generation
    // that published it) instead of the generation word followed by a read of the record:
    // one L2 round trip less per block and barrier.
    FUSED_BARRIER_TAGGED = 2,
    // Bits from 4 up are the kernels' own (fused.cuh's FusedKernelFlag).
};

#ifdef __cplusplus
}  // namespace groute
#endif

#endif  // GROUTE_ABI_H
