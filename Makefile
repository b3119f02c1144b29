# The two commands of the quick start are `make run` and `make test`.
GO      ?= go
BIN     := bin/subagent
ARGS    ?=
PKGS    := ./...
# The client module (client/go.mod: what suppliers and instrumented programs
# import) is a module of its own, which ./... of the daemon's does not
# reach: every check also runs there.
CLIENT  := client
BENCHTIME ?= 2s
# Go tools the checks run, installed by scripts/install-go-tools.sh.
TOOLS   := bin/tools

.PHONY: all build run test stock-host test-deps check-fmt vet staticcheck unit bench mib clean libspmi libspmi-samples dds-samples libarm

all: build

build:
	$(GO) build -o $(BIN) ./cmd/subagent

# Start the daemon on its embedded defaults (standalone SNMP responder on
# 127.0.0.1:1161); pass more flags with ARGS="--config my.yaml" or
# ARGS="--agentx unix:/var/agentx/master". Its state (instance numbers)
# stays in bin/state, never in the installed service's /var/lib/subagent
# (a --state-dir in ARGS wins); its run directory is the default one
# (/run/subagent as root), for ./bin/subagent peek, removed at exit when
# the daemon made it.
run: build
	./$(BIN) run --state-dir $(CURDIR)/bin/state $(ARGS)

# Install what the tests need (net-snmp's snmpd, snmptrapd and tools,
# smitools, a C compiler, snmp_exporter; dpkg-dev, lintian, systemd and
# man-db for packaging/), then run every check and test
# (scripts/run-tests.sh: each phase announced, the 32-bit codecs run or
# checked at compile time, nothing left in the system's directories).
test: test-deps check-fmt vet staticcheck
	@GO=$(GO) bash scripts/run-tests.sh

# The quick start whole on a stock Debian 12 root (scripts/stock-host.sh
# --make-test, as root; CI runs it after `make test`): `make run &`, then
# `make test` as printed beside it (the same daemon must still serve), then
# the README's blocks. About as long as `make test`, plus the root; its
# logs stay in STOCK_DIR/out.
STOCK_DIR ?= bin/stock-host
stock-host:
	rm -rf $(STOCK_DIR) && mkdir -p $(STOCK_DIR)
	bash scripts/stock-host.sh --make-test $(STOCK_DIR)

test-deps:
	@echo "==> test-deps: Debian packages of the tests (net-snmp, smitools, gcc, prometheus; collectd-core where it installs)"
	bash scripts/install-test-deps.sh
	@echo "==> test-deps: packaging tools (dpkg-dev, lintian, systemd, man-db)"
	sh scripts/install-pkg-deps.sh
	@echo "==> test-deps: staticcheck, built from source (pinned)"
	GO=$(GO) sh scripts/install-go-tools.sh $(TOOLS)
	@echo "==> test-deps: snmp_exporter and its generator (libsnmp-dev; built from source, pinned; minutes the first time)"
	GO=$(GO) sh scripts/install-exporter.sh $(TOOLS)

check-fmt:
	@echo "==> gofmt"
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	@echo "==> go vet"
	$(GO) vet $(PKGS)
	cd $(CLIENT) && $(GO) vet ./...

# honnef.co/go/tools with its default checks; the version is pinned in
# scripts/install-go-tools.sh.
staticcheck:
	@echo "==> staticcheck"
	GO=$(GO) sh scripts/install-go-tools.sh $(TOOLS)
	$(TOOLS)/staticcheck $(PKGS)
	cd $(CLIENT) && $(CURDIR)/$(TOOLS)/staticcheck ./...

# Unit tests only (no real snmpd); quick feedback while editing.
unit:
	$(GO) test -short -count=1 $(PKGS)
	cd $(CLIENT) && $(GO) test -short -count=1 ./...

BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
BENCHPKGS := ./asn1tree/ ./spmi/ ./hoststats/ ./agentx/ ./responder/ ./libspmi/ ./libarm/ ./rtimearm/ ./derive/
CLIENT_BENCHPKGS := ./ddsclient/

# Go benchmarks of the hot paths (5 runs each, medians by benchstat), then
# the end-to-end walks through a real snmpd, the standalone responder's
# SNMPv3 walks beside a native snmpd's, then how fresh the values a
# manager polls are (scripts/bench-fresh.sh, about 35 minutes), and the
# alarm storm (scripts/bench-storm.sh, 2.5 minutes), and the daemon's CPU
# per snmp_exporter scrape on the fixture host and on this one
# (scripts/bench-scrape.sh, 4 minutes each). Raw results: bin/bench.txt.
bench: build test-deps
	bash scripts/install-bench-deps.sh
	@mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 5 $(BENCHPKGS) | tee bin/bench.txt
	cd $(CLIENT) && $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 5 $(CLIENT_BENCHPKGS) | tee -a ../bin/bench.txt
	$(GO) run $(BENCHSTAT) bin/bench.txt
	bash scripts/bench-walk.sh 100
	bash scripts/bench-dds-walk.sh
	bash scripts/bench-dds-walk.sh 1 1 16 62500
	bash scripts/bench-v3-walk.sh 50 3
	bash scripts/bench-v3-walk.sh 20 3 1000
	bash scripts/bench-fresh.sh
	bash scripts/bench-storm.sh
	bash scripts/bench-expr-get.sh
	FIXTURE=1 bash scripts/bench-scrape.sh
	bash scripts/bench-scrape.sh

# Regenerate the shipped MIB module (MIBs/SUBAGENT-MIB.txt, with the reference tree
# mib/reference.json that `subagent mib` merges with the served tree) and its
# snmp_exporter generator configuration (MIBs/snmp_exporter/generator.yml)
# from the reference hierarchy; tests fail while a checked-in file is stale.
mib:
	$(GO) test ./mib/ -run '^TestShipped(Module|ExporterConfig)IsCurrent$$' -count=1 -args -update

# libSpmi, the C library of the SPMI guide (docs/DDS.md §4, docs/CONSUMERS.md):
# bin/libSpmi.so and bin/libSpmi.a, from libspmi/src/ (the shared part),
# libspmi/src/supplier/ and libspmi/src/consumer/ with the system C compiler.
# The Go tests build their own copy (internal/ctest) with the same flags.
LIBSPMI_CFLAGS := -std=c11 -O2 -fPIC -pthread -Wall -Wextra -Werror -Ilibspmi/include -Icshared
LIBSPMI_SRCS := $(wildcard libspmi/src/*.c libspmi/src/supplier/*.c libspmi/src/consumer/*.c)
LIBSPMI_OBJS := $(addprefix bin/libspmi/,$(notdir $(LIBSPMI_SRCS:.c=.o))) bin/libspmi/rundir.o
LIBSPMI_HDRS := $(wildcard libspmi/src/*.h libspmi/src/*/*.h) libspmi/include/spmi_dds.h libspmi/include/sys/Spmidef.h cshared/rundir.h

libspmi: bin/libSpmi.so bin/libSpmi.a

bin/libspmi/%.o: libspmi/src/%.c $(LIBSPMI_HDRS)
	@mkdir -p bin/libspmi
	$(CC) $(LIBSPMI_CFLAGS) -c -o $@ $<

bin/libspmi/%.o: libspmi/src/supplier/%.c $(LIBSPMI_HDRS)
	@mkdir -p bin/libspmi
	$(CC) $(LIBSPMI_CFLAGS) -c -o $@ $<

bin/libspmi/%.o: libspmi/src/consumer/%.c $(LIBSPMI_HDRS)
	@mkdir -p bin/libspmi
	$(CC) $(LIBSPMI_CFLAGS) -c -o $@ $<

# cshared/: C sources both libraries compile (the run directory's order
# and its trust check), their names hidden in each.
bin/libspmi/rundir.o: cshared/rundir.c cshared/rundir.h
	@mkdir -p bin/libspmi
	$(CC) $(LIBSPMI_CFLAGS) -c -o $@ $<

bin/libSpmi.so: $(LIBSPMI_OBJS)
	$(CC) -shared -pthread -o $@ $^

bin/libSpmi.a: $(LIBSPMI_OBJS) scripts/static-lib.sh
	CC="$(CC)" AR="$(AR)" sh scripts/static-lib.sh $@ $(LIBSPMI_OBJS)

# The guide's C samples (samples/spmi; the two suppliers write their
# files in /etc, as in the guide), linked with bin/libSpmi.a.
libspmi-samples: $(patsubst samples/spmi/%.c,bin/%,$(wildcard samples/spmi/*.c))

bin/Spmi%: samples/spmi/Spmi%.c libspmi/include/spmi_dds.h bin/libSpmi.a
	$(CC) -Wall -Wno-main -Ilibspmi/include -o $@ $< bin/libSpmi.a -pthread

# The guide's data-consumer samples (SpmiDataUser, SpmiDataTraverse) are
# K&R-era C (implicit int, unprototyped signal handlers), compiled as such;
# they include <sys/Spmidef.h>, which includes spmi_dds.h.
bin/SpmiData%: samples/spmi/SpmiData%.c libspmi/include/sys/Spmidef.h libspmi/include/spmi_dds.h bin/libSpmi.a
	$(CC) -std=gnu89 -Wall -Wno-main -Wno-implicit-int -Ilibspmi/include -o $@ $< bin/libSpmi.a -pthread

# The README's supplier samples: the Go one (bin/spmisupl) and the C ones.
dds-samples: libspmi-samples
	$(GO) build -o bin/spmisupl ./samples/spmisupl

# The ARM 2.0 library (docs/ARM.md): bin/libarm.so and bin/libarm.a with
# arm.h, from libarm/src/*.c, and the SDK's sample and the load and
# correlation programs in bin/arm-*. The Go tests (libarm/) build their own
# copy with the same flags.
LIBARM_CFLAGS := -std=c11 -O2 -fPIC -pthread -Wall -Wextra -Werror -Icshared
LIBARM_OBJS := $(patsubst libarm/src/%.c,bin/libarm/%.o,$(wildcard libarm/src/*.c)) bin/libarm/rundir.o

libarm: bin/libarm.so bin/libarm.a bin/arm-sample bin/arm-load bin/arm-corr

bin/libarm/%.o: libarm/src/%.c libarm/src/internal.h libarm/arm.h cshared/rundir.h
	@mkdir -p bin/libarm
	$(CC) $(LIBARM_CFLAGS) -c -o $@ $<

bin/libarm/rundir.o: cshared/rundir.c cshared/rundir.h
	@mkdir -p bin/libarm
	$(CC) $(LIBARM_CFLAGS) -c -o $@ $<

bin/libarm.so: $(LIBARM_OBJS)
	$(CC) -shared -pthread -o $@ $^

bin/libarm.a: $(LIBARM_OBJS) scripts/static-lib.sh
	CC="$(CC)" AR="$(AR)" sh scripts/static-lib.sh $@ $(LIBARM_OBJS)

# The SDK's sample is K&R C (implicit int, sleep without <unistd.h>).
bin/arm-sample: samples/arm/sample.c libarm/arm.h bin/libarm.a
	$(CC) -O2 -w -Ilibarm -o $@ $< bin/libarm.a -pthread

bin/arm-%: samples/arm/%.c libarm/arm.h bin/libarm.a
	$(CC) -O2 -Wall -Werror -Ilibarm -o $@ $< bin/libarm.a -pthread

clean:
	rm -rf bin

# --- Installation and the Debian package (docs/INSTALL.md) -----------------
# `make install` (PREFIX=/usr/local by default, DESTDIR for staging) and
# `make uninstall`, which removes exactly what install put there and leaves
# edited configuration files. /etc does not follow PREFIX.
PREFIX      ?= /usr/local
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DATADIR     ?= $(PREFIX)/share
MANDIR      ?= $(DATADIR)/man
# net-snmp's own MIB directory, on its default search path, wherever
# PREFIX points (like /etc): under /usr/local the tools would not find the
# module without -M.
MIBDIR      ?= /usr/share/snmp/mibs
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR  ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d
SYSCONFDIR  ?= /etc
SNMPCONFDIR ?= $(SYSCONFDIR)/snmp/snmpd.conf.d
INSTALL     ?= install

VERSION    := $(shell sed -n 's/^var Version = "\(.*\)"$$/\1/p' daemon/agent.go)
SOVERSION  := 1
LIBVERSION := $(SOVERSION).0.0
# What install ships, built here: bin/dist.
DIST := bin/dist
# The installed configuration is the embedded default attached to snmpd
# (the drop-in's socket) with the standalone responder off.
AGENTX_SOCKET := unix:/var/agentx/master

.PHONY: dist man completions install uninstall deb FORCE
FORCE:

dist: $(DIST)/subagent $(DIST)/libSpmi.so.$(LIBVERSION) $(DIST)/libarm.so.$(LIBVERSION) \
	bin/libSpmi.a bin/libarm.a $(DIST)/subagent.yaml man completions

# PIE and no symbol tables: what a distribution ships (and lintian checks).
$(DIST)/subagent: FORCE
	@mkdir -p $(DIST)
	$(GO) build -trimpath -buildmode=pie -ldflags "-s -w" -o $@ ./cmd/subagent

# Shared libraries with a soname: libSpmi.so.1 -> libSpmi.so.1.0.0.
$(DIST)/libSpmi.so.$(LIBVERSION): $(LIBSPMI_OBJS)
	@mkdir -p $(DIST)
	$(CC) -shared -pthread -Wl,-soname,libSpmi.so.$(SOVERSION) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^

$(DIST)/libarm.so.$(LIBVERSION): $(LIBARM_OBJS)
	@mkdir -p $(DIST)
	$(CC) -shared -pthread -Wl,-soname,libarm.so.$(SOVERSION) -Wl,-z,relro,-z,now $(LDFLAGS) -o $@ $^

$(DIST)/subagent.yaml: configs/subagent.yaml
	@mkdir -p $(DIST)
	{ echo "# Installed for the subagent service: attached to snmpd over AgentX"; \
	  echo "# (/etc/snmp/snmpd.conf.d/subagent.conf), standalone responder off."; \
	  sed -e 's|^agentx: none$$|agentx: $(AGENTX_SOCKET)|' -e 's|^listen: 127.0.0.1:1161$$|listen: none|' $<; } > $@.tmp
	@grep -qx 'agentx: $(AGENTX_SOCKET)' $@.tmp && grep -qx 'listen: none' $@.tmp || \
		{ echo "configs/subagent.yaml: the agentx or listen default changed; update AGENTX_SOCKET's rewrite in the Makefile" >&2; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

# Man pages from the command's own help (hidden `subagent gen-man`).
man: $(DIST)/subagent
	rm -rf $(DIST)/man && $(DIST)/subagent gen-man $(DIST)/man
	gzip -9nf $(DIST)/man/*.1

completions: $(DIST)/subagent
	@mkdir -p $(DIST)/completions
	$(DIST)/subagent completion bash > $(DIST)/completions/subagent
	$(DIST)/subagent completion zsh > $(DIST)/completions/_subagent
	$(DIST)/subagent completion fish > $(DIST)/completions/subagent.fish

# Configuration files are never overwritten: an edited one stays and the new
# default goes beside it as NAME.dist.
define install_conf
	if [ -e "$(2)" ] && ! cmp -s "$(1)" "$(2)"; then \
		$(INSTALL) -m 0644 "$(1)" "$(2).dist"; \
		echo "install: kept your $(2); the new default is $(2).dist"; \
	else \
		$(INSTALL) -m 0644 "$(1)" "$(2)"; \
	fi
endef
define uninstall_conf
	rm -f "$(2).dist"; \
	if [ -e "$(2)" ] && ! cmp -s "$(1)" "$(2)"; then \
		echo "uninstall: kept your edited $(2)"; \
	else \
		rm -f "$(2)"; \
	fi
endef

SED_PATHS = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	-e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@VERSION@|$(VERSION)|g'
HEADERS := libspmi/include/spmi_dds.h libarm/arm.h
# The SMIv2 base modules SUBAGENT-MIB imports, the project's own, for hosts
# without the IETF ones; net-snmp prefers those where installed (docs/MIB.md).
MIB_BASE := $(wildcard MIBs/00-subagent-*.txt)
# <sys/Spmidef.h>, the SPMI guide's consumer header, where the tree has it.
SYS_HEADERS := $(wildcard libspmi/include/sys/*.h)

install: dist
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(MIBDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) \
		$(DESTDIR)$(SYSCONFDIR)/subagent $(DESTDIR)$(SNMPCONFDIR)
	$(INSTALL) -m 0755 $(DIST)/subagent $(DESTDIR)$(BINDIR)/subagent
	for l in libSpmi libarm; do \
		$(INSTALL) -m 0644 $(DIST)/$$l.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(LIBVERSION) && \
		ln -sf $$l.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(SOVERSION) && \
		ln -sf $$l.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/$$l.so && \
		$(INSTALL) -m 0644 bin/$$l.a $(DESTDIR)$(LIBDIR)/$$l.a || exit 1; \
	done
	for p in libspmi libarm; do \
		$(SED_PATHS) packaging/$$p.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/$$p.pc && \
		chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/$$p.pc || exit 1; \
	done
	$(INSTALL) -m 0644 $(HEADERS) $(DESTDIR)$(INCLUDEDIR)/
	$(if $(SYS_HEADERS),$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/sys && $(INSTALL) -m 0644 $(SYS_HEADERS) $(DESTDIR)$(INCLUDEDIR)/sys/)
	$(INSTALL) -m 0644 MIBs/SUBAGENT-MIB.txt $(MIB_BASE) $(DESTDIR)$(MIBDIR)/
	$(INSTALL) -m 0644 $(DIST)/man/*.1.gz $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 0644 $(DIST)/completions/subagent $(DESTDIR)$(BASHCOMPDIR)/subagent
	$(INSTALL) -m 0644 $(DIST)/completions/_subagent $(DESTDIR)$(ZSHCOMPDIR)/_subagent
	$(INSTALL) -m 0644 $(DIST)/completions/subagent.fish $(DESTDIR)$(FISHCOMPDIR)/subagent.fish
	$(SED_PATHS) packaging/subagent.service.in > $(DIST)/subagent.service
	$(INSTALL) -m 0644 $(DIST)/subagent.service $(DESTDIR)$(UNITDIR)/subagent.service
	$(INSTALL) -m 0644 packaging/sysusers.conf $(DESTDIR)$(SYSUSERSDIR)/subagent.conf
	@$(call install_conf,$(DIST)/subagent.yaml,$(DESTDIR)$(SYSCONFDIR)/subagent/subagent.yaml)
	@$(call install_conf,packaging/snmpd-subagent.conf,$(DESTDIR)$(SNMPCONFDIR)/subagent.conf)
	@if [ -z "$(DESTDIR)" ]; then \
		echo "installed; next: systemd-sysusers, systemctl daemon-reload, restart snmpd, systemctl enable --now subagent (docs/INSTALL.md)"; \
	fi

uninstall: $(DIST)/subagent.yaml
	rm -f $(DESTDIR)$(BINDIR)/subagent
	for l in libSpmi libarm; do \
		rm -f $(DESTDIR)$(LIBDIR)/$$l.so.$(LIBVERSION) $(DESTDIR)$(LIBDIR)/$$l.so.$(SOVERSION) \
			$(DESTDIR)$(LIBDIR)/$$l.so $(DESTDIR)$(LIBDIR)/$$l.a; \
	done
	rm -f $(DESTDIR)$(LIBDIR)/pkgconfig/libspmi.pc $(DESTDIR)$(LIBDIR)/pkgconfig/libarm.pc
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(notdir $(HEADERS))) $(addprefix $(DESTDIR)$(INCLUDEDIR)/sys/,$(notdir $(SYS_HEADERS)))
	rm -f $(DESTDIR)$(MIBDIR)/SUBAGENT-MIB.txt $(addprefix $(DESTDIR)$(MIBDIR)/,$(notdir $(MIB_BASE)))
	rm -f $(DESTDIR)$(MANDIR)/man1/subagent.1.gz $(DESTDIR)$(MANDIR)/man1/subagent-*.1.gz
	rm -f $(DESTDIR)$(BASHCOMPDIR)/subagent $(DESTDIR)$(ZSHCOMPDIR)/_subagent $(DESTDIR)$(FISHCOMPDIR)/subagent.fish
	rm -f $(DESTDIR)$(UNITDIR)/subagent.service $(DESTDIR)$(SYSUSERSDIR)/subagent.conf
	@$(call uninstall_conf,$(DIST)/subagent.yaml,$(DESTDIR)$(SYSCONFDIR)/subagent/subagent.yaml)
	@$(call uninstall_conf,packaging/snmpd-subagent.conf,$(DESTDIR)$(SNMPCONFDIR)/subagent.conf)
	rmdir $(DESTDIR)$(SYSCONFDIR)/subagent 2>/dev/null || true

# The Debian package, bin/subagent_<version>-1_<arch>.deb, built with
# dpkg-deb from a staged install (PREFIX=/usr, multiarch libraries) by
# packaging/build-deb.sh; scripts/install-pkg-deps.sh installs its tools.
DEB_REVISION   ?= 1
DEB_MAINTAINER ?= subagent maintainers <subagent@example.org>
DEB_STAGE      := bin/deb/root
# Reproducible pages and package: the date of the last commit, else now.
ifeq ($(origin SOURCE_DATE_EPOCH),undefined)
SOURCE_DATE_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || date +%s)
endif
export SOURCE_DATE_EPOCH

deb:
	rm -rf bin/deb $(DIST)/man
	$(MAKE) install DESTDIR=$(CURDIR)/$(DEB_STAGE) PREFIX=/usr \
		LIBDIR=/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH) UNITDIR=/lib/systemd/system \
		SYSUSERSDIR=/usr/lib/sysusers.d ZSHCOMPDIR=/usr/share/zsh/vendor-completions
	VERSION=$(VERSION) DEB_REVISION=$(DEB_REVISION) SOVERSION=$(SOVERSION) \
		DEB_MAINTAINER="$(DEB_MAINTAINER)" sh packaging/build-deb.sh $(DEB_STAGE) bin
