# questbak: `make demo` and `make test` take a fresh Debian machine (root, Swift installed) to a
# working, tested tool. Every target installs the Debian packages it needs when they are missing.
SHELL := /bin/bash
APT_PACKAGES := libsqlite3-dev libarchive-dev zlib1g-dev sqlite3 zstd util-linux
# The man page's date is pinned so that regenerating it is reproducible.
MAN_DATE := 2026-11-22
MAN_OUTPUT := .build/plugins/GenerateManual/outputs/questbak/questbak.1
DEMO := .build/demo

.PHONY: deps build demo test man man-check fixtures clean

deps:
	@missing=""; for package in $(APT_PACKAGES); do \
		dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

build: deps
	swift build

# The main job on a bundled fixture store.
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	.build/debug/questbak inspect Fixtures/v1-wal/default.store

test: deps
	swift build --build-tests
	swift test
	$(MAKE) man-check

# Regenerates man/questbak.1 from the command definitions (argument-parser's generate-manual).
man: deps
	swift package plugin generate-manual --configuration debug --date $(MAN_DATE)
	cp $(MAN_OUTPUT) man/questbak.1

# Fails when man/questbak.1 is not what the command definitions generate.
man-check: deps
	swift package plugin generate-manual --configuration debug --date $(MAN_DATE) >/dev/null
	diff -u man/questbak.1 $(MAN_OUTPUT) && echo "man page: up to date"

# Regenerates the golden fixture stores; only on purpose (see Fixtures/README.md).
fixtures: deps
	swift run questbak-fixtures Fixtures

clean:
	rm -rf .build
