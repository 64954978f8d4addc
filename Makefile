# sloptimize — build, test, install.
#
# Every library comes through pkg-config.  `make deps` installs whatever
# building and running needs and is missing, `make deps-test` what the tests
# and benchmarks need besides (both idempotent); run depends on the first,
# test and bench* on both, so a fresh machine needs only the two commands
# in the README.

PREFIX	?= /usr/local
DESTDIR	?=
BUILD	?= build
CC	?= cc

UNAME		:= $(shell uname -s)
PKGS		:= libuv libwebsockets libcjson libcurl libpng
# What the programs link.  libcurl (the sink) and libnotify (desktop
# bubbles) are not linked but dlopen()ed the first time they are used
# (sink/lazycurl.h, notifier/lazynotify.h): they bring ~7 MB of TLS stack,
# glib and image libraries into every process otherwise.  Their headers
# still come from pkg-config --cflags, and `make deps` installs them.
LINK_PKGS	:= libuv libwebsockets libcjson libpng

# The desktop-notification backend is chosen here, once, and compiled in
# (doctor and /status name it).  Linux needs libnotify: a build that lacks
# it fails with a message rather than silently shipping a daemon that
# cannot notify.  NOTIFY=0 asks for no notifications on purpose; macOS has
# no libnotify and uses osascript.
NOTIFY		?= 1
ifeq ($(NOTIFY),0)
NOTIFY_BACKEND	:= none
else ifeq ($(UNAME),Darwin)
NOTIFY_BACKEND	:= osascript
else
NOTIFY_BACKEND	:= libnotify
PKGS		+= libnotify
endif

# The daemon checks each request's header block as it was sent by seeing
# what libwebsockets reads through an interposed recv(2) (daemon/tap.h).
# macOS binds a library's recv to libSystem's, so that cannot work there:
# the tap is compiled out and the build says so rather than differ in
# silence (docs/api.md, "Headers libwebsockets misreads").
ifeq ($(UNAME),Darwin)
$(info build: macOS has no recv(2) interposition: sloptimized is built without its raw header checks, and closes a connection after each request with a body (docs/api.md))
endif

# pkg-config runs when the Makefile is parsed.  `run` and `test` therefore
# install the packages first and build in a fresh $(MAKE), which parses
# again and sees them; a build with something missing stops in
# check-build with the names, instead of failing to link.
PKG_MISSING	:= $(shell for p in $(PKGS); do \
		       pkg-config --exists $$p 2>/dev/null || echo $$p; done)
PKG_CFLAGS	:= $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell pkg-config --libs $(LINK_PKGS) 2>/dev/null) \
		   $(if $(filter Linux,$(UNAME)),-ldl -lpthread)
CMOCKA_CFLAGS	:= $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS	:= $(shell pkg-config --libs cmocka 2>/dev/null)

BACKEND_DEF_libnotify	:= -DHAVE_LIBNOTIFY=1
BACKEND_DEF_osascript	:= -DHAVE_OSASCRIPT=1

VERSION		:= 0.1.0
OPT		?= -O2 -g
CFLAGS		+= -std=gnu11 -Wall -Wextra -Werror $(OPT) -I. $(PKG_CFLAGS) \
		   $(BACKEND_DEF_$(NOTIFY_BACKEND)) \
		   -DSLOPTIMIZE_VERSION='"$(VERSION)"' \
		   -DSLOPTIMIZE_SHARE='"$(PREFIX)/share/sloptimize"'
LDLIBS		+= $(PKG_LIBS) -lm

# Everything but the two mains and the daemon's recv(2) tap goes into one
# archive that the programs and every test link against.  The tap
# (daemon/tap.c) defines recv() itself, and a program that calls recv()
# and links the archive would take it from there before libc: the CLI,
# its libwebsockets and a dlopen()ed libcurl would all read through it.
# So it is linked into sloptimized alone, as an object of its own.
DAEMON_ONLY	:= daemon/main.c daemon/tap.c
LIB_SRC		:= $(wildcard base/*.c ledger/*.c project/*.c watchers/*.c \
		   notifier/*.c sink/*.c image/*.c browser/*.c) \
		   $(filter-out $(DAEMON_ONLY),$(wildcard daemon/*.c)) \
		   $(filter-out cli/main.c,$(wildcard cli/*.c))
LIB_OBJ		:= $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/skill.o \
		   $(BUILD)/gen/pagebench.o
# The cmocka units live in their room's folder (tests/ledger/test_jscan.c);
# their programs side by side in $(BUILD)/tests/, each found by its name.
TEST_SRC	:= $(wildcard tests/*/test_*.c)
TEST_BIN	:= $(addprefix $(BUILD)/tests/,$(basename $(notdir $(TEST_SRC))))
vpath test_%.c $(sort $(dir $(TEST_SRC)))
FUZZ_SRC	:= $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN	:= $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_BUILD	?= build-fuzz
FUZZ_SECONDS	?= 60

PROGS		:= $(BUILD)/sloptimize $(if $(wildcard daemon/main.c),$(BUILD)/sloptimized)

.PHONY: FORCE all deps run dist deb test test-loaded asan valgrind fuzz fuzz-build fuzzers soak bench-fold bench-wake bench-http bench-sink bench-recorder bench-trace bench-games bench-verify bench-attribute install \
	install-service clean check-deps

# Programs the integration tests and benchmarks drive (not test units).
DRIVER_BIN	:= $(BUILD)/tests/sink_driver

all: $(PROGS) $(TEST_BIN) $(DRIVER_BIN)

# Every object depends on the flags it was built with: a change of PREFIX
# (the share path is compiled in), of the notification backend or of a
# package's flags rebuilds everything, so no stale object is ever linked.
# This rule is also where a build with a package missing stops.
BUILD_FLAGS	:= $(CC) $(CFLAGS) | $(LDFLAGS) $(LDLIBS)
$(BUILD)/flags: FORCE
	@if [ -n "$(strip $(PKG_MISSING))" ]; then \
	    echo "build: missing $(strip $(PKG_MISSING)) (pkg-config)." >&2; \
	    echo "  \`make deps\` installs them; \`make test\` and \`make run\` do that first." >&2; \
	    case " $(PKG_MISSING) " in *" libnotify "*) \
	    echo "  Without desktop notifications on purpose: make NOTIFY=0" >&2;; esac; \
	    exit 1; \
	fi
	@mkdir -p $(BUILD)
	@echo '$(subst ','\'',$(BUILD_FLAGS))' | cmp -s - $@ || echo '$(subst ','\'',$(BUILD_FLAGS))' >$@

$(BUILD)/%.o: %.c $(wildcard */*.h) $(BUILD)/flags
	@mkdir -p $(dir $@)
	@echo "CC $<"
	@$(CC) $(CFLAGS) -c -o $@ $<

# The agent doctrine, compiled into sloptimize for `init-agent`, which
# writes it into a project: the program needs neither the source tree nor
# an install to do that.
$(BUILD)/gen/skill.c: skills/sloptimize/SKILL.md
	@mkdir -p $(dir $@)
	@{ echo '/* generated from skills/sloptimize/SKILL.md by the Makefile */'; \
	   echo 'const char initagent_skill[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	   echo ';'; } >$@

$(BUILD)/gen/skill.o: $(BUILD)/gen/skill.c $(BUILD)/flags
	@echo "CC $<"
	@$(CC) $(CFLAGS) -c -o $@ $<

# The bench runtime (page-runtime/clock.js, identity.js, census.js and
# bench.js, in that order: each uses only what comes before it) as one classic
# script — their import lines and export keywords taken out — which
# `sloptimize bench --launch` has the browser run before any page script
# (docs/bench.md); then as a C string.  `?` is written `\?` so that no
# "??x" in the script is read as a trigraph.
$(BUILD)/gen/pagebench.js: page-runtime/clock.js page-runtime/identity.js \
    page-runtime/census.js page-runtime/bench.js
	@mkdir -p $(dir $@)
	@{ echo '// generated from page-runtime/clock.js, identity.js, census.js and bench.js by the Makefile'; \
	   sed -e '/^import /d' -e 's/^export //' $^; } >$@

$(BUILD)/gen/pagebench.c: $(BUILD)/gen/pagebench.js
	@{ echo '/* generated from page-runtime/clock.js, identity.js, census.js and bench.js by the Makefile */'; \
	   echo 'const char pagebench_js[] ='; \
	   sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/"/' \
	       -e 's/$$/\\n"/' $<; \
	   echo ';'; } >$@

$(BUILD)/gen/pagebench.o: $(BUILD)/gen/pagebench.c $(BUILD)/flags
	@echo "CC $<"
	@$(CC) $(CFLAGS) -c -o $@ $<

# Made anew when the Makefile changes, so that an object moved out of the
# archive (the tap, above) does not stay in one built before.
$(BUILD)/libsloptimize.a: $(LIB_OBJ) Makefile
	@mkdir -p $(dir $@)
	@rm -f $@
	@ar rcs $@ $(LIB_OBJ)

$(BUILD)/sloptimize: $(BUILD)/cli/main.o $(BUILD)/libsloptimize.a
	@echo "LD $@"
	@$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/sloptimized: $(DAEMON_ONLY:%.c=$(BUILD)/%.o) $(BUILD)/libsloptimize.a
	@echo "LD $@"
	@$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/sink_driver: tests/sink/sink_driver.c $(BUILD)/libsloptimize.a \
    $(wildcard */*.h) $(BUILD)/flags
	@mkdir -p $(dir $@)
	@echo "LD $@"
	@$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libsloptimize.a $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_%: test_%.c $(BUILD)/libsloptimize.a $(wildcard */*.h tests/*/*.h) \
    $(BUILD)/flags
	@mkdir -p $(dir $@)
	@echo "LD $@"
	@$(CC) $(CFLAGS) $(CMOCKA_CFLAGS) -o $@ $< $(BUILD)/libsloptimize.a \
	    $(LDFLAGS) $(CMOCKA_LIBS) $(LDLIBS)

# libFuzzer harnesses (tests/fuzz/): clang, with ASan and UBSan, in a
# build directory of their own.  `fuzzers` is what fuzz-build makes there.
fuzzers: $(FUZZ_BIN)

$(BUILD)/fuzz/%: tests/fuzz/%.c tests/fuzz/refjson.c $(BUILD)/libsloptimize.a \
    $(wildcard */*.h tests/fuzz/*.h) $(BUILD)/flags
	@mkdir -p $(dir $@)
	@echo "LD $@"
	@$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< tests/fuzz/refjson.c \
	    $(BUILD)/libsloptimize.a $(LDFLAGS) $(LDLIBS)

# --- dependencies -----------------------------------------------------------

# Two sets, so that `make run` installs only what it runs (issue 24):
#  deps       building and running: the C libraries, a compiler, node and
#             npm (the demo game), and chromium only where there is no
#             display (the demo then plays its scripted run headless);
#             npm ci in demo/ and tests/ (the headless driver's
#             playwright-core comes from there)
#  deps-test  everything the test suite and the benchmarks use besides:
#             cmocka, a notification server and Xvfb, nginx, wrk,
#             valgrind, clang, ClickHouse, dpkg-dev and lintian, python3, …
#             and npm ci in tests/adopt/ (the adopting game's packages) and
#             tests/games/ (the real games the suite plays)
# `make test` installs both.  Each installs only what is missing.
APT_BUILD := pkg-config libc6-dev libuv1-dev libwebsockets-dev \
	libwebsockets-evlib-uv libcjson-dev libnotify-dev libcurl4-openssl-dev \
	libpng-dev
# the browser only when there is nobody to open the demo's URL
APT_RUN := $(APT_BUILD) $(if $(DISPLAY)$(WAYLAND_DISPLAY),,chromium)
# commands that may come from elsewhere than Debian (nvm's node, a
# compiler of the user's): asked for by name, installed only if absent
CMD_RUN := $(CC):gcc node:nodejs npm:npm
APT_DEB := dpkg-dev
APT_TEST := libcmocka-dev dbus dunst libnotify-bin xvfb chromium nginx-light \
	wrk valgrind systemd curl jq bc time clang libclang-rt-14-dev \
	clickhouse-server strace lintian dpkg-dev groff-base
CMD_TEST := python3:python3
BREW_RUN := pkg-config libuv libwebsockets cjson node curl libpng
BREW_TEST := cmocka

# $(call apt_ensure,PACKAGES,COMMANDS,WHO): install what is missing of
# PACKAGES (dpkg's word) and COMMANDS (cmd:package, found on PATH).
define apt_ensure
	@if command -v apt-get >/dev/null; then \
	    missing=""; for p in $(1); do \
	        dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
	            grep -q "ok installed" || missing="$$missing $$p"; \
	    done; \
	    for c in $(2); do \
	        command -v $${c%%:*} >/dev/null || missing="$$missing $${c#*:}"; \
	    done; \
	    if [ -n "$$missing" ]; then \
	        echo "$(3): installing$$missing"; \
	        SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	        $$SUDO apt-get update -qq && \
	        DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq \
	            --no-install-recommends $$missing; \
	    fi; \
	else \
	    echo "$(3): install $(1) by hand on this system" >&2; \
	fi
endef

.PHONY: deps-test deps-deb
deps: .deps-stamp
.deps-stamp: Makefile tests/package.json tests/package-lock.json demo/package-lock.json
ifeq ($(UNAME),Darwin)
	brew install $(BREW_RUN)
else
	$(call apt_ensure,$(APT_RUN),$(CMD_RUN),deps)
endif
	cd tests && npm ci --no-audit --no-fund --loglevel=error
	cd demo && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

deps-test: .deps-test-stamp
.deps-test-stamp: .deps-stamp Makefile tests/adopt/package.json tests/adopt/package-lock.json \
	    tests/games/dice-box/package-lock.json tests/games/chart-preview/package-lock.json
ifeq ($(UNAME),Darwin)
	brew install $(BREW_TEST)
else
	$(call apt_ensure,$(APT_TEST),$(CMD_TEST),deps-test)
endif
	cd tests/adopt && npm ci --no-audit --no-fund --loglevel=error
	cd tests/games/dice-box && npm ci --no-audit --no-fund --loglevel=error
	cd tests/games/chart-preview && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# what `make deb` needs beyond deps (dpkg-shlibdeps)
deps-deb: deps
ifneq ($(UNAME),Darwin)
	$(call apt_ensure,$(APT_DEB),,deps-deb)
endif

# --- running ----------------------------------------------------------------

DEMO	?= $(BUILD)/demo

# only the programs: the test binaries need cmocka, which run does not install
run: deps
	@$(MAKE) --no-print-directory $(PROGS)
	sh tests/demo.sh $(DEMO)

# --- tests ------------------------------------------------------------------

test: deps-test
	@$(MAKE) --no-print-directory all
	sh tests/run.sh $(BUILD)

# The suite with the cores held busy by LOAD other processes (default 2,
# one per core here): CI's machine is shared, so a test that passes only
# on an idle machine is broken.  A stop is proven with this, not only
# with `make test` (docs/robustness.md, "The suite under load").
LOAD	?= 2
test-loaded: deps-test
	@$(MAKE) --no-print-directory all
	LOAD=$(LOAD) sh tests/run.sh $(BUILD)

asan: deps-test
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fsanitize=address,undefined \
	    -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" all
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    sh tests/run.sh build-asan

# The daemon's integration tests with the daemon under valgrind (the
# kill -9 soak skips itself there: fifty start-ups take minutes).
valgrind: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_VALGRIND=1 SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) \
	    node --test daemon/

# `make fuzz FUZZ_SECONDS=N` runs every harness for N seconds from a
# corpus seeded with the fixtures; tests/repo/fuzz.test.sh (part of `make test`)
# runs each briefly and replays every input that ever crashed one.
FUZZ_FLAGS	:= -O1 -g -fsanitize=fuzzer-no-link,address,undefined \
		   -fno-omit-frame-pointer -fno-sanitize-recover=all

fuzz-build: deps-test
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang \
	    OPT="$(FUZZ_FLAGS)" LDFLAGS="-fsanitize=address,undefined" fuzzers

fuzz: fuzz-build
	sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The soak: a bounded run under sustained load that stops itself and
# passes or fails on what must hold (docs/robustness.md).  Not part of
# `make test`: it takes a minute of a machine's full attention.
SOAK_SECONDS	?= 60
soak: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node soak.mjs $(SOAK_SECONDS)

# --- benchmarks (figures, never pass/fail timing) ----------------------------

# `make bench` runs every bench-* below, one after the other, and prints one
# table (measure, anchor, ours, ratio, target, met) from their BENCH lines;
# each one's output is kept in $(BUILD)/bench/logs/.  BENCH_QUICK=1: small
# ledgers and short runs (a few minutes), to see that it all works;
# BENCH_ONLY=fold,restart,… a part; BENCH_MD=FILE also writes the table
# as Markdown (docs/performance.md carries it).
BENCH_ONLY	?=
BENCH_MD	?=
.PHONY: bench bench-restart bench-idle
bench: deps-test
	@$(MAKE) --no-print-directory all
	python3 tests/bench/table.py $(BUILD) $(if $(BENCH_ONLY),--only $(BENCH_ONLY)) \
	    $(if $(BENCH_MD),--markdown $(BENCH_MD))

bench-restart: deps-test
	@$(MAKE) --no-print-directory all
	python3 tests/bench/restart.py $(BUILD)

bench-idle: deps-test
	@$(MAKE) --no-print-directory all
	python3 tests/bench/idle.py $(BUILD)

bench-fold: deps-test
	@$(MAKE) --no-print-directory all
	sh tests/bench/fold.sh $(BUILD)

bench-wake: deps-test
	@$(MAKE) --no-print-directory all
	sh tests/bench/wake.sh $(BUILD)

bench-http: deps-test
	@$(MAKE) --no-print-directory all
	sh tests/bench/http.sh $(BUILD)

bench-sink: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node bench/sink.mjs $(BENCH_SINK_ARGS)

bench-recorder: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node bench/recorder.mjs

bench-trace: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node bench/trace.mjs

bench-games: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node bench/games.mjs

bench-verify: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node bench/verify.mjs

bench-attribute: deps-test
	@$(MAKE) --no-print-directory all
	cd tests && SLOPTIMIZE_BUILD=$(CURDIR)/$(BUILD) node bench/attribute.mjs

# --- install ----------------------------------------------------------------

# `install` puts the programs, the man pages, the docs, the npm tarball
# (share/sloptimize/npm/, what `sloptimize init` adds to a game) and the
# page runtime unpacked from that very tarball (share/sloptimize/
# page-runtime/, which the daemon serves from SLOPTIMIZE_SHARE, compiled in
# from PREFIX: build and install with the same PREFIX) under
# $(DESTDIR)$(PREFIX).
# `install-service` installs the per-project service definition: a systemd
# user unit template on Linux, a LaunchAgent on macOS (docs/service.md).
# Both take DESTDIR for packaging and print every file they write.
BINDIR		?= $(PREFIX)/bin
MANDIR		?= $(PREFIX)/share/man
DOCDIR		?= $(PREFIX)/share/doc/sloptimize
SHAREDIR	:= $(PREFIX)/share/sloptimize
SERVICE		?= $(if $(filter Darwin,$(shell uname -s)),launchd,systemd)
PROJECT		?=
XDG_DATA_HOME	?= $(HOME)/.local/share
# The systemd unit goes where the user managers find it: for a package
# (DESTDIR) or a root install, PREFIX's system-wide user-unit directory
# (/usr/lib/systemd/user, /usr/local/lib/systemd/user), which every user's
# manager reads; for a user's own `make install-service`, that user's
# ~/.local/share/systemd/user (not ~/.config/systemd/user, which is for the
# user's overrides: `systemctl --user edit` and `mask` write there).
UNITDIR		?= $(if $(DESTDIR)$(filter 0,$(shell id -u)),$(PREFIX)/lib/systemd/user,$(XDG_DATA_HOME)/systemd/user)
AGENTDIR	?= $(HOME)/Library/LaunchAgents
AGENTLOGDIR	?= $(HOME)/Library/Logs/sloptimize

# The page runtime as an npm package (docs/packaging.md): `npm pack` of
# page-runtime/, whose package.json must carry this VERSION.  The tarball
# is what a game installs (`npm i -D ./sloptimize-$(VERSION).tgz`) and what
# `make install` unpacks for the daemon to serve, so the two are the same
# files.
NPM_TGZ		:= $(BUILD)/sloptimize-$(VERSION).tgz
RUNTIME_FILES	:= $(filter-out %.test.mjs,$(wildcard page-runtime/*))

dist: $(NPM_TGZ)

$(NPM_TGZ): $(RUNTIME_FILES) Makefile
	@command -v npm >/dev/null || { echo "dist: npm is needed to pack the page runtime (make deps installs it)" >&2; exit 1; }
	@v=$$(sed -n 's/^  "version": "\(.*\)",$$/\1/p' page-runtime/package.json); \
	if [ "$$v" != "$(VERSION)" ]; then \
	    echo "dist: page-runtime/package.json says version \"$$v\", the Makefile's VERSION is $(VERSION): make them agree" >&2; \
	    exit 1; \
	fi
	@mkdir -p $(BUILD)
	@rm -f $@
	@cd page-runtime && npm pack --silent --pack-destination "$(abspath $(BUILD))" >/dev/null
	@test -s $@
	@echo "dist: $@"

install: $(PROGS) $(NPM_TGZ)
	@set -e; \
	put() { install -d "$$(dirname "$$3")"; install -m "$$1" "$$2" "$$3"; \
	    echo "install: $$3"; }; \
	for p in $(PROGS); do \
	    put 755 "$$p" "$(DESTDIR)$(BINDIR)/$${p##*/}"; \
	done; \
	for m in docs/*.[1-8]; do \
	    [ -f "$$m" ] || continue; \
	    put 644 "$$m" "$(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}"; \
	done; \
	for d in docs/*.md; do \
	    [ -f "$$d" ] || continue; \
	    put 644 "$$d" "$(DESTDIR)$(DOCDIR)/$${d##*/}"; \
	done; \
	put 644 skills/sloptimize/SKILL.md \
	    "$(DESTDIR)$(SHAREDIR)/skills/sloptimize/SKILL.md"; \
	put 644 "$(NPM_TGZ)" "$(DESTDIR)$(SHAREDIR)/npm/$(notdir $(NPM_TGZ))"; \
	unpacked=$$(mktemp -d "$${TMPDIR:-/tmp}/sloptimize-install.XXXXXX"); \
	trap 'rm -rf "$$unpacked"' EXIT; \
	tar -xzf "$(NPM_TGZ)" -C "$$unpacked"; \
	(cd "$$unpacked/package" && find . -type f | sort) | \
	while IFS= read -r f; do \
	    f=$${f#./}; \
	    put 644 "$$unpacked/package/$$f" "$(DESTDIR)$(SHAREDIR)/page-runtime/$$f"; \
	done

# `make deb`: a Debian package of all of the above, built with PREFIX=/usr
# in $(BUILD)/deb (packaging/deb/build.sh, docs/packaging.md).
DEB_ARCH	:= $(shell dpkg --print-architecture 2>/dev/null)
DEB		:= $(BUILD)/sloptimize_$(VERSION)_$(DEB_ARCH).deb

deb: deps-deb
	@VERSION='$(VERSION)' OUT='$(abspath $(BUILD))' OBJ='$(abspath $(BUILD))/deb' \
	    MAKE='$(MAKE)' sh packaging/deb/build.sh

install-service:
	@DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' DOCDIR='$(DOCDIR)' \
	    UNITDIR='$(UNITDIR)' AGENTDIR='$(AGENTDIR)' \
	    LOGDIR='$(AGENTLOGDIR)' PROJECT='$(PROJECT)' \
	    sh $(SERVICE)/install.sh

clean:
	rm -rf $(BUILD) build-asan $(FUZZ_BUILD) .deps-stamp .deps-test-stamp
