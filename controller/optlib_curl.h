/*
 * optlib_curl.h - include this, not the library's header, where libcurl
 * is called (controller/optlib.h): each function below calls through
 * the table that optlib_curl_load() filled, which must have returned 0
 * first.  The list is OPTLIB_CURL_FUNCS's: a function missing from
 * either is a link error, since libcurl is not linked.
 */
#ifndef STORYCTL_OPTLIB_CURL_H
#define STORYCTL_OPTLIB_CURL_H

#include "controller/optlib.h"

/* curl.h makes these two function-like macros of themselves */
#undef curl_easy_getinfo
#undef curl_easy_setopt
#define curl_easy_cleanup (optlib_curl()->curl_easy_cleanup)
#define curl_easy_getinfo (optlib_curl()->curl_easy_getinfo)
#define curl_easy_init (optlib_curl()->curl_easy_init)
#define curl_easy_perform (optlib_curl()->curl_easy_perform)
#define curl_easy_setopt (optlib_curl()->curl_easy_setopt)
#define curl_easy_strerror (optlib_curl()->curl_easy_strerror)
#define curl_free (optlib_curl()->curl_free)
#define curl_global_cleanup (optlib_curl()->curl_global_cleanup)
#define curl_global_init (optlib_curl()->curl_global_init)
#define curl_slist_append (optlib_curl()->curl_slist_append)
#define curl_slist_free_all (optlib_curl()->curl_slist_free_all)
#define curl_url (optlib_curl()->curl_url)
#define curl_url_cleanup (optlib_curl()->curl_url_cleanup)
#define curl_url_get (optlib_curl()->curl_url_get)
#define curl_url_set (optlib_curl()->curl_url_set)
#define curl_url_strerror (optlib_curl()->curl_url_strerror)

#endif
