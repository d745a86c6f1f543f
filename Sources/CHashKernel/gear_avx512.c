// The Gear search with AVX-512 (BW + VBMI): 64 positions per step.
//
// The hash's low byte at position i depends only on the 8 bytes ending there:
// low8(h_i) = sum over k = 0…7 of low8(table[b[i-k]]) << k, modulo 256. One byte-table
// lookup (two VPERMI2B over the 256 low bytes) and three prefix-doubling steps give it
// for 64 positions; only positions where it is zero (1 in 256 on random data) can match
// a mask that includes the low 8 bits, and only those are checked in full, scalar.
// Every function here carries the AVX-512 target attribute: call it only after the CPU
// check in gear.c.
#if defined(__x86_64__)

#include "CHashKernel.h"
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vbmi"))), apply_to = function)
#include <immintrin.h>

size_t pkg_gear_find_portable(const uint8_t *bytes, size_t from, size_t to, uint64_t mask);

/// Whether the full Gear hash at `end` (the window's last byte) has no bit of `mask`.
/// The low 12 bits come from the last 12 bytes alone (later terms are shifted past them),
/// so most candidates are rejected before the other 52 terms are added.
static inline int gear_matches(const uint8_t *end, uint64_t mask) {
    const uint64_t *table = pkg_gear_table;
    uint64_t a = 0, b = 0, c = 0, d = 0;
    for (int k = 0; k < 12; k += 4) {
        a += table[end[-k]] << k;
        b += table[end[-k - 1]] << (k + 1);
        c += table[end[-k - 2]] << (k + 2);
        d += table[end[-k - 3]] << (k + 3);
    }
    if (((a + b + c + d) & mask & 0xFFF) != 0) return 0;
    for (int k = 12; k < 64; k += 4) {
        a += table[end[-k]] << k;
        b += table[end[-k - 1]] << (k + 1);
        c += table[end[-k - 2]] << (k + 2);
        d += table[end[-k - 3]] << (k + 3);
    }
    return ((a + b + c + d) & mask) == 0;
}

/// Index vectors that move every byte `distance` lanes up, the lowest lanes taking the
/// previous block's top bytes (VPERMT2B: index bit 6 selects the second table).
static inline __m512i shift_index(int distance) {
    uint8_t index[64];
    for (int lane = 0; lane < 64; lane++)
        index[lane] = (uint8_t)(lane >= distance ? lane - distance : 64 + 64 - distance + lane);
    return _mm512_loadu_si512(index);
}

size_t pkg_gear_find_avx512(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    if (to - from < 64) return pkg_gear_find_portable(bytes, from, to, mask);
    uint8_t low[256];
    for (int value = 0; value < 256; value++) low[value] = (uint8_t)pkg_gear_table[value];
    const __m512i low0 = _mm512_loadu_si512(low), low1 = _mm512_loadu_si512(low + 64);
    const __m512i high0 = _mm512_loadu_si512(low + 128), high1 = _mm512_loadu_si512(low + 192);
    const __m512i by1 = shift_index(1), by2 = shift_index(2), by4 = shift_index(4);
    const __m512i keep2 = _mm512_set1_epi8((char)0xFC), keep4 = _mm512_set1_epi8((char)0xF0);

    // Prime the previous block's partial sums from the 64 bytes before `from`: only its
    // top lanes are used, and those depend on bytes at from - 8 and later.
    size_t position = from;
    __m512i previousTerms, previousPairs, previousQuads;
    {
        const __m512i x = _mm512_loadu_si512(bytes + position - 64);
        const __mmask64 top = _mm512_movepi8_mask(x);
        const __m512i terms = _mm512_mask_blend_epi8(
            top, _mm512_permutex2var_epi8(low0, x, low1), _mm512_permutex2var_epi8(high0, x, high1));
        const __m512i zero = _mm512_setzero_si512();
        const __m512i shifted1 = _mm512_permutex2var_epi8(terms, by1, zero);
        const __m512i pairs = _mm512_add_epi8(terms, _mm512_add_epi8(shifted1, shifted1));
        const __m512i shifted2 = _mm512_permutex2var_epi8(pairs, by2, zero);
        const __m512i quads = _mm512_add_epi8(pairs, _mm512_and_si512(_mm512_slli_epi16(shifted2, 2), keep2));
        previousTerms = terms;
        previousPairs = pairs;
        previousQuads = quads;
    }
    while (position + 64 <= to) {
        const __m512i x = _mm512_loadu_si512(bytes + position);
        const __mmask64 top = _mm512_movepi8_mask(x);
        const __m512i terms = _mm512_mask_blend_epi8(
            top, _mm512_permutex2var_epi8(low0, x, low1), _mm512_permutex2var_epi8(high0, x, high1));
        const __m512i shifted1 = _mm512_permutex2var_epi8(terms, by1, previousTerms);
        const __m512i pairs = _mm512_add_epi8(terms, _mm512_add_epi8(shifted1, shifted1));
        const __m512i shifted2 = _mm512_permutex2var_epi8(pairs, by2, previousPairs);
        const __m512i quads = _mm512_add_epi8(pairs, _mm512_and_si512(_mm512_slli_epi16(shifted2, 2), keep2));
        const __m512i shifted4 = _mm512_permutex2var_epi8(quads, by4, previousQuads);
        const __m512i octets = _mm512_add_epi8(quads, _mm512_and_si512(_mm512_slli_epi16(shifted4, 4), keep4));
        uint64_t candidates = _mm512_testn_epi8_mask(octets, octets);
        while (candidates != 0) {
            const size_t index = position + (size_t)__builtin_ctzll(candidates);
            if (gear_matches(bytes + index, mask)) return index;
            candidates &= candidates - 1;
        }
        previousTerms = terms;
        previousPairs = pairs;
        previousQuads = quads;
        position += 64;
    }
    return pkg_gear_find_portable(bytes, position, to, mask);
}

#pragma clang attribute pop
#endif
