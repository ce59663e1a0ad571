# tako's house targets. They need Go 1.26 (or any Go >= 1.24 for the root
# module), and for the interop tests Node.js 20+ with npm: `make test` runs
# `npm ci` itself when the npm peers are missing or older than the lock.
#
#   make demo      build the CLI and the demo server, list and call a tool
#   make test      go vet, then go test -race in the root, interop and otel modules
#   make interop   only the interop tests (interop/, its own module)
#   make bench     benchmarks of the root module
#   make bench-peers  tako's client against the peers' and a hand-written floor (bench/, its own module)
#   make bench-smoke  build and vet bench/ and run its smoke tests (every client answers), no benchmarks
#   make lint      gofmt, go vet and staticcheck over the four modules
#   make fuzz      each fuzz target for FUZZTIME (default 30s), one after another
#   make clean     remove what the targets built
#   make proto     regenerate proto/mcppb from proto/*.proto (pinned protoc and plugins)

GO         ?= go
BIN        := bin
# otel/ is the OpenTelemetry integration, a module of its own so that the
# core's go.mod carries no OpenTelemetry.
MODULES    := . interop otel
# lint covers bench/ too; its tests are benchmarks, run by bench-peers, and
# a smoke test, run by bench-smoke.
LINT_MODULES := . interop otel bench
# Pinned: staticcheck v0.8.2 is built for Go 1.26 (its go.mod says go 1.26.0),
# so it understands the language and standard library this repo is built with.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# make fuzz runs each fuzz target for FUZZTIME, one at a time (go test
# fuzzes one target per invocation). Plain go test, so make test, runs
# every target's seeds and its corpus in testdata/fuzz/ as regression
# tests. An input the fuzzer finds that fails is written to testdata/fuzz/:
# fix the bug and commit it with the fix.
FUZZTIME   ?= 30s
FUZZ_TARGETS := \
	./auth:FuzzParseChallenges \
	./auth:FuzzResourceMetadata \
	./auth:FuzzServerMetadata \
	./auth:FuzzParseTokenResponse \
	./cmd/tako:FuzzSplitCommand \
	./grpc:FuzzConvertFromPB \
	./mcp:FuzzDecodeMessage \
	./mcp:FuzzAppendJSONString \
	./mcp:FuzzDecodeMatchesStd \
	./mcp:FuzzDecodeCallToolResult \
	./mcp:FuzzScanID \
	./internal/jsonscan:FuzzUnquoteMatchesStd \
	./mcp:FuzzParseResultTypeMatchesStd \
	./streamablehttp:FuzzEventReader \
	./streamablehttp:FuzzEventReaderReference \
	./streamablehttp:FuzzEncodeHeaderValue \
	./streamablehttp:FuzzToolHeaders
# npm writes this file on every install, so its time stamp says when the
# peers were installed (the files of a package keep the tarball's times).
NPM_STAMP  := node_modules/.package-lock.json

.PHONY: all build demo test vet gotest interop bench bench-peers bench-smoke lint lint-vet fmt-check staticcheck fuzz clean proto

all: test

# Both binaries in one go build: it runs the packages' builds in parallel and
# leaves the cache warm for the next target.
build:
	$(GO) build -o $(BIN)/ ./cmd/tako ./examples/demo-server

demo: build
	./$(BIN)/tako tools --stdio ./$(BIN)/demo-server
	./$(BIN)/tako call echo '{"message":"hello from tako"}' --stdio ./$(BIN)/demo-server

test: vet gotest

vet:
	@for m in $(MODULES); do echo "go vet ./... ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

# Every module runs even when one fails, so one run shows every failure.
# interop's tests run one after another (browsers, real servers, a login at
# a person's pace) for about 8 minutes under -race on 2 cores: its timeout
# stops a hung test, not a slow machine.
gotest: $(NPM_STAMP)
	@status=0; \
	echo "go test -race ./... (.)"; $(GO) test -race -timeout 8m ./... || status=1; \
	echo "go test -race ./... (interop)"; (cd interop && $(GO) test -race -timeout 20m ./...) || status=1; \
	echo "go test -race ./... (otel)"; (cd otel && $(GO) test -race -timeout 8m ./...) || status=1; \
	exit $$status

interop: $(NPM_STAMP)
	cd interop && $(GO) test -race -timeout 20m ./...

# Without npm the recipe only says so: the interop tests that need the npm
# peers then skip, or fail when CI is set (they say what to install).
$(NPM_STAMP): package.json package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		echo "npm ci"; npm ci; \
	else \
		echo "npm not found: install Node.js 20+ and npm for the interop tests against the npm reference server"; \
	fi

# The pins live in proto/gen/gen.go; the test there fails when the checked-in
# code differs from what this writes.
proto:
	$(GO) run ./proto/gen

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# The peer comparison, outside `make test`: it runs minutes, not seconds.
# -v shows why a client is skipped (the go-sdk client on the 16 MiB result).
# CloseAfterBusy runs apart with a fixed count: its setup (a server and 1000
# calls) is untimed, so the default -benchtime would run it hundreds of times.
# Every client in a process of its own, 3 interleaved runs; prints the
# tables of bench/README.md (progress on stderr).
bench-peers:
	cd bench && $(GO) build -o ../$(BIN)/bench/ ./cmd/peers ./cmd/footprint-floor ./cmd/footprint-tako ./cmd/footprint-gosdk ./cmd/footprint-mcpgo ./servers/gosdk ./servers/bridge ./servers/tiny
	./$(BIN)/bench/peers -bins $(BIN)/bench

# The smoke test builds every command of bench/ (peers, the servers, each
# client's footprint binary) and the benchmarks, and checks every client
# against the server in each suite at a tiny size; it must run, so a skip
# fails the target.
bench-smoke:
	@echo "go vet ./... (bench)"; cd bench && $(GO) vet ./...
	@echo "go build ./... (bench: peers, the servers, the footprint binaries)"; cd bench && $(GO) build ./...
	@echo "go test -race ./... (bench, tests only)"; cd bench && \
	out=$$($(GO) test -race -count 1 -timeout 5m -v -run '^Test' ./... 2>&1); status=$$?; \
	printf '%s\n' "$$out" | grep -E '^(--- |ok |FAIL|PASS|panic)|_test\.go:'; \
	if printf '%s\n' "$$out" | grep -q -- '--- SKIP'; then echo "bench: a smoke test skipped"; exit 1; fi; \
	if ! printf '%s\n' "$$out" | grep -q -- '--- PASS: TestClients '; then echo "bench: TestClients did not pass"; exit 1; fi; \
	exit $$status

lint: fmt-check lint-vet staticcheck

lint-vet:
	@for m in $(LINT_MODULES); do echo "go vet ./... ($$m)"; (cd $$m && $(GO) vet ./...) || exit 1; done

fmt-check:
	@out=$$(find . -name '*.go' -not -path './node_modules/*' -not -path './.git/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt -l reports files that need gofmt -w:"; echo "$$out"; exit 1; fi; \
	echo "gofmt -l: clean"

staticcheck:
	@for m in $(LINT_MODULES); do echo "staticcheck ./... ($$m)"; (cd $$m && $(GO) run $(STATICCHECK) ./...) || exit 1; done

# A target named here that no longer exists fails the run rather than
# fuzzing nothing.
fuzz:
	@status=0; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		if ! $(GO) test -list "^$$name\$$" $$pkg | grep -qx "$$name"; then \
			echo "make fuzz: $$pkg has no $$name: update FUZZ_TARGETS"; status=1; continue; fi; \
		echo "go test -fuzz $$name -fuzztime $(FUZZTIME) $$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg || status=1; \
	done; exit $$status

clean:
	rm -rf $(BIN) coverage.out
	find . -name '*.test' -not -path './node_modules/*' -type f -delete
