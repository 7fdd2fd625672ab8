/* optlib.c - see optlib.h and docs/design.md#libraries-loaded-when-needed. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
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

/* A function of a table: its name and where its pointer goes. */
struct sym {
	const char *name;
	size_t off;
};

#define CURL_SYM(f) {#f, offsetof(struct optlib_curl, f)},
#define MHD_SYM(f) {#f, offsetof(struct optlib_mhd, f)},
static const struct sym curl_syms[] = {OPTLIB_CURL_FUNCS(CURL_SYM)};
static const struct sym mhd_syms[] = {OPTLIB_MHD_FUNCS(MHD_SYM)};

static struct optlib_curl curl_table;
static struct optlib_mhd mhd_table;

/* One library: what to load into which table, and the outcome, kept
 * for every later call. */
struct lib {
	pthread_once_t once;
	const char *soname;
	const struct sym *syms;
	size_t nsyms;
	void *table;
	bool loaded;
	char why[300];
};

static struct lib curl_lib = {PTHREAD_ONCE_INIT, OPTLIB_CURL_SONAME, curl_syms,
    sizeof(curl_syms) / sizeof(curl_syms[0]), &curl_table, false, ""};
static struct lib mhd_lib = {PTHREAD_ONCE_INIT, OPTLIB_MHD_SONAME, mhd_syms,
    sizeof(mhd_syms) / sizeof(mhd_syms[0]), &mhd_table, false, ""};

/* dlsym() gives a data pointer; POSIX lets it hold a function's address,
 * and it is copied into the table's function pointer as such. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
    "function pointers are data-pointer sized");

static void
lib_load(struct lib *lib)
{
	/* local: its symbols do not join the global scope that every
	 * other lookup searches */
	void *h = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL), *p;
	size_t i;

	if (h == NULL) {
		snprintf(lib->why, sizeof(lib->why), "%s", dlerror());
		return;
	}
	for (i = 0; i < lib->nsyms; i++) {
		if ((p = dlsym(h, lib->syms[i].name)) == NULL) {
			snprintf(lib->why, sizeof(lib->why), "%s has no %s",
			    lib->soname, lib->syms[i].name);
			dlclose(h);
			return;
		}
		memcpy((char *)lib->table + lib->syms[i].off, &p, sizeof(p));
	}
	lib->loaded = true; /* the handle stays open for the process */
}

static void
curl_once(void)
{
	lib_load(&curl_lib);
}

static void
mhd_once(void)
{
	lib_load(&mhd_lib);
}

static int
lib_result(struct lib *lib, const char *what, struct sc_err *err)
{
	if (lib->loaded)
		return 0;
	return err_set(err, SC_EUNAVAIL,
	    "%s needs %s, which cannot be loaded: %s", what, lib->soname,
	    lib->why);
}

int
optlib_curl_load(struct sc_err *err)
{
	pthread_once(&curl_lib.once, curl_once);
	return lib_result(&curl_lib, "sending notifications", err);
}

int
optlib_mhd_load(struct sc_err *err)
{
	pthread_once(&mhd_lib.once, mhd_once);
	return lib_result(&mhd_lib, "the HTTP API", err);
}

const struct optlib_curl *
optlib_curl(void)
{
	return curl_lib.loaded ? &curl_table : NULL;
}

const struct optlib_mhd *
optlib_mhd(void)
{
	return mhd_lib.loaded ? &mhd_table : NULL;
}
