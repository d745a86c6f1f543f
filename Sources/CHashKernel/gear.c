// The Gear search of the content-defined chunker: the byte loop, the interleaved loop
// (four streams, for CPUs without AVX-512 VBMI and GFNI) and the runtime choice among them
// and the AVX-512 filter (gear_avx512.c). All return the same position.
#include "CHashKernel.h"
#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__)
size_t pkg_gear_find_avx512(const uint8_t *bytes, size_t from, size_t to, uint64_t mask);
#define PKG_HAVE_AVX512_GEAR 1
#else
#define PKG_HAVE_AVX512_GEAR 0
#endif

/// Rolls h = (h << 1) + table[byte] over the 63 bytes before `from`, then tests every
/// position: one table load, a shift and an add per byte.
size_t pkg_gear_find_portable(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    const uint64_t *table = pkg_gear_table;
    uint64_t hash = 0;
    for (size_t index = from - 63; index < from; index++) hash = (hash << 1) + table[bytes[index]];
    for (size_t index = from; index < to; index++) {
        hash = (hash << 1) + table[bytes[index]];
        if ((hash & mask) == 0) return index;
    }
    return to;
}

/// Positions per stream of the interleaved loop: four of them make a group.
#define GEAR_STREAM_BLOCK 4096

/// The byte loop's single hash is a chain of dependent shift-adds (about one byte per
/// cycle). The hash at a position depends only on the 64 bytes ending there, so four
/// consecutive 4 KiB blocks can be searched at once, each with its own hash primed from
/// the 63 bytes before it: four independent chains, about twice the speed. The first
/// match of the earliest block wins; a match in block 0 ends the group at once.
size_t pkg_gear_find_interleaved(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    const uint64_t *table = pkg_gear_table;
    size_t position = from;
    while (to - position >= 4 * GEAR_STREAM_BLOCK) {
        const uint8_t *a = bytes + position, *b = a + GEAR_STREAM_BLOCK;
        const uint8_t *c = b + GEAR_STREAM_BLOCK, *d = c + GEAR_STREAM_BLOCK;
        uint64_t ha = 0, hb = 0, hc = 0, hd = 0;
        for (int k = -63; k < 0; k++) {
            ha = (ha << 1) + table[a[k]];
            hb = (hb << 1) + table[b[k]];
            hc = (hc << 1) + table[c[k]];
            hd = (hd << 1) + table[d[k]];
        }
        size_t found[4] = {to, to, to, to};
        for (size_t i = 0; i < GEAR_STREAM_BLOCK; i++) {
            ha = (ha << 1) + table[a[i]];
            hb = (hb << 1) + table[b[i]];
            hc = (hc << 1) + table[c[i]];
            hd = (hd << 1) + table[d[i]];
            if (__builtin_expect((ha & mask) == 0, 0)) return position + i;
            if (__builtin_expect(((hb & mask) == 0) | ((hc & mask) == 0) | ((hd & mask) == 0), 0)) {
                if ((hb & mask) == 0 && found[1] == to) found[1] = position + GEAR_STREAM_BLOCK + i;
                if ((hc & mask) == 0 && found[2] == to) found[2] = position + 2 * GEAR_STREAM_BLOCK + i;
                if ((hd & mask) == 0 && found[3] == to) found[3] = position + 3 * GEAR_STREAM_BLOCK + i;
            }
        }
        for (int stream = 1; stream < 4; stream++)
            if (found[stream] != to) return found[stream];
        position += 4 * GEAR_STREAM_BLOCK;
    }
    return pkg_gear_find_portable(bytes, position, to, mask);
}

static atomic_int chosen_kernel = -1;
static atomic_int forced_kernel = -1;

static int detect_kernel(void) {
#if PKG_HAVE_AVX512_GEAR
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("gfni")
        && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt"))
        return PKG_GEAR_KERNEL_AVX512;
#endif
    return PKG_GEAR_KERNEL_INTERLEAVED;
}

int pkg_gear_active_kernel(void) {
    int forced = atomic_load_explicit(&forced_kernel, memory_order_relaxed);
    if (forced >= 0) return forced;
    int kernel = atomic_load_explicit(&chosen_kernel, memory_order_relaxed);
    if (kernel < 0) {
        kernel = detect_kernel();
        atomic_store_explicit(&chosen_kernel, kernel, memory_order_relaxed);
    }
    return kernel;
}

int pkg_gear_kernel_supported(int kernel) {
    if (kernel == PKG_GEAR_KERNEL_PORTABLE || kernel == PKG_GEAR_KERNEL_INTERLEAVED) return 1;
    return kernel == PKG_GEAR_KERNEL_AVX512 && detect_kernel() == PKG_GEAR_KERNEL_AVX512;
}

int pkg_gear_force_kernel(int kernel) {
    if (kernel >= 0 && !pkg_gear_kernel_supported(kernel)) return 0;
    atomic_store_explicit(&forced_kernel, kernel < 0 ? -1 : kernel, memory_order_relaxed);
    return 1;
}

static size_t gear_find_with_kernel(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    switch (pkg_gear_active_kernel()) {
#if PKG_HAVE_AVX512_GEAR
    case PKG_GEAR_KERNEL_AVX512:
        // The filter tests the hash's low byte: exact only when every one of those bits is in the mask.
        if ((mask & 0xFF) == 0xFF) return pkg_gear_find_avx512(bytes, from, to, mask);
        return pkg_gear_find_interleaved(bytes, from, to, mask);
#endif
    case PKG_GEAR_KERNEL_INTERLEAVED:
        return pkg_gear_find_interleaved(bytes, from, to, mask);
    default:
        return pkg_gear_find_portable(bytes, from, to, mask);
    }
}

/// Positions per block of the zero-run shortcut: a block whose windows hold only zeros is
/// skipped, any other is searched whole by the kernel (which primes 63 bytes per block).
#define GEAR_ZERO_BLOCK 65536

/// Whether the `count` bytes at `bytes` are all zero (libc's memcmp of the run against
/// itself shifted by one byte: vector code even where this file is built unoptimized).
static int gear_all_zero(const uint8_t *bytes, size_t count) {
    return count == 0 || (bytes[0] == 0 && memcmp(bytes, bytes + 1, count - 1) == 0);
}

/// A window of 64 zero bytes always has the same Gear hash: the sum of table[0] << k for
/// k = 0…63, which is table[0] × (2^64 − 1) ≡ −table[0] (mod 2^64). When that value fails
/// `mask` (it does for both of the standard masks), no position whose window lies in a run
/// of zeros can match: a block of positions whose windows are all zeros (a file's hole, a
/// zeroed region) is skipped after one memcmp instead of being hashed byte by byte. The
/// positions found are exactly the kernels' own.
size_t pkg_gear_find(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    if (from >= to) return to;
    const uint64_t zero_window_hash = 0 - pkg_gear_table[0];
    if ((zero_window_hash & mask) == 0) return gear_find_with_kernel(bytes, from, to, mask);
    size_t position = from;
    while (position < to) {
        const size_t end = to - position > GEAR_ZERO_BLOCK ? position + GEAR_ZERO_BLOCK : to;
        // The windows of positions [position, end) cover bytes [position - 63, end).
        if (!gear_all_zero(bytes + position - 63, end - position + 63)) {
            const size_t found = gear_find_with_kernel(bytes, position, end, mask);
            if (found < end) return found;
        }
        position = end;
    }
    return to;
}

/// The Gear hash at `end` (the window's last byte), summed directly.
static uint64_t gear_hash_ending_at(const uint8_t *end) {
    const uint64_t *table = pkg_gear_table;
    uint64_t hash = 0;
    for (int k = 63; k >= 0; k--) hash = (hash << 1) + table[end[-k]];
    return hash;
}

size_t pkg_gear_matches(const uint8_t *bytes, size_t from, size_t to, uint64_t first_mask, uint64_t second_mask,
                        uint32_t *matches, size_t capacity) {
    const uint64_t either = first_mask & second_mask;
    size_t count = 0;
    for (size_t position = from; position < to; position++) {
        position = pkg_gear_find(bytes, position, to, either);
        if (position >= to) break;
        if (count == capacity) return (size_t)-1;
        const uint64_t hash = gear_hash_ending_at(bytes + position);
        matches[count++] = (uint32_t)position | ((hash & first_mask) == 0 ? PKG_GEAR_MATCH_FIRST : 0)
                           | ((hash & second_mask) == 0 ? PKG_GEAR_MATCH_SECOND : 0);
    }
    return count;
}
