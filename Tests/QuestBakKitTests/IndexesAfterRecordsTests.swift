import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures
@testable import QuestBakKit

/// A format 1 or 2 archive's statements from its first index on (its entities' indexes, Core
/// Data's own tables) are made once its records are in (`StatementRestore.statementsAfterRecords`),
/// so each index is built in one pass, not kept up row by row. Restored both ways, an archive must
/// give the same report, the same rows, the same `sqlite_master` row for row, and a store that
/// passes `integrity_check`.
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
    /// and notes, every table's rows, `sqlite_master`, `integrity_check`), or its error; and
    /// whether the statements after the records were made after them.
    func outcome(_ restore: Restore, indexesAfter: Bool) throws -> (String, Bool) {
        let (directory, work) = (try TemporaryTestDirectory("questbak-indexes-after"), try TemporaryTestDirectory())
        let target = directory.path("restored/default.store")
        let madeAfter = Flag()
        Hooks.faultPoint = { label in if label == "statements after the records" { madeAfter.set() } }
        defer { Hooks.faultPoint = nil }
        do {
            let result = try Importer.run(
                archive: restore.archive.path, into: target, options: restore.options(indexesAfter: indexesAfter), workDirectory: work.url)
            let entities = result.entities.map { "\($0.name) \($0.read) \($0.written) \($0.sha256)" }
            let notes = result.notes.filter { !$0.hasPrefix("created folder") }
            let queue = try DatabaseQueue(path: target.path)
            defer { try? queue.close() }
            let (master, integrity) = try queue.read { db in
                (
                    try ExactSQL.fetchAll(db, sql: "SELECT rowid, type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid"),
                    try String.fetchOne(db, sql: "PRAGMA integrity_check") ?? "none"
                )
            }
            let text =
                "entities \(entities)\ncounts \(result.counts.sorted { $0.key < $1.key })\n"
                + "entries \(try result.log.firstEntries(10_000).map(\.sentence))\nnotes \(notes)\n"
                + "tables \(try exactTables(target).sorted { $0.key < $1.key })\nschema \(master)\nintegrity \(integrity)"
            return (text.replacingOccurrences(of: directory.url.path, with: "<folder>"), madeAfter.isSet)
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
            let (before, madeAfterBefore) = try outcome(restore, indexesAfter: false)
            let (after, madeAfter) = try outcome(restore, indexesAfter: true)
            XCTAssertEqual(after, before, restore.name)
            guard before.hasPrefix("entities") else { continue }
            XCTAssertTrue(before.contains("integrity ok"), "\(restore.name): \(before.suffix(200))")
            // Else the two ways compared nothing.
            XCTAssertFalse(madeAfterBefore, restore.name)
            XCTAssertTrue(madeAfter, restore.name)
        }
    }

    /// Which statements wait for the records: TimeQuest's from the first index on (the entity
    /// tables before it); none where a unique index is on a table the records fill (it refuses a
    /// duplicate at its row), where a trigger or a view is made, or where a statement before the
    /// first index makes no table.
    func testStatementsWaitOnlyWhereNothingBeforeNeedsThemOrRefusesARow() throws {
        for schema in [TimeQuestSchemas.v1, TimeQuestSchemas.v2] {
            let statements =
                try ModelTables(model: CompiledModel(schema: schema)).createStatements + CoreDataSQL.bookkeeping + CoreDataSQL.history
            let first = try XCTUnwrap(statements.firstIndex { $0.hasPrefix("CREATE INDEX") })
            XCTAssertGreaterThan(first, 3)
            XCTAssertTrue(statements[..<first].allSatisfy { $0.hasPrefix("CREATE TABLE") })
            let later = Array(statements[first...])
            XCTAssertTrue(later.contains { $0.hasPrefix("CREATE TABLE Z_PRIMARYKEY") })
            XCTAssertEqual(StatementRestore.statementsAfterRecords(statements), later)
            XCTAssertEqual(
                StatementRestore.statementsAfterRecords(statements + ["create  index\nZLATER ON ZROUTINE (ZNAME)"]),
                later + ["create  index\nZLATER ON ZROUTINE (ZNAME)"])
            for added in [
                "CREATE UNIQUE INDEX ZU ON ZROUTINE (ZNAME)", "create unique index ZU ON ZROUTINE (ZNAME)",
                "CREATE TRIGGER ZT AFTER INSERT ON ZROUTINE BEGIN SELECT 1; END", "CREATE VIEW ZV AS SELECT 1",
            ] {
                XCTAssertEqual(StatementRestore.statementsAfterRecords(statements + [added]), [], added)
            }
            XCTAssertEqual(StatementRestore.statementsAfterRecords(["CREATE VIRTUAL TABLE ZF USING fts5(a)"] + statements), [])
        }
    }
}

/// Set from the restore's thread, read after it.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
