/*
 * optlib.h - libcurl and libmicrohttpd, loaded when first needed
 * (docs/design.md#libraries-loaded-when-needed).
 *
 * Linked like the others, the two and what they bring (GnuTLS, OpenSSL,
 * LDAP, SSH, ...: 21 more shared libraries, 12,700 symbol bindings
 * instead of 7,500) made the start of every storyctl command take 8.2
 * ms of CPU instead of 3.5 (docs/performance.md#process-start).  Only
 * notifications use libcurl and only the HTTP API libmicrohttpd, so
 * they are opened with dlopen() there, by their soname, and called
 * through the tables below.  A file that calls them includes
 * controller/optlib_curl.h or controller/optlib_mhd.h instead of the
 * library's header: the library's own names then call through the
 * table, so the code reads as libcurl's and libmicrohttpd's
 * documentation.
 */
#ifndef STORYCTL_OPTLIB_H
#define STORYCTL_OPTLIB_H

/* the functions are called through pointers: no type-checking macros
 * around curl_easy_setopt() (they would call the linked symbol) */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <microhttpd.h>

#include "common/err.h"

/* every libcurl function storyctl calls */
#define OPTLIB_CURL_FUNCS(X) \
	X(curl_easy_cleanup) \
	X(curl_easy_getinfo) \
	X(curl_easy_init) \
	X(curl_easy_perform) \
	X(curl_easy_setopt) \
	X(curl_easy_strerror) \
	X(curl_free) \
	X(curl_global_cleanup) \
	X(curl_global_init) \
	X(curl_slist_append) \
	X(curl_slist_free_all) \
	X(curl_url) \
	X(curl_url_cleanup) \
	X(curl_url_get) \
	X(curl_url_set) \
	X(curl_url_strerror)

/* every libmicrohttpd function storyctl calls */
#define OPTLIB_MHD_FUNCS(X) \
	X(MHD_add_response_header) \
	X(MHD_create_response_from_buffer_with_free_callback) \
	X(MHD_create_response_from_callback) \
	X(MHD_destroy_response) \
	X(MHD_get_connection_info) \
	X(MHD_get_connection_values) \
	X(MHD_get_daemon_info) \
	X(MHD_http_unescape) \
	X(MHD_is_feature_supported) \
	X(MHD_lookup_connection_value) \
	X(MHD_queue_response) \
	X(MHD_resume_connection) \
	X(MHD_start_daemon) \
	X(MHD_stop_daemon) \
	X(MHD_suspend_connection)

#define OPTLIB_FIELD(f) __typeof__(f) *f;

struct optlib_curl {
	OPTLIB_CURL_FUNCS(OPTLIB_FIELD)
};

struct optlib_mhd {
	OPTLIB_MHD_FUNCS(OPTLIB_FIELD)
};

/*
 * Open the library (once per process; safe from any thread) and fill
 * its table.  0, or SC_EUNAVAIL naming the library and saying why (the
 * same every later call).
 */
int optlib_curl_load(struct sc_err *err);
int optlib_mhd_load(struct sc_err *err);

/* The table; only after the load above returned 0 (NULL before). */
const struct optlib_curl *optlib_curl(void);
const struct optlib_mhd *optlib_mhd(void);

#endif
