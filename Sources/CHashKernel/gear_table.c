// The Gear table of the content-defined chunker (Specs/hashing.md, "Chunk lists"); its
// values live in gear_values.h.
#include "CHashKernel.h"
#include "gear_values.h"

const uint64_t pkg_gear_table[256] = {
#define X(value) value,
    PKG_GEAR_VALUES
#undef X
};
