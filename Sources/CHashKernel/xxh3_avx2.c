// XXH3-128 with AVX2, compiled here from libxxhash's own header, for a link without the
// library's dispatcher: Debian's libxxhash.a lacks the one its libxxhash.so carries, so the
// static executable of the README's install build would hash with the portable (SSE2) code,
// which took 1.26× the time on a 1 GiB file. Only in an optimised build: at -O0 (SwiftPM's
// debug C) this loop ran at 0.7 GB/s, slower than the portable code, and a debug build
// links the shared library, dispatcher and all. Call these only after the CPU check in
// dispatch.c.
#if defined(__x86_64__) && defined(__OPTIMIZE__)

#include <stdint.h>
#include <immintrin.h> // before xxhash.h, which includes it only when built with -mavx2

#define XXH_INLINE_ALL // static copies under their own names, beside the library's
#define XXH_VECTOR 2   // XXH_AVX2
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#include <xxhash.h>
#pragma clang attribute pop

__attribute__((target("avx2"))) void pkg_xxh3_avx2_update(void *state, const void *bytes, size_t count) {
    (void)XXH3_128bits_update((XXH3_state_t *)state, bytes, count);
}

__attribute__((target("avx2"))) void pkg_xxh3_avx2_oneshot(const void *bytes, size_t count, uint64_t digest[2]) {
    XXH128_hash_t hash = XXH3_128bits(bytes, count);
    digest[0] = hash.low64;
    digest[1] = hash.high64;
}

#endif
