#ifndef PKG_CURL_SHIMS_H
#define PKG_CURL_SHIMS_H

// libcurl's setters and getters are variadic (curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt), which Swift cannot call: one typed wrapper per kind of argument.
// Each returns what libcurl returned.

#include <curl/curl.h>

CURLcode pkg_curl_global_init(void);

CURLcode pkg_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode pkg_curl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value);
/// Strings (copied by libcurl), slists and opaque pointers (CURLOPT_*DATA).
CURLcode pkg_curl_setopt_pointer(CURL *handle, CURLoption option, const void *value);

/// Callbacks, each with the signature libcurl documents for it.
CURLcode pkg_curl_setopt_read_function(CURL *handle, curl_read_callback callback);
CURLcode pkg_curl_setopt_seek_function(CURL *handle, curl_seek_callback callback);
CURLcode pkg_curl_setopt_write_function(CURL *handle, curl_write_callback callback);
CURLcode pkg_curl_setopt_header_function(CURL *handle, curl_write_callback callback);
CURLcode pkg_curl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback callback);

CURLcode pkg_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode pkg_curl_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value);

/// Constants libcurl defines as macros Swift does not import.
extern const size_t PKG_CURL_READFUNC_ABORT;
extern const int PKG_CURL_SEEKFUNC_OK;
extern const int PKG_CURL_SEEKFUNC_FAIL;
extern const long PKG_CURL_HTTP_VERSION_1_1;

#endif
