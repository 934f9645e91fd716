import ArgumentParser
import Foundation
import QuestBakKit

/// Where a command gets its target schema: a built-in version, or a schema file (a proposed
/// next version) added to the built-in ones.
struct SchemaOptions: ParsableArguments {
    @Option(
        name: .customLong("schema"),
        help: "A schema file (JSON, see `questbak schema`) to use as the target, e.g. a proposed next version.", completion: .file())
    var schemaFile: String?

    func schemas() throws -> (target: Schema, candidates: [Schema]) {
        guard let schemaFile else { return (TimeQuestSchemas.newest, TimeQuestSchemas.all) }
        let custom = try Schema.load(from: try InputPath.schemaFile(schemaFile))
        return (custom, TimeQuestSchemas.all.filter { $0.versionIdentifier != custom.versionIdentifier } + [custom])
    }
}

extension Questbak {
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Migrate a store to a newer schema the way Core Data would, then fix what Core Data leaves wrong.",
            discussion: """
                Applies the lightweight migration (new columns added with ALTER TABLE, each filled with one default value, \
                metadata and model hashes of the new version), then gives every record its own cloudID (Core Data gives \
                all rows the same UUID().uuidString) and merges extra PlayerProfiles. A change between the schemas that is \
                not lightweight (a removal, a rename without originalName, a type change, a new required property without \
                a default) is refused with the offending properties named. The source is never modified unless --in-place \
                is given; then it is kept as STORE.questbak-backup-<time>, and every file of that backup and the commands \
                that put them back are printed (on standard error under --quiet and --json).

                Any app's store migrates with --to NEW_MODEL_STORE, a store made by the app's new build (an empty one is \
                enough): the new build's tables and indexes (its own statements), every record moved by entity and property \
                name or originalName, new properties given the new model's archived default, entities renumbered with their \
                join tables and hidden columns, and the new build's metadata and model cache, so it opens the store without \
                migrating again. A cloudID default shared by every record (SwiftData archives UUID() once) becomes one per record.
                """
        )

        @Argument(help: "The store to migrate.", completion: .file())
        var store: String

        // The same name as import's option for the same thing.
        @Option(help: "The schema version to migrate to (default: the newest).")
        var toVersion: String?

        @Option(
            name: .customLong("to"),
            help: "A store made by the app's new build (an empty one is enough): migrate any app's store to its model.",
            completion: .file())
        var toModelStore: String?

        @Option(
            name: .customLong("through"),
            help:
                "With --to: a store of an earlier model of the app, oldest first (repeat it): migrate step by step, as a staged migration.",
            completion: .file())
        var through: [String] = []

        @Option(name: .shortAndLong, help: "The new store to write.", completion: .file())
        var output: String?

        @Flag(help: "Replace STORE with the migrated store, keeping a backup beside it.")
        var inPlace = false

        @OptionGroup var schemaOptions: SchemaOptions

        @Option(help: "What Date.now defaults of new properties become, UTC, as YYYY-MM-DDTHH:MM:SSZ (default: now).")
        var now: String?

        @Flag(help: "Give cloudIDs fresh random UUIDs instead of deterministic ones.")
        var randomIds = false

        @Option(help: "Write the report of every change as JSON to this file.", completion: .file())
        var report: String?

        @Flag(help: "Print the report as JSON.")
        var json = false

        @Flag(name: .shortAndLong, help: "Print nothing but errors.")
        var quiet = false

        /// `migrate` has no --replace: an existing -o is another file to choose, or --in-place.
        static func hint(_ error: Error) -> String? {
            if case OutputError.exists? = error as? OutputError { return "choose another -o, or use --in-place to migrate STORE itself" }
            return nil
        }

        func validate() throws {
            if (output == nil) == !inPlace {
                throw ValidationError("give either -o NEW_STORE or --in-place")
            }
            if toModelStore != nil, toVersion != nil || schemaOptions.schemaFile != nil {
                throw ValidationError("--to STORE names the new model; --to-version and --schema name a TimeQuest schema: give one")
            }
            try ModelStoreArgument.check(toModelStore)
            if !through.isEmpty, toModelStore == nil { throw ValidationError("--through goes with --to NEW_MODEL_STORE") }
            if !through.isEmpty, inPlace { throw ValidationError("a chain (--through) writes a new store: give -o instead of --in-place") }
            if let now, DateText.secondsSinceReferenceDate(iso8601: now) == nil {
                throw ValidationError("--now must look like 2026-01-31T12:00:00Z")
            }
        }

        func run() throws {
            try reportingFailures(json: json, hint: Self.hint) {
                let (newest, candidates) = try schemaOptions.schemas()
                var target = newest
                if let toVersion {
                    guard let named = candidates.first(where: { $0.versionIdentifier == toVersion }) else {
                        throw ValidationError(
                            "--to-version \(toVersion) is not a known schema (known: \(candidates.map(\.versionIdentifier).joined(separator: ", ")))"
                        )
                    }
                    target = named
                }
                var options = Migrator.Options(
                    now: now.flatMap { DateText.secondsSinceReferenceDate(iso8601: $0) } ?? Date().timeIntervalSinceReferenceDate)
                options.randomIDs = randomIds
                options.inPlace = inPlace
                options.backupStamp = Import.stamp(Date())
                let reportFile = try ReportDocument.open(report)
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let result: Migrator.Result
                do {
                    if let toModelStore {
                        result = try ModelMigrator.migrate(
                            storeAt: URL(fileURLWithPath: store), through: through.map { URL(fileURLWithPath: $0) },
                            toModelOf: URL(fileURLWithPath: toModelStore), output: output.map { URL(fileURLWithPath: $0) },
                            options: options,
                            workDirectory: work)
                    } else {
                        result = try Migrator.migrate(
                            storeAt: URL(fileURLWithPath: store), to: target, output: output.map { URL(fileURLWithPath: $0) },
                            options: options, workDirectory: work, candidates: candidates)
                    }
                } catch MigrationError.alreadyAtVersion(let path, let version) {
                    // A no-op, not a failure: nothing is written (no -o, no backup, no --report).
                    if json {
                        print(try JSONOutput.render(NothingToDo(source: path, sourceSchemaVersion: version, targetSchemaVersion: version)))
                    } else if !quiet {
                        print("\(path): already at schema \(version); nothing to do")
                    }
                    return
                }
                try ReportDocument.emit(summary: result, log: result.log, to: reportFile, json: json)
                let undo = result.backup.map { Undo.text(backup: $0, files: result.backupFiles, target: result.output) }
                if !json && !quiet {
                    var lines = [
                        "migrated \(result.store) from schema \(result.sourceSchemaVersion) to \(result.targetSchemaVersion) into \(result.output)"
                    ]
                    if let undo { lines.append(undo) }
                    lines += result.notes ?? []
                    lines.append(
                        "changes: "
                            + (result.counts.isEmpty
                                ? "none" : result.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", "))
                    )
                    print(lines.joined(separator: "\n"))
                }
                // How to undo is printed whatever else is asked (standard error under -q and --json).
                if let undo, quiet || json { FileHandle.standardError.write(Data((undo + "\n").utf8)) }
            }
        }
    }

    struct VerifyMigration: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-migration",
            abstract: "The CI gate: migrate every older fixture store and check it against golden dumps, invariants and a round trip.",
            discussion: """
                For every *.store in the fixtures folder (or one level below it) of an older schema: migrate it to the \
                newest schema (or --schema); compare a canonical dump of the result with the committed golden file \
                <store>.expected-<version>.dump, printing a diff on any difference; check that no record or value was lost \
                or changed beyond the reported repairs, that cloudIDs are unique, that there is one PlayerProfile, that \
                relationships are intact and that the model hashes are the target's; and export, import and export again, \
                expecting identical members. With --to NEW_MODEL_STORE (a store made by the app's new build), any app's \
                fixture stores are migrated to that store's model and checked the same way: the golden dump is the migrated \
                records as an archive writes them, and the invariants check that every record, value and link of the old \
                store is in the new one by entity, _pk and property. Prints one line per check and a closing "N passed, N \
                failed". An app team \
                commits stores copied from its simulators into a folder and runs this with --fixtures on every change. \
                --record (or QUESTBAK_RECORD=1) rewrites the golden files on purpose and fails, so it is never used by accident in CI.
                """
        )

        // Required: a gate that quietly read ./Fixtures could check the wrong folder, or none.
        @Option(help: "The folder of fixture stores.", completion: .directory)
        var fixtures: String

        @OptionGroup var schemaOptions: SchemaOptions

        @Option(
            name: .customLong("to"),
            help: "A store made by the app's new build: check any app's fixture stores migrating to its model.", completion: .file())
        var toModelStore: String?

        @Option(
            name: .customLong("through"),
            help: "With --to: a store of an earlier model of the app, oldest first (repeat it): each fixture migrates step by step.",
            completion: .file())
        var through: [String] = []

        @Flag(help: "Rewrite the golden dumps instead of comparing (also QUESTBAK_RECORD=1).")
        var record = false

        @Flag(help: "Print the checks as JSON.")
        var json = false

        @Option(
            help: "Also write the checks as JUnit XML to FILE (one testcase per fixture and check), for CI to show.",
            completion: .file())
        var junit: String?

        func validate() throws {
            try ModelStoreArgument.check(toModelStore)
        }

        func run() throws {
            var failed = 0
            try reportingFailures(json: json) {
                let folder = try InputPath.fixturesFolder(fixtures)
                // Opened before the work: a report that cannot be written stops the gate now.
                let junitFile = try junit.map { try AtomicOutputFile(destination: URL(fileURLWithPath: $0), overwrite: true) }
                var (target, candidates) = try schemaOptions.schemas()
                if let toModelStore {
                    guard schemaOptions.schemaFile == nil else {
                        throw ValidationError("--to STORE names the new model; --schema names a TimeQuest schema: give one")
                    }
                    target = try Schema.model(ofStoreAt: URL(fileURLWithPath: toModelStore))
                    candidates = [target]
                }
                var verifier = MigrationVerifier(fixtures: folder, target: target, candidates: candidates)
                verifier.modelStore = toModelStore.map { URL(fileURLWithPath: $0) }
                if !through.isEmpty, toModelStore == nil { throw ValidationError("--through goes with --to NEW_MODEL_STORE") }
                // The chain the fixtures' manifest names, unless --through names one for this run.
                verifier.modelChain =
                    through.isEmpty && toModelStore != nil
                    ? try FixtureSet(folder: folder).chain() : through.map { URL(fileURLWithPath: $0) }
                verifier.record = record || ProcessInfo.processInfo.environment["QUESTBAK_RECORD"] == "1"
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let checks = try verifier.run(workDirectory: work) { check in
                    guard !json else { return }
                    // The library states the fact; the flag that records an expectation is ours to name.
                    var detail =
                        check.missingExpectation.map {
                            "no expectation \($0); record one with --record (or QUESTBAK_RECORD=1) and review it"
                        } ?? check.detail
                    if check.anotherAppsStore {
                        detail += "; to check another app's fixtures, give --to NEW_BUILD_STORE (a store its new build made)"
                    }
                    print("\(check.passed ? "ok  " : "FAIL") \(check.fixture): \(check.name)" + (check.passed ? " (\(detail))" : ""))
                    if !check.passed {
                        print(detail.split(separator: "\n", omittingEmptySubsequences: false).map { "     " + $0 }.joined(separator: "\n"))
                    }
                }
                // A gate that checked nothing must not pass.
                if checks.isEmpty { throw InputPath.fail(.verificationFailed, try Self.nothingToVerify(verifier)) }
                failed = checks.filter { !$0.passed }.count
                if let junitFile {
                    try FileHandle(fileDescriptor: junitFile.fileDescriptor, closeOnDealloc: false).write(
                        contentsOf: Data(JUnitReport.document(checks, name: "questbak verify-migration").utf8))
                    try junitFile.commit()
                }
                if json {
                    print(try JSONOutput.render(checks))
                } else {
                    print("\(checks.count - failed) passed, \(failed) failed")
                }
            }
            if failed > 0 { throw ExitCode(ExitStatus.verificationFailed.rawValue) }
        }

        /// Why a run made no check, in terms of what MigrationVerifier searches: files named
        /// *.store directly in the folder or in its subfolders, of a schema older than the target.
        static func nothingToVerify(_ verifier: MigrationVerifier) throws -> String {
            let folder = verifier.fixtures.path
            let target = verifier.target.versionIdentifier
            func label(_ url: URL) -> String { url.path.hasPrefix(folder + "/") ? String(url.path.dropFirst(folder.count + 1)) : url.path }
            var message =
                "nothing to verify in \(folder): verify-migration migrates stores of a schema older than \(target), "
                + "files named *.store directly in that folder or in its subfolders one level down (<folder>/*.store, <folder>/<name>/*.store)"
            let stores = try verifier.fixtureStores()
            if stores.isEmpty {
                message += ", and found none"
            } else {
                let shown = stores.prefix(5).map(label).joined(separator: ", ")
                message +=
                    "; the \(stores.count == 1 ? "one store" : "\(stores.count) stores") found (\(shown)\(stores.count > 5 ? ", …" : "")) "
                    + "\(stores.count == 1 ? "is" : "are") already at schema \(target)"
            }
            // Stores deeper down are not searched: name a few, the likeliest mistake.
            var deeper: [String] = []
            if let walk = FileManager.default.enumerator(atPath: folder) {
                for case let path as String in walk where path.hasSuffix(".store") && path.split(separator: "/").count > 2 {
                    deeper.append(path)
                    if deeper.count == 3 { break }
                }
            }
            if !deeper.isEmpty {
                message += "; stores deeper down are not searched: " + deeper.joined(separator: ", ")
            }
            return message
        }
    }

    struct CheckMigration: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-migration",
            abstract: "Check that a proposed model is a lightweight migration from an older one.",
            discussion: """
                Each model is a store (its own model, read from Z_MODELCACHE: an empty store made by that build of the app is \
                enough), a schema file (JSON, see `questbak schema`) or a built-in version. Exits 0 when Core Data can migrate \
                without custom code, 65 with every offending property named otherwise.
                """
        )

        @Argument(help: "The proposed model: a store, a schema file or a built-in version.", completion: .file())
        var schemaFile: String

        @Option(help: "The model it replaces: a store, a schema file or a built-in version (default: the newest built-in).")
        var from: String?

        func run() throws {
            try reportingFailures {
                let proposed = try ModelArgument.schema(schemaFile)
                let old = try from.map(ModelArgument.schema) ?? TimeQuestSchemas.newest
                let problems = LightweightCheck.problems(from: old, to: proposed)
                guard problems.isEmpty else {
                    throw MigrationError.notLightweight(from: old.versionIdentifier, to: proposed.versionIdentifier, problems: problems)
                }
                print("schema \(old.versionIdentifier) → \(proposed.versionIdentifier) is a lightweight migration")
            }
        }
    }

    struct SchemaCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "schema",
            abstract: "Print a store's own model, or a built-in schema, as JSON: one file per version to commit and check.",
            discussion: """
                Given a store, prints the model the store carries (Z_MODELCACHE) in the schema-file format: entities with \
                parents, attributes with types, optionality and the concrete defaults SwiftData archived, composites with their \
                elements, relationships with inverses, delete rules and counts, uniqueness constraints. A store without a \
                readable model cache is refused (exit 65). Given a version, or nothing, prints a built-in TimeQuest schema.
                """
        )

        @Argument(help: "A store, or a built-in schema version (default: the newest built-in).", completion: .file())
        var version: String?

        func run() throws {
            try reportingFailures {
                let wanted = version ?? TimeQuestSchemas.newest.versionIdentifier
                let schema: Schema
                if FileKind.of(wanted) == .sqliteStore {
                    schema = try Schema.model(ofStoreAt: URL(fileURLWithPath: wanted))
                } else if let builtIn = TimeQuestSchemas.schema(forVersion: wanted) {
                    schema = builtIn
                } else {
                    throw ValidationError(
                        "\(wanted) is neither a store nor a built-in schema (known: \(TimeQuestSchemas.all.map(\.versionIdentifier).joined(separator: ", ")))"
                    )
                }
                FileHandle.standardOutput.write(try schema.jsonData())
            }
        }
    }
}

/// What `migrate --json` prints for a store already at the target version.
private struct NothingToDo: Encodable {
    /// The same key as a migration's result: what was read is the source.
    var source: String
    var sourceSchemaVersion: String
    var targetSchemaVersion: String
    var counts: [String: Int] = [:]
    var entries: [String] = []
}

/// Paths from the command line checked before a command starts, so a missing or wrong kind of
/// input is one sentence and exit 66 rather than a Foundation error.
private enum InputPath {
    /// The error to throw for a path that is missing or of the wrong kind; `reportingFailures`
    /// prints it (as JSON too under --json) and ends with `status`.
    static func fail(_ status: ExitStatus, _ message: String) -> CommandLineInputError {
        CommandLineInputError(status: status, message: message)
    }

    static func schemaFile(_ path: String) throws -> URL {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw fail(.noInput, "\(url.path): no such schema file")
        }
        if isDirectory.boolValue {
            throw fail(.noInput, "\(url.path): is a folder; a schema file (JSON, see `questbak schema`) is expected")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw fail(.noInput, "\(url.path): the schema file cannot be read")
        }
        return url
    }

    static func fixturesFolder(_ path: String) throws -> URL {
        let url = URL(fileURLWithPath: path, isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw fail(.noInput, "\(url.path): no such folder (--fixtures names the folder of fixture stores)")
        }
        guard isDirectory.boolValue else {
            throw fail(
                .noInput,
                "\(url.path): is a file, not a folder; --fixtures expects a folder of fixture stores (files named *.store directly "
                    + "in it or in its subfolders one level down), such as \(url.deletingLastPathComponent().path)")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw fail(.noInput, "\(url.path): the fixtures folder cannot be read")
        }
        return url
    }
}

/// The JSON report: the summary's keys, then `entries`, one repair-log entry a line. Streamed in
/// chunks, never held whole: a merge of a million records logs millions of entries.
enum ReportDocument {
    static func stream<Summary: Encodable>(summary: Summary, log: RepairLog, to output: FileHandle) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var buffer = try encoder.encode(summary)
        buffer.removeLast()  // the closing brace: the entries follow
        buffer.append(Data(",\"entries\":[".utf8))
        var first = true
        try log.forEachEntryLine { line in
            buffer.append(Data(((first ? "\n" : ",\n") + line).utf8))
            first = false
            if buffer.count >= 1 << 20 {
                try output.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        buffer.append(Data("\n]}\n".utf8))
        try output.write(contentsOf: buffer)
    }

    /// The report's file, opened before the command's work: a path it cannot be written to then
    /// stops the command before anything is changed, not after (with the backup's name unsaid).
    static func open(_ report: String?) throws -> AtomicOutputFile? {
        try report.map { try AtomicOutputFile(destination: URL(fileURLWithPath: $0), overwrite: true) }
    }

    /// Writes the report to `file` (committed atomically) and to standard output when `json`.
    static func emit<Summary: Encodable>(summary: Summary, log: RepairLog, to file: AtomicOutputFile?, json: Bool) throws {
        if let file {
            try stream(summary: summary, log: log, to: FileHandle(fileDescriptor: file.fileDescriptor, closeOnDealloc: false))
            try file.commit()
        }
        if json { try stream(summary: summary, log: log, to: FileHandle.standardOutput) }
    }
}
