import Foundation
import QuestBakFixtures
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

extension ModelMigrationCommandTests {
    /// The chain of intermediate models named once in the set's manifest: the gate migrates each
    /// fixture through it as `--through` would, on every run, and a fixture of a model outside the
    /// chain fails as an unknown model version.
    func testAChainNamedOnceInTheFixturesManifest() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        let fixtures = try gateFixtures(in: directory, holding: store.deletingLastPathComponent())
        let models = fixtures.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models.appendingPathComponent("2.1.0"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: models.appendingPathComponent("3.0.0"), withIntermediateDirectories: true)
        let (first, second) = (models.appendingPathComponent("2.1.0/default.store"), models.appendingPathComponent("3.0.0/default.store"))
        try newBuildStore(AnyAppFixtures.kitchenSinkModel, at: first)
        try newBuildStore(Self.nextModel(), at: second)
        let newest = directory.path("NextBuild.store")
        try newBuildStore(Self.fourthModel(), at: newest)

        let set = try Questbak.run(["fixtures", "chain", first.path, second.path, "--fixtures", fixtures.path])
        XCTAssertEqual(set.status, 0, set.standardError)
        XCTAssertTrue(set.standardOutput.contains("models/2.1.0/default.store → models/3.0.0/default.store"), set.standardOutput)
        let gate = ["verify-migration", "--fixtures", fixtures.path, "--to", newest.path]
        XCTAssertEqual(try Questbak.run(gate + ["--record"]).status, 3)
        let passed = try Questbak.run(gate)
        XCTAssertEqual(passed.status, 0, passed.standardOutput)
        XCTAssertTrue(passed.standardOutput.contains("2.1.0 → 4.0.0") || passed.standardOutput.contains("4.0.0"), passed.standardOutput)
        // The same run through --through gives the same goldens: nothing to record again.
        XCTAssertEqual(try Questbak.run(gate + ["--through", first.path, "--through", second.path]).status, 0)
        // Without the chain, the rename of 3.0.0 cannot be followed straight to 4.0.0.
        XCTAssertEqual(try Questbak.run(["fixtures", "chain", "--clear", "--fixtures", fixtures.path]).status, 0)
        XCTAssertNotEqual(try Questbak.run(gate).status, 0)

        // A chain store must be in the set, and not where fixtures are.
        let outside = try Questbak.run(["fixtures", "chain", newest.path, "--fixtures", fixtures.path])
        XCTAssertEqual(outside.status, 64, outside.standardError)
        let asFixture = try Questbak.run([
            "fixtures", "chain", fixtures.appendingPathComponent("kitchen-sink/default.store").path, "--fixtures", fixtures.path,
        ])
        XCTAssertEqual(asFixture.status, 64, asFixture.standardError)
        XCTAssertTrue(asFixture.standardError.contains("two folders deep"), asFixture.standardError)
    }
}
