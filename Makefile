# vulnscan — every target runs from a clean clone on a Debian machine with Go.
SHELL := /bin/bash
.DEFAULT_GOAL := help

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)
export GOBIN := $(BIN)

BUF_VERSION := v1.75.0
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
GRPC_GATEWAY_VERSION := v2.32.0
GOOGLEAPIS_MODULE := github.com/grpc-ecosystem/grpc-gateway@v1.16.0
GOLANGCI_LINT_VERSION := v2.15.0

BINARIES := gateway vulnscanctl vulnscan auth estimation scan findings
PACKAGES := ./pkg/... ./proto/gen/... ./gateway/... ./services/auth/... ./services/estimation/... ./services/scan/... ./services/findings/... ./deploy/...
TEST_TIMEOUT ?= 20m

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-14s %s\n", $$1, $$2}'

$(BIN)/buf:
	go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
$(BIN)/protoc-gen-go:
	go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
$(BIN)/protoc-gen-go-grpc:
	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
$(BIN)/protoc-gen-grpc-gateway:
	go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION)
$(BIN)/protoc-gen-openapiv2:
	go install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
$(BIN)/golangci-lint:
	go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

.PHONY: tools
tools: $(BIN)/buf $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc $(BIN)/protoc-gen-grpc-gateway $(BIN)/protoc-gen-openapiv2 ## Install the pinned code generators into bin/

third_party/googleapis/google/api/annotations.proto:
	@mkdir -p third_party
	@dir=$$(cd /tmp && go mod download -json $(GOOGLEAPIS_MODULE) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  test -n "$$dir" || { echo "cannot download $(GOOGLEAPIS_MODULE)"; exit 1; }; \
	  rm -rf third_party/googleapis && cp -r "$$dir/third_party/googleapis" third_party/ && chmod -R u+w third_party

.PHONY: gen
gen: tools third_party/googleapis/google/api/annotations.proto ## Lint the protos and regenerate the Go code and OpenAPI document
	buf lint
	buf generate
	go run ./gateway/cmd/openapi3gen proto/gen/openapi/vulnscan.swagger.json proto/gen/openapi/vulnscan.openapi.json

# Pinned npm tools that check the published OpenAPI document (run with npx).
REDOCLY_CLI_VERSION := 2.77.0
OPENAPI_TYPESCRIPT_VERSION := 7.13.0

.PHONY: openapi-check
openapi-check: ## Lint the published OpenAPI document and generate a TypeScript client from it (zero errors and warnings)
	npx --yes @redocly/cli@$(REDOCLY_CLI_VERSION) lint proto/gen/openapi/vulnscan.openapi.json
	@out=$$(mktemp -d); trap 'rm -rf "$$out"' EXIT; \
	  npx --yes openapi-typescript@$(OPENAPI_TYPESCRIPT_VERSION) proto/gen/openapi/vulnscan.openapi.json -o "$$out/vulnscan.d.ts" && \
	  grep -q '"/v1/uploads"' "$$out/vulnscan.d.ts" && grep -q 'sort_order?: "ASC" | "DESC"' "$$out/vulnscan.d.ts"

.PHONY: gen-check
gen-check: gen ## Fail when the committed generated code is not what `make gen` produces
	@git diff --exit-code --stat -- proto/gen || { echo "generated code is out of date: run make gen and commit"; exit 1; }
	@test -z "$$(git ls-files --others --exclude-standard proto/gen)" || { echo "untracked generated files: run make gen and commit"; git ls-files --others --exclude-standard proto/gen; exit 1; }

.PHONY: fmt-check
fmt-check: ## Fail when a Go file is not gofmt-formatted
	@files=$$(git ls-files '*.go' | grep -v '\.pb\.' | xargs gofmt -l); test -z "$$files" || { echo "gofmt needed:"; echo "$$files"; exit 1; }

.PHONY: build
build: ## Build every binary into bin/
	@mkdir -p $(BIN)
	go build -o $(BIN)/ ./gateway/cmd/gateway ./gateway/cmd/vulnscanctl ./pkg/cmd/vulnscan ./services/auth/cmd/auth ./services/estimation/cmd/estimation ./services/scan/cmd/scan ./services/findings/cmd/findings ./deploy/local/logprefix ./pkg/cmd/vulnscan-pki ./pkg/cmd/vulnscan-dbroles

.PHONY: run
run: build ## Run the whole system in the foreground (Ctrl-C stops it)
	deploy/local/run.sh

.PHONY: test
test: build ## Run every unit and integration test (race detector on) against real PostgreSQL and Redis
	@deploy/local/stores.sh ensure test
	@status=0; VULNSCAN_BIN_DIR=$(BIN) go test -race -count=1 -timeout $(TEST_TIMEOUT) $(PACKAGES) || status=$$?; \
	  deploy/local/stores.sh stop; exit $$status

.PHONY: bench-detect
bench-detect: ## Score the engine on a labelled benchmark: make bench-detect CORPUS=<OWASP Benchmark archive or directory>
	@test -n "$(CORPUS)" || { echo "usage: make bench-detect CORPUS=<path to the OWASP Benchmark for Java 1.2 archive or directory>"; exit 2; }
	cd pkg && VULNSCAN_OWASP_BENCHMARK="$(abspath $(CORPUS))" go test -count=1 -run '^TestOWASPBenchmark$$' -v -timeout 60m ./engine/

.PHONY: bench
bench: build ## Run the benchmarks
	@deploy/local/stores.sh ensure test
	@status=0; VULNSCAN_BIN_DIR=$(BIN) go test -run '^$$' -bench . -benchmem -timeout 60m $(PACKAGES) || status=$$?; \
	  deploy/local/stores.sh stop; exit $$status

.PHONY: bench-edge
bench-edge: build ## Hot paths through the real processes beside their floors (QUICK=1: smaller and shorter; PROFILE=dir: pprof profiles)
	@deploy/local/stores.sh ensure test
	@status=0; VULNSCAN_BIN_DIR=$(BIN) go run ./services/findings/internal/edgebench $(if $(QUICK),-quick) $(if $(ONLY),-only $(ONLY)) $(if $(PROFILE),-profile $(abspath $(PROFILE))) || status=$$?; \
	  deploy/local/stores.sh stop; exit $$status

.PHONY: test-ratio
test-ratio: ## Lines of tests against lines of hand-written Go (generated code aside); hand-written fixtures (not generated golden outputs) and test-only packages count as tests
	@testonly='^(pkg/(systest|gittest|dbtest|redistest|engine/lower/lowertest|sarif/sariftest)|services/findings/internal/edgebench|deploy/local/loadgen)/'; \
	  code=$$(git ls-files '*.go' | grep -v -e '_test\.go$$' -e '\.pb\.go$$' -e '\.pb\.gw\.go$$' -e '/testdata/' | grep -Ev "$$testonly" | xargs cat | wc -l); \
	  gotests=$$(git ls-files '*_test.go' | grep -v '/testdata/' | xargs cat | wc -l); \
	  support=$$(git ls-files '*.go' | grep -v '_test\.go$$' | grep -E "$$testonly" | xargs cat | wc -l); \
	  fixtures=$$(git ls-files | grep '/testdata/' | grep -v '/golden/' | xargs cat | wc -l); \
	  awk -v c=$$code -v t=$$gotests -v s=$$support -v f=$$fixtures 'BEGIN { printf "code %d lines; tests %d lines of Go tests + %d of test-only packages + %d of fixtures; ratio %.2f (Go tests alone %.2f)\n", c, t, s, f, (t+s+f)/c, t/c }'

.PHONY: deploy-check
deploy-check: ## Render every Kubernetes overlay and check it strictly
	go test -count=1 ./deploy/...

.PHONY: lint
lint: $(BIN)/golangci-lint $(BIN)/buf third_party/googleapis/google/api/annotations.proto ## Run golangci-lint on every module and buf lint
	buf lint
	golangci-lint run $(PACKAGES)

.PHONY: clean
clean: ## Remove build outputs
	rm -rf $(BIN) third_party
