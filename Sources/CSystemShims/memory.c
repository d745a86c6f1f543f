#include "CSystemShims.h"

#include <malloc.h>

size_t pkg_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

void pkg_return_large_blocks_promptly(size_t threshold) {
    mallopt(M_MMAP_THRESHOLD, (int)threshold);
}

void pkg_release_free_memory(void) {
    malloc_trim(0);
}
