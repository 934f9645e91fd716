import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

final class InspectCommandTests: XCTestCase {
    func testInspectsEveryFixture() throws {
        let expectations: [String: (version: String, estimations: Int)] = [
            "v1-typical": ("1.0.0", 36), "v1-edge-cases": ("1.0.0", 3), "v1-anomalies": ("1.0.0", 16), "v1-wal": ("1.0.0", 8),
            "v2-typical": ("2.0.0", 24),
        ]
        for (name, expected) in expectations {
            let directory = try TemporaryTestDirectory()
            let url = try directory.copyFixture(name)
            let result = try Questbak.run(["inspect", url.path, "--json"])
            XCTAssertEqual(result.status, 0, result.standardError)
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
            XCTAssertEqual(json["schemaVersion"] as? String, expected.version, name)
            XCTAssertEqual(json["hashesMatchVersion"] as? String, expected.version, name)
            XCTAssertEqual(json["versionIdentifiers"] as? [String], [expected.version], name)
            let entities = try XCTUnwrap(json["entities"] as? [[String: Any]])
            XCTAssertEqual(
                entities.map { $0["name"] as? String }, ["GameSession", "PlayerProfile", "Routine", "RoutineTask", "TaskEstimation"])
            XCTAssertEqual(entities.first { $0["name"] as? String == "TaskEstimation" }?["rows"] as? Int, expected.estimations, name)
            XCTAssertEqual((json["walFrames"] as? Int).map { $0 > 0 }, name == "v1-wal", name)
        }
    }

    func testTextOutput() throws {
        let directory = try TemporaryTestDirectory()
        let result = try Questbak.run(["inspect", try directory.copyFixture("v1-typical").path])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.standardOutput.contains("schema:              TimeQuest 1.0.0"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("      1  GameSession            9        12"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("WAL:                 no unmerged frames"), result.standardOutput)
    }

    func testBadInputHasDistinctStatuses() throws {
        let directory = try TemporaryTestDirectory()
        let missing = try Questbak.run(["inspect", directory.path("nope.store").path])
        XCTAssertEqual(missing.status, 66)
        XCTAssertTrue(missing.standardError.contains("nope.store: no such file"), missing.standardError)

        let text = directory.path("text.store")
        try Data("not a database at all, just text".utf8).write(to: text)
        let notSQLite = try Questbak.run(["inspect", text.path])
        XCTAssertEqual(notSQLite.status, 65)
        XCTAssertTrue(
            notSQLite.standardError.contains("text.store: cannot read the archive: neither a SQLite store nor a tar archive"),
            notSQLite.standardError)

        // SQLite's magic but a damaged body: SQLite's own verdict, with the file named.
        let damaged = directory.path("damaged.store")
        try (Data("SQLite format 3\0".utf8) + Data(repeating: 0xFF, count: 8192)).write(to: damaged)
        let notADatabase = try Questbak.run(["inspect", damaged.path])
        XCTAssertEqual(notADatabase.status, 65)
        XCTAssertTrue(notADatabase.standardError.contains("damaged.store: SQLite error"), notADatabase.standardError)
    }

    /// Run as an unprivileged user when the tests run as root, so the read-only directory is
    /// really read-only (root ignores permission bits).
    func testReadOnlyDirectoryIsReadAndLeftUntouched() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v1-wal")
        let folder = url.deletingLastPathComponent()
        try directory.makeReadOnly(folder)
        let before = try DirectoryState(of: folder)
        let unprivileged = Questbak.unprivileged
        if !unprivileged.isEmpty {
            // Prove the sandbox really is read-only for that user before trusting the result.
            let probe = try Questbak.runProcess("/usr/bin/env", unprivileged + ["touch", folder.appendingPathComponent("probe").path])
            XCTAssertNotEqual(probe, 0, "the directory should not be writable")
        }
        let result = try Questbak.run(["inspect", url.path, "--json"], prefix: unprivileged)
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("\"walFrames\" : 9"), result.standardOutput)
        XCTAssertEqual(try DirectoryState(of: folder), before)
    }
}
