# Roomkeeper. `make help` lists the targets.
.DEFAULT_GOAL := help
SHELL := /bin/bash

.PHONY: help
help: ## List the targets with one line each
	@grep -hE '^[a-zA-Z0-9_.-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2}'

.PHONY: setup
setup: ## Install dependencies exactly as locked (npm ci)
	npm ci

.PHONY: test
test: ## Lint, type-check and run every test suite (npm test)
	npm test

.PHONY: lint
lint: ## Type-check (tsc --noEmit, strict), ESLint, and knip (unused files, exports and dependencies)
	npm run lint

.PHONY: build
build: ## Compile TypeScript to dist/
	npm run build

.PHONY: start
start: ## Run Roomkeeper; with no cluster configured, on the embedded sandbox
	npm start

.PHONY: bench
bench: ## Run the benchmarks in bench/ and print their figures
	npm run bench

.PHONY: generate
generate: ## Regenerate derived files: SchedulerVersion CRD, TypeScript types and schemas from crds/, chart CRDs
	npx tsx common/codegen/sync-schedulerversion-crd.ts
	npx tsx common/codegen/generate-types.ts
	bash helm/sync-crds.sh

.PHONY: verify
verify: ## Fail when generated files drift from their sources (types from CRDs, chart CRDs)
	npx tsx common/codegen/sync-schedulerversion-crd.ts --check
	npx tsx common/codegen/generate-types.ts --check
	bash helm/sync-crds.sh --check
