import Foundation
import GRDB
import QuestBakKit
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

/// Migrations of stores larger than the batches the engine reads its own bookkeeping in, so that
/// a record past a batch's end is handled as the first one is.
final class MigrationAtScaleTests: XCTestCase {
    /// The repair log names each record by its final cloudID, given after the record's entries
    /// were logged (a filled default is logged before the cloudID rule runs). It reads the
    /// records' keys in batches of 10,000 (all at once, they grew with the store), so a store with
    /// more than that checks that no record after the first batch is missed.
    func testEveryEntryOfALargeMigrationNamesItsRecordsFinalCloudID() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("v1.store")
        let estimations = 10_050
        try BulkStore.write(to: store, schema: TimeQuestSchemas.v1, estimations: estimations)
        // Every estimation misses a value V2 requires and gives a default: one entry each, logged
        // without a cloudID.
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = NULL") }
        let output = directory.path("v2.store")
        let report = directory.path("report.json")
        let result = try Questbak.run([
            "migrate", store.path, "--to-version", "2.0.0", "-o", output.path, "--report", report.path, "-q",
            "--now", "2025-01-01T00:00:00Z",
        ])
        XCTAssertEqual(result.status, 0, result.standardError)

        struct Entry: Decodable {
            var _pk: Int64
            var cloudID: String?
            var entity: String
            var rule: String
        }
        struct Report: Decodable { var entries: [Entry] }
        let entries = try JSONDecoder().decode(Report.self, from: Data(contentsOf: report)).entries
        var configuration = Configuration()
        configuration.readonly = true
        let finalCloudIDs = try DatabaseQueue(path: output.path, configuration: configuration).read { db in
            var ids: [String: [Int64: String]] = [:]
            for entity in Set(entries.map(\.entity)) {
                let rows = try Row.fetchAll(db, sql: "SELECT Z_PK, ZCLOUDID FROM Z\(entity.uppercased())")
                ids[entity] = Dictionary(uniqueKeysWithValues: rows.map { ($0[0] as Int64, $0[1] as String) })
            }
            return ids
        }
        let filled = entries.filter { $0.entity == "TaskEstimation" && $0.rule == "default" }
        XCTAssertEqual(filled.count, estimations, "one default entry per estimation")
        XCTAssertEqual(filled.map(\._pk).max(), Int64(estimations), "the last record is logged too")
        var unresolved = 0
        for entry in entries where entry.cloudID != finalCloudIDs[entry.entity]?[entry._pk] { unresolved += 1 }
        XCTAssertEqual(unresolved, 0, "entries whose cloudID is not their record's in the migrated store")
    }
}
