#ifndef PKG_HASH_KERNEL_H
#define PKG_HASH_KERNEL_H

#include <stddef.h>
#include <stdint.h>

/// Streaming XXH3-128 state. It is libxxhash's `XXH3_state_t`, kept opaque here so
/// that Swift never depends on its layout.
typedef struct pkg_hash_state pkg_hash_state;

/// Which code path `pkg_hash_update` and `pkg_hash_oneshot` use: libxxhash's portable
/// (SSE2) code, or its x86 dispatcher's vector code (AVX2, or AVX-512 where the CPU has it),
/// chosen when the CPU has AVX2 and the library carries the dispatcher; in a link without it
/// (libxxhash.a has none), AVX2 code compiled in this target when the build is optimised.
#define PKG_HASH_KERNEL_LIBXXHASH 0
#define PKG_HASH_KERNEL_AVX2 2

/// Allocates a state (64-byte aligned, as XXH3 requires). NULL when out of memory.
pkg_hash_state *pkg_hash_create(void);
void pkg_hash_free(pkg_hash_state *state);
void pkg_hash_reset(pkg_hash_state *state);
void pkg_hash_update(pkg_hash_state *state, const void *bytes, size_t count);
/// Writes the 16-byte canonical (big-endian) digest, the bytes `xxhsum -H2` prints as hex.
void pkg_hash_digest(const pkg_hash_state *state, uint8_t out[16]);
/// One-shot XXH3-128 of a buffer; same result as reset + update + digest.
void pkg_hash_oneshot(const void *bytes, size_t count, uint8_t out[16]);

/// The kernel in use.
int pkg_hash_active_kernel(void);
/// Forces the portable libxxhash path (non-zero) or restores CPU dispatch (zero).
/// For benchmarks and tests that compare the two paths.
void pkg_hash_force_portable(int portable);

/// The Gear table of the content-defined chunker: 256 pseudo-random 64-bit values
/// (Specs/hashing.md says how they are generated).
extern const uint64_t pkg_gear_table[256];

/// Which code path `pkg_gear_find` uses: the byte loop, the same loop over four blocks
/// at once (four independent hash chains), or an AVX-512 (BW, VBMI, GFNI) filter that
/// computes the low byte of the hash at 64 positions at once.
#define PKG_GEAR_KERNEL_PORTABLE 0
#define PKG_GEAR_KERNEL_AVX512 1
#define PKG_GEAR_KERNEL_INTERLEAVED 2

/// The first position i in [from, to) whose Gear hash has none of the bits of `mask` set,
/// or `to` when there is none. The Gear hash at i covers the 64 bytes ending at i:
/// the sum over k = 0…63 of pkg_gear_table[bytes[i - k]] << k, modulo 2^64 (what rolling
/// h = (h << 1) + table[byte] gives after at least 64 bytes).
/// Requires from >= 64 and bytes[from - 64 ..< to] readable. Every kernel returns the same
/// position; the vector one is used only when `mask` includes the low 8 bits. Blocks of
/// positions whose windows are all zeros are skipped when a zero window's hash fails `mask`.
size_t pkg_gear_find(const uint8_t *bytes, size_t from, size_t to, uint64_t mask);

/// Flags of a `pkg_gear_matches` entry: which mask the position matches.
#define PKG_GEAR_MATCH_FIRST 0x40000000u
#define PKG_GEAR_MATCH_SECOND 0x80000000u
#define PKG_GEAR_MATCH_POSITION 0x3FFFFFFFu

/// Every position i in [from, to) whose Gear hash has none of the bits of `first_mask`, or
/// none of `second_mask`, in increasing order: matches[n] is i (below 2^30) with the flags
/// above saying which. Returns their number, or (size_t)-1 when there are more than
/// `capacity`. Requires what `pkg_gear_find` does. Whether a position matches depends only
/// on the 64 bytes ending there, not on where chunks start: any thread may compute this
/// ahead of the cut search for a stretch of bytes, which the search then only scans.
size_t pkg_gear_matches(const uint8_t *bytes, size_t from, size_t to, uint64_t first_mask, uint64_t second_mask,
                        uint32_t *matches, size_t capacity);

/// The kernel `pkg_gear_find` uses.
int pkg_gear_active_kernel(void);
/// Whether this CPU can run `kernel` (one of the constants above).
int pkg_gear_kernel_supported(int kernel);
/// Forces a kernel (one of the constants above) or, with -1, restores the CPU's choice.
/// Returns 0, changing nothing, when the CPU lacks the kernel. For tests and benchmarks.
int pkg_gear_force_kernel(int kernel);

#endif
