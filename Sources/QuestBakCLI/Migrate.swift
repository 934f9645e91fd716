import ArgumentParser
import Foundation
import QuestBakKit

/// Where a command gets its target schema: a built-in version, or a schema file (a proposed
/// next version) added to the built-in ones.
struct SchemaOptions: ParsableArguments {
    @Option(name: .customLong("schema"), help: "A schema file (JSON, see `questbak schema`) to use as the target, e.g. a proposed next version.", completion: .file())
    var schemaFile: String?

    func schemas() throws -> (target: Schema, candidates: [Schema]) {
        guard let schemaFile else { return (TimeQuestSchemas.newest, TimeQuestSchemas.all) }
        let custom = try Schema.load(from: URL(fileURLWithPath: schemaFile))
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
                is given; then it is kept as STORE.questbak-backup-<time>.
                """
        )

        @Argument(help: "The store to migrate.", completion: .file())
        var store: String

        // The same name as import's option for the same thing.
        @Option(help: "The schema version to migrate to (default: the newest).")
        var toVersion: String?

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
            if let now, DateText.secondsSinceReferenceDate(iso8601: now) == nil {
                throw ValidationError("--now must look like 2026-01-31T12:00:00Z")
            }
        }

        func run() throws {
            try reportingFailures(hint: Self.hint) {
                let (newest, candidates) = try schemaOptions.schemas()
                var target = newest
                if let toVersion {
                    guard let named = candidates.first(where: { $0.versionIdentifier == toVersion }) else {
                        throw ValidationError("--to-version \(toVersion) is not a known schema (known: \(candidates.map(\.versionIdentifier).joined(separator: ", ")))")
                    }
                    target = named
                }
                var options = Migrator.Options(now: now.flatMap { DateText.secondsSinceReferenceDate(iso8601: $0) } ?? Date().timeIntervalSinceReferenceDate)
                options.randomIDs = randomIds
                options.inPlace = inPlace
                options.backupStamp = Import.stamp(Date())
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let result = try Migrator.migrate(
                    storeAt: URL(fileURLWithPath: store), to: target, output: output.map { URL(fileURLWithPath: $0) }, options: options,
                    workDirectory: work, candidates: candidates)
                let document = try ReportDocument.json(summary: result, log: result.log)
                if let report { try ReportDocument.write(document, to: URL(fileURLWithPath: report)) }
                if json {
                    FileHandle.standardOutput.write(document)
                } else if !quiet {
                    var lines = ["migrated \(result.store) from schema \(result.sourceSchemaVersion) to \(result.targetSchemaVersion) into \(result.output)"]
                    if let backup = result.backup { lines.append("previous store kept as \(backup)") }
                    lines.append("changes: " + (result.counts.isEmpty ? "none" : result.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")))
                    print(lines.joined(separator: "\n"))
                }
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
                expecting identical members. Prints one line per check and a closing "N passed, N failed". An app team \
                commits stores copied from its simulators into a folder and runs this with --fixtures on every change. \
                --record (or QUESTBAK_RECORD=1) rewrites the golden files on purpose and fails, so it is never used by accident in CI.
                """
        )

        @Option(help: "The folder of fixture stores.", completion: .directory)
        var fixtures = "Fixtures"

        @OptionGroup var schemaOptions: SchemaOptions

        @Flag(help: "Rewrite the golden dumps instead of comparing (also QUESTBAK_RECORD=1).")
        var record = false

        @Flag(help: "Print the checks as JSON.")
        var json = false

        func run() throws {
            var failed = 0
            try reportingFailures {
                let (target, candidates) = try schemaOptions.schemas()
                var verifier = MigrationVerifier(fixtures: URL(fileURLWithPath: fixtures, isDirectory: true), target: target, candidates: candidates)
                verifier.record = record || ProcessInfo.processInfo.environment["QUESTBAK_RECORD"] == "1"
                let work = try TemporaryDirectory.create(prefix: "questbak-work")
                defer { TemporaryDirectory.remove(work) }
                let checks = try verifier.run(workDirectory: work) { check in
                    guard !json else { return }
                    print("\(check.passed ? "ok  " : "FAIL") \(check.fixture): \(check.name)" + (check.passed ? " (\(check.detail))" : ""))
                    if !check.passed { print(check.detail.split(separator: "\n", omittingEmptySubsequences: false).map { "     " + $0 }.joined(separator: "\n")) }
                }
                failed = checks.filter { !$0.passed }.count
                if json {
                    print(try JSONOutput.render(checks))
                } else {
                    print("\(checks.count - failed) passed, \(failed) failed")
                }
            }
            if failed > 0 { throw ExitCode(ExitStatus.verificationFailed.rawValue) }
        }
    }

    struct CheckMigration: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-migration",
            abstract: "Check that a proposed schema is a lightweight migration from a built-in one.",
            discussion: "Exits 0 when Core Data can migrate without custom code, 65 with every offending property named otherwise."
        )

        @Argument(help: "The proposed schema (JSON, see `questbak schema`).", completion: .file())
        var schemaFile: String

        @Option(help: "The schema version it replaces (default: the newest built-in).")
        var from: String?

        func run() throws {
            try reportingFailures {
                let proposed = try Schema.load(from: URL(fileURLWithPath: schemaFile))
                let old = try from.map { version in
                    guard let schema = TimeQuestSchemas.schema(forVersion: version) else { throw ValidationError("--from \(version) is not a built-in schema") }
                    return schema
                } ?? TimeQuestSchemas.newest
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
            abstract: "Print a built-in schema as JSON, the starting point for describing a next version."
        )

        @Argument(help: "The schema version (default: the newest).")
        var version: String?

        func run() throws {
            try reportingFailures {
                let wanted = version ?? TimeQuestSchemas.newest.versionIdentifier
                guard let schema = TimeQuestSchemas.schema(forVersion: wanted) else {
                    throw ValidationError("\(wanted) is not a built-in schema (known: \(TimeQuestSchemas.all.map(\.versionIdentifier).joined(separator: ", ")))")
                }
                FileHandle.standardOutput.write(try schema.jsonData())
            }
        }
    }
}

/// A report document: a command's summary object with every log entry appended as `entries`.
enum ReportDocument {
    static func json<Summary: Encodable>(summary: Summary, log: RepairLog) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var output = try encoder.encode(summary)
        output.removeLast()  // the closing brace: the entries follow
        output.append(Data(",\"entries\":[".utf8))
        var first = true
        try log.forEachEntryLine { line in
            output.append(Data(((first ? "\n" : ",\n") + line).utf8))
            first = false
        }
        output.append(Data("\n]}\n".utf8))
        return output
    }

    static func write(_ document: Data, to url: URL) throws {
        let file = try AtomicOutputFile(destination: url, overwrite: true)
        try FileHandle(fileDescriptor: file.fileDescriptor, closeOnDealloc: false).write(contentsOf: document)
        try file.commit()
    }
}
