// xxHash's XXH3 compiled inline for AVX2. Every function in this file carries the
// avx2 target attribute, so it must only be called after a CPU check (see dispatch.c).
#if defined(__x86_64__) || defined(__i386__)

#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#include <immintrin.h>
#define XXH_INLINE_ALL
#define XXH_VECTOR XXH_AVX2
#include <xxhash.h>

void pkg_hash_avx2_update(XXH3_state_t *state, const void *bytes, size_t count) {
    (void)XXH3_128bits_update(state, bytes, count);
}

XXH128_hash_t pkg_hash_avx2_oneshot(const void *bytes, size_t count) {
    return XXH3_128bits(bytes, count);
}
#pragma clang attribute pop

#endif
