# The two commands of the quick start are `make run` and `make test`.
GO      ?= go
BIN     := bin/subagent
ARGS    ?=
PKGS    := ./...
BENCHTIME ?= 2s
# Go tools the checks run, installed by scripts/install-go-tools.sh.
TOOLS   := bin/tools

.PHONY: all build run test test-deps check-fmt vet staticcheck unit bench mib clean libspmi libspmi-samples dds-samples libarm

all: build

build:
	$(GO) build -o $(BIN) ./cmd/subagent

# Start the daemon on its embedded defaults (standalone SNMP responder on
# 127.0.0.1:1161); pass more flags with ARGS="--agentx unix:/var/agentx/master".
run: build
	./$(BIN) run $(ARGS)

# Install what the tests need (net-snmp's snmpd, snmptrapd and tools,
# smitools, a C compiler, snmp_exporter), then run every check and test.
test: test-deps check-fmt vet staticcheck
	$(GO) test -race -count=1 -timeout 20m $(PKGS)
	# 32-bit suppliers share the file layout: the codecs on 386 too.
	GOARCH=386 $(GO) test -count=1 ./dds/ ./dds/client/

test-deps:
	bash scripts/install-test-deps.sh
	GO=$(GO) sh scripts/install-go-tools.sh $(TOOLS)
	GO=$(GO) sh scripts/install-exporter.sh $(TOOLS)

check-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# honnef.co/go/tools with its default checks; the version is pinned in
# scripts/install-go-tools.sh.
staticcheck:
	GO=$(GO) sh scripts/install-go-tools.sh $(TOOLS)
	$(TOOLS)/staticcheck $(PKGS)

# Unit tests only (no real snmpd); quick feedback while editing.
unit:
	$(GO) test -short -count=1 $(PKGS)

BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
BENCHPKGS := ./asn1tree/ ./spmi/ ./hoststats/ ./agentx/ ./responder/ ./dds/client/ ./dds/libspmi/ ./arm/ ./libarm/ ./rtimearm/

# Go benchmarks of the hot paths (5 runs each, medians by benchstat), then
# the end-to-end walk through a real snmpd. Raw results: bin/bench.txt.
bench: build test-deps
	bash scripts/install-bench-deps.sh
	@mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 5 $(BENCHPKGS) | tee bin/bench.txt
	$(GO) run $(BENCHSTAT) bin/bench.txt
	bash scripts/bench-walk.sh 100
	bash scripts/bench-dds-walk.sh

# Regenerate the shipped MIB module (MIBs/SUBAGENT-MIB.txt) and its
# snmp_exporter generator configuration (MIBs/snmp_exporter/generator.yml)
# from the reference hierarchy; tests fail while a checked-in file is stale.
mib:
	$(GO) test ./mib/ -run '^TestShipped(Module|ExporterConfig)IsCurrent$$' -count=1 -args -update

# The C library for Dynamic Data Suppliers (docs/DDS.md §4): bin/libSpmi.so
# and bin/libSpmi.a, from dds/libspmi/src/*.c with the system C compiler. The
# Go tests build their own copy (dds/libspmi/ctest) with the same flags.
LIBSPMI_CFLAGS := -std=c11 -O2 -fPIC -pthread -Wall -Wextra -Werror -Idds/include
LIBSPMI_OBJS := $(patsubst dds/libspmi/src/%.c,bin/libspmi/%.o,$(wildcard dds/libspmi/src/*.c))

libspmi: bin/libSpmi.so bin/libSpmi.a

bin/libspmi/%.o: dds/libspmi/src/%.c dds/libspmi/src/spmi_internal.h dds/include/spmi_dds.h
	@mkdir -p bin/libspmi
	$(CC) $(LIBSPMI_CFLAGS) -c -o $@ $<

bin/libSpmi.so: $(LIBSPMI_OBJS)
	$(CC) -shared -pthread -o $@ $^

bin/libSpmi.a: $(LIBSPMI_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The sample suppliers of dds/include/samples (the guide's two write their
# files in /etc, as in the guide), linked with bin/libSpmi.a.
libspmi-samples: $(patsubst dds/include/samples/%.c,bin/%,$(wildcard dds/include/samples/*.c))

bin/Spmi%: dds/include/samples/Spmi%.c dds/include/spmi_dds.h bin/libSpmi.a
	$(CC) -Wall -Wno-main -Idds/include -o $@ $< bin/libSpmi.a -pthread

# The README's supplier samples: the Go one (bin/spmisupl) and the C ones.
dds-samples: libspmi-samples
	$(GO) build -o bin/spmisupl ./dds/samples/spmisupl

# The ARM 2.0 library (docs/ARM.md): bin/libarm.so and bin/libarm.a with
# arm.h, from libarm/src/*.c, and the SDK's sample and the load and
# correlation programs in bin/arm-*. The Go tests (libarm/) build their own
# copy with the same flags.
LIBARM_CFLAGS := -std=c11 -O2 -fPIC -pthread -Wall -Wextra -Werror
LIBARM_OBJS := $(patsubst libarm/src/%.c,bin/libarm/%.o,$(wildcard libarm/src/*.c))

libarm: bin/libarm.so bin/libarm.a bin/arm-sample bin/arm-load bin/arm-corr

bin/libarm/%.o: libarm/src/%.c libarm/src/internal.h libarm/arm.h
	@mkdir -p bin/libarm
	$(CC) $(LIBARM_CFLAGS) -c -o $@ $<

bin/libarm.so: $(LIBARM_OBJS)
	$(CC) -shared -pthread -o $@ $^

bin/libarm.a: $(LIBARM_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# The SDK's sample is K&R C (implicit int, sleep without <unistd.h>).
bin/arm-sample: libarm/samples/sample.c libarm/arm.h bin/libarm.a
	$(CC) -O2 -w -Ilibarm -o $@ $< bin/libarm.a -pthread

bin/arm-%: libarm/samples/%.c libarm/arm.h bin/libarm.a
	$(CC) -O2 -Wall -Werror -Ilibarm -o $@ $< bin/libarm.a -pthread

clean:
	rm -rf bin
