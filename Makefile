# questbak: `make demo` and `make test` take a fresh Debian machine (root, Swift installed) to a
# working, tested tool. Every target installs the Debian packages it needs when they are missing.
SHELL := /bin/bash
APT_PACKAGES := libsqlite3-dev libarchive-dev zlib1g-dev libzstd-dev sqlite3 zstd util-linux python3-yaml groff age jq libarchive-tools
# On macOS, Homebrew's: libarchive is keg-only, so its pkg-config folder is named for the build.
BREW_PACKAGES := libarchive zstd
# The system decides the branch; a test sets UNAME=Darwin with `make -n` to see the macOS one.
UNAME ?= $(shell uname -s)
ifeq ($(UNAME),Darwin)
SWIFT_ENV := PKG_CONFIG_PATH="$$(brew --prefix libarchive)/lib/pkgconfig:$$PKG_CONFIG_PATH"
else
SWIFT_ENV :=
endif
# The man page's date is pinned so that regenerating it is reproducible.
MAN_DATE := 2026-11-22
MAN_OUTPUT := .build/plugins/GenerateManual/outputs/questbak/questbak.1
DEMO := .build/demo
# Other apps' migration gates (Fixtures/Gates/<App>: old stores, the new build's empty store).
GATES := BennieGame Ritualist

# The tests' temporary folders (TMPDIR, which TemporaryTestDirectory and every questbak, python3
# and sqlite3 the tests start honour): a folder of this checkout's own on /dev/shm, a RAM file
# system, when it has 4 GiB free; else the system's. The tests write, sync and remove thousands
# of small stores and archives, and on a disk others write to an fsync can wait for seconds: a
# kill-point test took 33-65 s there and 21 s here, with the same CPU time (README, "Test suite
# time"). The tests check the same things on either: what a power loss leaves is the recorder's
# to say (PowerLossTests), and it records the calls, not the disk. 1777 as /tmp is: some commands
# run as nobody. Removed afterwards, whatever the tests say.
TEST_TMPDIR := $(shell avail=$$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $$4 }'); \
	[ "$${avail:-0}" -gt 4194304 ] && echo /dev/shm/questbak-tests-$$(printf %s "$(CURDIR)" | cksum | cut -d' ' -f1))
TEST_ENV := $(if $(TEST_TMPDIR),TMPDIR=$(TEST_TMPDIR))
TEST_TMPDIR_FRESH := $(if $(TEST_TMPDIR),rm -rf $(TEST_TMPDIR) && mkdir -p -m 1777 $(TEST_TMPDIR),true)
TEST_TMPDIR_REMOVE := $(if $(TEST_TMPDIR),rm -rf $(TEST_TMPDIR),true)

.PHONY: deps build demo test test-portable docs lint format man man-check fixtures golden fuzz crash-recorder crash-campaign bench clean install

deps:
ifeq ($(UNAME),Darwin)
	@for package in $(BREW_PACKAGES); do \
		brew list --versions $$package >/dev/null 2>&1 || brew install $$package; \
	done
else
	@missing=""; for package in $(APT_PACKAGES); do \
		dpkg -s $$package >/dev/null 2>&1 || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi
endif

build: deps
	swift build

# The main job on a bundled fixture store: back up a V1 store with sync damage, restore it as a
# V2 store with repairs, and migrate another V1 store the way the app's update would; then back up
# and restore another app's store by its own model, merge a backup into a store that has data of
# its own, and migrate another app's store to its new build's model.
demo: build
	@rm -rf $(DEMO) && mkdir -p $(DEMO)
	.build/debug/questbak inspect Fixtures/v1-anomalies/default.store
	.build/debug/questbak export Fixtures/v1-anomalies/default.store -o $(DEMO)/backup.qbak
	.build/debug/questbak inspect $(DEMO)/backup.qbak
	.build/debug/questbak import $(DEMO)/backup.qbak --validate --into $(DEMO)/restored.store --to-version 2.0.0 --report $(DEMO)/report.json
	.build/debug/questbak migrate Fixtures/v1-wal/default.store -o $(DEMO)/migrated.store
	.build/debug/questbak export Fixtures/AnyApp/kitchen-sink/default.store -o $(DEMO)/other-app.qbak
	.build/debug/questbak import $(DEMO)/other-app.qbak --into $(DEMO)/other-app/default.store
	.build/debug/questbak import $(DEMO)/backup.qbak --merge --validate --into $(DEMO)/migrated.store
	.build/debug/questbak migrate Fixtures/Gates/Ritualist/fixtures/v1-john/default.store --to Fixtures/Gates/Ritualist/next/default.store -o $(DEMO)/ritualist-v2.store
	@echo "demo output in $(DEMO): backup.qbak, restored.store, report.json, migrated.store (with the backup merged in), other-app.qbak, other-app/, ritualist-v2.store"

# Every test, the man-page check and the migration gate; record mode is never on here.
test: deps lint
	swift build --build-tests
	@# Three workers on two cores: a third of the tests' time is spent waiting (child processes,
	@# age), so a third worker takes the suite from about 245 s to 180 s. The build above is the
	@# one it tests (--skip-build: no second planning of it).
	$(TEST_TMPDIR_FRESH) && $(TEST_ENV) swift test --skip-build --parallel --num-workers 3 --xunit-output .build/xunit.xml; \
		status=$$?; $(TEST_TMPDIR_REMOVE); exit $$status
	python3 Scripts/test-summary.py .build/xunit.xml
	@# Examples/RescueBeforeReset: a store its app's new build cannot open, rescued and merged; non-zero on a mismatch.
	.build/debug/RescueBeforeReset
	$(MAKE) --no-print-directory test-portable
	@# The library as an app uses it (Examples/BackupApp): back up, verify, restore, merge.
	.build/debug/questbak-example Fixtures
	$(MAKE) docs
	$(MAKE) man-check
	swift package describe --type json | python3 Scripts/check-library-dependencies.py
	env -u QUESTBAK_RECORD .build/debug/questbak verify-migration --fixtures Fixtures
	@for app in $(GATES); do \
		echo "gate: $$app"; \
		env -u QUESTBAK_RECORD .build/debug/questbak verify-migration --fixtures Fixtures/Gates/$$app/fixtures \
			--to Fixtures/Gates/$$app/next/default.store || exit 1; \
	done

# The portable build (no libarchive, no libzstd: what an iOS app links): the archive tests, a
# round trip through the command line, damaged and hostile archives through `verify`, and the
# stale-temporary check iOS leaves out. It is built in the main build folder, whose dependencies
# (swift-crypto, GRDB) it shares, so only questbak's own modules compile again (about a minute;
# a folder of its own compiled everything again, over five minutes). The default build is kept
# aside meanwhile and put back afterwards, whatever the tests say.
PORTABLE_TESTS := TarFormatTests|ArchiveCodecCommandTests|StaleTemporaryStoreTests|VerifyCommandTests|MergeAttackTests
test-portable: deps
	@rm -rf .build-default; \
	if [ -d .build ]; then cp -a .build .build-default || exit 1; fi; \
	swift build --build-tests --disable-default-traits \
		&& { $(TEST_TMPDIR_FRESH) && $(TEST_ENV) swift test --skip-build --disable-default-traits --parallel --num-workers 3 \
			--filter '$(PORTABLE_TESTS)'; }; \
	status=$$?; $(TEST_TMPDIR_REMOVE); \
	if [ -d .build-default ]; then rm -rf .build && mv .build-default .build; fi; \
	exit $$status

# The library's DocC catalog (Sources/QuestBakKit/QuestBakKit.docc) and the `///` of its public
# symbols, built with every warning an error (an unresolved link, an undocumented parameter);
# the archive is left in .build/plugins/Swift-DocC/outputs/QuestBakKit.doccarchive. Then every
# public declaration an app sees (QuestBakKit's, and its re-exported modules') must have a `///`
# comment, which DocC does not ask for: the check reads what the compiler says is public, from
# the symbol graph.
docs: deps
	swift package generate-documentation --target QuestBakKit --warnings-as-errors
	swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members >/dev/null
	python3 Scripts/check-public-docs.py

# The code style (.swift-format, with swift format from the toolchain): `make format` applies it.
lint:
	swift format lint --strict --recursive --parallel Sources Tests Examples Package.swift

format:
	swift format format --in-place --recursive Sources Tests Examples Package.swift

# Regenerates man/questbak.1 from the command definitions (argument-parser's generate-manual),
# with the EXIT STATUS section made from questbak's own table (`questbak exit-statuses`) and the
# sections generate-manual cannot write from man/sections-*.mdoc (Scripts/man-splice.py).
man: deps
	swift package plugin generate-manual --configuration debug --date $(MAN_DATE)
	$(MAKE) --no-print-directory .build/questbak.1
	cp .build/questbak.1 man/questbak.1

# Fails when man/questbak.1 is not what the command definitions generate.
man-check: deps
	swift package plugin generate-manual --configuration debug --date $(MAN_DATE) >/dev/null
	$(MAKE) --no-print-directory .build/questbak.1
	diff -u man/questbak.1 .build/questbak.1 && echo "man page: up to date"
	@# mdoc's own warnings (-ww): none allowed.
	@warnings=$$(groff -ww -z -mandoc man/questbak.1 2>&1); \
	if [ -n "$$warnings" ]; then echo "$$warnings"; echo "man page: groff -ww -z -mandoc warns"; exit 1; fi; \
	echo "man page: no mdoc warnings"

.PHONY: .build/questbak.1
.build/questbak.1:
	swift build --product questbak
	.build/debug/questbak exit-statuses --format mdoc > .build/exit-statuses.mdoc
	python3 Scripts/man-splice.py $(MAN_OUTPUT) .build/exit-statuses.mdoc man/sections-before-exit-status.mdoc \
		man/sections-after-exit-status.mdoc .build/questbak.1

# Regenerates the golden fixture stores; only on purpose (see Fixtures/README.md).
fixtures: deps
	swift run questbak-fixtures Fixtures

# Rewrites the golden migration dumps beside the fixtures; only on purpose, then review the diff.
golden: build
	-.build/debug/questbak verify-migration --fixtures Fixtures --record
	-for app in $(GATES); do \
		.build/debug/questbak verify-migration --fixtures Fixtures/Gates/$$app/fixtures --to Fixtures/Gates/$$app/next/default.store --record; \
	done

# The fuzz campaign (docs/reliability.md): 2,500 byte mutants and 2,500 value mutants of each corpus seed.
fuzz: deps
	swift run -c release questbak-fuzz --iterations 2500

# The power-loss recorder (Tools/crash-recorder/recorder.c), an LD_PRELOAD shim; the tests build
# it themselves when it is missing or older than its source.
crash-recorder: .build/crash-recorder.so
.build/crash-recorder.so: Tools/crash-recorder/recorder.c
	@mkdir -p .build
	cc -shared -fPIC -O2 -Wall -o $@ $< -ldl

# The power-loss campaign (docs/reliability.md, "Power loss"): every command recorded, the crash
# states of every prefix exhaustive up to 2^8 and 48 seeded beyond, a second run for each
# distinct one; the table of its figures is left in .build/crash-campaign.md.
crash-campaign: deps crash-recorder
	swift build --build-tests
	@printf '| command | operations recorded | prefixes exhaustive / sampled | crash states explored | distinct states | second runs | failures |\n|---|---|---|---|---|---|---|\n' > .build/crash-campaign.md
	QUESTBAK_CRASH_CAMPAIGN=1 QUESTBAK_CRASH_REPORT=$(CURDIR)/.build/crash-campaign.md swift test --skip-build --filter PowerLossTests
	@cat .build/crash-campaign.md

# The performance benchmark (docs/performance.md); SIZES="10000 100000" picks the store sizes.
bench: deps
	Benchmarks/run $(SIZES)

# Installs the release binary, its man page and bash, zsh and fish completions under PREFIX.
PREFIX ?= /usr/local
install: deps
	$(SWIFT_ENV) swift build -c release --product questbak
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 755 .build/release/questbak $(DESTDIR)$(PREFIX)/bin/questbak
	install -m 644 man/questbak.1 $(DESTDIR)$(PREFIX)/share/man/man1/questbak.1
	.build/release/questbak --generate-completion-script bash > $(DESTDIR)$(PREFIX)/share/bash-completion/completions/questbak
	.build/release/questbak --generate-completion-script zsh > $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_questbak
	.build/release/questbak --generate-completion-script fish > $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/questbak.fish
	@echo "installed $(DESTDIR)$(PREFIX)/bin/questbak"

clean:
	rm -rf .build .build-default
