import ArgumentParser
import Foundation
import QuestBakKit

extension Questbak {
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
                store is in the new one by entity, _pk and property; a valid check then finds what the new build would \
                refuse at launch (Core Data 134110): a NULL in a required attribute without a default, a value outside its \
                type's range, a required to-one that is empty or names no record. Without --through, the chain named in the \
                folder's questbak-fixtures.json (questbak fixtures chain) is followed. Prints one line per check and a \
                closing "N passed, N failed", and with --junit FILE the same checks as JUnit XML. An app team keeps stores \
                copied from its simulators in a folder (questbak fixtures add) and runs this with --fixtures on every change. \
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

        @OptionGroup var progressOptions: ProgressOptions

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
                    target = ModelVersion(compiled: try CompiledModel.model(ofStoreAt: URL(fileURLWithPath: toModelStore)))
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
                // Progress by fixture: one is done when its first check is reported (its migration
                // is the long part); a fixture already at the target makes no check and is not counted.
                let progress = progressOptions.reporter(command: "verify-migration", quiet: json)
                defer { progress.abandon() }
                let total = try verifier.fixtureStores().count
                var seen: Set<String> = []
                // From the start, so that the rate and ETA count the first fixture's time.
                progress.callback?(RecordProgress(entity: "fixtures", rowsDone: 0, rowsTotal: total))
                let checks = try verifier.run(workDirectory: work) { check in
                    defer {
                        if seen.insert(check.fixture).inserted {
                            progress.callback?(RecordProgress(entity: "fixtures", rowsDone: seen.count, rowsTotal: max(total, seen.count)))
                        }
                    }
                    guard !json else { return }
                    progress.clearBar()
                    // The library states the fact; the flag that records an expectation is ours to name.
                    var detail =
                        check.missingExpectation.map {
                            "no expectation \($0); record one with --record (or QUESTBAK_RECORD=1) and review it"
                        } ?? check.earlierDumpFormat.map {
                            "\($0) is in an earlier dump format: record it again with --record (or QUESTBAK_RECORD=1) and review that only its form changed"
                        } ?? check.detail
                    if check.anotherAppsStore {
                        detail += "; to check another app's fixtures, give --to NEW_BUILD_STORE (a store its new build made)"
                    }
                    print("\(check.passed ? "ok  " : "FAIL") \(check.fixture): \(check.name)" + (check.passed ? " (\(detail))" : ""))
                    if !check.passed {
                        print(detail.split(separator: "\n", omittingEmptySubsequences: false).map { "     " + $0 }.joined(separator: "\n"))
                    }
                }
                progress.finish()
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
}
