/*
 * optlib_mhd.h - include this, not the library's header, where libmicrohttpd
 * is called (controller/optlib.h): each function below calls through
 * the table that optlib_mhd_load() filled, which must have returned 0
 * first.  The list is OPTLIB_MHD_FUNCS's: a function missing from
 * either is a link error, since libmicrohttpd is not linked.
 */
#ifndef STORYCTL_OPTLIB_MHD_H
#define STORYCTL_OPTLIB_MHD_H

#include "controller/optlib.h"

#define MHD_add_response_header (optlib_mhd()->MHD_add_response_header)
#define MHD_create_response_from_buffer_with_free_callback \
	(optlib_mhd()->MHD_create_response_from_buffer_with_free_callback)
#define MHD_create_response_from_callback \
	(optlib_mhd()->MHD_create_response_from_callback)
#define MHD_destroy_response (optlib_mhd()->MHD_destroy_response)
#define MHD_get_connection_info (optlib_mhd()->MHD_get_connection_info)
#define MHD_get_connection_values (optlib_mhd()->MHD_get_connection_values)
#define MHD_get_daemon_info (optlib_mhd()->MHD_get_daemon_info)
#define MHD_http_unescape (optlib_mhd()->MHD_http_unescape)
#define MHD_is_feature_supported (optlib_mhd()->MHD_is_feature_supported)
#define MHD_lookup_connection_value (optlib_mhd()->MHD_lookup_connection_value)
#define MHD_queue_response (optlib_mhd()->MHD_queue_response)
#define MHD_resume_connection (optlib_mhd()->MHD_resume_connection)
#define MHD_start_daemon (optlib_mhd()->MHD_start_daemon)
#define MHD_stop_daemon (optlib_mhd()->MHD_stop_daemon)
#define MHD_suspend_connection (optlib_mhd()->MHD_suspend_connection)

#endif
