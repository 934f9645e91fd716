import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
    struct Migrate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Migrate a store to a newer schema the way Core Data would, then fix what Core Data leaves wrong.",
            discussion: """
                Applies the lightweight migration into a fresh store (the old tables with new columns added last, as ALTER \
                TABLE adds them; every record copied, new properties given the version's default, each such change \
                reported as migration.default; metadata and model hashes of the new version), then gives every record its \
                own cloudID (Core Data gives all rows the same UUID().uuidString) and merges extra PlayerProfiles. A change between the schemas that is \
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

        @OptionGroup var progressOptions: ProgressOptions

        /// `migrate` has no --replace: an existing -o is another file to choose, or --in-place.
        static func hint(_ error: Error) -> String? {
            if case OutputError.exists? = error as? OutputError { return "choose another -o, or use --in-place to migrate STORE itself" }
            if case MigrationError.anotherAppsStore? = error as? MigrationError {
                return "to migrate another app's store, give --to with a store the app's new build made"
            }
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
                let progress = progressOptions.reporter(command: "migrate", quiet: quiet || json)
                defer { progress.abandon() }
                options.progress = progress.callback
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
                        result = try ModelMigrator.migrate(
                            storeAt: URL(fileURLWithPath: store), toVersion: target, candidates: candidates,
                            output: output.map { URL(fileURLWithPath: $0) }, options: options, workDirectory: work)
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
                progress.finish()
                // A chain's report holds every step's entries, the earlier steps first.
                try ReportDocument.emit(summary: result, logs: result.earlierLogs + [result.log], to: reportFile, json: json)
                let undo = result.backup.map { Undo.text(backup: $0, files: result.backupFiles, target: result.output) }
                if !json && !quiet {
                    var lines = [
                        "migrated \(result.store.path) from schema \(result.sourceSchemaVersion) to \(result.targetSchemaVersion) into \(result.output.path)"
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
