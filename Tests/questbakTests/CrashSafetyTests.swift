import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

/// SIGKILL at every fault point of `import --replace` and `migrate --in-place`
/// (QUESTBAK_KILL_AT, see FaultInjection.swift): afterwards the target must be the old store,
/// byte for byte or (once questbak has checkpointed it, after taking its backup) with the same
/// content, or the complete new store; never anything else, and always intact.
final class CrashSafetyTests: XCTestCase {
    struct Outcome: Hashable {
        var state: String
    }

    /// The store's content as the entity checksums an export lists: equal content, equal sums.
    func content(_ store: URL, in directory: URL) throws -> [String] {
        let copy = directory.appendingPathComponent("content-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copy) }
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy.appendingPathComponent("s.store").path + suffix)
        }
        let integrity = try Questbak.runTool(["sqlite3", copy.appendingPathComponent("s.store").path, "PRAGMA integrity_check"])
        XCTAssertEqual(integrity.standardOutput, "ok\n", "integrity_check of \(store.path)")
        let result = try Questbak.run([
            "export", copy.appendingPathComponent("s.store").path, "-o", copy.appendingPathComponent("c.qbak").path, "--json",
            "--compression", "none", "--created-at", "2026-01-01T00:00:00Z",
        ])
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        return ((summary["entities"] as? [[String: Any]]) ?? []).map { "\($0["name"] ?? "")=\($0["sha256"] ?? "")" }
    }

    func files(_ store: URL) -> [Data?] {
        ["", "-wal", "-shm"].map { try? Data(contentsOf: URL(fileURLWithPath: store.path + $0)) }
    }

    /// Runs `arguments` (which write `target`) once per fault point, restoring the old store
    /// before each run, and classifies what every kill left behind.
    func killAtEveryPoint(_ arguments: [String], target: URL, fixture: String, directory: TemporaryTestDirectory) throws -> [Outcome: Int] {
        let pristine = directory.path("pristine")
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(fixture), to: pristine)
        let folder = target.deletingLastPathComponent()
        func restore() throws {
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.copyItem(at: pristine, to: folder)
        }
        try restore()
        let oldFiles = files(target)
        let oldContent = try content(target, in: directory.url)
        let finished = try Questbak.run(arguments)
        XCTAssertEqual(finished.status, 0, finished.standardError)
        let newContent = try content(target, in: directory.url)
        XCTAssertNotEqual(oldContent, newContent)

        var outcomes: [Outcome: Int] = [:]
        var point = 1
        while point < 1000 {
            try restore()
            let run = try Questbak.run(arguments, environment: ["QUESTBAK_KILL_AT": String(point)])
            if run.status == 0 && !run.killedBySignal { break }
            XCTAssertTrue(
                run.killedBySignal && run.status == SIGKILL,
                "point \(point) ended with \(run.status) instead of SIGKILL: \(run.standardError)")
            let state: String
            if files(target) == oldFiles {
                state = "old, byte for byte"
            } else {
                let found = try content(target, in: directory.url)
                if found == oldContent {
                    state = "old content, checkpointed"
                } else if found == newContent {
                    state = "new"
                } else {
                    XCTFail("kill point \(point): the target is neither the old nor the new store")
                    state = "broken"
                }
            }
            outcomes[Outcome(state: state), default: 0] += 1
            // A later run cleans what the killed one could not, and then succeeds.
            let again = try Questbak.run(arguments)
            let alreadyMigrated = state == "new" && again.standardError.contains("is already schema")
            XCTAssertTrue(again.status == 0 || alreadyMigrated, "point \(point): the run after a kill failed: \(again.standardError)")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                $0.contains(".questbak-") && !$0.contains("questbak-backup")
            }
            XCTAssertEqual(leftovers, [], "point \(point): temporary files survived the next run")
            point += 1
        }
        XCTAssertGreaterThan(point, 10)
        return outcomes
    }

    func testKillingImportReplaceLeavesTheOldOrTheNewStore() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("typical.qbak")
        XCTAssertEqual(
            try Questbak.run([
                "export", Repository.fixtures.appendingPathComponent("v1-typical/default.store").path, "-o", archive.path, "-q",
            ]).status, 0)
        let target = directory.path("app/default.store")
        let outcomes = try killAtEveryPoint(
            ["import", archive.path, "--into", target.path, "--replace", "-q"], target: target, fixture: "v1-wal", directory: directory)
        let total = outcomes.values.reduce(0, +)
        XCTAssertGreaterThanOrEqual(total, 75, "\(outcomes)")
        XCTAssertEqual(outcomes[Outcome(state: "broken")], nil)
        XCTAssertGreaterThan(outcomes[Outcome(state: "old, byte for byte")] ?? 0, 60, "\(outcomes)")
        XCTAssertGreaterThan(outcomes[Outcome(state: "new")] ?? 0, 0, "\(outcomes)")
        print("import --replace kill points: \(total) \(outcomes.map { "\($0.key.state): \($0.value)" }.sorted())")
    }

    func testKillingMigrateInPlaceLeavesTheOldOrTheNewStore() throws {
        let directory = try TemporaryTestDirectory()
        let target = directory.path("app/default.store")
        let outcomes = try killAtEveryPoint(
            ["migrate", target.path, "--in-place", "-q", "--now", "2026-01-01T00:00:00Z"], target: target, fixture: "v1-wal",
            directory: directory)
        let total = outcomes.values.reduce(0, +)
        XCTAssertGreaterThanOrEqual(total, 25, "\(outcomes)")
        XCTAssertEqual(outcomes[Outcome(state: "broken")], nil)
        XCTAssertGreaterThan(outcomes[Outcome(state: "new")] ?? 0, 0, "\(outcomes)")
        print("migrate --in-place kill points: \(total) \(outcomes.map { "\($0.key.state): \($0.value)" }.sorted())")
    }
}
