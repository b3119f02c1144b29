# The two commands of the quick start are `make run` and `make test`.
GO      ?= go
BIN     := bin/subagent
ARGS    ?=
PKGS    := ./...
BENCHTIME ?= 2s

.PHONY: all build run test test-deps check-fmt vet unit bench mib clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/subagent

# Start the daemon on its embedded defaults (standalone SNMP responder on
# 127.0.0.1:1161); pass more flags with ARGS="--agentx unix:/var/agentx/master".
run: build
	./$(BIN) run $(ARGS)

# Install what the tests need (net-snmp's snmpd, snmptrapd and tools,
# smitools, a C compiler), then run every check and test.
test: test-deps check-fmt vet
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

test-deps:
	bash scripts/install-test-deps.sh

check-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# Unit tests only (no real snmpd); quick feedback while editing.
unit:
	$(GO) test -short -count=1 $(PKGS)

BENCHSTAT := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
BENCHPKGS := ./asn1tree/ ./spmi/ ./hoststats/ ./agentx/ ./responder/

# Go benchmarks of the hot paths (5 runs each, medians by benchstat), then
# the end-to-end walk through a real snmpd. Raw results: bin/bench.txt.
bench: build
	@mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 5 $(BENCHPKGS) | tee bin/bench.txt
	$(GO) run $(BENCHSTAT) bin/bench.txt
	bash scripts/bench-walk.sh 100

# Regenerate the shipped MIB module (MIBs/SUBAGENT-MIB.txt) from the
# reference hierarchy; a test fails while the checked-in file is stale.
mib:
	$(GO) test ./mib/ -run '^TestShippedModuleIsCurrent$$' -count=1 -args -update

clean:
	rm -rf bin
