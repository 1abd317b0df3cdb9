# The Kubebuilder workflow for backupjob-operator. Every target is a thin wrapper over a command the
# project documents (npm scripts, kubectl, helm, docker); `make help` lists them.

# Image to build, push and deploy.
IMG ?= backupjob-operator:dev
# docker, or podman where there is no Docker (podman needs --format docker to keep HEALTHCHECK).
CONTAINER_TOOL ?= $(if $(shell command -v docker 2>/dev/null),docker,podman)
CONTAINER_BUILD_FLAGS ?= $(if $(filter podman,$(notdir $(CONTAINER_TOOL))),--format docker)
KUBECTL ?= kubectl
HELM ?= $(if $(wildcard .tools/helm/bin/helm),.tools/helm/bin/helm,helm)
# The Helm release `make deploy` installs, and its namespace.
RELEASE ?= backup-operator
NAMESPACE ?= backup-operator-system
# Extra flags for `helm upgrade --install`, e.g. HELM_FLAGS='--set worker.replicas=4'.
HELM_FLAGS ?=
# Workers `make run` starts.
WORKERS ?= 1
# DASHBOARD=1: `make run` also serves the read-only queue dashboard and prints its URL.
DASHBOARD ?= 0

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this list.
	@awk 'BEGIN {FS = ":.*##"; printf "usage: make <target> [VAR=value ...]\n"} \
	  /^[a-z-]+:.*##/ {printf "  %-14s %s\n", $$1, $$2} \
	  /^##@/ {printf "\n%s\n", substr($$0, 5)}' $(MAKEFILE_LIST)
	@printf '\nvariables: IMG=%s RELEASE=%s NAMESPACE=%s WORKERS=%s DASHBOARD=%s CONTAINER_TOOL=%s\n' \
	  '$(IMG)' '$(RELEASE)' '$(NAMESPACE)' '$(WORKERS)' '$(DASHBOARD)' '$(CONTAINER_TOOL)'

##@ Development

.PHONY: build
build: ## Compile the TypeScript into dist/ (npm run build).
	npm run build

.PHONY: dev
dev: ## The sandbox without a cluster: emulator, Redis, watcher, workers, sample (npm run dev).
	npm run dev

.PHONY: test
test: ## Build and run the whole test suite (npm test).
	npm test

.PHONY: lint
lint: ## typescript-eslint, the prettier check and knip (npm run lint).
	npm run lint

.PHONY: bench
bench: ## The benchmarks (npm run bench).
	npm run bench

##@ Cluster (the current kubeconfig context)

.PHONY: install
install: ## Install the BackupJob CRD into the cluster.
	$(KUBECTL) apply -f config/crd/bases/

.PHONY: uninstall
uninstall: ## Remove the BackupJob CRD, and with it every BackupJob, from the cluster.
	$(KUBECTL) delete --ignore-not-found -f config/crd/bases/

.PHONY: run
run: ## Run a watcher and WORKERS workers from this tree against the cluster; Ctrl-C stops all.
	npm run start:local -- --workers $(WORKERS)$(if $(filter 1,$(DASHBOARD)), --dashboard)

##@ Image and deployment

.PHONY: docker-build
docker-build: ## Build the image IMG from the Dockerfile.
	$(CONTAINER_TOOL) build $(CONTAINER_BUILD_FLAGS) -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the image IMG.
	$(CONTAINER_TOOL) push $(IMG)

.PHONY: deploy
deploy: ## Install or upgrade the Helm release RELEASE in NAMESPACE, running image IMG.
	@img='$(IMG)'; case "$${img##*/}" in \
	  *:*) repository="$${img%:*}"; tag="$${img##*:}" ;; \
	  *) repository="$$img"; tag=latest ;; \
	esac; \
	set -x; $(HELM) upgrade --install $(RELEASE) helm/backupjob-operator \
	  --namespace $(NAMESPACE) --create-namespace \
	  --set image.repository="$$repository" --set image.tag="$$tag" $(HELM_FLAGS)

.PHONY: undeploy
undeploy: ## Uninstall the Helm release RELEASE from NAMESPACE (the CRD stays: make uninstall).
	$(HELM) uninstall $(RELEASE) --namespace $(NAMESPACE) --ignore-not-found
