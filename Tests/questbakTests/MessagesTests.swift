import Foundation
import QuestBakTestSupport
import XCTest

/// Messages as a user reads them: one style for every error, the flag a slip meant, and words
/// about what the input is rather than about what it lacks.
final class MessagesTests: XCTestCase {
    /// The argument parser's errors (a missing argument, a failed check of the options) look like
    /// every other error: `questbak: error: …`, then the usage.
    func testTheArgumentParsersErrorsAreInQuestbaksStyle() throws {
        for arguments in [["import"], ["import", "x.qbak"], ["migrate", "a.store"], ["diff", "a.store"]] {
            let result = try Questbak.run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.hasPrefix("questbak: error: "), "\(arguments): \(result.standardError)")
            XCTAssertFalse(result.standardError.contains("Error: "), "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("questbak \(arguments[0])"), "the usage follows: \(result.standardError)")
        }
        let missing = try Questbak.run(["import"])
        XCTAssertTrue(missing.standardError.hasPrefix("questbak: error: missing expected argument"), missing.standardError)
        // Help and the version are no errors; help for a mistyped command is.
        XCTAssertEqual(try Questbak.run(["--version"]).status, 0)
        XCTAssertEqual(try Questbak.run(["import", "--help"]).status, 0)
        XCTAssertEqual(try Questbak.run(["help", "import"]).status, 0)
        let help = try Questbak.run(["help", "expor"])
        XCTAssertEqual(help.status, 64)
        XCTAssertEqual(help.standardError, "questbak: error: unknown command 'expor'; did you mean 'export'?\n")
    }

    /// `--force` is what `export` calls overwriting; `import` calls it `--replace`, `migrate` `--in-place`.
    func testForceSuggestsWhatTheCommandCallsIt() throws {
        let cases: [([String], String)] = [
            (["import", "a.qbak", "--into", "b.store", "--force"], "did you mean '--replace'?"),
            (["migrate", "a.store", "--force"], "did you mean '--in-place'?"),
            (["import", "a.qbak", "--into", "b.store", "--overwrite"], "did you mean '--replace'?"),
        ]
        for (arguments, says) in cases {
            let result = try Questbak.run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments)")
            XCTAssertTrue(result.standardError.contains(says), "\(arguments): \(result.standardError)")
        }
    }

    /// A version where a store is expected: `--to` takes a store, `--to-version` a version.
    func testAVersionGivenToToHintsAtToVersion() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        for arguments in [
            ["migrate", store.path, "-o", directory.path("v2.store").path, "--to", "2.0.0"],
            ["verify-migration", "--fixtures", directory.url.path, "--to", "2.0.0"],
        ] {
            let result = try Questbak.run(arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("use --to-version 2.0.0"), result.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("v2.store").path))
        }
    }

    /// Refused for want of --validate, an import with --report still writes the report (what
    /// --validate would repair), and does not ask for the --report it was given.
    func testImportWritesTheReportItWasAskedForWhenItRefuses() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("damaged.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-anomalies").path, "-o", archive.path, "-q"]).status, 0)
        let report = directory.path("report.json")
        let target = directory.path("restored/default.store")
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--report", report.path])
        XCTAssertEqual(result.status, 2, result.standardError)
        XCTAssertTrue(result.standardError.contains("rerun with --validate"), result.standardError)
        XCTAssertTrue(result.standardError.contains("\(report.path) lists each"), result.standardError)
        XCTAssertFalse(result.standardError.contains("--report FILE"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "nothing restored")
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: report)) as? [String: Any])
        let entries = try XCTUnwrap(document["entries"] as? [[String: Any]])
        XCTAssertFalse(entries.isEmpty)
        // The same repairs a validating preview reports.
        let preview = try Questbak.run(["import", archive.path, "--validate", "--json"])
        let previewDocument = try XCTUnwrap(JSONSerialization.jsonObject(with: preview.outputData) as? [String: Any])
        XCTAssertEqual(entries.count, (previewDocument["entries"] as? [Any])?.count)
        // Without --report, the hint names it.
        let plain = try Questbak.run(["import", archive.path, "--into", target.path])
        XCTAssertTrue(plain.standardError.contains("--report FILE to see each"), plain.standardError)

        // A merge refused for the same reason writes its report too, and leaves the store alone.
        let store = try directory.copyFixture("v2-typical")
        let before = try DirectoryState(of: store.deletingLastPathComponent())
        let mergeReport = directory.path("merge-report.json")
        let merge = try Questbak.run(["import", archive.path, "--merge", "--into", store.path, "--report", mergeReport.path])
        XCTAssertEqual(merge.status, 2, merge.standardError)
        XCTAssertTrue(merge.standardError.contains("\(mergeReport.path) lists each"), merge.standardError)
        let mergeDocument = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: mergeReport)) as? [String: Any])
        XCTAssertEqual((mergeDocument["entries"] as? [Any])?.isEmpty, false)
        XCTAssertEqual(try DirectoryState(of: store.deletingLastPathComponent()), before)
    }

    /// verify-migration without --to on another app's fixtures says what they are and what to give.
    func testVerifyMigrationOfAnotherAppsFixturesWithoutToSaysSo() throws {
        let directory = try TemporaryTestDirectory()
        let fixtures = directory.path("fixtures")
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent("Gates/Ritualist/fixtures"), to: fixtures)
        let result = try Questbak.run(["verify-migration", "--fixtures", fixtures.path])
        XCTAssertEqual(result.status, 3, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardOutput.contains("not a TimeQuest store"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("give --to NEW_BUILD_STORE"), result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("ZROUTINE"), result.standardOutput)
        XCTAssertFalse(result.standardOutput.lowercased().contains("missing"), result.standardOutput)
    }

    /// Another app's archive merged into a store: the apps differ; no older store to migrate.
    func testMergingAnotherAppsArchiveSaysTheAppsDiffer() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("bennie.qbak")
        XCTAssertEqual(
            try Questbak.run(["export", try directory.copyFixture("AnyApp/bennie-game").path, "-o", archive.path, "-q"]).status, 0)
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let before = try DirectoryState(of: store.deletingLastPathComponent())
        let result = try Questbak.run(["import", archive.path, "--merge", "--into", store.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("is not of the same app as"), result.standardError)
        XCTAssertFalse(result.standardError.contains("migrate"), result.standardError)
        XCTAssertEqual(try DirectoryState(of: store.deletingLastPathComponent()), before)
    }
}
