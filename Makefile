# SPDX-License-Identifier: MIT
# Parley build. GNU Make.
#
#   make                 build bin/parley-broker, bin/parley-agent, bin/parley-tap
#   make test            build and run every test suite (Check, and pytest for clients/python)
#   make test-python     only the Python client's tests
#   make SANITIZE=1 test the same with ASan + UBSan, in build/san/
#   make valgrind        every test suite under valgrind (scripts/valgrind.sh)
#   make soak            the crash harness with 50 kills per fsync policy, a 60 s flood
#   make demo            a broker and 3 agents exploring on loopback
#   make demo-scene      the scene director: six roles taking turns
#   make demo-newsroom   a model-driven team (writer, reviewer, editor, a person)
#                        against the project's scripted test server
#   make bench           benchmarks, written to docs/PERFORMANCE.md figures
#   make bench-team      team effectiveness: worlds x team configurations x 20 seeds
#                        (minutes; BENCH_TEAM_ARGS="--world-file F --agent-arg=..." for yours)
#   make fuzz            libFuzzer on the frame decoder (FUZZ_SECONDS=60)
#   make deps            install the Debian packages and build libfaiss_c.a
#   make fresh-check     the README's commands on a fresh Debian 12 root (debootstrap;
#                        root; FRESH_ARGS="--variant debian" for one starting point)
#   make install PREFIX=/usr/local DESTDIR= SYSCONFDIR=
#                        binaries, libparley, man pages, systemd units, docs,
#                        parley.env; never calls a package manager (make deps)
#   make uninstall       removes exactly what make install put (same variables)
#   make install-lib     libparley alone: headers, .so (soname .2), .a, parley{,-static}.pc
#   make abi-baseline    libparley's ABI baseline written anew (docs/CLIENT.md, "ABI")
#   make man             build/<rel|san>/man/*.1 from each binary's --help (help2man)
#   make clean
#
# Sources are discovered by folder, so adding a .c file needs no edit here:
#   common/*.c proto/*.c          -> static libraries shared by every binary
#   broker/*.c  (main.c aside)    -> libparley_broker.a, linked with broker/main.c
#   agent/*.c agent/*/*.c (main.c aside) -> libparley_agent.a, linked with agent/main.c
#   client/*.c                    -> libparley_client.a (in tree); libparley.{a,so} installed
#   tools/tap/*.c                 -> parley-tap
#   tools/keygen/*.c              -> parley-keygen
#   tools/ctl/*.c                 -> parley-ctl (with libparley_client.a)
#   tools/web/*.c + tools/web/assets/ -> parley-web (the page embedded at build time)
#   tests/check_*.c               -> one Check binary each, linked with everything

# The tree's top, as this Makefile is named (tests run it with -f from
# elsewhere: tests/check_build.c).
SRC_TOP := $(dir $(lastword $(MAKEFILE_LIST)))

PREFIX  ?= /usr/local
DESTDIR ?=
# Configuration (parley.env, keys) lives in /etc for a system-wide install
# (PREFIX /usr or /usr/local: where the systemd units and docs look), under
# PREFIX/etc for any other prefix (/opt/parley -> /opt/parley/etc).
SYSCONFDIR ?= $(if $(filter /usr /usr/local,$(PREFIX)),/etc,$(PREFIX)/etc)
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/parley
SANITIZE ?= 0
FUZZ_SECONDS ?= 60
DEPS_PREFIX ?= $(CURDIR)/.deps

ifeq ($(SANITIZE),1)
BUILD := build/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else
BUILD := build/rel
SANFLAGS :=
endif
BIN := $(BUILD)/bin

CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wno-unused-parameter -fPIC $(SANFLAGS) -I. -Iinclude -Icommon -Iproto
LDFLAGS += $(SANFLAGS)

# pkg-config is asked once, lazily, so `make deps` can install it first.
PKGS := libzmq libczmq msgpack libcurl jansson yaml-0.1 zlib libmicrohttpd libsystemd
PKG_CFLAGS = $(eval PKG_CFLAGS := $$(shell pkg-config --cflags $(PKGS)))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $$(shell pkg-config --libs $(PKGS)))$(PKG_LIBS)
CHECK_CFLAGS = $(eval CHECK_CFLAGS := $$(shell pkg-config --cflags check))$(CHECK_CFLAGS)
CHECK_LIBS   = $(eval CHECK_LIBS := $$(shell pkg-config --libs check))$(CHECK_LIBS)
FAISS_LIBS := -L$(DEPS_PREFIX)/lib -l:libfaiss_c.a -lfaiss -lstdc++ -lgomp -lblas -llapack -lm
LIBS = $(PKG_LIBS) $(FAISS_LIBS) -lpthread

COMMON_SRC := $(wildcard common/*.c)
PROTO_SRC  := $(wildcard proto/*.c)
BROKER_SRC := $(filter-out broker/main.c,$(wildcard broker/*.c broker/core/*.c))
AGENT_SRC  := $(filter-out agent/main.c,$(wildcard agent/*.c agent/*/*.c))
TAP_SRC    := $(wildcard tools/tap/*.c)
CLIENT_SRC := $(wildcard client/*.c)
KEYGEN_SRC := $(wildcard tools/keygen/*.c)
CTL_SRC    := $(wildcard tools/ctl/*.c)
# parley-web reuses parley-tap's decoding, discovery and replay: both link
# libparley_tap.a (tools/tap/*.c but main.c) rather than copies.
TAPLIB_SRC := $(filter-out tools/tap/main.c,$(TAP_SRC))
WEB_SRC    := $(filter-out tools/web/main.c,$(wildcard tools/web/*.c))
WEB_ASSETS := $(wildcard tools/web/assets/*)
TEST_SRC   := $(wildcard tests/check_*.c)
TESTLIB_SRC := $(wildcard tests/lib/*.c)
BENCH_SRC  := $(wildcard bench/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

LIB_COMMON := $(BUILD)/libparley_common.a
LIB_PROTO  := $(BUILD)/libparley_proto.a
LIB_BROKER := $(BUILD)/libparley_broker.a
LIB_AGENT  := $(BUILD)/libparley_agent.a
LIB_TEST   := $(BUILD)/libparley_testlib.a
LIB_CLIENT := $(BUILD)/libparley_client.a
LIB_TAP    := $(BUILD)/libparley_tap.a
LIB_WEB    := $(BUILD)/libparley_web.a
WEB_GEN    := $(BUILD)/gen/web_assets.c
PARLEY_LIBS := $(LIB_BROKER) $(LIB_AGENT) $(LIB_WEB) $(LIB_TAP) $(LIB_CLIENT) $(LIB_PROTO) $(LIB_COMMON)

BINARIES := $(BIN)/parley-broker $(BIN)/parley-agent $(BIN)/parley-tap $(BIN)/parley-keygen \
            $(BIN)/parley-ctl $(BIN)/parley-web
TESTS    := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
BENCHES  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

# libparley as installed: its variables and rules (install-lib, abi-check)
include $(SRC_TOP)client/libparley.mk

.PHONY: all test check-deps check-test-deps deps demo demo-scene demo-newsroom bench bench-team fuzz install install-lib uninstall \
        uninstall-lib clean readme man
.DEFAULT_GOAL := all

# Keep test and bench objects: they are not throwaway intermediates.
.SECONDARY:

# ./bin is the release build's alone: people, scripts and benchmarks that
# run bin/parley-* get release binaries whatever was built last. Any other
# build (SANITIZE=1: build/san/bin) keeps its binaries in its own folder.
RELEASE_BIN := build/rel/bin
all: $(BINARIES) $(LIBPARLEY)
ifeq ($(BIN),$(RELEASE_BIN))
	@mkdir -p bin
	@for b in $(BINARIES); do ln -sfn ../$$b bin/; done
endif

# Runs on every build; takes milliseconds when nothing is missing. Under
# install and uninstall it only reports (--check): those never call a
# package manager, a missing package is `make deps`'s job.
NO_PACKAGE_MANAGER := $(filter install install-lib uninstall uninstall-lib,$(MAKECMDGOALS))
check-deps:
	@./scripts/deps.sh $(if $(NO_PACKAGE_MANAGER),--check) build

# What `make test` adds (python3 and its test modules, chromium, node and
# npm only when no working ones are on the PATH, abigail-tools, systemd,
# docker-compose): never asked for by `make` or `make demo`.
check-test-deps: | check-deps
	@./scripts/deps.sh test

deps:
	./scripts/deps.sh test

# The first hour on a Debian 12 nobody touched: debootstrap roots (bare, and
# with NodeSource-style nodejs), the tree copied in, the README's steps run
# inside, each phase timed. Uses nothing of this tree's build or .deps.
FRESH_ARGS ?=
.PHONY: fresh-check
fresh-check:
	./scripts/fresh-check.sh $(FRESH_ARGS)

$(BUILD)/obj/%.o: %.c | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(CHECK_CFLAGS) -MMD -MP -c $< -o $@

$(LIB_COMMON): $(call obj,$(COMMON_SRC))
$(LIB_PROTO):  $(call obj,$(PROTO_SRC))
$(LIB_BROKER): $(call obj,$(BROKER_SRC))
$(LIB_AGENT):  $(call obj,$(AGENT_SRC))
$(LIB_TEST):   $(call obj,$(TESTLIB_SRC))
$(LIB_CLIENT): $(call obj,$(CLIENT_SRC))
$(LIB_TAP):    $(call obj,$(TAPLIB_SRC))
$(LIB_WEB):    $(call obj,$(WEB_SRC) $(WEB_GEN))
$(BUILD)/%.a:
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $^ $(if $^,,$(BUILD)/empty.o)

$(BUILD)/empty.o: | check-deps
	@mkdir -p $(dir $@)
	echo 'typedef int parley_empty_t;' | $(CC) -x c -c - -o $@

$(foreach l,$(LIB_COMMON) $(LIB_PROTO) $(LIB_BROKER) $(LIB_AGENT) $(LIB_TEST) $(LIB_CLIENT) $(LIB_TAP) $(LIB_WEB),$(eval $(l): | $(BUILD)/empty.o))

$(BIN)/parley-broker: $(call obj,broker/main.c) $(LIB_BROKER) $(LIB_PROTO) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

$(BIN)/parley-agent: $(call obj,agent/main.c) $(LIB_AGENT) $(LIB_CLIENT) $(LIB_PROTO) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

$(BIN)/parley-tap: $(call obj,tools/tap/main.c) $(LIB_TAP) $(LIB_CLIENT) $(LIB_PROTO) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# parley-web: the page, script and style sheet become a C file (xxd -i).
$(WEB_GEN): $(WEB_ASSETS) scripts/web-assets.sh | check-deps
	@mkdir -p $(dir $@)
	./scripts/web-assets.sh $@ tools/web/assets

$(call obj,$(WEB_SRC) tools/web/main.c): CFLAGS += -Itools/tap

$(BIN)/parley-web: $(call obj,tools/web/main.c) $(LIB_WEB) $(LIB_TAP) $(LIB_CLIENT) $(LIB_PROTO) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

$(BIN)/parley-keygen: $(call obj,$(KEYGEN_SRC)) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# parley-ctl sends its requests through libparley, like the agent and the tap.
$(BIN)/parley-ctl: $(call obj,$(CTL_SRC)) $(LIB_CLIENT) $(LIB_PROTO) $(LIB_COMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(LIB_TEST) $(PARLEY_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(CHECK_LIBS) $(LIBS) -o $@

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB_TEST) $(PARLEY_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# The fault shim (tests/lib/tfault.h): LD_PRELOADed by tests into the
# processes whose syncs they watch (power cuts, failing disks); built
# without sanitizers, since it is loaded into processes with and without.
FAULT_SHIM := $(BUILD)/tests/libparley_fault.so
$(FAULT_SHIM): tests/shim/fault_shim.c tests/lib/tfault.h | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) -shared $< -ldl -o $@
$(TESTS): | $(FAULT_SHIM)

# Tests find the binaries under test through PARLEY_BIN_DIR, and their data
# (corpora, the scripted OpenAI server) through PARLEY_TEST_DIR.
TEST_ENV := PARLEY_BIN_DIR=$(CURDIR)/$(BIN) PARLEY_TEST_DIR=$(CURDIR)/tests \
            CK_DEFAULT_TIMEOUT=120 CK_MAX_MSG_SIZE=65536 \
            ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp

# The benches are built (not run) by `make test` too, so a change that
# breaks one fails here rather than at the next `make bench`.
test: $(BINARIES) $(TESTS) $(LIBPARLEY) $(BENCHES) | check-test-deps
	@./scripts/run-tests.sh $(TEST_ENV) PARLEY_PYTHON=$(PYTHON) -- $(TESTS) $(PYTHON_TESTS)

# The Python client (clients/python): pytest against the real binaries,
# counted in `make test`'s summary (run-tests.sh's "pytest:" entries). The
# interpreter is the first that has Debian's python3-zmq, -msgpack and
# -pytest (a pyenv `python3` earlier in PATH usually has none of them).
PYTHON ?= $(shell for p in /usr/bin/python3 python3; do $$p -c 'import zmq, msgpack, pytest' \
            2>/dev/null && { echo $$p; break; }; done)
PYTHON_TESTS := pytest:clients/python/tests
.PHONY: test-python
test-python: $(BINARIES) | check-test-deps
	@./scripts/run-tests.sh $(TEST_ENV) PARLEY_PYTHON=$(PYTHON) -- $(PYTHON_TESTS)

# The long runs: the crash harness with 50 SIGKILLs per fsync policy, and
# a 60 s flood of SENDs at full inboxes beside a HEARTBEAT prober.
.PHONY: soak
soak: $(BINARIES) $(TESTS)
	@PARLEY_CRASH_KILLS=50 PARLEY_FLOOD_SECONDS=60 ./scripts/run-tests.sh $(TEST_ENV) -- \
	    $(BUILD)/tests/check_crash $(BUILD)/tests/check_flood

.PHONY: valgrind
valgrind: $(BINARIES) $(TESTS)
	./scripts/valgrind.sh $(CURDIR)/$(BIN) $(TESTS)

demo: all
	./scripts/demo.sh

# The scene director: six roles taking turns (scenarios/scene).
demo-scene: all
	./scripts/demo-scene.sh

demo-newsroom: all
	./scripts/demo-newsroom.sh

bench: $(BINARIES) $(BENCHES)
	PARLEY_BIN_DIR=$(CURDIR)/$(BIN) ./scripts/bench.sh $(BENCHES)

# Real broker and agent processes, in parallel; not part of `make test`.
# Tables in build/bench/team.md (docs/PERFORMANCE.md, "Team", holds a run).
BENCH_TEAM_ARGS ?=
bench-team: $(BINARIES)
	@mkdir -p build/bench
	./scripts/bench-team.py --bin-dir $(CURDIR)/$(BIN) --markdown build/bench/team.md $(BENCH_TEAM_ARGS)

# README.md's flag tables come from the binaries' --help (tests/check_docs.c
# fails when they differ).
readme: $(BINARIES)
	./scripts/readme-flags.py $(BIN)

FUZZ_BUILD := build/fuzz
fuzz: | check-deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

# Man pages: one per binary in BINARIES (a binary added there gets one),
# made by help2man from the binary's own --help, so they cannot drift from
# what it accepts; tests/check_ops.c checks each installed page names
# every flag of its binary's --help.
MANPAGES = $(patsubst $(BIN)/%,$(BUILD)/man/%.1,$(BINARIES))
$(BUILD)/man/%.1: $(BIN)/% scripts/man.sh
	./scripts/man.sh $< $@
man: $(MANPAGES)
all: $(MANPAGES)
test: $(MANPAGES)

# What install puts where, so uninstall removes exactly that.
INSTALL_BINS  = $(notdir $(BINARIES))
INSTALL_MANS  = $(notdir $(MANPAGES))
INSTALL_UNITS = $(notdir $(wildcard systemd/*.service systemd/*.target))
INSTALL_DOCS  = README.md LICENSE proto/PROTOCOL.md $(wildcard docs/*.md)

install: all install-lib $(MANPAGES)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/systemd/system \
	           $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/parley
	install -m 755 $(BINARIES) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(addprefix systemd/,$(INSTALL_UNITS)) $(DESTDIR)$(PREFIX)/lib/systemd/system/
	test -e $(DESTDIR)$(SYSCONFDIR)/parley/parley.env || install -m 640 systemd/parley.env $(DESTDIR)$(SYSCONFDIR)/parley/parley.env
	install -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	cd $(DESTDIR)$(PREFIX)/lib/systemd/system && \
	    sed -i -e 's|/usr/local/bin|$(PREFIX)/bin|g' -e 's|/etc/parley|$(SYSCONFDIR)/parley|g' $(INSTALL_UNITS)

# parley.env is configuration: removed only when it is still the shipped
# file (an edited one stays, and says so). Folders of Parley's own are
# removed once empty; shared ones (bin, lib, man1) are left as they are.
uninstall: uninstall-lib
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/bin/,$(INSTALL_BINS)) \
	      $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(INSTALL_MANS)) \
	      $(addprefix $(DESTDIR)$(PREFIX)/lib/systemd/system/,$(INSTALL_UNITS)) \
	      $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INSTALL_DOCS)))
	if cmp -s systemd/parley.env $(DESTDIR)$(SYSCONFDIR)/parley/parley.env; then \
	    rm -f $(DESTDIR)$(SYSCONFDIR)/parley/parley.env; \
	elif [ -e $(DESTDIR)$(SYSCONFDIR)/parley/parley.env ]; then \
	    echo "uninstall: $(SYSCONFDIR)/parley/parley.env was edited: kept"; fi
	-rmdir $(DESTDIR)$(DOCDIR) $(DESTDIR)$(SYSCONFDIR)/parley 2>/dev/null

clean:
	rm -rf build bin

-include $(shell find build -path '*/obj/*' -name '*.d' -type f 2>/dev/null)
