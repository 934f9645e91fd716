import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// The command line tells the truth (issue: an honest command line): nothing left behind, a
/// preview that shows everything, undo printed, inputs named for what they are, typos caught.
final class HonestCommandLineTests: XCTestCase {
    func files(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    func archive(of fixture: String, in directory: TemporaryTestDirectory, name: String = "a.qbak") throws -> URL {
        let archive = directory.path(name)
        let result = try Questbak.run(["export", try directory.copyFixture(fixture).path, "-o", archive.path, "-q"])
        XCTAssertEqual(result.status, 0, result.standardError)
        return archive
    }

    // MARK: Nothing left behind

    func testAnInterruptedExportLeavesNothingInTheTemporaryFolderOrBesideTheOutput() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("big.store")
        let fixtures = Questbak.executable.deletingLastPathComponent().appendingPathComponent("questbak-fixtures").path
        XCTAssertEqual(try Questbak.runProcess(fixtures, ["--bulk", "60000", store.path]), 0)
        var interrupted = 0
        for (index, delay) in [0.2, 0.5, 0.9].enumerated() {
            let temporary = directory.path("tmp-\(index)")
            let output = directory.path("out-\(index)")
            for folder in [temporary, output] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
            let process = Process()
            process.executableURL = Questbak.executable
            process.arguments = ["export", store.path, "-o", output.appendingPathComponent("b.qbak").path, "-q"]
            process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            XCTAssertEqual(try files(in: temporary), [], "the temporary folder after SIGINT at \(delay) s")
            let left = try files(in: output)
            if process.terminationReason == .uncaughtSignal, left.isEmpty {
                interrupted += 1
            } else {
                // It got as far as putting the archive in place (the signal may come just after):
                // then the archive must be complete, and nothing else may be there.
                XCTAssertEqual(left, ["b.qbak"], "beside the output after SIGINT at \(delay) s")
                XCTAssertEqual(try Questbak.run(["inspect", output.appendingPathComponent("b.qbak").path]).status, 0)
            }
        }
        XCTAssertGreaterThan(interrupted, 0, "no run was interrupted: the check checked nothing")
    }

    func testFoldersOfRunsThatWereKilledAreRemovedByTheNextRun() throws {
        let directory = try TemporaryTestDirectory()
        let temporary = directory.path("tmp")
        // A pid no process has (beyond Linux's largest pid), and this test's own, which lives.
        let stale = temporary.appendingPathComponent("questbak-export-99999999.AbCdEf")
        let live = temporary.appendingPathComponent("questbak-export-\(getpid()).AbCdEf")
        for folder in [stale, live] { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try Data(repeating: 1, count: 100).write(to: stale.appendingPathComponent("Routine.jsonl"))
        let result = try Questbak.run(["inspect", try directory.copyFixture("v1-typical").path], environment: ["TMPDIR": temporary.path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try files(in: temporary), [live.lastPathComponent])
    }

    func testAReplaceRefusedBecauseTheStoreIsInUseLeavesNoBackup() throws {
        let directory = try TemporaryTestDirectory()
        let target = try directory.copyFixture("v1-wal")
        let archive = try archive(of: "v1-typical", in: directory)
        let before = try files(in: target.deletingLastPathComponent())
        let result = try whileHeldOpen(target) { try Questbak.run(["import", archive.path, "--into", target.path, "--replace"]) }
        XCTAssertEqual(result.status, 75, result.standardError)
        // The target's own -wal and -shm come and go with the open connection; nothing else may appear.
        let own = Set(["", "-wal", "-shm"].map { target.lastPathComponent + $0 })
        let after = try files(in: target.deletingLastPathComponent()).filter { !own.contains($0) }
        XCTAssertEqual(after, before.filter { !own.contains($0) }, "no backup (store, -wal or -shm) and no temporary store left")
        XCTAssertFalse(after.contains { $0.contains("questbak") }, "\(after)")
    }

    func testAFolderAsTheTargetIsRefusedBeforeAnythingIsTouched() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-typical", in: directory)
        let folder = directory.path("restored")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let before = try files(in: directory.url)
        let result = try Questbak.run(["import", archive.path, "--into", folder.path, "--replace"])
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertTrue(result.standardError.contains("it is a folder; name the store file in it"), result.standardError)
        XCTAssertEqual(try files(in: directory.url), before)
        XCTAssertEqual(try files(in: folder), ["notes.txt"])
    }

    // MARK: Say what will happen, and what happened

    func testTheReadmesRestoreExampleCreatesTheFolderAndSaysSo() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-anomalies", in: directory)
        let target = directory.path("restored/default.store")
        let result = try Questbak.run(["import", archive.path, "--validate", "--into", target.path, "--to-version", "2.0.0"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("created folder \(directory.path("restored").path)"), result.standardOutput)
        XCTAssertTrue(FileManager.default.fileExists(atPath: target.path))
    }

    func testAFailedImportRemovesTheFoldersItMade() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "1.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1), RecordLines.routine(1)])]  // _pk twice
        let archive = directory.path("bad.qbak")
        try builder.write(to: archive)
        let result = try Questbak.run(["import", archive.path, "--validate", "--into", directory.path("a/b/default.store").path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("a").path))
    }

    func testAPreviewShowsEveryChangeTheRestoreMakes() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-anomalies", in: directory)
        let preview = try Questbak.run(["import", archive.path, "--validate", "--to-version", "2.0.0", "--json"])
        XCTAssertEqual(preview.status, 2, preview.standardError)  // it needs repairs
        let restore = try Questbak.run([
            "import", archive.path, "--validate", "--to-version", "2.0.0", "--into", directory.path("r.store").path, "--json",
        ])
        XCTAssertEqual(restore.status, 0, restore.standardError)
        let previewed = try XCTUnwrap(JSONSerialization.jsonObject(with: preview.outputData) as? [String: Any])
        let restored = try XCTUnwrap(JSONSerialization.jsonObject(with: restore.outputData) as? [String: Any])
        XCTAssertEqual(previewed["counts"] as? [String: Int], restored["counts"] as? [String: Int])
        XCTAssertGreaterThan(restored["changes"] as? Int ?? 0, restored["repairs"] as? Int ?? 0, "migration changes are counted too")
        XCTAssertEqual((restored["counts"] as? [String: Int])?.values.reduce(0, +), restored["changes"] as? Int)
        XCTAssertEqual((previewed["entries"] as? [Any])?.count, (restored["entries"] as? [Any])?.count)
        XCTAssertNotNil(restored["source"], "import and migrate both say source and target")
    }

    func testDryRunAndValidateOnlyFollowOneExitRule() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-anomalies", in: directory)
        let target = directory.path("r.store")
        XCTAssertEqual(try Questbak.run(["import", archive.path, "--validate"]).status, 2)
        XCTAssertEqual(try Questbak.run(["import", archive.path, "--validate", "--into", target.path, "--dry-run"]).status, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
        let clean = try self.archive(of: "v1-typical", in: directory, name: "clean.qbak")
        XCTAssertEqual(try Questbak.run(["import", clean.path, "--validate", "--into", target.path, "--dry-run"]).status, 0)
    }

    func testAReplaceDryRunSaysTheStoreWouldBeSetAside() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-typical", in: directory)
        let target = try directory.copyFixture("v1-wal")
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--replace", "--dry-run"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(
            result.standardOutput.contains(
                "would keep the existing store (18 records, with its -wal and -shm, when it has them) as \(target.path).questbak-backup-"),
            result.standardOutput)
        XCTAssertFalse(try files(in: target.deletingLastPathComponent()).contains { $0.contains("questbak-backup") })
    }

    func testUndoIsPrintedEvenWhenQuietAndPutsTheOldStoreBack() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-typical", in: directory)
        let target = try directory.copyFixture("v1-wal")
        let original = try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: target.path + $0)) }
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--replace", "-q"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(result.standardOutput, "")
        XCTAssertTrue(result.standardError.contains("previous store kept as \(target.path).questbak-backup-"), result.standardError)
        XCTAssertTrue(result.standardError.contains("-wal"), "the backup's -wal is listed: \(result.standardError)")
        let undo = try XCTUnwrap(result.standardError.split(separator: "\n").first { $0.hasPrefix("to undo: ") }).dropFirst(
            "to undo: ".count)
        XCTAssertEqual(try Questbak.runTool(["sh", "-c", String(undo)]).status, 0)
        XCTAssertEqual(
            try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: target.path + $0)) }, original, "undo put the old files back")
    }

    func testAllowNewerReportsTheArchivesOwnVersion() throws {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: "3.0.0")
        builder.members = [.init("Routine", records: [RecordLines.routine(1, ["cloudID": "8F2B6E9A-3C41-4D7E-9A0B-1C2D3E4F5A6B"])])]
        let archive = directory.path("v3.qbak")
        try builder.write(to: archive)
        let result = try Questbak.run(["import", archive.path, "--validate", "--allow-newer", "--json"])
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any], result.standardError)
        XCTAssertEqual(document["sourceSchemaVersion"] as? String, "3.0.0")
        XCTAssertEqual(document["targetSchemaVersion"] as? String, "2.0.0")
    }

    func testInspectCountsTheMembersOneWayInTextAndJSON() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-typical", in: directory)
        let text = try Questbak.run(["inspect", archive.path]).standardOutput
        let json = try XCTUnwrap(
            JSONSerialization.jsonObject(with: try Questbak.run(["inspect", archive.path, "--json"]).outputData) as? [String: Any])
        let count = try XCTUnwrap(json["verifiedMembers"] as? Int)
        XCTAssertTrue(text.contains("the manifest and all \(count) members it lists"), text)
    }

    func testErrorsUnderJSONAreJSON() throws {
        let result = try Questbak.run(["import", "/nonexistent/a.qbak", "--validate", "--json"])
        XCTAssertEqual(result.status, 66)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any], result.standardOutput)
        XCTAssertEqual(document["exitStatus"] as? Int, 66)
        XCTAssertTrue((document["error"] as? String)?.contains("no such file") == true)
    }

    // MARK: Wrong kinds of input get the right words

    func testWrongKindsOfInputAreNamedForWhatTheyAre() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try archive(of: "v1-typical", in: directory)
        let store = try directory.copyFixture("v1-edge-cases")
        let cases: [(arguments: [String], status: Int32, says: [String])] = [
            (
                ["export", archive.path, "-o", directory.path("x.qbak").path], 65,
                ["is not a store: it is a tar archive", "use questbak import"]
            ),
            (["export", directory.url.path, "-o", directory.path("x.qbak").path], 65, ["is not a store: it is a folder"]),
            (["import", store.path, "--validate"], 65, ["it is a SQLite store, not a questbak archive", "use questbak export"]),
            (["export", store.path, "-o", directory.url.path], 73, ["it is a folder; name the file to write in it"]),
            (["export", store.path, "-o", archive.path], 73, ["already exists (use --force to overwrite it)"]),
        ]
        for (arguments, status, says) in cases {
            let result = try Questbak.run(arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.standardError)")
            for text in says { XCTAssertTrue(result.standardError.contains(text), "\(arguments): \(result.standardError)") }
            XCTAssertFalse(result.standardError.contains("SQLite error"), result.standardError)
        }
    }

    func testMistypedCommandsAndOptionsGetASuggestion() throws {
        let command = try Questbak.run(["expor", "a.store", "-o", "b.qbak"])
        XCTAssertEqual(command.status, 64)
        XCTAssertTrue(command.standardError.contains("unknown command 'expor'; did you mean 'export'?"), command.standardError)
        let option = try Questbak.run(["export", "a.store", "--ouput", "b.qbak"])
        XCTAssertEqual(option.status, 64)
        XCTAssertTrue(option.standardError.contains("unknown option '--ouput'; did you mean '--output'?"), option.standardError)
    }

    func testAStoreTheUserCannotReadIsMissingInputForExportAndInspect() throws {
        guard !Questbak.unprivileged.isEmpty else { throw XCTSkip("needs setpriv to run as an unprivileged user") }
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: store.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.url.path)
        for arguments in [["export", store.path, "-o", directory.path("x.qbak").path], ["inspect", store.path]] {
            let result = try Questbak.run(arguments, prefix: Questbak.unprivileged)
            XCTAssertEqual(result.status, 66, "\(arguments[0]): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains("cannot be read: permission denied"), result.standardError)
        }
    }

    func testTheFixtureToolsHelpWritesNothing() throws {
        let directory = try TemporaryTestDirectory()
        let tool = Questbak.executable.deletingLastPathComponent().appendingPathComponent("questbak-fixtures").path
        let result = try Questbak.runTool(["sh", "-c", "cd '\(directory.url.path)' && '\(tool)' --help"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("usage: questbak-fixtures"), result.standardOutput)
        XCTAssertEqual(try files(in: directory.url), [])
    }
}
