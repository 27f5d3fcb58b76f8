# ordo — build, test, bench, install.
#   make            build build/ordo, build/libordo.a, build/libordo.so
#   make test       build and run every test suite (the CI command)
#   make check      quick edit-compile-test loop: unit suite and CLI cases, TEST=name filters
#   make asan       the suite under AddressSanitizer + UndefinedBehaviorSanitizer
#   make tsan       the suite under ThreadSanitizer
#   make bench      benchmarks (figures go to docs/benchmarks.md)
#   make demo       shard a small corpus, run a job, resume it elastically
#   make install    PREFIX=/usr/local (DESTDIR honoured)
#   make wheel      the Python package with libordo.so inside: build/dist/ordo-<version>-*.whl

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
PKGS    := sqlite3 libmicrohttpd jansson libcrypto libzstd libpcre2-8 zlib snappy
# The version is written once, in ordo.h (ORDO_VERSION_MAJOR, _MINOR, _PATCH).
version_part = $(shell sed -n 's/^.define ORDO_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' loader/ordo.h)
VERSION := $(call version_part,MAJOR).$(call version_part,MINOR).$(call version_part,PATCH)

OPT      ?= -O2
SANITIZE ?=
CFLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g $(OPT) $(SANITIZE)
CFLAGS   += -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
# libordo.so exports only what ordo.h declares (its visibility pragma)
CFLAGS   += -fvisibility=hidden
LDFLAGS  := $(SANITIZE)

LOADER_SRC := $(sort $(wildcard loader/*/*.c))
CLI_SRC    := $(sort $(wildcard cli/*.c) $(wildcard server/*.c))
TEST_SRC   := $(sort $(wildcard tests/*.c))
MIGRATIONS := $(sort $(wildcard migrations/*.sql))

LOADER_OBJ := $(LOADER_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/migrations.o
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/web.o
WEB_FILES  := web/index.html web/app.js web/batch.js web/style.css web/favicon.svg $(BUILD)/web/uPlot.iife.min.js \
              $(BUILD)/web/uPlot.min.css
TEST_OBJ   := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: all deps test check asan tsan bench demo experiment install clean schema fuzz soak wheel
all: $(BUILD)/ordo $(BUILD)/libordo.a $(BUILD)/libordo.so

# Dependencies: when pkg-config does not find every package of PKGS (or is
# not installed itself, as on a fresh machine), $(DEPS) installs the missing
# Debian packages as root (or names them); the pkg-config flags are then
# cached in config.mk, which make regenerates before anything else.
DEPS ?= scripts/deps.sh
ifeq ($(filter clean,$(MAKECMDGOALS)),)
-include $(BUILD)/config.mk
endif
$(BUILD)/config.mk: scripts/deps.sh Makefile
	@pkg-config --exists $(PKGS) 2>/dev/null || $(DEPS)
	@mkdir -p $(@D)
	@{ echo "PKG_CFLAGS := $$(pkg-config --cflags $(PKGS))"; \
	   echo "PKG_LIBS := $$(pkg-config --libs $(PKGS))"; } > $@
deps: $(BUILD)/config.mk

# Include paths: the library's modules include each other as "module/x.h"
# from loader/; tests/, fuzz/ and bench/ reach internals through
# loader/testing.h. cli/, server/ and examples/ see only the public header:
# their include path is a folder holding ordo.h alone (scripts/includes.sh
# checks what they include).
INCLUDE := -Iloader
$(BUILD)/cli/%.o $(BUILD)/server/%.o $(BUILD)/examples/%.o: INCLUDE := -I$(BUILD)/include
# bench_mixing too: it must run unchanged on any version of the library.
$(BUILD)/bench/bench_mixing.o: INCLUDE := -I$(BUILD)/include
$(BUILD)/include/ordo.h: loader/ordo.h
	@mkdir -p $(@D)
	cp $< $@

$(BUILD)/%.o: %.c $(BUILD)/config.mk | $(BUILD)/include/ordo.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -MMD -MP $(PKG_CFLAGS) $(INCLUDE) -c $< -o $@

# Migrations are compiled in, so the binary never looks for them on disk.
$(BUILD)/embed: scripts/embed.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $<
$(BUILD)/gen/migrations.c: $(MIGRATIONS) $(BUILD)/embed
	@mkdir -p $(@D)
	$(BUILD)/embed ordo__migrations $(MIGRATIONS) > $@
$(BUILD)/gen/migrations.o: $(BUILD)/gen/migrations.c $(BUILD)/config.mk
	$(CC) $(CFLAGS) -fPIC -Iloader/ledger -c $< -o $@

# The dashboard too: web/ plus uPlot (pinned in web/package-lock.json).
$(BUILD)/web/uPlot.iife.min.js $(BUILD)/web/uPlot.min.css &: web/package-lock.json scripts/web.sh
	@BUILD=$(BUILD) scripts/web.sh
$(BUILD)/gen/web.c: $(WEB_FILES) $(BUILD)/embed
	@mkdir -p $(@D)
	$(BUILD)/embed ordo__web_files $(WEB_FILES) > $@
$(BUILD)/gen/web.o: $(BUILD)/gen/web.c $(BUILD)/config.mk
	$(CC) $(CFLAGS) -fPIC -Iserver -c $< -o $@

$(BUILD)/libordo.a: $(LOADER_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libordo.so: $(LOADER_OBJ)
	$(CC) -shared -Wl,-soname,libordo.so.0 $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm
$(BUILD)/ordo: $(CLI_OBJ) $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libordo.a $(PKG_LIBS) -lm -lpthread
# The unit suite's list of tests, generated from the TEST(name) definitions
# (the folder is a prerequisite too, so adding or removing a file counts).
$(BUILD)/gen/test_list.h: $(TEST_SRC) tests tests/harness.h scripts/test_list.sh $(BUILD)/config.mk
	@echo "scripts/test_list.sh $@ tests/*.c"
	@CC="$(CC)" CPPFLAGS="$(PKG_CFLAGS) -Iloader -Itests" scripts/test_list.sh $@ $(TEST_SRC)
$(BUILD)/tests/main.o: $(BUILD)/gen/test_list.h
$(BUILD)/tests/main.o: CFLAGS += -I$(BUILD)/gen
$(BUILD)/test_ordo: $(TEST_OBJ) $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJ) $(BUILD)/libordo.a $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_ledger: $(BUILD)/bench/bench_ledger.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_loader: $(BUILD)/bench/bench_loader.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_mixing: $(BUILD)/bench/bench_mixing.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_filter: $(BUILD)/bench/bench_filter.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_tokenizer: $(BUILD)/bench/bench_tokenizer.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_server: $(BUILD)/bench/bench_server.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_parquet: $(BUILD)/bench/bench_parquet.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_gzip: $(BUILD)/bench/bench_gzip.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_hf_normalize: $(BUILD)/bench/bench_hf_normalize.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/bench_provenance: $(BUILD)/bench/bench_provenance.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
$(BUILD)/record_run: $(BUILD)/examples/record_run.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
# What ordo reads from a Parquet file, for tests/parquet_conformance.sh.
$(BUILD)/parquet_dump: $(BUILD)/tests/tools/parquet_dump.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread

# What ordo's tokenizer.json normalizers make of text, for tests/hf_normalize_conformance.sh.
$(BUILD)/hf_normalize: $(BUILD)/tests/tools/hf_normalize.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread
# What ordo's tokenizer.json pre-tokenizer makes, for tests/hf_pretok_conformance.sh.
$(BUILD)/hf_pretok_dump: $(BUILD)/tests/tools/hf_pretok_dump.o $(BUILD)/libordo.a
	$(CC) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -lpthread

# The suite runs build/ordo as a subprocess for the CLI tests.
# (what it runs is built two files at a time)
TEST_BINS := all $(BUILD)/test_ordo $(BUILD)/parquet_dump $(BUILD)/hf_normalize $(BUILD)/hf_pretok_dump
test:
	@$(MAKE) --no-print-directory -j2 $(TEST_BINS)
	@BUILD=$(BUILD) SANITIZED="$(SANITIZE)" tests/run.sh
check: $(BUILD)/ordo $(BUILD)/test_ordo $(BUILD)/libordo.so
	@BUILD=$(BUILD) scripts/peers.sh
	ORDO_BIN=$(BUILD)/ordo ORDO_VOCAB=$(BUILD)/vocab $(BUILD)/test_ordo $(TEST)
	BUILD=$(BUILD) tests/cli/run.sh $(TEST)
asan:
	$(MAKE) --no-print-directory BUILD=build/asan OPT=-O1 \
	  SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" test

# The TSan run leaves out the single-threaded tests of tests/tsan_skip.txt.
tsan:
	ORDO_TEST_SKIP=$(CURDIR)/tests/tsan_skip.txt \
	  $(MAKE) --no-print-directory BUILD=build/tsan OPT=-O1 SANITIZE="-fsanitize=thread -fno-omit-frame-pointer" test

# bench_mixing takes the recipe keys beyond the shape from MIXING_EXTRA, and
# the real demo corpus too once `make demo` has built it.
MIXING_EXTRA ?= "flush_every": 2, "shuffle": true
bench: $(BUILD)/bench_ledger $(BUILD)/bench_loader $(BUILD)/bench_mixing $(BUILD)/bench_tokenizer \
	$(BUILD)/bench_server $(BUILD)/bench_filter $(BUILD)/bench_parquet $(BUILD)/bench_gzip $(BUILD)/ordo \
	$(BUILD)/bench_hf_normalize $(BUILD)/bench_provenance $(BUILD)/libordo.so
	$(BUILD)/bench_ledger
	BUILD=$(BUILD) bench/tokenizer.sh
	BUILD=$(BUILD) bench/hf_normalize.sh
	$(BUILD)/bench_loader --rounds 7 --ranks $(CURDIR)/$(BUILD)/vocab/cl100k_base.tiktoken \
	  --text $(CURDIR)/$(BUILD)/bench-data/english.jsonl
	$(BUILD)/bench_mixing --recipe-extra '$(MIXING_EXTRA)' \
	  $(if $(wildcard $(BUILD)/demo/sotu/.done),--demo-dir $(BUILD)/demo)
	$(BUILD)/bench_server --ordo $(BUILD)/ordo
	$(BUILD)/bench_filter --rounds 7
	ORDO_BENCH_GZIP_MB=$(or $(ORDO_BENCH_GZIP_MB),1024) $(BUILD)/bench_gzip --rounds 3 --dir $(BUILD)/bench-data
	BUILD=$(BUILD) bench/dashboard.sh
	BUILD=$(BUILD) PARQUET_BENCH_BYTES=$(or $(PARQUET_BENCH_BYTES),1000000000) bench/parquet.sh
	BUILD=$(BUILD) /usr/bin/python3 bench/startup.py --rounds 3
	BUILD=$(BUILD) bench/provenance.sh

# libFuzzer targets (clang), each for FUZZ_SECONDS (default 60); a
# 3-second smoke run of each is part of `make test`.
fuzz:
	BUILD=$(BUILD) scripts/fuzz.sh $(or $(FUZZ_SECONDS),60)

# The long reliability runs (docs/reliability.md): 200 crashes of each
# kind, 10 minutes per fuzz target.
soak: all
	CRASHES=200 BUILD=$(BUILD) tests/crash.sh
	BUILD=$(BUILD) scripts/fuzz.sh 600

demo: all
	BUILD=$(BUILD) scripts/demo.sh

# The second published experiment at small scale (docs/experiment.md).
experiment: all
	BUILD=$(BUILD) scripts/experiment.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 755 $(BUILD)/ordo $(DESTDIR)$(PREFIX)/bin/ordo
	install -m 644 $(BUILD)/libordo.a $(DESTDIR)$(PREFIX)/lib/libordo.a
	install -m 755 $(BUILD)/libordo.so $(DESTDIR)$(PREFIX)/lib/libordo.so.$(VERSION)
	ln -sf libordo.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libordo.so.0
	ln -sf libordo.so.0 $(DESTDIR)$(PREFIX)/lib/libordo.so
	install -m 644 loader/ordo.h $(DESTDIR)$(PREFIX)/include/ordo.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@PKGS@|$(PKGS)|' \
	  scripts/ordo.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ordo.pc

# The Python package as a wheel with libordo.so inside (ordo/_lib/), in
# $(BUILD)/dist: built offline by Debian's /usr/bin/python3 with its
# setuptools and wheel, from a copy under $(BUILD)/wheel (the source tree
# stays clean); the library goes in without its debug information, which
# names the build machine's folders.
wheel: $(BUILD)/libordo.so
	@scripts/deps.sh python3 python3-setuptools python3-wheel python3-pip
	rm -rf $(BUILD)/wheel $(BUILD)/dist/ordo-*.whl
	mkdir -p $(BUILD)/wheel/python/ordo/_lib $(BUILD)/wheel/loader $(BUILD)/dist
	cp python/pyproject.toml python/setup.py python/README.md $(BUILD)/wheel/python/
	cp python/ordo/*.py $(BUILD)/wheel/python/ordo/
	cp loader/ordo.h $(BUILD)/wheel/loader/
	strip --strip-debug -o $(BUILD)/wheel/python/ordo/_lib/libordo.so $(BUILD)/libordo.so
	cd $(BUILD)/wheel/python && /usr/bin/python3 -m pip wheel --quiet --no-build-isolation --no-deps \
	  --no-index --disable-pip-version-check --wheel-dir $(abspath $(BUILD)/dist) .

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

schema: $(BUILD)/ordo
	BUILD=$(BUILD) scripts/schema.sh
