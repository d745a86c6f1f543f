// OpenSSL's libcrypto (Debian's libssl-dev), imported as the CCrypto module: SHA-256
// through the EVP digest interface and HMAC-SHA256, the calls SigV4 and the store's keys need.
// Only interfaces that OpenSSL 3 does not deprecate are used (no SHA256_Init, no HMAC_CTX).
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
