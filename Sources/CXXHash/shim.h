// libxxhash (Debian's libxxhash-dev), imported as the CXXHash module.
#include <xxhash.h>
