import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakKit

/// Another app's store restored with its indexes made after its records (unique ones standing in
/// meanwhile, carried tables made later waiting in `temp`: `ModelIndexesAfterRecords`), and with
/// the links kept on destinations' rows held in memory until their table is read
/// (`PendingLinks`): each must give the same store, report and entries as the way before it, or
/// the same first error.
final class ModelIndexesAfterRecordsTests: XCTestCase {
    func outcome(
        _ archive: URL, validate: Bool = true, indexesAfter: Bool = true, linksHeld: Int = PendingLinks.limit,
        into directory: TemporaryTestDirectory
    ) -> String {
        var options = Importer.Options.timeQuest
        options.validate = validate
        options.makesIndexesAfterRecords = indexesAfter
        options.linksHeldInMemory = linksHeld
        return LinesAheadTests.outcome(archive, options: options, into: directory)
    }

    /// The same outcome as with the indexes made first and no link held, with the indexes made
    /// after and links held in memory (all of them, or a few and then the rest written).
    @discardableResult
    func assertSameEveryWay(
        _ archive: URL, _ name: String, validate: Bool = true, ways: [(Bool, Int)] = [(true, PendingLinks.limit), (true, 7)],
        in directory: TemporaryTestDirectory, file: StaticString = #filePath, line: UInt = #line
    ) -> String {
        let before = outcome(archive, validate: validate, indexesAfter: false, linksHeld: 0, into: directory)
        for (indexesAfter, held) in ways {
            XCTAssertEqual(
                outcome(archive, validate: validate, indexesAfter: indexesAfter, linksHeld: held, into: directory), before,
                "\(name): indexes after \(indexesAfter), \(held) links held", file: file, line: line)
        }
        return before
    }

    func testEveryStoreShapeWithAModelRestoresTheSameEveryWay() throws {
        try LinesAheadTests.forEveryStoreShapeByItsModel("questbak-model-indexes") { shape, archive, directory in
            let outcome = assertSameEveryWay(archive, shape.name, ways: [(true, PendingLinks.limit)], in: directory)
            XCTAssertFalse(outcome.hasPrefix("error"), "\(shape.name): \(outcome.prefix(300))")
        }
    }

    /// The kitchen-sink store grown by 2,000 steps (its statements: the entities' tables, their
    /// indexes with a unique one among them, then Core Data's tables and a carried table), as
    /// exported and with a duplicate the unique index refuses, links the link step must repair,
    /// and a carried table's line refused.
    func testRefusedRowsLinksToRepairAndACarriedLineRestoreTheSameEveryWay() throws {
        let directory = try TemporaryTestDirectory("questbak-model-indexes")
        let archive = try LinesAheadTests.grownArchive(in: directory)
        let manifest = try ArchiveReader(path: archive.path, displayPath: archive.path).readManifest()
        let plan = try XCTUnwrap(ModelIndexesAfterRecords.plan(manifest.sql ?? [], carried: manifest.tables ?? []))
        XCTAssertEqual(plan.uniqueStandIns.map(\.sql), [#"CREATE UNIQUE INDEX questbak_unique_0 ON "ZRECIPE" ("ZCODE" COLLATE "BINARY")"#])
        XCTAssertEqual(plan.carriedStandIns.map(\.name), ["Z_PRIMARYKEY", "sqlitemanager_extras"])
        XCTAssertTrue(plan.later.first?.hasPrefix("CREATE INDEX ZINGREDIENT_ZRECIPE_INDEX") == true, plan.later.first ?? "")

        // Each change alone too, as exported.
        let clean = assertSameEveryWay(
            archive, "as exported", ways: [(true, PendingLinks.limit), (true, 7), (false, PendingLinks.limit), (true, 0)], in: directory)
        XCTAssertFalse(clean.hasPrefix("error"), String(clean.prefix(300)))
        let recipeLine = LinksOnInsertTests.recipeLine
        // Recipe 3 takes recipe 1's code: refused at its insert by the unique index (or its stand-in), dropped, its links moved.
        let duplicate = try LinesAheadTests.rewritten(
            archive, in: directory, recipeLine(3) { $0.replacingOccurrences(of: #""code":"DRAFT""#, with: #""code":"NEGRONI""#) })
        let duplicateOutcome = assertSameEveryWay(duplicate, "a duplicate code", in: directory)
        XCTAssertNotEqual(duplicateOutcome, clean, "the edit reached the archive's recipe")
        XCTAssertFalse(duplicateOutcome.hasPrefix("error"), String(duplicateOutcome.prefix(300)))
        let refused = assertSameEveryWay(
            duplicate, "a duplicate code, without --validate", validate: false, ways: [(true, PendingLinks.limit)], in: directory)
        XCTAssertTrue(refused.hasPrefix("error"), String(refused.prefix(300)))
        // A recipe names a step the archive lacks, and two recipes name step 3.
        let repairs = try LinesAheadTests.rewritten(
            archive, in: directory,
            { path, lines in
                recipeLine(1) {
                    $0.replacingOccurrences(of: #"("steps":\[[0-9,]*)\]"#, with: "$1,99999]", options: .regularExpression)
                }(path, &lines)
                recipeLine(4) { $0.replacingOccurrences(of: #""steps":[4,5]"#, with: #""steps":[3,4,5]"#) }(path, &lines)
            })
        let repaired = assertSameEveryWay(repairs, "links to repair", in: directory)
        XCTAssertTrue(repaired.contains("99999"), String(repaired.prefix(2000)))
        // A carried table's line that repeats its key: refused at that line, both ways.
        let carried = try LinesAheadTests.rewritten(archive, in: directory) { path, lines in
            if path == "tables/sqlitemanager_extras.jsonl" { lines.insert(lines[1], at: 2) }
        }
        let carriedOutcome = assertSameEveryWay(carried, "a carried line twice", ways: [(true, PendingLinks.limit)], in: directory)
        XCTAssertTrue(carriedOutcome.contains("sqlitemanager_extras"), String(carriedOutcome.prefix(300)))
    }

    /// Nothing is made later where a later statement is not a table or an index, where a table the
    /// records could fill is made after an index, or a carried table made later could not wait in
    /// `temp` as it is.
    func testWhatCannotWaitIsMadeFirst() throws {
        let tables = [
            "CREATE TABLE ZRECIPE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCODE VARCHAR, ZNAME VARCHAR)",
            "CREATE INDEX ZRECIPE_ZNAME ON ZRECIPE (ZNAME)",
        ]
        let primaryKeys = "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
        func member(_ name: String, bytes: Int64 = 100) -> ArchiveManifest.TableMember {
            ArchiveManifest.TableMember(name: name, path: "tables/\(name).jsonl", count: 1, bytes: bytes, sha256: "", sql: "", indexes: [])
        }
        let plain = ModelIndexesAfterRecords.plan(tables + [primaryKeys], carried: [member("Z_PRIMARYKEY")])
        XCTAssertEqual(plain?.later.count, 2)
        XCTAssertEqual(plain?.carriedStandIns.map(\.rowid), ["rowid"])
        // A unique index stands in under questbak's name, with its collation and order.
        let unique = ModelIndexesAfterRecords.plan(
            tables + ["CREATE UNIQUE INDEX ZRECIPE_CODE ON ZRECIPE (ZCODE COLLATE NOCASE DESC, ZNAME)"], carried: [])
        XCTAssertEqual(
            unique?.uniqueStandIns.map(\.sql),
            [#"CREATE UNIQUE INDEX questbak_unique_0 ON "ZRECIPE" ("ZCODE" COLLATE "NOCASE" DESC, "ZNAME" COLLATE "BINARY")"#])
        for (statements, carried, why) in [
            (tables + ["CREATE TRIGGER t AFTER INSERT ON ZRECIPE BEGIN SELECT 1; END"], [], "a trigger"),
            (tables + ["CREATE VIEW v AS SELECT * FROM ZRECIPE"], [], "a view"),
            (tables + ["CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR)"], [], "an entity's table after an index"),
            (tables + ["CREATE TABLE extras (id INTEGER PRIMARY KEY AUTOINCREMENT, v)"], [member("extras")], "AUTOINCREMENT"),
            (
                tables + ["CREATE TABLE extras (id, v)", "CREATE UNIQUE INDEX e ON extras (v)"], [member("extras")],
                "a carried unique index"
            ),
            (tables + ["CREATE TABLE extras (rowid, _rowid_, oid)"], [member("extras")], "no name for its rowid"),
            (tables + ["CREATE TABLE extras (id, v)"], [member("extras", bytes: 9 << 20)], "a carried table too large"),
            (tables + ["CREATE TABLE main.extras (id, v)"], [member("extras")], "a carried table named with its schema"),
            (tables + ["CREATE UNIQUE INDEX ZRECIPE_CODE ON ZRECIPE (ZCODE) WHERE ZCODE IS NOT NULL"], [], "a partial unique index"),
            (tables + ["CREATE UNIQUE INDEX ZRECIPE_CODE ON ZRECIPE (lower(ZCODE))"], [], "a unique index on an expression"),
            (["CREATE INDEX i ON t (a)"] + tables, [], "an index first"),
        ] as [([String], [ArchiveManifest.TableMember], String)] {
            XCTAssertNil(ModelIndexesAfterRecords.plan(statements, carried: carried), why)
        }
        // A table without a rowid is copied in no order; one of history's is made later, empty.
        let withoutRowid = ModelIndexesAfterRecords.plan(
            tables + ["CREATE TABLE extras (id PRIMARY KEY, v) WITHOUT ROWID", "CREATE TABLE ACHANGE (Z_PK INTEGER PRIMARY KEY)"],
            carried: [member("extras")])
        XCTAssertEqual(withoutRowid?.carriedStandIns.map(\.rowid), [nil])
    }

    /// A cursor over links held in memory answers as the one over the table's sorted rows.
    func testACursorOverHeldLinksAnswersAsTheTablesDoes() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TEMP TABLE questbak_links (tableName TEXT, columnName TEXT, target INTEGER, source INTEGER, entity TEXT, relationship TEXT)"
            )
            let held = PendingLinks()
            let a = held.number(of: .init(group: DestinationLinkGroup(table: "ZSTEP", column: "ZA"), entity: "Recipe", relationship: "a"))
            let b = held.number(of: .init(group: DestinationLinkGroup(table: "ZSTEP", column: "ZB"), entity: "Recipe", relationship: "b"))
            for (kind, source, targets) in [(a, 2, [5]), (a, 9, [2]), (a, 3, [2, 7]), (b, 100, [2]), (a, 4, [3, 9]), (a, 4, [3])] {
                XCTAssertTrue(held.hold(kind: kind, source: Int64(source), targets: targets.map(Int64.init)))
            }
            let group = DestinationLinkGroup(table: "ZSTEP", column: "ZA")
            let inMemory = DestinationLinkCursor(group, held: held.links(of: group))
            try held.write(through: try db.makeStatement(sql: "INSERT INTO temp.questbak_links VALUES (?, ?, ?, ?, ?, ?)"))
            XCTAssertFalse(held.hold(kind: a, source: 1, targets: [1]), "written: every link goes to the table from here on")
            XCTAssertEqual(
                try Row.fetchAll(db, sql: "SELECT columnName, target, source, relationship FROM temp.questbak_links ORDER BY rowid").map {
                    "\($0[0] as String) \($0[1] as Int) \($0[2] as Int) \($0[3] as String)"
                }, ["ZA 5 2 a", "ZA 2 9 a", "ZA 2 3 a", "ZA 7 3 a", "ZB 2 100 b", "ZA 3 4 a", "ZA 9 4 a", "ZA 3 4 a"])
            let fromTable = try DestinationLinkCursor(db, group)
            let keys: [Int64] = [1, 2, 3, 3, 4, 5, 8, 9, 10]
            let answers = try keys.map { try inMemory.source(linkingTo: $0) }
            XCTAssertEqual(answers, try keys.map { try fromTable.source(linkingTo: $0) })
            XCTAssertEqual(answers, [nil, 3, 4, 4, nil, 2, nil, 4, nil])
            fromTable.close()
            // Past its limit nothing more is held.
            let small = PendingLinks(limit: 2)
            XCTAssertTrue(small.hold(kind: a, source: 1, targets: [1, 2]))
            XCTAssertFalse(small.hold(kind: a, source: 1, targets: [3]))
        }
    }
}
