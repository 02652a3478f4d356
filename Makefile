# keyward: `make run` serves a node on an embedded Redis, `make test` runs the whole suite.
# Both install what is missing first (npm packages; redis-server from Debian when absent).
SHELL := /bin/bash
.DEFAULT_GOAL := help

NPM_STAMP := node_modules/.package-lock.json

.PHONY: help deps redis clickhouse chromium build run test test-containers lint fmt typecheck unit integration bench bench-compare bench-vault bench-clickhouse bench-floor profile layout-figures screenshots cluster cluster-stop clean

help:
	@echo "make run    start Redis and a keyward node; prints the base URL and a root key"
	@echo "make test   lint, typecheck and run every test (unit + integration on real Redis)"
	@echo "make cluster | cluster-stop   two regions of local processes behind HAProxy"
	@echo "make test-containers   integration tests with Redis in containers (root; local dockerd, no pulls)"
	@echo "make screenshots   the dashboard's usage and audit pages as PNGs in docs/images/"
	@echo "make layout-figures   one workspace of 100,000 keys on 3-master Redis Clusters, this layout"
	@echo "                      vs the previous release's (c62d6b0): keys, memory, listKeys latency"
	@echo "make bench-compare   this tree against BENCH_BASE (HEAD~1): fresh node processes every"
	@echo "                      round, with a control (this tree against itself); .run/bench/compare.md"
	@echo "make bench-vault     what recoverable keys cost: createKey sealed vs plain, getKey decrypt"
	@echo "                      vs plain, verifyKey recoverable vs plain; .run/bench/vault.md"
	@echo "make bench-clickhouse  issue 24's figures: sink on vs off, rows/s, bytes per million"
	@echo "                      verifications, a 30-day chart over 10M events; .run/bench/clickhouse.md"
	@echo "make bench-floor   a node against the floor of its fast check, user and system CPU"
	@echo "                      apart (issue 23); .run/bench/floor.md"
	@echo "make lint | fmt | build | bench | profile | clean"

$(NPM_STAMP): package.json package-lock.json
	@# ci installs exactly the lock, and never rewrites it: a fresh clone stays clean. The lock
	@# lists every platform's optional bindings (unrs-resolver's, a jest dependency), as npm 11
	@# writes them; one written without them made every new machine's npm install rewrite it.
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

deps: $(NPM_STAMP)

redis:
	@scripts/ensure-tool.sh redis-server redis-server
	@scripts/ensure-tool.sh redis-cli redis-tools

clickhouse:
	@# The analytics tests start Debian's clickhouse-server (18.16) on free ports of their own.
	@scripts/ensure-tool.sh clickhouse-server clickhouse-server

chromium:
	@# The dashboard's browser tests drive Debian's chromium, never a downloaded browser.
	@scripts/ensure-tool.sh chromium chromium

build: deps
	npm run --silent build

run: deps redis build
	@scripts/run.sh

lint: deps
	npx eslint .
	npx prettier --check .

fmt: deps
	npx prettier --write .
	npx eslint --fix .

typecheck: deps
	npx tsc -p tsconfig.json --noEmit

# Lint, typecheck and build share nothing but node_modules: two at a time, one per core (about
# 25 s less than one after another), then the suite.
test: deps redis clickhouse chromium
	@$(MAKE) --no-print-directory -j2 lint typecheck build
	npx jest --ci

unit: deps
	npx jest --ci test/unit

# Not part of `make test`: the same integration tests with Redis started through testcontainers.
test-containers: deps redis build
	@scripts/test-containers.sh

integration: deps redis clickhouse chromium build
	npx jest --ci test/integration

bench: deps redis build
	@scripts/bench.sh

profile: deps redis build
	@scripts/bench.sh profile

# This tree against BENCH_BASE, resolving a few percent: every round starts fresh nodes of both
# builds and a second one of this tree (the control). BENCH_COMPARE_ROUNDS (8),
# BENCH_COMPARE_SLICE (2 s), BENCH_PIN=1 (nodes on CPU 1, Redis and the load on CPU 0).
bench-compare: deps redis build
	@scripts/bench.sh compare

# Issue 25: what sealing and opening recoverable keys cost, on one node of this tree (no old
# build), each figure a ratio of two cases measured in interleaved slices. BENCH_VAULT_ROUNDS (4),
# BENCH_VAULT_SLICE (2 s), BENCH_VAULT_CONNECTIONS (16, createKey and getKey), BENCH_CONNECTIONS
# (64, verifyKey), BENCH_TIMEOUT (300 s).
bench-vault: deps redis build
	@scripts/bench.sh vault

# Issue 24: what analytics in ClickHouse cost and hold, one run each, on this tree and Debian's
# clickhouse-server (started on free ports, its data under .run/clickhouse, removed at the end):
# fast verification with the sink on vs off (with a control), rows/s one node's sink sustains,
# bytes per million verifications, a 30-day per-day chart over 10 million events. Knobs in
# bench/clickhouse.ts (BENCH_CH_*); BENCH_TIMEOUT (600 s). Report in .run/bench/clickhouse.md.
bench-clickhouse: deps redis clickhouse build
	@scripts/bench.sh clickhouse

# Issue 23: a node against the floor of its fast check, user and system CPU apart, in rounds.
# BENCH_FLOOR_ROUNDS (8), BENCH_FLOOR_SLICE (3 s), BENCH_FLOOR_RATE (0: closed loop; else the
# requests/s offered to each). Report in .run/bench/floor.md.
bench-floor: deps redis build
	@scripts/bench.sh floor

# Issue 22: how one workspace spreads over a cluster's masters, this tree against BENCH_BASE
# (c62d6b0, the previous layout). Figures in .run/bench/layout.json, a table on stdout.
layout-figures: deps redis build
	@scripts/bench.sh layout

# The README's pictures of the dashboard: a node on Redis servers of its own, data, chromium.
# jest runs the script for its TypeScript and the tests' fixtures; `make test` does not run it.
screenshots: deps redis chromium
	npx jest --ci --roots '<rootDir>/scripts' --testMatch '**/scripts/dashboard-screenshots.ts'

cluster: deps redis build
	@scripts/cluster.sh start

cluster-stop:
	@scripts/cluster.sh stop

clean:
	rm -rf dist coverage .run
