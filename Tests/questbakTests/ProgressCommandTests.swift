import Foundation
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
