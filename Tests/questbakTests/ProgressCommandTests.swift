import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// `--progress json`: one JSON object a line on standard error, restic's way (status lines, then a
/// summary), for GUIs and CI logs; and nothing on standard error that is not a terminal unless asked.
final class ProgressCommandTests: XCTestCase {
    func testExportAndImportWriteStatusLinesAndASummaryThatCountEveryRecord() throws {
        for fixture in ["v2-typical", "AnyApp/kitchen-sink"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let archive = directory.path("a.qbak")
            let export = try Questbak.run(["export", store.path, "-o", archive.path, "--json", "--progress", "json"])
            XCTAssertEqual(export.status, 0, export.standardError)
            let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: export.outputData) as? [String: Any])
            var counts: [String: Int] = [:]
            for entity in summary["entities"] as? [[String: Any]] ?? [] {
                counts[entity["name"] as? String ?? ""] = entity["count"] as? Int
            }
            XCTAssertFalse(counts.isEmpty, fixture)
            try checkLines(export.standardError, command: "export", counts: counts, fixture: fixture)

            let restored = directory.path("restored/default.store")
            let restore = try Questbak.run(["import", archive.path, "--into", restored.path, "-q", "--progress", "json"])
            XCTAssertEqual(restore.status, 0, restore.standardError)
            XCTAssertEqual(restore.standardOutput, "", "--quiet keeps standard output silent")
            try checkLines(restore.standardError, command: "import", counts: counts.filter { $0.value > 0 }, fixture: fixture)
        }
    }

    func testNothingIsShownOnAStandardErrorThatIsNotATerminalUnlessAsked() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let archive = directory.path("a.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertEqual(export.standardError, "")
        let restore = try Questbak.run(["import", archive.path, "--into", directory.path("r/default.store").path])
        XCTAssertEqual(restore.status, 0, restore.standardError)
        XCTAssertEqual(restore.standardError, "")
        let verify = try Questbak.run(["verify", archive.path, "--progress", "json"])
        XCTAssertEqual(verify.status, 0, verify.standardError)
        XCTAssertTrue(verify.standardError.contains("\"message_type\":\"summary\""), verify.standardError)
    }

    /// migrate (TimeQuest's and any app's by its new build's model) and verify-migration: status
    /// lines by step and entity, each entity's last one all its records, and a summary.
    func testMigrateAndVerifyMigrationWriteStatusLinesAndASummary() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let counts = try recordCounts(store, ["Routine": "ZROUTINE", "RoutineTask": "ZROUTINETASK", "TaskEstimation": "ZTASKESTIMATION"])
        let migrate = try Questbak.run(
            ["migrate", store.path, "-o", directory.path("v2.store").path, "-q", "--now", "2026-01-01T00:00:00Z", "--progress", "json"])
        XCTAssertEqual(migrate.status, 0, migrate.standardError)
        let migrateSummary = try checkSteps(migrate.standardError, command: "migrate", step: "migrate", counts: counts)
        XCTAssertNotNil((migrateSummary["entities"] as? [String: Int])?["repair all entities"], "the repairs are a step: \(migrateSummary)")

        let model = try directory.copyFixture("Gates/Ritualist/fixtures/v1-john", as: "ritualist")
        let next = try directory.copyFixture("Gates/Ritualist/next", as: "next")
        let byModel = try Questbak.run(
            ["migrate", model.path, "--to", next.path, "-o", directory.path("ritualist-next.store").path, "-q", "--progress", "json"])
        XCTAssertEqual(byModel.status, 0, byModel.standardError)
        try checkSteps(byModel.standardError, command: "migrate", step: "migrate", counts: [:])

        _ = try directory.copyFixture("v1-typical", as: "gate/v1-typical")
        let gate = try Questbak.run(["verify-migration", "--fixtures", directory.path("gate").path, "--progress", "json"])
        XCTAssertEqual(gate.status, 0, gate.standardOutput + gate.standardError)
        let gateSummary = try checkSteps(gate.standardError, command: "verify-migration", step: nil, counts: ["fixtures": 1])
        XCTAssertEqual(gateSummary["rows_done"] as? Int, 1)
    }

    /// Each entity's records in `tables` (entity → table), counted in the store.
    private func recordCounts(_ store: URL, _ tables: [String: String]) throws -> [String: Int] {
        let queue = try DatabaseQueue(path: "file:\(store.path)?immutable=1")
        defer { try? queue.close() }
        return try queue.read { db in try tables.mapValues { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? 0 } }
    }

    /// Status lines of `command` then a summary; for each entity of `counts`, the last status line
    /// of `step` says all its records are done, and the summary has that count (keyed "step entity").
    @discardableResult
    private func checkSteps(_ text: String, command: String, step: String?, counts: [String: Int]) throws -> [String: Any] {
        let objects = try text.split(separator: "\n").map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
        let summary = try XCTUnwrap(objects.last, "\(command): nothing on standard error")
        XCTAssertEqual(summary["message_type"] as? String, "summary", text)
        XCTAssertEqual(summary["command"] as? String, command, text)
        let statuses = objects.dropLast()
        XCTAssertFalse(statuses.isEmpty, text)
        var last: [String: [String: Any]] = [:]
        for status in statuses {
            XCTAssertEqual(status["message_type"] as? String, "status", "\(status)")
            XCTAssertEqual(status["command"] as? String, command, "\(status)")
            if status["step"] as? String == step { last[try XCTUnwrap(status["entity"] as? String)] = status }
        }
        XCTAssertFalse(last.isEmpty, "\(command): no status line of step \(step ?? "(none)"): \(text)")
        for (entity, status) in last {
            XCTAssertEqual(status["entity_done"] as? Int, status["entity_total"] as? Int, "\(command) \(entity) ends done: \(status)")
        }
        for (entity, count) in counts {
            let status = try XCTUnwrap(last[entity], "\(command): no status line for \(entity): \(text)")
            XCTAssertEqual(status["entity_done"] as? Int, count, "\(command) \(entity)")
            XCTAssertEqual(status["entity_total"] as? Int, count, "\(command) \(entity)")
            XCTAssertEqual((summary["entities"] as? [String: Int])?[step.map { "\($0) \(entity)" } ?? entity], count, "\(summary)")
        }
        return summary
    }

    /// Every line an object; status lines, then one summary; each entity's last status line says
    /// all its records are done, and the summary counts every record.
    private func checkLines(_ text: String, command: String, counts: [String: Int], fixture: String) throws {
        let lines = text.split(separator: "\n").map(String.init)
        let objects = try lines.map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "not an object: \(line)")
        }
        XCTAssertEqual(objects.last?["message_type"] as? String, "summary", "\(fixture) \(command): \(text)")
        let statuses = objects.dropLast()
        XCTAssertFalse(statuses.isEmpty, "\(fixture) \(command): \(text)")
        var last: [String: [String: Any]] = [:]
        var rowsDone = 0
        for status in statuses {
            XCTAssertEqual(status["message_type"] as? String, "status", "\(status)")
            XCTAssertEqual(status["command"] as? String, command, "\(status)")
            XCTAssertNotNil(status["seconds_elapsed"] as? Double ?? (status["seconds_elapsed"] as? Int).map(Double.init), "\(status)")
            let done = try XCTUnwrap(status["rows_done"] as? Int, "\(status)")
            XCTAssertGreaterThanOrEqual(done, rowsDone, "the running total never goes back: \(status)")
            rowsDone = done
            last[try XCTUnwrap(status["entity"] as? String)] = status
        }
        for (entity, count) in counts {
            let status = try XCTUnwrap(last[entity], "\(fixture) \(command): no status line for \(entity): \(text)")
            XCTAssertEqual(status["entity_done"] as? Int, count, "\(fixture) \(command) \(entity)")
            XCTAssertEqual(status["entity_total"] as? Int, count, "\(fixture) \(command) \(entity)")
        }
        let summary = try XCTUnwrap(objects.last)
        XCTAssertEqual(summary["command"] as? String, command)
        XCTAssertEqual((summary["entities"] as? [String: Int])?.filter { counts[$0.key] != nil }, counts, "\(fixture) \(command)")
        XCTAssertEqual(summary["rows_done"] as? Int, counts.values.reduce(0, +), "\(fixture) \(command)")
    }
}
