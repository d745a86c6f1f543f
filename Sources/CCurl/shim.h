// libcurl (Debian's libcurl4-openssl-dev), imported as the CCurl module. Its variadic
// setters (curl_easy_setopt, curl_easy_getinfo) are reached through CCurlShims.
#include <curl/curl.h>
