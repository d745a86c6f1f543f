// The Gear search of the content-defined chunker: the portable loop and the runtime
// choice of the AVX-512 filter (gear_avx512.c). Both return the same position.
#include "CHashKernel.h"
#include <stdatomic.h>

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

static atomic_int chosen_kernel = -1;
static atomic_int forced_portable = 0;

static int detect_kernel(void) {
#if PKG_HAVE_AVX512_GEAR
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
        && __builtin_cpu_supports("avx512vbmi"))
        return PKG_GEAR_KERNEL_AVX512;
#endif
    return PKG_GEAR_KERNEL_PORTABLE;
}

int pkg_gear_active_kernel(void) {
    if (atomic_load_explicit(&forced_portable, memory_order_relaxed)) return PKG_GEAR_KERNEL_PORTABLE;
    int kernel = atomic_load_explicit(&chosen_kernel, memory_order_relaxed);
    if (kernel < 0) {
        kernel = detect_kernel();
        atomic_store_explicit(&chosen_kernel, kernel, memory_order_relaxed);
    }
    return kernel;
}

void pkg_gear_force_portable(int portable) {
    atomic_store_explicit(&forced_portable, portable != 0, memory_order_relaxed);
}

size_t pkg_gear_find(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    if (from >= to) return to;
#if PKG_HAVE_AVX512_GEAR
    // The filter tests the hash's low byte: exact only when every one of those bits is in the mask.
    if ((mask & 0xFF) == 0xFF && pkg_gear_active_kernel() == PKG_GEAR_KERNEL_AVX512)
        return pkg_gear_find_avx512(bytes, from, to, mask);
#endif
    return pkg_gear_find_portable(bytes, from, to, mask);
}
