# SPDX-License-Identifier: MIT
# libparley as installed: the client, the protocol and the three common
# files it uses (pclock, plog, pkeys), built without sanitizers (a program
# outside the tree links it with a plain cc). Included by the Makefile.
#
#   libparley.so.<major>.<minor>.<patch>   soname libparley.so.<major>;
#       only the symbols client/libparley.map lists are exported, each with
#       the version node it appeared in (PARLEY_2.0, ...)
#   libparley.a    one relocatable object whose only global symbols are
#       parley_*, so a static link cannot clash with a program's own names
#   parley.pc, parley-static.pc   relocatable: paths from where they lie
#
# The version is the public header's (PARLEY_VERSION_* in
# include/parley/base.h), so the soname cannot drift from it. The ABI
# baseline (client/libparley.abi) is checked by scripts/abi-check.sh in
# `make test`; `make abi-baseline` writes it anew, and refuses an
# incompatible change that keeps the soname (docs/CLIENT.md, "ABI").

LIBPARLEY_MAJOR := $(shell sed -n 's/^\#define PARLEY_VERSION_MAJOR \([0-9]*\).*/\1/p' $(SRC_TOP)include/parley/base.h)
LIBPARLEY_MINOR := $(shell sed -n 's/^\#define PARLEY_VERSION_MINOR \([0-9]*\).*/\1/p' $(SRC_TOP)include/parley/base.h)
LIBPARLEY_PATCH := $(shell sed -n 's/^\#define PARLEY_VERSION_PATCH \([0-9]*\).*/\1/p' $(SRC_TOP)include/parley/base.h)
LIBPARLEY_VERSION := $(LIBPARLEY_MAJOR).$(LIBPARLEY_MINOR).$(LIBPARLEY_PATCH)
LIBPARLEY_SONAME  := libparley.so.$(LIBPARLEY_MAJOR)

LIBPARLEY_DIR := build/libparley
LIBPARLEY_SRC := $(CLIENT_SRC) $(PROTO_SRC) common/pclock.c common/plog.c common/pkeys.c
LIBPARLEY_OBJ := $(patsubst %.c,$(LIBPARLEY_DIR)/obj/%.o,$(LIBPARLEY_SRC))
LIBPARLEY_A   := $(LIBPARLEY_DIR)/libparley.a
LIBPARLEY_SO  := $(LIBPARLEY_DIR)/libparley.so.$(LIBPARLEY_VERSION)
LIBPARLEY_HEADERS := $(wildcard include/parley/*.h)
LIBPARLEY_ABI := client/libparley.abi
LIBPARLEY     := $(LIBPARLEY_A) $(LIBPARLEY_SO)
# Asked lazily, like the Makefile's PKG_LIBS: on a fresh machine pkg-config
# and the libraries arrive with check-deps, after this file is parsed.
LIBPARLEY_LIBS = $(eval LIBPARLEY_LIBS := $$(shell pkg-config --libs libzmq msgpack) -lpthread)$(LIBPARLEY_LIBS)

$(LIBPARLEY_DIR)/obj/%.o: %.c | check-deps
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANFLAGS),$(CFLAGS)) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# One object: the linker then resolves libparley's own references inside
# it, and everything but parley_* is made local.
$(LIBPARLEY_A): $(LIBPARLEY_OBJ)
	@rm -f $@ $(LIBPARLEY_DIR)/libparley-all.o
	ld -r -o $(LIBPARLEY_DIR)/libparley-all.o $^
	objcopy -w --keep-global-symbol='parley_*' $(LIBPARLEY_DIR)/libparley-all.o
	ar rcs $@ $(LIBPARLEY_DIR)/libparley-all.o

$(LIBPARLEY_SO): $(LIBPARLEY_OBJ) client/libparley.map
	$(CC) -shared -Wl,-soname,$(LIBPARLEY_SONAME) -Wl,--version-script=client/libparley.map \
	    -Wl,--no-undefined $(LIBPARLEY_OBJ) $(LIBPARLEY_LIBS) -o $@

.PHONY: abi-check abi-baseline
abi-check: $(LIBPARLEY_SO)
	./scripts/abi-check.sh check $(LIBPARLEY_SO) $(LIBPARLEY_ABI) include/parley client/libparley.map

abi-baseline: $(LIBPARLEY_SO)
	./scripts/abi-check.sh baseline $(LIBPARLEY_SO) $(LIBPARLEY_ABI) include/parley client/libparley.map

# Header, static and shared library, the two pkg-config files.
install-lib: $(LIBPARLEY)
	install -d $(DESTDIR)$(PREFIX)/include/parley $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 $(LIBPARLEY_HEADERS) $(DESTDIR)$(PREFIX)/include/parley/
	install -m 644 $(LIBPARLEY_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBPARLEY_SO) $(DESTDIR)$(PREFIX)/lib/
	ln -sf $(notdir $(LIBPARLEY_SO)) $(DESTDIR)$(PREFIX)/lib/$(LIBPARLEY_SONAME)
	ln -sf $(LIBPARLEY_SONAME) $(DESTDIR)$(PREFIX)/lib/libparley.so
	for pc in parley parley-static; do \
	    sed 's|@VERSION@|$(LIBPARLEY_VERSION)|g' client/$$pc.pc.in \
	        > $(DESTDIR)$(PREFIX)/lib/pkgconfig/$$pc.pc; done

uninstall-lib:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/include/parley/,$(notdir $(LIBPARLEY_HEADERS))) \
	      $(DESTDIR)$(PREFIX)/lib/libparley.a $(DESTDIR)$(PREFIX)/lib/$(notdir $(LIBPARLEY_SO)) \
	      $(DESTDIR)$(PREFIX)/lib/$(LIBPARLEY_SONAME) $(DESTDIR)$(PREFIX)/lib/libparley.so \
	      $(DESTDIR)$(PREFIX)/lib/pkgconfig/parley.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/parley-static.pc
	-rmdir $(DESTDIR)$(PREFIX)/include/parley 2>/dev/null
