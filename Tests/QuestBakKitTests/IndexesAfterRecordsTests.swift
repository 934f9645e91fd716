import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures
@testable import QuestBakKit

/// A format 1 or 2 archive's indexes are made once its records are in
/// (`StatementRestore.indexesMadeAfterRecords`), not kept up row by row. Restored both ways, an
/// archive must give the same report, the same rows, the same statements in the order
/// `sqlite3 .dump` lists them (tables, then indexes), and a store that passes
/// `integrity_check`; only the order of tables and indexes in `sqlite_master` differs.
final class IndexesAfterRecordsTests: XCTestCase {
    /// One archive restored one way.
    struct Restore {
        var name: String
        var archive: URL
        var validate = true
        var toVersion: String?

        func options(indexesAfter: Bool) -> Importer.Options {
            var options = Importer.Options.timeQuest
            (options.validate, options.targetVersion, options.makesIndexesAfterRecords) = (validate, toVersion, indexesAfter)
            return options
        }
    }

    /// An import's outcome as text (each entity's counts and digest, the repair counts, entries
    /// and notes, every table's rows, the statements as `.dump` orders them, `integrity_check`),
    /// or its error; and whether every table comes before every index in `sqlite_master`.
    func outcome(_ restore: Restore, indexesAfter: Bool) throws -> (String, Bool) {
        let (directory, work) = (try TemporaryTestDirectory("questbak-indexes-after"), try TemporaryTestDirectory())
        let target = directory.path("restored/default.store")
        do {
            let result = try Importer.run(
                archive: restore.archive.path, into: target, options: restore.options(indexesAfter: indexesAfter), workDirectory: work.url)
            let entities = result.entities.map { "\($0.name) \($0.read) \($0.written) \($0.sha256)" }
            let notes = result.notes.filter { !$0.hasPrefix("created folder") }
            let queue = try DatabaseQueue(path: target.path)
            defer { try? queue.close() }
            let (dumpOrder, tablesFirst, integrity) = try queue.read { db in
                // `.dump`'s two lists: tables, then indexes, triggers and views, each in rowid order.
                let tables = try String.fetchAll(
                    db, sql: "SELECT sql FROM sqlite_master WHERE sql NOT NULL AND type = 'table' ORDER BY rowid")
                let others = try String.fetchAll(
                    db, sql: "SELECT sql FROM sqlite_master WHERE sql NOT NULL AND type IN ('index', 'trigger', 'view') ORDER BY rowid")
                let types = try String.fetchAll(db, sql: "SELECT type FROM sqlite_master ORDER BY rowid")
                let firstIndex = types.firstIndex(of: "index") ?? types.count
                return (
                    tables + others, !types[firstIndex...].contains("table"),
                    try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "none"
                )
            }
            let text =
                "entities \(entities)\ncounts \(result.counts.sorted { $0.key < $1.key })\n"
                + "entries \(try result.log.firstEntries(10_000).map(\.sentence))\nnotes \(notes)\n"
                + "tables \(try exactTables(target).sorted { $0.key < $1.key })\nschema \(dumpOrder)\nintegrity \(integrity)"
            return (text.replacingOccurrences(of: directory.url.path, with: "<folder>"), tablesFirst)
        } catch {
            let message = error.localizedDescription.replacingOccurrences(of: directory.url.path, with: "<folder>")
                .replacingOccurrences(of: "questbak-[0-9]+-[0-9A-F]{8}", with: "questbak-<id>", options: .regularExpression)
            return ("error " + message, false)
        }
    }

    /// Every TimeQuest fixture (one without --validate, one V1 store as V2); archives that need
    /// repairs (the rules run once the indexes are made); a store of 2,000 estimations:
    /// each restored with its indexes made after its records and as before.
    func testEveryTimeQuestArchiveRestoresTheSameWithItsIndexesMadeAfterItsRecords() throws {
        let directory = try TemporaryTestDirectory("questbak-indexes-after-source")
        func archive(of store: URL, _ name: String) throws -> URL {
            let archive = directory.path("\(name).qbak")
            _ = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
            return archive
        }
        var restores: [Restore] = []
        for fixture in ["v1-typical", "v1-edge-cases", "v1-anomalies", "v1-wal", "v2-typical"] {
            let made = try archive(of: try directory.copyFixture(fixture), fixture)
            restores.append(Restore(name: fixture, archive: made))
            if fixture == "v1-typical" { restores.append(Restore(name: "\(fixture) without --validate", archive: made, validate: false)) }
            if fixture == "v1-edge-cases" { restores.append(Restore(name: "\(fixture) as 2.0.0", archive: made, toVersion: "2.0.0")) }
        }
        // Every third (the clean one first) and the last, every rule at once: a few seconds.
        let variants = InsertedValuesTests.variants
        for (index, variant) in variants.enumerated() where index % 3 == 0 || index == variants.count - 1 {
            let store = directory.path("source-\(index).store")
            try variant.dataset.write(to: store, uuid: RuleRun.storeUUID)
            restores.append(Restore(name: variant.name, archive: try archive(of: store, "backup-\(index)")))
        }
        let large = directory.path("large.store")
        try BulkStore.write(to: large, estimations: 2_000)
        restores.append(Restore(name: "2,000 estimations", archive: try archive(of: large, "large")))
        for restore in restores {
            let (before, beforeTablesFirst) = try outcome(restore, indexesAfter: false)
            let (after, afterTablesFirst) = try outcome(restore, indexesAfter: true)
            XCTAssertEqual(after, before, restore.name)
            guard before.hasPrefix("entities") else { continue }
            XCTAssertTrue(before.contains("integrity ok"), "\(restore.name): \(before.suffix(200))")
            // Made as their statements come, an entity's indexes precede Core Data's own tables;
            // made after the records, every table comes first: else the two ways compared nothing.
            XCTAssertFalse(beforeTablesFirst, restore.name)
            XCTAssertTrue(afterTablesFirst, restore.name)
        }
    }

    /// Which statements wait for the records: every index of TimeQuest's schemas, in order; none
    /// where a unique index is on a table the records fill (it refuses a duplicate at its row) or
    /// where a trigger or a view is made (its place among the indexes would move in `.dump`).
    func testIndexesWaitOnlyWhereNothingTellsTheirPlaceOrRefusesARow() throws {
        for schema in [TimeQuestSchemas.v1, TimeQuestSchemas.v2] {
            let statements =
                try ModelTables(model: CompiledModel(schema: schema)).createStatements + CoreDataSQL.bookkeeping + CoreDataSQL.history
            let indexes = statements.filter { $0.uppercased().contains(" INDEX ") }
            XCTAssertGreaterThan(indexes.count, 8)
            XCTAssertEqual(StatementRestore.indexesMadeAfterRecords(statements), indexes)
            XCTAssertEqual(
                StatementRestore.indexesMadeAfterRecords(statements + ["create  index\nZLATER ON ZROUTINE (ZNAME)"]),
                indexes + ["create  index\nZLATER ON ZROUTINE (ZNAME)"])
            XCTAssertEqual(StatementRestore.indexesMadeAfterRecords(statements + ["CREATE UNIQUE INDEX ZU ON ZROUTINE (ZNAME)"]), [])
            XCTAssertEqual(StatementRestore.indexesMadeAfterRecords(statements + ["create unique index ZU ON ZROUTINE (ZNAME)"]), [])
            XCTAssertEqual(
                StatementRestore.indexesMadeAfterRecords(statements + ["CREATE TRIGGER ZT AFTER INSERT ON ZROUTINE BEGIN SELECT 1; END"]),
                [])
            XCTAssertEqual(StatementRestore.indexesMadeAfterRecords(statements + ["CREATE VIEW ZV AS SELECT 1"]), [])
        }
    }
}
