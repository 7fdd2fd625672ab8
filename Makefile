# storyctl — GNU make.  `make demo` and `make check` are all a newcomer
# needs: both install missing Debian packages through scripts/deps first.

VERSION   = 0.1.0
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
DESTDIR  ?=
BUILD    ?= build
CC       ?= cc
PKGS      = libgit2 libssh2 sqlite3 jansson zlib libcmark-gfm yaml-0.1 libsodium \
	    libseccomp
# Compiled against but not linked: opened with dlopen() by their soname
# when notifications or the HTTP API need them (controller/optlib.c,
# docs/design.md#libraries-loaded-when-needed).
OPT_PKGS  = libcurl libmicrohttpd

# Recursively expanded on purpose: pkg-config must run after scripts/deps
# has installed the -dev packages, i.e. when a recipe is expanded.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) $(OPT_PKGS))
PKG_LIBS   = $(shell pkg-config --libs $(PKGS))
# soname PKG,LIB: the soname of the libLIB.so that -lLIB would link
soname = $(shell objdump -p "$$(pkg-config --variable=libdir $(1))/lib$(2).so" 2>/dev/null | \
	   awk '$$1 == "SONAME" { print $$2 }')
CMOCKA_CFLAGS = $(shell pkg-config --cflags cmocka)
CMOCKA_LIBS   = $(shell pkg-config --libs cmocka)

WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	   -Wmissing-prototypes -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -I. \
	     -DSTORYCTL_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS)
LIBS = $(PKG_LIBS) -lcmark-gfm-extensions -lm
# Tests build paths with snprintf into fixed buffers on purpose; gcc's
# truncation analysis at -O2 is noise there (clang has no such option).
TEST_WARN := $(shell $(CC) -Werror -Wno-format-truncation -x c -c /dev/null \
	-o /dev/null 2>/dev/null && echo -Wno-format-truncation)

ifeq ($(SANITIZE),1)
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
	   -fno-sanitize-recover=all
ALL_CFLAGS += $(SANFLAGS)
ALL_LDFLAGS += $(SANFLAGS)
endif
# libFuzzer build (make fuzz): the library is instrumented for coverage
# but has no main; each fuzz target links the fuzzer's own main.
ifeq ($(SANITIZE),fuzz)
SANFLAGS = -fsanitize=fuzzer-no-link,address,undefined \
	   -fno-omit-frame-pointer -fno-sanitize-recover=all
ALL_CFLAGS += $(SANFLAGS) -g -O1
ALL_LDFLAGS += $(SANFLAGS)
endif

# The program's front end, main() and the commands (cmd_*.c, with their
# table), is linked into storyctl beside the library, not into it, as
# git links git.c and builtin/ beside libgit.a: nothing in the library
# calls up into a command (docs/design.md#rooms).
SRC_CLI  = controller/cli/main.c $(wildcard controller/cli/cmd_*.c)
SRC_LIB  = $(wildcard common/*.c strategies/*.c state/*.c) \
	   $(filter-out $(SRC_CLI),$(wildcard controller/*.c controller/*/*.c))
OBJ_LIB  = $(SRC_LIB:%.c=$(BUILD)/obj/%.o)
LIB      = $(BUILD)/libstoryctl.a
BIN      = $(BUILD)/storyctl
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BIN = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
SUPPORT_SRC = $(filter-out tests/unit/test_%.c,$(wildcard tests/unit/*.c))
SUPPORT_OBJ = $(SUPPORT_SRC:%.c=$(BUILD)/obj/%.o)
DEPS_OK  = $(BUILD)/.deps-ok

# keep objects make thinks are intermediate (test objects)
.SECONDARY:

.PHONY: all check unit demo asan valgrind install uninstall clean fmt fmt-check \
	lint bench bench-cluster bench-worktree check-agents check-browser check-cluster man \
	check-long
all: $(BIN)

$(DEPS_OK): scripts/deps
	@mkdir -p $(@D)
	@scripts/deps
	@touch $@

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# the one file that opens them, with the sonames -lcurl and
# -lmicrohttpd would have linked
$(BUILD)/obj/controller/optlib.o: ALL_CFLAGS += \
	-DOPTLIB_CURL_SONAME='"$(call soname,libcurl,curl)"' \
	-DOPTLIB_MHD_SONAME='"$(call soname,libmicrohttpd,microhttpd)"'

$(BUILD)/obj/tests/unit/%.o: tests/unit/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) $(TEST_WARN) $(CMOCKA_CFLAGS) -MMD -MP -c -o $@ $<

$(LIB): $(OBJ_LIB)
	@rm -f $@
	@echo "  AR      $@"
	@$(AR) rcs $@ $^

$(BIN): $(SRC_CLI:%.c=$(BUILD)/obj/%.o) $(LIB)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(SUPPORT_OBJ) $(LIB)
	@mkdir -p $(@D)
	@echo "  LD      $@"
	@$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) $(CMOCKA_LIBS)

unit: $(UNIT_BIN)

# Every unit suite and every end-to-end script; ends with one line
# "N passed, N failed" totalling all of them.
check: $(BIN) $(UNIT_BIN) lint
	@STORYCTL_TIER=quick scripts/run-tests $(BUILD)

# The soaks at their full counts (make check runs each a third as many
# times, docs/design.md#build-and-tests): 60 stops under -j 3, 20,000
# requests beside a batch, a 300 MB attempt log rendered in bounded
# memory (make check renders 32 MB).  .ci/run runs it after make check.
SOAKS = test_chaos.sh test_chaos_j3.sh test_chaos_recovery.sh \
	test_api_load.sh
check-long: $(BIN) $(BUILD)/tests/test_transcript
	@STORYCTL_TIER=long scripts/run-tests $(BUILD) $(SOAKS) tests/test_transcript

# The rules of docs/design.md, the calls among the objects of BUILD
# included: it builds them first.
lint: $(BIN)
	@scripts/lint $(BUILD)

# The conformance suite: the real claude, codex and gemini CLIs (pinned in
# tests/agents/package.json, installed with npm into tests/agents/) run by
# storyctl's presets against a stand-in API on 127.0.0.1 (docs/agents.md).
check-agents: $(BIN)
	@scripts/check-agents $(BIN)

# The pages storyctl makes, in a real browser: Debian's headless
# Chromium driven by chromedriver (docs/report.md#tests); installs both
# when missing.
check-browser: $(BIN)
	@scripts/check-browser $(BUILD)

# The cluster suite: installs Slurm and munge (scripts/deps-cluster),
# starts a one-node cluster on localhost, runs tests/cluster/*.sh through
# srun and stops the cluster (docs/cluster.md#the-tests).  Needs root.
check-cluster: $(BIN)
	@scripts/check-cluster $(BUILD)

demo: $(BIN)
	@scripts/demo $(BIN)

asan:
	$(MAKE) BUILD=build-asan SANITIZE=1 CC=clang check

valgrind: $(UNIT_BIN)
	@STORYCTL_TIER=quick VALGRIND=1 scripts/run-tests $(BUILD) --unit-only

bench: $(BIN)
	@scripts/bench $(BIN)
	@scripts/bench-worktree $(BIN)

# -j 3 on a generated repository of 20,000 files, this build against the
# committed HEAD built beside it (docs/git-work.md#the-life-of-a-slots-worktree).
bench-worktree: $(BIN)
	@scripts/bench-worktree $(BIN)

# The remote executor at scale through a fake launcher with 0.5-2 s of
# latency: 500 stories with -j 50 (docs/cluster.md#scale).
bench-cluster: $(BIN)
	@scripts/bench-cluster $(BIN)

# The binary, the man page and the bash and zsh completion
# (docs/commands.md#help-man-page-completion).
install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/storyctl
	install -m 0644 man/storyctl.1 $(DESTDIR)$(MANDIR)/man1/storyctl.1
	install -m 0644 scripts/completion/storyctl.bash \
		$(DESTDIR)$(BASHCOMPDIR)/storyctl
	install -m 0644 scripts/completion/_storyctl \
		$(DESTDIR)$(ZSHCOMPDIR)/_storyctl

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/storyctl \
		$(DESTDIR)$(MANDIR)/man1/storyctl.1 \
		$(DESTDIR)$(BASHCOMPDIR)/storyctl \
		$(DESTDIR)$(ZSHCOMPDIR)/_storyctl

# man/storyctl.1 is generated from the help table (controller/cli/help.c) and
# kept in git, so installing needs no build tool; tests/e2e/test_help.sh
# fails when it is stale.
man: $(BIN)
	$(BIN) __man >man/storyctl.1

fmt:
	clang-format -i $(wildcard */*.c */*.h controller/*/*.c controller/*/*.h tests/unit/*.c tests/unit/*.h tests/fuzz/*.c tests/fuzz/*.h tests/fault/*.c)

fmt-check:
	clang-format --dry-run --Werror $(wildcard */*.c */*.h controller/*/*.c controller/*/*.h tests/unit/*.c tests/unit/*.h tests/fuzz/*.c tests/fuzz/*.h tests/fault/*.c)

clean:
	rm -rf build build-asan

-include $(OBJ_LIB:.o=.d) $(SRC_CLI:%.c=$(BUILD)/obj/%.d) \
	 $(UNIT_SRC:tests/unit/%.c=$(BUILD)/obj/tests/unit/%.d)

# ---- fuzzing: libFuzzer targets in tests/fuzz/ (clang only) ----
# `make fuzz FUZZ_SECONDS=N` builds every tests/fuzz/fuzz_*.c into
# build-fuzz/fuzz/ and runs each for N seconds on a copy of its seed
# corpus (scripts/fuzz); it fails on any crash, leak or UB report.
FUZZ_SECONDS ?= 60
FUZZ_SRC  = $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_LINK = -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz
fuzz:
	@$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang SANITIZE=fuzz \
		fuzz-build
	@scripts/fuzz build-fuzz $(FUZZ_SECONDS)

.PHONY: fuzz-build
fuzz-build: $(FUZZ_BIN)

$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(LIB)
	@mkdir -p $(@D)
	@echo "  LD      $@"
	@$(CC) $(FUZZ_LINK) -o $@ $^ $(LIBS)

$(BUILD)/obj/tests/fuzz/%.o: tests/fuzz/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/obj/tests/fuzz/%.d)

.PHONY: fuzz-clean
clean: fuzz-clean
fuzz-clean:
	rm -rf build-fuzz
