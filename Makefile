# numa-partition — see README.md for what each target proves.
GO        ?= go
BIN       ?= bin/numa-partition
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
STATICCHECK_VERSION := v0.8.2
DEMO_SYSFS ?= testdata/sysfs/hwloc-32amd64-4s2n4c-cgroup2/sys

.PHONY: build test test-kubelet-diff lint bench scale hostcost demo fuzz e2e e2e-full clean generate check-generated deb test-deb

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/numa-partition

# The whole test suite: unit, golden, property and integration tests (the
# systemd sandbox tests need root; they say so loudly when skipped). The NRI
# plugin's tests against a real containerd (nriplugin/runtimetest, root and
# runc) use the containerd test/realbin/build.sh built, when it is cached
# (build.sh --cached prints its folder, building nothing); without it they
# skip loudly. .ci/run builds it (in the background) and waits for it
# before make test. An exported NUMA_PARTITION_REALBIN
# wins. -timeout: slices/apply's sandbox suite took 13-22 min under -race
# on a loaded 2-core machine, past go test's default 10 min per package.
# monitoring/'s promtool checks (check metrics on the daemon's /metrics,
# check and test rules) use the promtool test/promtool/build.sh built, found
# the same way (--cached); without it they skip loudly (fail under CI).
NUMA_PARTITION_REALBIN ?= $(shell test/realbin/build.sh --cached 2>/dev/null)
NUMA_PARTITION_PROMTOOL ?= $(shell test/promtool/build.sh --cached 2>/dev/null)
test:
	NUMA_PARTITION_REALBIN='$(NUMA_PARTITION_REALBIN)' NUMA_PARTITION_PROMTOOL='$(NUMA_PARTITION_PROMTOOL)' $(GO) test -race -count=1 -timeout 45m ./...

# The allocator's merge against kubelet 1.37.2's own Topology Manager code,
# on the same random inputs (a module of its own: the product never
# requires k8s.io/kubernetes). Built as the real binaries are (static,
# -trimpath, the same module versions: test/k8s/aligned.sh), it reuses the
# packages kubelet's build compiled: seconds after test/realbin/build.sh,
# about 10 minutes of 2 cores before it.
test-kubelet-diff:
	cd test/tmcompare && CGO_ENABLED=0 $(GO) test -trimpath -count=1 ./...

# vet and staticcheck compile as make build does (static, -trimpath), so
# that build reuses their packages; aligned.sh: the modules the product
# shares with the real binaries are at their versions (it says why).
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	test/k8s/aligned.sh
	CGO_ENABLED=0 $(GO) vet -trimpath ./...
	CGO_ENABLED=0 GOFLAGS=-trimpath $(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# Every benchmark, the product's and the merge against kubelet's own
# code (test/tmcompare), in one run; then the README's Performance
# tables, printed from their output (test/benchreport). Outputs in
# .cache/bench/<time>/. Quiet machine, root and the real containerd for
# every table: test/benchreport/run.sh says why.
bench:
	GO='$(GO)' NUMA_PARTITION_REALBIN='$(NUMA_PARTITION_REALBIN)' test/benchreport/run.sh

# What partitions cost the control plane: simulated Nodes (KWOK), one per
# partition, for 250 hosts × 1, 2, 4, 8 partitions against the e2e's real
# etcd and kube-apiserver; CPU, memory, Lease writes, watches, etcd size,
# API latency, and one host's re-partition. About 20 min on 2 cores, capped
# by SCALE_BUDGET; SCALE_QUICK=1 for a 2-3 min run. Needs
# test/realbin/build.sh's binaries. Outputs in .cache/scale/<time>/; see
# docs/scale.md. Not in CI (too long).
scale:
	test/scale/run.sh

# What one partition's daemons (kubelet, containerd, the allocator) cost
# the host's CPU, measured natively against the e2e's real control plane:
# idle, while pods start, with pods, while they stop. About 8 min; needs
# root, a cgroup v1 cpuacct hierarchy, runc and containernetworking-plugins.
# Outputs in .cache/hostcost/<time>/; see docs/scale.md. Not in CI.
hostcost:
	test/scale/hostcost.sh

# Runs the main job on a real machine's sysfs dump shipped in testdata/: a
# 4-socket, 8-node Opteron with the config and the host facts (pid limit,
# filesystems: discover --host-facts-out) in examples/4socket/, so that
# the plan printed is examples/4socket/plan.txt on any machine.
DEMO_CONFIG ?= examples/4socket/config.toml
DEMO_FACTS ?= examples/4socket/facts.json
DEMO_OUT ?= $(CURDIR)/bin/demo-root
demo: build
	$(BIN) --sysfs $(DEMO_SYSFS) discover
	@echo
	$(BIN) --sysfs $(DEMO_SYSFS) --config $(DEMO_CONFIG) plan --host-facts $(DEMO_FACTS)
	@echo
	rm -rf $(DEMO_OUT)
	$(BIN) --sysfs $(DEMO_SYSFS) --config $(DEMO_CONFIG) render --host-facts $(DEMO_FACTS) --out $(DEMO_OUT)
	@echo "rendered tree: $(DEMO_OUT) (try: find $(DEMO_OUT) -type f)"

FUZZTIME ?= 60s
fuzz:
	$(GO) test ./numa/bitmask -run '^$$' -fuzz '^FuzzCPUList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./numa/bitmask -run '^$$' -fuzz '^FuzzCPUMask$$' -fuzztime $(FUZZTIME)
	$(GO) test ./numa/bitmask -run '^$$' -fuzz '^FuzzNodeList$$' -fuzztime $(FUZZTIME)
	$(GO) test ./slices/hugepool -run '^$$' -fuzz '^FuzzPool$$' -fuzztime $(FUZZTIME)
	$(GO) test ./slices/render -run '^$$' -fuzz '^FuzzPlanThenRender$$' -fuzztime $(FUZZTIME)
	$(GO) test ./numa -run '^$$' -fuzz '^FuzzNodeMeminfo$$' -fuzztime $(FUZZTIME)
	$(GO) test ./slices/nodeview -run '^$$' -fuzz '^FuzzMeminfo$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/planner -run '^$$' -fuzz '^FuzzParsePlan$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/planner -run '^$$' -fuzz '^FuzzParsePlanFile$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/allocator/kubevirt -run '^$$' -fuzz '^FuzzLauncherPod$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/allocator/scenario -run '^$$' -fuzz '^FuzzScenario$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/allocator/daemon -run '^$$' -fuzz '^FuzzDecodeManifest$$' -fuzztime $(FUZZTIME)
	$(GO) test ./nriplugin -run '^$$' -fuzz '^FuzzFromNRI$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/fsutil -run '^$$' -fuzz '^FuzzRootStaysInside$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/allocator/daemon -run '^$$' -fuzz '^FuzzDecodeCheckpoint$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/allocator/daemon -run '^$$' -fuzz '^FuzzParseConfig$$' -fuzztime $(FUZZTIME)
	$(GO) test ./partition/planner -run '^$$' -fuzz '^FuzzParseFacts$$' -fuzztime $(FUZZTIME)
	$(GO) test ./slices/apply -run '^$$' -fuzz '^FuzzParseRecord$$' -fuzztime $(FUZZTIME)

# End-to-end on an emulated 2-socket, 2-NUMA-node QEMU VM (cgroup v2, then
# v1), systemd as PID 1; needs root and test/e2e/setup.sh's packages. See
# test/e2e/README.md.
e2e: build
	BIN=$(BIN) test/e2e/run.sh

# The same and the 4-NUMA-node boot (multi-node partitions, every daemon's
# crash, a layout merge and split): about 30 minutes more on 2 cores.
e2e-full: build
	E2E_MODES="v2 v1 n4" BIN=$(BIN) test/e2e/run.sh

clean:
	rm -rf bin

# Generated documentation checked into packaging/ and docs/: the man page and
# shell completions come from the CLI definitions, the config reference and
# the packaged example config from partition/planner/configref, the boot unit
# from the paths apply uses, the output reference from the Go types of
# every --output json|yaml kind (cmd/numa-partition/outputs.go); `check-generated`
# (run by CI) fails when they are stale.
NFPM_VERSION := v2.45.2
DEB_VERSION = $(shell packaging/deb-version.sh '$(VERSION)')
GENERATED_DIR := packaging

generate: build
	$(BIN) man > $(GENERATED_DIR)/man/numa-partition.8
	$(BIN) completion bash > $(GENERATED_DIR)/completions/numa-partition.bash
	$(BIN) completion zsh > $(GENERATED_DIR)/completions/_numa-partition
	$(BIN) completion fish > $(GENERATED_DIR)/completions/numa-partition.fish
	$(BIN) config reference > docs/config-reference.md
	$(BIN) output-reference > docs/output-reference.md
	$(BIN) config init --generic > $(GENERATED_DIR)/config.toml
	$(BIN) boot-unit > $(GENERATED_DIR)/numa-partition.service

check-generated: build
	@tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	$(BIN) man > $$tmp/numa-partition.8; \
	$(BIN) completion bash > $$tmp/numa-partition.bash; \
	$(BIN) completion zsh > $$tmp/_numa-partition; \
	$(BIN) completion fish > $$tmp/numa-partition.fish; \
	$(BIN) config reference > $$tmp/config-reference.md; \
	$(BIN) output-reference > $$tmp/output-reference.md; \
	$(BIN) config init --generic > $$tmp/config.toml; \
	$(BIN) boot-unit > $$tmp/numa-partition.service; \
	diff -u $(GENERATED_DIR)/man/numa-partition.8 $$tmp/numa-partition.8 && \
	diff -u $(GENERATED_DIR)/completions/numa-partition.bash $$tmp/numa-partition.bash && \
	diff -u $(GENERATED_DIR)/completions/_numa-partition $$tmp/_numa-partition && \
	diff -u $(GENERATED_DIR)/completions/numa-partition.fish $$tmp/numa-partition.fish && \
	diff -u docs/config-reference.md $$tmp/config-reference.md && \
	diff -u docs/output-reference.md $$tmp/output-reference.md && \
	diff -u $(GENERATED_DIR)/config.toml $$tmp/config.toml && \
	diff -u $(GENERATED_DIR)/numa-partition.service $$tmp/numa-partition.service || \
	{ echo "generated files are stale: run 'make generate' and commit"; exit 1; }

# Debian package (nfpm from the Go module proxy, pinned): a stripped
# binary (-s -w: no symbol table, no DWARF), the man page and the
# changelog gzipped, the changelog's top entry at this build's version.
deb:
	mkdir -p dist
	rm -f dist/numa-partition_*.deb
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o dist/numa-partition ./cmd/numa-partition
	gzip -9n < $(GENERATED_DIR)/man/numa-partition.8 > dist/numa-partition.8.gz
	sed 's/@VERSION@/$(DEB_VERSION)/' $(GENERATED_DIR)/changelog | gzip -9n > dist/changelog.gz
	GOARCH=$$($(GO) env GOARCH) NUMA_PARTITION_VERSION=$(DEB_VERSION) \
	  $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION) package \
	  --config packaging/nfpm.yaml --packager deb --target dist/

# Installs, upgrades (the same package at a higher version), removes and
# purges the package in a scratch root with dpkg, checking what each step
# leaves; then lintian, whose accepted warnings packaging/README.md explains.
test-deb: deb
	packaging/test-deb.sh dist/numa-partition_*.deb
