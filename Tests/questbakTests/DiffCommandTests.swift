import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// `questbak diff A B`: records matched by identity, migrations' added properties named as such.
final class DiffCommandTests: XCTestCase {
    func testAStoreAndItsOwnArchiveAreTheSame() throws {
        for fixture in ["v2-typical", "AnyApp/kitchen-sink"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let archive = directory.path("a.qbak")
            XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
            let result = try Questbak.run(["diff", store.path, archive.path])
            XCTAssertEqual(result.status, 0, "\(fixture): \(result.standardOutput)\(result.standardError)")
            XCTAssertEqual(result.standardOutput, "0 added, 0 removed, 0 changed\n")
        }
    }

    func testAV1FixtureAndItsMigratedV2DifferOnlyByTheAddedCloudIDs() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let migrated = directory.path("v2.store")
        XCTAssertEqual(try Questbak.run(["migrate", store.path, "-o", migrated.path, "-q", "--now", "2026-01-01T00:00:00Z"]).status, 0)
        let result = try Questbak.run(["diff", store.path, migrated.path, "--json"])
        XCTAssertEqual(result.status, 1, result.standardError)
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(document["added"] as? Int, 0)
        XCTAssertEqual(document["removed"] as? Int, 0)
        XCTAssertEqual(document["changed"] as? Int, 0)
        for entity in try XCTUnwrap(document["entities"] as? [[String: Any]]) {
            XCTAssertEqual(entity["fieldsOnlyInB"] as? [String], ["cloudID"], "\(entity)")
            XCTAssertEqual(entity["fieldsOnlyInA"] as? [String], [], "\(entity)")
        }
    }

    /// Two devices' stores: the same routine under other keys is one record (matched by cloudID);
    /// an edited name and a new session are named.
    func testRecordsAreMatchedByIdentityNotByKey() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let other = directory.path("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let b = other.appendingPathComponent("default.store")
        try FileManager.default.copyItem(at: a, to: b)
        try DatabaseQueue(path: b.path).write { db in
            try db.execute(sql: "UPDATE ZROUTINE SET Z_PK = Z_PK + 100")
            try db.execute(sql: "UPDATE ZROUTINETASK SET ZROUTINE = ZROUTINE + 100")
            try db.execute(sql: "UPDATE ZGAMESESSION SET ZROUTINE = ZROUTINE + 100")
            try db.execute(sql: "UPDATE ZROUTINE SET ZDISPLAYNAME = 'Renamed' WHERE Z_PK = 101")
            try db.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK = 1")
        }
        let result = try Questbak.run(["diff", a.path, b.path])
        XCTAssertEqual(result.status, 1, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("Routine: 0 added, 0 removed, 1 changed (matched by cloudID)"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("displayName \""), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("→ \"Renamed\""), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("TaskEstimation: 0 added, 1 removed"), result.standardOutput)
        let stat = try Questbak.run(["diff", a.path, b.path, "--stat"])
        XCTAssertFalse(stat.standardOutput.contains("  ~ "), stat.standardOutput)
    }
}
