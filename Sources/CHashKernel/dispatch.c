// XXH3-128 over the system's libxxhash, with a run-time choice of its vector code.
//
// Debian's libxxhash is compiled for SSE2, and on x86 it also carries xxHash's own
// dispatcher (xxh_x86dispatch.h: SSE2, AVX2 or AVX-512 chosen from the CPU on first use).
// Both are built by the distribution with optimisation, so hashing runs at full speed
// whatever this target is built with. That matters: SwiftPM compiles C targets at -O0 in a
// debug build, clang has no per-function way to raise that (`#pragma clang optimize on`
// only undoes an `off`; GCC's `optimize` attribute and pragma are ignored), and a package
// that others depend on by version may not pass `unsafeFlags` such as -O3. An XXH3 loop
// compiled here ran at about 0.8 GB/s at -O0 against 30 GB/s for the library's. Only a
// link without the dispatcher (a static one: libxxhash.a has none) takes the AVX2 code that
// an optimised build compiles here (xxh3_avx2.c).
#include "CHashKernel.h"
#include <xxhash.h>
#include <stdatomic.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__has_include)
#if __has_include(<xxh_x86dispatch.h>)
#define XXH_DISPATCH_DISABLE_REPLACE 1
#include <xxh_x86dispatch.h>
#define PKG_HAVE_DISPATCH 1
// Debian's libxxhash.a lacks the dispatcher that its libxxhash.so carries: a static link
// (the README's install build) leaves these null, and an optimised build uses its own AVX2
// code instead (xxh3_avx2.c).
#pragma weak XXH3_128bits_dispatch
#pragma weak XXH3_128bits_update_dispatch
#endif
#endif
#ifndef PKG_HAVE_DISPATCH
#define PKG_HAVE_DISPATCH 0
#endif

#if defined(__x86_64__) && defined(__OPTIMIZE__)
void pkg_xxh3_avx2_update(void *state, const void *bytes, size_t count);
void pkg_xxh3_avx2_oneshot(const void *bytes, size_t count, uint64_t digest[2]);
#define PKG_HAVE_OWN_AVX2 1
#else
#define PKG_HAVE_OWN_AVX2 0
#endif

/// The library's dispatcher is linked in.
static inline int library_dispatches(void) {
#if PKG_HAVE_DISPATCH
    return XXH3_128bits_dispatch != NULL && XXH3_128bits_update_dispatch != NULL;
#else
    return 0;
#endif
}

static atomic_int chosen_kernel = -1;
static atomic_int forced_portable = 0;

/// The AVX2 kernel: the library's dispatcher when it is linked, else this target's own code.
static void avx2_update(pkg_hash_state *state, const void *bytes, size_t count) {
#if PKG_HAVE_DISPATCH
    if (library_dispatches()) {
        (void)XXH3_128bits_update_dispatch((XXH3_state_t *)state, bytes, count);
        return;
    }
#endif
#if PKG_HAVE_OWN_AVX2
    pkg_xxh3_avx2_update(state, bytes, count);
#else
    (void)XXH3_128bits_update((XXH3_state_t *)state, bytes, count);
#endif
}

static XXH128_hash_t avx2_oneshot(const void *bytes, size_t count) {
#if PKG_HAVE_DISPATCH
    if (library_dispatches()) return XXH3_128bits_dispatch(bytes, count);
#endif
#if PKG_HAVE_OWN_AVX2
    uint64_t halves[2];
    pkg_xxh3_avx2_oneshot(bytes, count, halves);
    return (XXH128_hash_t){halves[0], halves[1]};
#else
    return XXH3_128bits(bytes, count);
#endif
}

static int detect_kernel(void) {
#if PKG_HAVE_DISPATCH || PKG_HAVE_OWN_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && (library_dispatches() || PKG_HAVE_OWN_AVX2)) return PKG_HASH_KERNEL_AVX2;
#endif
    return PKG_HASH_KERNEL_LIBXXHASH;
}

int pkg_hash_active_kernel(void) {
    if (atomic_load_explicit(&forced_portable, memory_order_relaxed)) return PKG_HASH_KERNEL_LIBXXHASH;
    int kernel = atomic_load_explicit(&chosen_kernel, memory_order_relaxed);
    if (kernel < 0) {
        kernel = detect_kernel();
        atomic_store_explicit(&chosen_kernel, kernel, memory_order_relaxed);
    }
    return kernel;
}

void pkg_hash_force_portable(int portable) {
    atomic_store_explicit(&forced_portable, portable != 0, memory_order_relaxed);
}

pkg_hash_state *pkg_hash_create(void) {
    XXH3_state_t *state = XXH3_createState();
    if (state) XXH3_128bits_reset(state);
    return (pkg_hash_state *)state;
}

void pkg_hash_free(pkg_hash_state *state) { XXH3_freeState((XXH3_state_t *)state); }

void pkg_hash_reset(pkg_hash_state *state) { XXH3_128bits_reset((XXH3_state_t *)state); }

void pkg_hash_update(pkg_hash_state *state, const void *bytes, size_t count) {
    if (pkg_hash_active_kernel() == PKG_HASH_KERNEL_AVX2) {
        avx2_update(state, bytes, count);
    } else {
        (void)XXH3_128bits_update((XXH3_state_t *)state, bytes, count);
    }
}

void pkg_hash_digest(const pkg_hash_state *state, uint8_t out[16]) {
    XXH128_hash_t digest = XXH3_128bits_digest((const XXH3_state_t *)state);
    XXH128_canonicalFromHash((XXH128_canonical_t *)out, digest);
}

void pkg_hash_oneshot(const void *bytes, size_t count, uint8_t out[16]) {
    XXH128_hash_t digest =
        pkg_hash_active_kernel() == PKG_HASH_KERNEL_AVX2 ? avx2_oneshot(bytes, count) : XXH3_128bits(bytes, count);
    XXH128_canonicalFromHash((XXH128_canonical_t *)out, digest);
}
