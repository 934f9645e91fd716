import Foundation
import QuestBakTestSupport
import XCTest

/// `questbak fixtures add` and `fixtures list`: a managed set of migration fixtures, copied from
/// live stores without touching them, named by model, one per physical model unless asked, with
/// provenance in a manifest that the gate does not need.
final class FixturesCommandTests: XCTestCase {
    func json(_ result: CommandResult) throws -> Any {
        try JSONSerialization.jsonObject(with: result.outputData)
    }

    func testAddCopiesALiveStoreNamedByItsModelAndLeavesItAsItWas() throws {
        let directory = try TemporaryTestDirectory()
        let live = try directory.copyFixture("v1-wal")
        let before = try DirectoryState(of: live.deletingLastPathComponent())
        let set = directory.path("MigrationFixtures")
        let result = try Questbak.run(
            ["fixtures", "add", live.path, "--fixtures", set.path, "--app-version", "1.4 (212)", "--json"],
            environment: ["SOURCE_DATE_EPOCH": "1790000000"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try DirectoryState(of: live.deletingLastPathComponent()), before, "the live store, -wal and -shm are untouched")
        let added = try XCTUnwrap(try json(result) as? [String: Any])
        let entry = try XCTUnwrap(added["entry"] as? [String: Any])
        let name = try XCTUnwrap(entry["name"] as? String)
        let modelHash = try XCTUnwrap(entry["modelHash"] as? String)
        XCTAssertEqual(name, "1.0.0-\(modelHash)")
        XCTAssertEqual(entry["appVersion"] as? String, "1.4 (212)")
        XCTAssertEqual(entry["addedAt"] as? String, "2026-09-21T14:13:20Z")
        XCTAssertEqual(
            (entry["entityHashes"] as? [String: String])?.keys.sorted(),
            ["GameSession", "PlayerProfile", "Routine", "RoutineTask", "TaskEstimation"])
        // The copy holds what only the WAL held: the same records inspect counts in the source.
        let source = try XCTUnwrap(try json(try Questbak.run(["inspect", live.path, "--json"])) as? [String: Any])
        let copy = try XCTUnwrap(
            try json(try Questbak.run(["inspect", set.appendingPathComponent("\(name)/default.store").path, "--json"])) as? [String: Any])
        XCTAssertEqual(copy["entities"] as? NSArray, source["entities"] as? NSArray)
        let manifest = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: set.appendingPathComponent("questbak-fixtures.json"))) as? [String: Any])
        XCTAssertEqual((manifest["fixtures"] as? [[String: Any]])?.compactMap { $0["name"] as? String }, [name])
    }

    func testOnePhysicalModelOnceUnlessKept() throws {
        let directory = try TemporaryTestDirectory()
        let set = directory.path("set").path
        XCTAssertEqual(try Questbak.run(["fixtures", "add", try directory.copyFixture("v1-typical").path, "--fixtures", set]).status, 0)
        let again = try Questbak.run(["fixtures", "add", try directory.copyFixture("v1-edge-cases").path, "--fixtures", set])
        XCTAssertEqual(again.status, 73, again.standardError)
        XCTAssertTrue(again.standardError.contains("already has a fixture of this physical model"), again.standardError)
        XCTAssertTrue(again.standardError.contains("1.0.0-"), again.standardError)
        XCTAssertTrue(again.standardError.contains("--keep"), again.standardError)
        let kept = try Questbak.run(
            ["fixtures", "add", directory.path("v1-edge-cases/default.store").path, "--fixtures", set, "--keep", "--name", "edge-cases"])
        XCTAssertEqual(kept.status, 0, kept.standardError)
        XCTAssertTrue(kept.standardOutput.contains("same physical model"), kept.standardOutput)
        let taken = try Questbak.run(
            ["fixtures", "add", directory.path("v1-edge-cases/default.store").path, "--fixtures", set, "--keep", "--name", "edge-cases"])
        XCTAssertEqual(taken.status, 73, taken.standardError)
        let hostile = try Questbak.run([
            "fixtures", "add", try directory.copyFixture("v2-typical").path, "--fixtures", set, "--name", "../escape",
        ])
        XCTAssertEqual(hostile.status, 64, hostile.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("escape").path))
        // Another model is welcome, external-storage files and all.
        let other = try Questbak.run([
            "fixtures", "add", try directory.copyFixture("AnyApp/kitchen-sink").path, "--fixtures", set, "--json",
        ])
        XCTAssertEqual(other.status, 0, other.standardError)
        XCTAssertEqual((try json(other) as? [String: Any])?["externalFiles"] as? Int, 1)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: set).filter { !$0.hasPrefix(".") }.count, 4,
            "three fixtures and the manifest, nothing half made")
    }

    func testListShowsVersionsHashesCountsAndGoldensAndTheGateReadsTheSet() throws {
        let directory = try TemporaryTestDirectory()
        let set = directory.path("set").path
        XCTAssertEqual(try Questbak.run(["fixtures", "add", try directory.copyFixture("v1-typical").path, "--fixtures", set]).status, 0)
        var listed = try XCTUnwrap(try json(try Questbak.run(["fixtures", "list", "--fixtures", set, "--json"])) as? [[String: Any]])
        XCTAssertEqual(listed.count, 1)
        XCTAssertEqual(listed[0]["versionIdentifiers"] as? [String], ["1.0.0"])
        XCTAssertEqual((listed[0]["entities"] as? [String: Int])?["TaskEstimation"], 36)
        XCTAssertEqual(listed[0]["goldens"] as? [String], [])
        XCTAssertNotEqual(try Questbak.run(["verify-migration", "--fixtures", set, "--record"]).status, 0, "record mode never passes")
        listed = try XCTUnwrap(try json(try Questbak.run(["fixtures", "list", "--fixtures", set, "--json"])) as? [[String: Any]])
        XCTAssertEqual(listed[0]["goldens"] as? [String], ["2.0.0"])
        let gate = try Questbak.run(["verify-migration", "--fixtures", set])
        XCTAssertEqual(gate.status, 0, gate.standardOutput + gate.standardError)
        let text = try Questbak.run(["fixtures", "list", "--fixtures", set])
        XCTAssertTrue(text.standardOutput.contains("goldens for 2.0.0"), text.standardOutput)
        let empty = try Questbak.run(["fixtures", "list", "--fixtures", directory.path("none").path])
        XCTAssertEqual(empty.status, 66, empty.standardError)
    }
}
