/* optlib.c - see optlib.h and docs/design.md#libraries-loaded-when-needed. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "controller/optlib.h"

/* the sonames the build linked against (Makefile), or Debian's */
#ifndef OPTLIB_CURL_SONAME
#define OPTLIB_CURL_SONAME "libcurl.so.4"
#endif
#ifndef OPTLIB_MHD_SONAME
#define OPTLIB_MHD_SONAME "libmicrohttpd.so.12"
#endif

/* One library's load: its outcome, kept for every later call. */
struct lib {
	pthread_once_t once;
	const char *soname;
	int rc;
	char why[300];
};

static struct lib curl_lib = {PTHREAD_ONCE_INIT, OPTLIB_CURL_SONAME, 0, ""};
static struct lib mhd_lib = {PTHREAD_ONCE_INIT, OPTLIB_MHD_SONAME, 0, ""};
static struct optlib_curl curl_table;
static struct optlib_mhd mhd_table;
static const struct optlib_curl *curl_loaded;
static const struct optlib_mhd *mhd_loaded;

/* *slot = symbol name of h; -1 (lib->why said) when it has none.
 * memcpy: a data pointer into a function pointer, as POSIX allows. */
static int
lib_sym(void *slot, size_t size, void *h, const char *name, struct lib *lib)
{
	void *p = dlsym(h, name);

	if (p == NULL || size != sizeof(p)) {
		snprintf(lib->why, sizeof(lib->why), "%s has no %s",
		    lib->soname, name);
		return -1;
	}
	memcpy(slot, &p, sizeof(p));
	return 0;
}

static void *
lib_open(struct lib *lib)
{
	/* local: its symbols do not join the global scope that every
	 * other lookup searches */
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);

	if (h == NULL) {
		snprintf(lib->why, sizeof(lib->why), "%s", dlerror());
		lib->rc = -1;
	}
	return h;
}

#define LIB_SYM(t, f) \
	if (lib_sym(&(t)->f, sizeof((t)->f), h, #f, lib) < 0) \
		goto fail;

static void
curl_open(void)
{
	struct lib *lib = &curl_lib;
	void *h = lib_open(lib);

	if (h == NULL)
		return;
#define X(f) LIB_SYM(&curl_table, f)
	OPTLIB_CURL_FUNCS(X)
#undef X
	curl_loaded = &curl_table;
	return; /* the handle stays open for the process */
fail:
	lib->rc = -1;
	dlclose(h);
}

static void
mhd_open(void)
{
	struct lib *lib = &mhd_lib;
	void *h = lib_open(lib);

	if (h == NULL)
		return;
#define X(f) LIB_SYM(&mhd_table, f)
	OPTLIB_MHD_FUNCS(X)
#undef X
	mhd_loaded = &mhd_table;
	return;
fail:
	lib->rc = -1;
	dlclose(h);
}

static int
lib_result(struct lib *lib, const char *what, struct sc_err *err)
{
	if (lib->rc == 0)
		return 0;
	return err_set(err, SC_EUNAVAIL,
	    "%s needs %s, which cannot be loaded: %s", what, lib->soname,
	    lib->why);
}

int
optlib_curl_load(struct sc_err *err)
{
	pthread_once(&curl_lib.once, curl_open);
	return lib_result(&curl_lib, "sending notifications", err);
}

int
optlib_mhd_load(struct sc_err *err)
{
	pthread_once(&mhd_lib.once, mhd_open);
	return lib_result(&mhd_lib, "the HTTP API", err);
}

const struct optlib_curl *
optlib_curl(void)
{
	return curl_loaded;
}

const struct optlib_mhd *
optlib_mhd(void)
{
	return mhd_loaded;
}
