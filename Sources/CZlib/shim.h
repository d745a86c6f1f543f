// zlib, imported as the CZlib module. Nothing is defined before the include:
// large-file macros would change zlib's ABI for gz* functions, which we do not use.
#include <zlib.h>
