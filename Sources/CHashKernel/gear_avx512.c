// The Gear search with AVX-512 (BW + VBMI + GFNI): 64 positions per step, a block at a time.
//
// The hash's low byte at position i depends only on the 8 bytes ending there:
// low8(h_i) = sum over k = 0…7 of low8(table[b[i-k]]) << k, modulo 256. One byte-table
// lookup (two VPERMI2B over the 256 low bytes) and three prefix-doubling steps give it for
// 64 positions; only positions where it is zero (1 in 256 on random data) can match a mask
// that includes the low 8 bits.
//
// Testing those candidates one by one as the filter finds them costs more than the filter:
// on fresh data the branch that asks "any candidate here?" goes each way at random (a
// fifth of the steps have one), and every wrong guess throws away the vector work in
// flight. So the search works in blocks of 4 KiB, in three passes without such branches:
//   1. the filter over the whole block, its 64-bit candidate masks stored;
//   2. the candidates' offsets listed in order, visiting only the steps that have any (a
//      bit per step from the first pass; two per mask without a branch, more, which random
//      data rarely gives, in a loop);
//   3. the hash's low 12 bits at four candidates a step, one per 128-bit lane (the 16 bytes
//      that end at each), with byte multiply-adds: 1 in 16 candidates survive, and only
//      those get the full 64-term sum, in order, the first match ending the search.
// Every function here carries the AVX-512 target attribute: call them only after the CPU
// check in gear.c.
#if defined(__x86_64__)

#include "CHashKernel.h"
#include "gear_values.h"

size_t pkg_gear_find_portable(const uint8_t *bytes, size_t from, size_t to, uint64_t mask);

/// Bits 0…7 and bits 8…11 of every table entry: what the vector passes look up.
static const uint8_t gear_low_bytes[256] __attribute__((aligned(64))) = {
#define X(value) (uint8_t)(value),
    PKG_GEAR_VALUES
#undef X
};
static const uint8_t gear_nibbles[256] __attribute__((aligned(64))) = {
#define X(value) (uint8_t)(((value) >> 8) & 0x0F),
    PKG_GEAR_VALUES
#undef X
};

#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vbmi,gfni,bmi,bmi2,popcnt"))), apply_to = function)
#include <immintrin.h>

/// 64-byte steps in a block: 4 KiB, whose candidate offsets fit in 16 bits.
#define GEAR_BLOCK_STEPS 64
/// Full checks a group of 64 candidates may need before the byte loop takes over (random
/// data needs one a block).
#define GEAR_FULL_CHECKS 8
/// Candidates in a block beyond which the byte loop searches it (random data has 16).
#define GEAR_DENSE_CANDIDATES 256

/// The full Gear hash at `end` (the window's last byte), in scalar code: vectorised, these
/// loads become gathers, which are slower here.
static inline uint64_t gear_hash_at(const uint8_t *end) {
    const uint64_t *table = pkg_gear_table;
    uint64_t a = 0, b = 0, c = 0, d = 0;
#pragma clang loop vectorize(disable) interleave(disable)
    for (int k = 0; k < 64; k += 4) {
        a += table[end[-k]] << k;
        b += table[end[-k - 1]] << (k + 1);
        c += table[end[-k - 2]] << (k + 2);
        d += table[end[-k - 3]] << (k + 3);
    }
    return a + b + c + d;
}

/// A 256-entry byte table in four registers.
typedef struct {
    __m512i part[4];
} byte_table;

static inline byte_table load_table(const uint8_t table[256]) {
    byte_table loaded;
    for (int part = 0; part < 4; part++) loaded.part[part] = _mm512_load_si512(table + 64 * part);
    return loaded;
}

/// table[x] for 64 bytes: two VPERMI2B over 128 entries each, chosen by the index's top bit.
static inline __m512i lookup(const byte_table *table, __m512i x, __mmask64 top) {
    return _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(table->part[0], x, table->part[1]),
                                  _mm512_permutex2var_epi8(table->part[2], x, table->part[3]));
}

/// Index vectors that move every byte `distance` lanes up, the lowest lanes taking the
/// previous step's top bytes (VPERMT2B: index bit 6 selects the second table).
static inline __m512i shift_index(int distance) {
    uint8_t index[64];
    for (int lane = 0; lane < 64; lane++)
        index[lane] = (uint8_t)(lane >= distance ? lane - distance : 64 + 64 - distance + lane);
    return _mm512_loadu_si512(index);
}

/// The GF(2) bit matrix with which VGF2P8AFFINEQB shifts every byte left by `bits`: one
/// instruction for what would take a 16-bit shift and a mask.
static inline __m512i byte_shift_matrix(int bits) {
    uint64_t matrix = 0;
    for (int bit = bits; bit < 8; bit++) matrix |= (uint64_t)(1u << (bit - bits)) << (8 * (7 - bit));
    return _mm512_set1_epi64((long long)matrix);
}

/// The filter's running state: the previous step's sums, which the next step's first
/// lanes need, and the constants.
typedef struct {
    byte_table low;
    __m512i by1, by2, by4, times4, times16;
    __m512i terms, pairs, quads;
} low_byte_filter;

/// One step of the filter: the mask of positions in these 64 bytes whose hash has a zero
/// low byte.
static inline uint64_t filter_step(low_byte_filter *filter, __m512i x) {
    const __m512i terms = lookup(&filter->low, x, _mm512_movepi8_mask(x));
    const __m512i shifted1 = _mm512_permutex2var_epi8(terms, filter->by1, filter->terms);
    const __m512i pairs = _mm512_add_epi8(terms, _mm512_add_epi8(shifted1, shifted1));
    const __m512i shifted2 = _mm512_permutex2var_epi8(pairs, filter->by2, filter->pairs);
    const __m512i quads = _mm512_add_epi8(pairs, _mm512_gf2p8affine_epi64_epi8(shifted2, filter->times4, 0));
    const __m512i shifted4 = _mm512_permutex2var_epi8(quads, filter->by4, filter->quads);
    const __m512i octets = _mm512_add_epi8(quads, _mm512_gf2p8affine_epi64_epi8(shifted4, filter->times16, 0));
    filter->terms = terms;
    filter->pairs = pairs;
    filter->quads = quads;
    return _mm512_testn_epi8_mask(octets, octets);
}

/// The second pass's constants: the low-byte and nibble tables and the weights.
typedef struct {
    byte_table low, nibbles;
    __m512i weights0to6, weights7to11, nibbleWeights, mask12;
} low12_check;

static inline low12_check make_low12_check(const byte_table *low, uint64_t mask) {
    low12_check check;
    check.low = *low;
    check.nibbles = load_table(gear_nibbles);
    // Lane byte 15 - k holds the byte k before the candidate, whose term weighs 2^k. The
    // weights are signed bytes, so the low bytes' weights come in two sets (2^0…2^6, and
    // 2^7…2^11 divided by 2^7); a nibble weighs 2^(8 + k), only k < 4 staying below 2^12.
    int8_t weights0to6[16] = {0}, weights7to11[16] = {0}, nibbleWeights[16] = {0};
    for (int k = 0; k < 12; k++) {
        if (k < 7) weights0to6[15 - k] = (int8_t)(1 << k);
        else weights7to11[15 - k] = (int8_t)(1 << (k - 7));
        if (k < 4) nibbleWeights[15 - k] = (int8_t)(1 << k);
    }
    check.weights0to6 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)weights0to6));
    check.weights7to11 = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)weights7to11));
    check.nibbleWeights = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)nibbleWeights));
    check.mask12 = _mm512_set1_epi32((int)(mask & 0xFFF));
    return check;
}

/// Bit c of the result is set when candidate c (an offset from `base`) has a hash with
/// none of the mask's low 12 bits set; `count` ≤ 64. Reads the list in whole fours (pad it)
/// and the 15 bytes before each candidate.
static inline uint64_t low12_pass(const low12_check *check, const uint8_t *base, const uint16_t *list, size_t count) {
    const __m512i ones = _mm512_set1_epi16(1);
    uint64_t passed = 0;
    for (size_t c = 0; c < count; c += 4) {
        __m512i x = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(base + list[c] - 15)));
        x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(base + list[c + 1] - 15)), 1);
        x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(base + list[c + 2] - 15)), 2);
        x = _mm512_inserti32x4(x, _mm_loadu_si128((const __m128i *)(base + list[c + 3] - 15)), 3);
        const __mmask64 top = _mm512_movepi8_mask(x);
        const __m512i low = lookup(&check->low, x, top), nibbles = lookup(&check->nibbles, x, top);
        // Sums of weighted pairs in 16 bits, then of the lane's eight words in 32.
        __m512i sum = _mm512_maddubs_epi16(low, check->weights0to6);
        sum = _mm512_add_epi16(sum, _mm512_slli_epi16(_mm512_maddubs_epi16(low, check->weights7to11), 7));
        sum = _mm512_add_epi16(sum, _mm512_slli_epi16(_mm512_maddubs_epi16(nibbles, check->nibbleWeights), 8));
        __m512i lane = _mm512_madd_epi16(sum, ones);
        lane = _mm512_add_epi32(lane, _mm512_shuffle_epi32(lane, _MM_PERM_BADC));
        lane = _mm512_add_epi32(lane, _mm512_shuffle_epi32(lane, _MM_PERM_CDAB));
        // Every dword of a lane now holds its sum; take dword 0 of each.
        const __mmask16 zero = _mm512_testn_epi32_mask(lane, check->mask12);
        passed |= (uint64_t)_pext_u32((uint32_t)zero, 0x1111) << c;
    }
    return count == 64 ? passed : passed & ((1ull << count) - 1);
}

size_t pkg_gear_find_avx512(const uint8_t *bytes, size_t from, size_t to, uint64_t mask) {
    if (to - from < 64) return pkg_gear_find_portable(bytes, from, to, mask);
    low_byte_filter filter;
    filter.low = load_table(gear_low_bytes);
    filter.by1 = shift_index(1);
    filter.by2 = shift_index(2);
    filter.by4 = shift_index(4);
    // Opaque to the optimizer: seeing constant indices, clang rewrites each VPERMT2B shift
    // as VALIGNQ + VPALIGNR (VALIGND for the 4-byte one), which on Zen 4 made the whole
    // search 12 % slower (0.089 against 0.078 s/GiB). GCC keeps the permutes.
    __asm__("" : "+v"(filter.by1), "+v"(filter.by2), "+v"(filter.by4));
    filter.times4 = byte_shift_matrix(2);
    filter.times16 = byte_shift_matrix(4);
    filter.terms = filter.pairs = filter.quads = _mm512_setzero_si512();
    // Prime the previous step from the 64 bytes before `from`: only its top lanes are used,
    // and those depend on bytes at from - 8 and later.
    (void)filter_step(&filter, _mm512_loadu_si512(bytes + from - 64));
    const low12_check check = make_low12_check(&filter.low, mask);

    uint64_t masks[GEAR_BLOCK_STEPS];
    uint16_t list[GEAR_DENSE_CANDIDATES + 3];
    size_t position = from;
    while (to - position >= 64) {
        size_t steps = (to - position) / 64;
        if (steps > GEAR_BLOCK_STEPS) steps = GEAR_BLOCK_STEPS;
        const uint8_t *block = bytes + position;
        size_t candidates = 0;
        // Bit s: step s has a candidate (a fifth of the steps on random data).
        uint64_t occupied = 0;
        for (size_t step = 0; step < steps; step++) {
            const uint64_t found = filter_step(&filter, _mm512_loadu_si512(block + 64 * step));
            masks[step] = found;
            candidates += (size_t)_mm_popcnt_u64(found);
            occupied |= (uint64_t)(found != 0) << step;
        }

        const size_t blockEnd = position + 64 * steps;
        // Low-entropy or built bytes can make most positions candidates: the byte loop then
        // searches the block at its steady byte a cycle (the filter's state stays right).
        if (__builtin_expect(candidates > GEAR_DENSE_CANDIDATES, 0)) {
            const size_t found = pkg_gear_find_portable(bytes, position, blockEnd, mask);
            if (found < blockEnd) return found;
            position = blockEnd;
            continue;
        }

        // Only the steps with a candidate: one loop exit to mispredict per block, where
        // visiting all 64 steps cost a fifth of the search.
        size_t count = 0;
        for (uint64_t left = occupied; left != 0; left = _blsr_u64(left)) {
            const size_t step = (size_t)_tzcnt_u64(left);
            const uint64_t first = masks[step], second = _blsr_u64(first);
            const uint16_t offset = (uint16_t)(64 * step);
            list[count] = offset + (uint16_t)_tzcnt_u64(first);
            list[count + 1] = offset + (uint16_t)_tzcnt_u64(second);
            count += 1 + (second != 0);
            for (uint64_t rest = _blsr_u64(second); __builtin_expect(rest != 0, 0); rest = _blsr_u64(rest))
                list[count++] = offset + (uint16_t)_tzcnt_u64(rest);
        }
        // The last step of four reads up to three entries past the list: offset 0 is readable
        // (block - 15 is at or after from - 64), and the count masks their bits off.
        list[count] = list[count + 1] = list[count + 2] = 0;

        for (size_t group = 0; group < count; group += 64) {
            const size_t size = count - group < 64 ? count - group : 64;
            uint64_t passed = low12_pass(&check, block, list + group, size);
            // Bytes built to pass (a run of one value can make every position a candidate
            // whose low 12 bits are zero) would cost a 64-term sum a byte: the byte loop
            // takes the rest of the block instead, at its steady byte a cycle. Earlier
            // candidates were checked; positions between candidates cannot match.
            if (__builtin_expect(__builtin_popcountll(passed) > GEAR_FULL_CHECKS, 0)) {
                const size_t found = pkg_gear_find_portable(bytes, position + list[group], blockEnd, mask);
                if (found < blockEnd) return found;
                break;
            }
            for (; passed != 0; passed = _blsr_u64(passed)) {
                const size_t index = position + list[group + _tzcnt_u64(passed)];
                if ((gear_hash_at(bytes + index) & mask) == 0) return index;
            }
        }
        position = blockEnd;
    }
    return pkg_gear_find_portable(bytes, position, to, mask);
}

#pragma clang attribute pop
#endif
