import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakArchive
@testable import QuestBakKit

/// A model archive's links kept on the destination's row (a recipe's steps, on each step's row)
/// go into the destination's row as it is inserted, where the link is known by then, and the link
/// step (`StatementRestore.applyDestinationLinks`) is skipped for every group whose links were
/// all taken so (`DestinationLinkCursor`). Restoring with and without taking them must give the
/// same store, report and entries, or the same first error.
final class LinksOnInsertTests: XCTestCase {
    func outcome(_ archive: URL, validate: Bool, onInsert: Bool, into directory: TemporaryTestDirectory) -> String {
        var options = Importer.Options.timeQuest
        options.validate = validate
        options.bindsLinksOnInsert = onInsert
        return LinesAheadTests.outcome(archive, options: options, into: directory)
    }

    @discardableResult
    func assertSameBothWays(
        _ archive: URL, _ name: String, validate: Bool = true, in directory: TemporaryTestDirectory, file: StaticString = #filePath,
        line: UInt = #line
    ) -> String {
        LinesAheadTests.assertSame(name, file: file, line: line) { outcome(archive, validate: validate, onInsert: $0, into: directory) }
    }

    /// How many links the rows took as they were inserted, restoring `archive` with --validate.
    func linksTaken(_ archive: URL, in directory: TemporaryTestDirectory) throws -> Int {
        let reader = ArchiveReader(path: archive.path, displayPath: archive.path)
        let restore = try StatementRestore(manifest: try reader.readManifest(), archive: archive.path)
        let work = try TemporaryTestDirectory()
        let log = try RepairLog(directory: work.url)
        return try restore.write(from: reader, to: work.path("taken.store"), spool: nil, log: log, validate: true).linksTakenOnInsert
    }

    /// Every store shape whose archive goes by its model.
    func testEveryStoreShapeWithAModelRestoresTheSameBothWays() throws {
        try LinesAheadTests.forEveryStoreShapeByItsModel("questbak-links-on-insert") { shape, archive, directory in
            // With --validate (a repair a link needs is made, not refused: the grown store's below is both).
            let outcome = assertSameBothWays(archive, shape.name, in: directory)
            XCTAssertFalse(outcome.hasPrefix("error"), "\(shape.name): \(outcome.prefix(300))")
        }
    }

    /// The kitchen-sink store grown by 2,000 steps, two thirds of them a recipe's: as exported
    /// (every link taken on insert), and with links the step must drop and report, or set itself.
    func testLinksToRepairOrReadLateRestoreTheSameBothWays() throws {
        let directory = try TemporaryTestDirectory("questbak-links-on-insert")
        let archive = try LinesAheadTests.grownArchive(in: directory)
        let clean = assertSameBothWays(archive, "as exported", in: directory)
        XCTAssertFalse(clean.hasPrefix("error"), String(clean.prefix(300)))
        // Recipes 1, 2 and 4 name the first five steps, and recipes 1 and 2 1,335 of the copies.
        XCTAssertEqual(try linksTaken(archive, in: directory), 1_340)
        let recipeLine = Self.recipeLine

        // A recipe names a step the archive lacks: dropped and reported (refused without --validate).
        let missing = try LinesAheadTests.rewritten(
            archive, in: directory,
            recipeLine(1) { $0.replacingOccurrences(of: #"("steps":\[[0-9,]*)\]"#, with: "$1,99999]", options: .regularExpression) })
        let missingOutcome = assertSameBothWays(missing, "a missing step", in: directory)
        XCTAssertTrue(missingOutcome.contains("99999"), String(missingOutcome.prefix(2000)))
        assertSameBothWays(missing, "a missing step, without --validate", validate: false, in: directory)
        // Two recipes name step 3: the lower keeps it, the other's link is reported.
        let twice = try LinesAheadTests.rewritten(
            archive, in: directory, recipeLine(4) { $0.replacingOccurrences(of: #""steps":[4,5]"#, with: #""steps":[3,4,5]"#) })
        XCTAssertNotEqual(
            assertSameBothWays(twice, "a step named twice", in: directory), clean, "the edit reached the archive's recipe")
        // Steps before recipes (no export writes that order): no link is known as a step goes in,
        // and the link step sets them all.
        let stepsFirst = try LinesAheadTests.rewritten(
            archive, in: directory,
            order: { members in
                let step = "entities/Step.jsonl"
                return members.filter { !$0.hasPrefix("entities/") } + [step] + members.filter { $0.hasPrefix("entities/") && $0 != step }
            })
        XCTAssertEqual(assertSameBothWays(stepsFirst, "steps first", in: directory), clean)
        XCTAssertEqual(try linksTaken(stepsFirst, in: directory), 0)
    }

    /// Recipe `key`'s line changed by `change`.
    static func recipeLine(_ key: Int, _ change: @escaping (String) -> String) -> (String, inout [String]) -> Void {
        { path, lines in
            guard path == "entities/Recipe.jsonl", let index = lines.firstIndex(where: { $0.hasPrefix("{\"_pk\":\(key),") }) else {
                return
            }
            lines[index] = change(lines[index])
        }
    }

    /// The reader of one group gives each key the lowest source of the links that name it, and
    /// passes the links to keys no row took.
    func testTheCursorGivesEachKeyItsLowestSourceInKeyOrder() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TEMP TABLE questbak_links (tableName TEXT, columnName TEXT, target INTEGER, source INTEGER, entity TEXT, relationship TEXT)"
            )
            for (column, target, source) in [
                ("ZA", 5, 2), ("ZA", 2, 9), ("ZA", 2, 3), ("ZA", 7, 1), ("ZA", 3, 4), ("ZB", 2, 100), ("ZA", 9, 6),
            ] {
                try db.execute(
                    sql: "INSERT INTO temp.questbak_links VALUES ('ZSTEP', ?, ?, ?, 'Recipe', 'steps')",
                    arguments: [column, target, source])
            }
            let cursor = try DestinationLinkCursor(db, DestinationLinkGroup(table: "ZSTEP", column: "ZA"))
            // Key 2 takes source 3 (of 3 and 9), key 4 none; key 3 was passed; 8 passes 7's.
            let taken = try [1, 2, 4, 5, 8, 9, 10].map { try cursor.source(linkingTo: Int64($0)) }
            XCTAssertEqual(taken, [nil, 3, nil, 2, nil, 6, nil])
            cursor.close()
            // Closed: the table can be dropped.
            try db.execute(sql: "DROP TABLE temp.questbak_links")
        }
    }

    /// A column an insert checks (a constraint, an index that can refuse or fail, its own value)
    /// is set by the link step, as before.
    func testAColumnAnInsertChecksIsNotTakenOnInsert() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            func takes(_ create: String, _ more: [String] = [], insertColumns: [String] = ["Z_PK", "ZTEXT"]) throws -> Bool {
                for table in ["ZSTEP"] where try db.tableExists(table) { try db.execute(sql: "DROP TABLE \(table)") }
                try db.execute(sql: create)
                for statement in more { try db.execute(sql: statement) }
                return try DestinationLinkBinding.takesLinksOnInsert(
                    db, DestinationLinkGroup(table: "ZSTEP", column: "Z5STEPS"), insertColumns: insertColumns)
            }
            let plain = "CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR, Z5STEPS INTEGER)"
            XCTAssertTrue(try takes(plain, ["CREATE INDEX ZSTEP_Z5STEPS_INDEX ON ZSTEP (Z5STEPS)"]))
            XCTAssertTrue(try takes("CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR, Z5STEPS INTEGER DEFAULT 7)"))
            XCTAssertFalse(try takes(plain, insertColumns: ["Z_PK", "z5steps"]))
            XCTAssertFalse(try takes("CREATE TABLE ZSTEP (Z_PK INTEGER, ZTEXT VARCHAR, Z5STEPS INTEGER)"))
            XCTAssertFalse(try takes("CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR, Z5STEPS INTEGER NOT NULL DEFAULT 0)"))
            XCTAssertFalse(try takes("CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR, Z5STEPS INTEGER CHECK (Z5STEPS > 0))"))
            XCTAssertFalse(
                try takes("CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR, Z5STEPS INTEGER, ZTWICE AS (Z5STEPS * 2))"))
            XCTAssertFalse(try takes(plain, ["CREATE UNIQUE INDEX ZSTEP_U ON ZSTEP (ZTEXT, Z5STEPS)"]))
            XCTAssertTrue(try takes(plain, ["CREATE UNIQUE INDEX ZSTEP_U ON ZSTEP (ZTEXT)"]))
            XCTAssertFalse(try takes(plain, ["CREATE UNIQUE INDEX ZSTEP_U ON ZSTEP (ZTEXT) WHERE Z5STEPS IS NOT NULL"]))
            XCTAssertFalse(try takes(plain, ["CREATE INDEX ZSTEP_E ON ZSTEP (abs(Z5STEPS))"]))
            XCTAssertFalse(
                try takes("CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, ZTEXT VARCHAR, Z5STEPS INTEGER REFERENCES ZRECIPE (Z_PK))"))
        }
    }
}
