// A model of chunked hashing on two readers (PairedFileReading), for asking how the
// ratio "hash + chunks vs hash alone" moves with the host's page-cache copy speed, which
// drifts on a shared machine while the arithmetic does not.
//
// It times, on a warm file: hashing alone (pread 1 MiB pieces, XXH3-128), and two threads
// that pread alternate pieces and, in file order, feed the file hash and a "consume" step
// (the Gear search over the sections not listed ahead, about 74 % of their bytes, and a
// second XXH3 stream for the chunk hashes), listing sections' cut candidates ahead while
// they wait for a turn ("adaptive", what pkgtool does) or all of them before ("full
// ahead"). Every XXH3 and Gear pass runs K/10 times: K = 24 makes the arithmetic weigh
// 2.4 times more against the copy, which is what a fast hour of this machine looks like
// (Specs/hashing.md). Cut points are not resolved: the work, not the result, is modelled.
//
//   cc -O2 -march=native -ISources/CHashKernel/include -o /tmp/chunking-model \
//      Benchmarks/Harness/chunking-model.c Sources/CHashKernel/gear*.c -lxxhash -lpthread
//   /tmp/chunking-model FILE K [PIECE_KIB]
#define _GNU_SOURCE
#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#define XXH_DISPATCH_DISABLE_REPLACE 1
#include <xxh_x86dispatch.h>
#include <xxhash.h>
#include "CHashKernel.h"

enum { SECTION = 64 << 10, MAX_SECTIONS = 64 };
enum mode { ALONE, FULL_AHEAD, ADAPTIVE };
static const uint64_t STRICT = 0xACA8800000000FFFull, LOOSE = 0xAC88800000000FFFull;

static size_t piece_size = 1 << 20, pieces;
static int file, weight = 10;
static off_t file_size;
static enum mode mode;
static XXH3_state_t *file_hash, *chunk_hash;
static _Atomic long hash_turn, consume_turn, ahead, in_turn;
static volatile size_t sink;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/// XXH3 over the bytes, weight/10 times.
static void hash(XXH3_state_t *state, const uint8_t *bytes, size_t count) {
    for (int i = 0; i < weight / 10; i++) XXH3_128bits_update_dispatch(state, bytes, count);
    if (weight % 10) XXH3_128bits_update_dispatch(state, bytes, count * (weight % 10) / 10);
}

/// The cut candidates of [from, to), weight/10 times.
static void search(const uint8_t *bytes, size_t from, size_t to) {
    uint32_t matches[64];
    for (int i = 0; i < weight / 10; i++) sink += pkg_gear_matches(bytes, from, to, STRICT, LOOSE, matches, 64);
    if (weight % 10)
        sink += pkg_gear_matches(bytes, from, from + (to - from) * (weight % 10) / 10, STRICT, LOOSE, matches, 64);
}

/// Waits for `turn` to reach `piece`, listing sections ahead meanwhile when adaptive.
static void wait_turn(_Atomic long *turn, long piece, const uint8_t *buffer, size_t sections, size_t *next,
                      int listed[]) {
    while (atomic_load_explicit(turn, memory_order_acquire) != piece) {
        if (mode == ADAPTIVE && *next < sections) {
            search(buffer, 64 + *next * SECTION, 64 + (*next + 1) * SECTION);
            listed[(*next)++] = 1;
            ahead++;
        } else {
            _mm_pause();
        }
    }
}

static void *reader(void *argument) {
    const long first = (long)argument;
    uint8_t *buffer = aligned_alloc(4096, piece_size + 4096), *data = buffer + 64;
    for (size_t piece = first; piece < pieces; piece += 2) {
        const off_t offset = (off_t)piece * piece_size;
        size_t wanted = piece_size, got = 0;
        if (offset + (off_t)wanted > file_size) wanted = file_size - offset;
        while (got < wanted) {
            const ssize_t count = pread(file, data + got, wanted - got, offset + got);
            if (count <= 0) abort();
            got += count;
        }
        // Section 0 is never listed ahead: its first windows reach into the previous piece.
        int listed[MAX_SECTIONS] = {0};
        const size_t sections = wanted / SECTION;
        size_t next = 1;
        if (mode == FULL_AHEAD)
            for (; next < sections; next++, ahead++) search(buffer, 64 + next * SECTION, 64 + (next + 1) * SECTION), listed[next] = 1;
        wait_turn(&hash_turn, piece, buffer, sections, &next, listed);
        hash(file_hash, data, wanted);
        atomic_store_explicit(&hash_turn, piece + 1, memory_order_release);
        wait_turn(&consume_turn, piece, buffer, sections, &next, listed);
        for (size_t section = 0; section < sections; section++)
            if (!listed[section]) search(buffer, 64 + section * SECTION, 64 + section * SECTION + SECTION * 74 / 100), in_turn++;
        hash(chunk_hash, data, wanted);
        atomic_store_explicit(&consume_turn, piece + 1, memory_order_release);
    }
    free(buffer);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3) return fprintf(stderr, "usage: %s FILE K [PIECE_KIB]\n", argv[0]), 2;
    weight = atoi(argv[2]);
    if (argc > 3) piece_size = (size_t)atoi(argv[3]) << 10;
    if (piece_size / SECTION > MAX_SECTIONS || piece_size % SECTION) return fprintf(stderr, "bad piece size\n"), 2;
    if ((file = open(argv[1], O_RDONLY)) < 0) return perror(argv[1]), 1;
    file_size = lseek(file, 0, SEEK_END);
    pieces = (file_size + piece_size - 1) / piece_size;
    file_hash = XXH3_createState();
    chunk_hash = XXH3_createState();
    uint8_t *buffer = aligned_alloc(4096, piece_size);
    for (int run = 0; run < 7; run++) {
        double seconds[3];
        for (mode = ALONE; mode <= ADAPTIVE; mode++) {
            XXH3_128bits_reset(file_hash);
            XXH3_128bits_reset(chunk_hash);
            hash_turn = consume_turn = ahead = in_turn = 0;
            const double start = now();
            if (mode == ALONE) {
                ssize_t count;
                for (off_t offset = 0; (count = pread(file, buffer, piece_size, offset)) > 0; offset += count)
                    hash(file_hash, buffer, count);
            } else {
                pthread_t even, odd;
                pthread_create(&even, NULL, reader, (void *)0);
                pthread_create(&odd, NULL, reader, (void *)1);
                pthread_join(even, NULL);
                pthread_join(odd, NULL);
            }
            seconds[mode] = now() - start;
        }
        printf("K=%.1f alone %.4f s; full ahead %.4f s (%.3fx); adaptive %.4f s (%.3fx), sections ahead %ld, in turn %ld\n",
               weight / 10.0, seconds[ALONE], seconds[FULL_AHEAD], seconds[ALONE] / seconds[FULL_AHEAD],
               seconds[ADAPTIVE], seconds[ALONE] / seconds[ADAPTIVE], (long)ahead, (long)in_turn);
    }
    return 0;
}
