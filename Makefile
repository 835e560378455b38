# numa-partition — see README.md for what each target proves.
GO        ?= go
BIN       ?= bin/numa-partition
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK_VERSION := v0.8.2
DEMO_SYSFS ?= testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys

.PHONY: build test lint bench demo fuzz e2e clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/numa-partition

# The whole test suite: unit, golden, property and integration tests (the
# systemd sandbox tests need root; they say so loudly when skipped).
test:
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Runs the main job on a real machine's sysfs dump shipped in testdata/.
demo: build
	$(BIN) --sysfs $(DEMO_SYSFS) discover

FUZZTIME ?= 60s
fuzz:
	$(GO) test ./numa/bitmask -run '^$$' -fuzz '^FuzzCPUList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./numa/bitmask -run '^$$' -fuzz '^FuzzCPUMask$$' -fuzztime $(FUZZTIME)
	$(GO) test ./numa/bitmask -run '^$$' -fuzz '^FuzzNodeList$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
