# perpgate: `make run` starts the gateway with embedded defaults,
# `make test` runs every module's tests (see README).

GO       ?= go
MODULES  := $(shell $(GO) list -m -f '{{.Dir}}')
PKGS     := $(addsuffix /...,$(MODULES))
BIN      := bin
# One version (the VERSION file, a semantic version) and the commit built.
VERSION  := $(shell cat VERSION)
COMMIT   ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# FUZZTIME overrides every fuzz target's budget (e.g. 30s or 100000x); by
# default each runs a fixed number of inputs, 5 to 8 s here. A count, not a
# duration: a timed run fails now and then with "context deadline exceeded"
# when the machine is busy as its time runs out.
FUZZTIME ?=
COMPOSE  ?= docker compose
# A race-enabled binary sleeps 1 s as it exits unless told not to: every
# test binary, and every service and CLI process the tests start.
GORACE   ?= atexit_sleep_ms=0
export GORACE

.PHONY: run test unit fuzz bench lint build clean clean-data print-ldflags openapi docs nats-conf compose-env compose-up compose-down

run: build
	$(BIN)/perpgate serve

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/perpgate ./services/standalone/cmd/perpgate
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/edge ./services/edge/cmd/edge
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/keys ./services/keys/cmd/keys
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-paper ./services/connectors/paper/cmd/connector-paper
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/paper-venue ./services/connectors/paper/cmd/paper-venue
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-binance ./services/connectors/binance/cmd/connector-binance
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/binance-sim ./services/connectors/binance/cmd/binance-sim
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-bybit ./services/connectors/bybit/cmd/connector-bybit
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/bybit-sim ./services/connectors/bybit/cmd/bybit-sim
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-okx ./services/connectors/okx/cmd/connector-okx
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/okx-sim ./services/connectors/okx/cmd/okx-sim
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-paradex ./services/connectors/paradex/cmd/connector-paradex
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/paradex-sim ./services/connectors/paradex/cmd/paradex-sim
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-aster ./services/connectors/aster/cmd/connector-aster
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/aster-sim ./services/connectors/aster/cmd/aster-sim
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/connector-hyperliquid ./services/connectors/hyperliquid/cmd/connector-hyperliquid
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/hyperliquid-sim ./services/connectors/hyperliquid/cmd/hyperliquid-sim

test: unit fuzz

# go vet runs in `make lint` (and CI); here it would only slow the tests.
unit:
	$(GO) test -race -vet=off -count=1 -timeout 15m $(PKGS)

# Bounded fuzzing of everything that parses untrusted input.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(or $(FUZZTIME),300000x) ./pkg/symbol
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeParams$$' -fuzztime $(or $(FUZZTIME),150000x) ./pkg/contract
	$(GO) test -run '^$$' -fuzz '^FuzzRequest$$' -fuzztime $(or $(FUZZTIME),100000x) ./pkg/contract
	$(GO) test -run '^$$' -fuzz '^FuzzConnectorRequestFrame$$' -fuzztime $(or $(FUZZTIME),100000x) ./pkg/contract

bench: build
	$(BIN)/perpgate bench

lint:
	$(GO) vet $(PKGS)

# clean removes build output only: the data directory holds the keys,
# the credentials and master.key, without which stored secrets are lost.
clean:
	rm -rf $(BIN)

# clean-data deletes the data directory (keys, credentials, master.key,
# bootstrap.json, paper state) and refuses unless CONFIRM=1.
DATA_DIR ?= $(or $(PERPGATE_DATA_DIR),.perpgate)
clean-data:
	@if [ "$(CONFIRM)" != 1 ]; then \
		echo "clean-data deletes $(DATA_DIR): every API key, credential and master.key (back it up first)." >&2; \
		echo "Run 'make clean-data CONFIRM=1' to delete it." >&2; exit 2; fi
	rm -rf '$(DATA_DIR)'

# Regenerate the checked-in OpenAPI document after changing the operation table.
openapi:
	$(GO) test ./pkg/contract -run '^TestOpenAPIUpToDate$$' -update

# Regenerate docs/api.md, the API reference, from the operation table.
docs:
	$(GO) test ./pkg/contract -run '^TestReferenceUpToDate$$' -update

# Regenerate deploy/nats.conf from the NATS permissions table
# (pkg/bus/permissions.go), which the embedded server of perpgate serve uses too.
nats-conf:
	$(GO) test ./deploy -run '^TestNATSConfUpToDate$$' -update

# docker-compose.yml: every service in its own container (README, "Operating
# perpgate"). compose-env writes .env with fresh secrets unless it exists.
compose-env:
	@deploy/compose-env.sh .env

compose-up: compose-env
	VERSION=$(VERSION) $(COMPOSE) up -d --build --wait

compose-down:
	$(COMPOSE) down

# print-ldflags prints the flags that stamp a binary with VERSION and the
# commit (the version test builds perpgate with them).
print-ldflags:
	@echo '$(LDFLAGS)'
