import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures
@testable import QuestBakKit

/// The row checks of another app's store (`ModelLayout`'s): the links of a to-many counted by
/// pairs where the entity's table is keyed by its rowid (`ModelLayout.strayLinksSQL`) come to
/// what the set's form counted, on stores spoiled each way a link can name no record; and the
/// tables the checks found to hold one entity's rows only are listed, their range starts cut
/// without a pass over their keys.
final class ModelLayoutRowCheckTests: XCTestCase {
    /// Each way a link or a row can fail, and the sentence the layout says of it.
    private let spoilings: [(sql: String, said: String)] = [
        ("", ""),
        ("UPDATE ZSTEP SET Z5STEPS = 999 WHERE Z_PK = 1", "ZSTEP.Z5STEPS (the links of Recipe.steps) has 1 value(s) that name no Recipe"),
        ("UPDATE ZSTEP SET Z5STEPS = 'x' WHERE Z_PK = 1", "ZSTEP.Z5STEPS (the links of Recipe.steps) has 1 value(s) that name no Recipe"),
        ("UPDATE ZSTEP SET Z5STEPS = 1.5 WHERE Z_PK = 1", "ZSTEP.Z5STEPS (the links of Recipe.steps) has 1 value(s) that name no Recipe"),
        (
            "UPDATE ZSTEP SET Z5STEPS = x'01' WHERE Z_PK <= 2",
            "ZSTEP.Z5STEPS (the links of Recipe.steps) has 2 value(s) that name no Recipe"
        ),
        // A link to a row of the recipes' table that is no recipe (its Z_ENT is no entity's).
        ("UPDATE ZRECIPE SET Z_ENT = 42 WHERE Z_PK = (SELECT Z5STEPS FROM ZSTEP WHERE Z_PK = 1)", "that name no Recipe"),
        ("INSERT INTO Z_5TAGS VALUES (99, 1)", "join table Z_5TAGS has 1 row(s) that link no Recipe"),
        ("INSERT INTO Z_5TAGS VALUES ('a', 1)", "join table Z_5TAGS has 1 row(s) that link no Recipe"),
        ("INSERT INTO Z_5TAGS VALUES (1, 'b')", "join table Z_5TAGS has 1 row(s) that link no Recipe"),
        ("INSERT INTO Z_5TAGS VALUES (NULL, 2), (1, NULL)", "join table Z_5TAGS has 2 row(s) that link no Recipe"),
        ("INSERT INTO Z_5TAGS VALUES (1.5, 2)", "join table Z_5TAGS has 1 row(s) that link no Recipe"),
    ]

    func testLinksCountedByPairsAreTheLinksCountedAsASet() throws {
        var spoiled = 0
        for (sql, said) in spoilings {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture("AnyApp/kitchen-sink")
            if !sql.isEmpty {
                let queue = try DatabaseQueue(path: store.path)
                try queue.write { try $0.execute(sql: sql) }
                try queue.close()
            }
            try StoreSnapshot(storeAt: store).read { db in
                let model = try CompiledModel.model(of: db, path: store.path)
                let plans = try ModelLayout(db, model: model, checkRows: false).entities
                var links = 0
                var counted = 0
                for plan in plans {
                    XCTAssertTrue(try KeyRangeReaders.isKeyedByRowid(db, table: plan.table))
                    for link in plan.toMany {
                        links += 1
                        let asSet = try Int.fetchOne(db, sql: ModelLayout.strayLinksSQL(of: plan, link.storage, sourceKeyedByRowid: false))
                        let byPairs = try Int.fetchOne(db, sql: ModelLayout.strayLinksSQL(of: plan, link.storage, sourceKeyedByRowid: true))
                        XCTAssertEqual(byPairs, asSet, "\(sql): \(plan.name).\(link.name)")
                        counted += asSet ?? 0
                    }
                }
                // The fixture has both kinds of link: a column on the destination, a join table.
                XCTAssertGreaterThanOrEqual(links, 2)
                XCTAssertEqual(counted > 0, !sql.isEmpty, sql)
                let layout = try ModelLayout(db, model: model)
                let sentences = layout.problems + layout.warnings
                if said.isEmpty {
                    XCTAssertEqual(sentences, [])
                } else {
                    XCTAssertTrue(sentences.contains { $0.contains(said) }, "\(sql): \(sentences)")
                    spoiled += 1
                }
            }
        }
        XCTAssertEqual(spoiled, spoilings.count - 1)
    }

    /// A table with rows of one entity only is listed once its rows are checked; a table of
    /// several entities, or one with a row of none, or rows not checked, is not.
    func testTablesOfOneEntityAreThoseTheChecksFoundSo() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink")
        func tables() throws -> (checked: Set<String>, unchecked: Set<String>) {
            try StoreSnapshot(storeAt: store).read { db in
                let model = try CompiledModel.model(of: db, path: store.path)
                return (
                    try ModelLayout(db, model: model).tablesOfOneEntity,
                    try ModelLayout(db, model: model, checkRows: false).tablesOfOneEntity
                )
            }
        }
        let clean = try tables()
        XCTAssertEqual(clean.checked, ["ZAUTHOR", "ZRECIPE", "ZSTEP", "ZTAG"])
        XCTAssertEqual(clean.unchecked, [])
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: "UPDATE ZSTEP SET Z_ENT = 42 WHERE Z_PK = 1") }
        try queue.close()
        XCTAssertEqual(try tables().checked, ["ZAUTHOR", "ZRECIPE", "ZTAG"])
    }

    /// Range starts from a table's lowest key every `rowsPerRange` keys, where the keys are dense,
    /// are those of the pass over its keys; keys too sparse are left to that pass.
    func testRangeStartsOfATableOfOneEntity() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE T (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER)")
            let readers = KeyRangeReaders(connections: [], rowsPerRange: 3)
            XCTAssertEqual(try readers.rangeStarts(db, everyKeyOf: "T")?.starts, [])
            XCTAssertEqual(try readers.rangeStarts(db, everyKeyOf: "T")?.count, 0)
            for key in 5...14 { try db.execute(sql: "INSERT INTO T VALUES (?, 1)", arguments: [key]) }
            let scanned = try readers.rangeStarts(db, keysSQL: "SELECT Z_PK FROM T ORDER BY Z_PK")
            let spanned = try XCTUnwrap(try readers.rangeStarts(db, everyKeyOf: "T"))
            XCTAssertEqual(spanned.starts, scanned.starts)
            XCTAssertEqual(spanned.starts, [5, 8, 11, 14])
            XCTAssertEqual(spanned.count, scanned.count)
            // A gap: fewer rows in a range, the same first key and count.
            try db.execute(sql: "DELETE FROM T WHERE Z_PK IN (6, 7)")
            XCTAssertEqual(try readers.rangeStarts(db, everyKeyOf: "T")?.starts, [5, 8, 11, 14])
            XCTAssertEqual(try readers.rangeStarts(db, everyKeyOf: "T")?.count, 8)
            // Keys far apart, or near the largest key there is: the pass over the keys instead.
            try db.execute(sql: "INSERT INTO T VALUES (1000, 1)")
            XCTAssertNil(try readers.rangeStarts(db, everyKeyOf: "T"))
            try db.execute(sql: "DELETE FROM T")
            try db.execute(sql: "INSERT INTO T VALUES (?, 1)", arguments: [Int64.max])
            XCTAssertNil(try readers.rangeStarts(db, everyKeyOf: "T"))
        }
    }

    /// With `rangesPerConnection`, an entity of few rows is cut into at least that many ranges a
    /// connection (never under `fewestBalancedRows` rows a range), whichever way its starts are
    /// found; a large one keeps `rowsPerRange`, and without it every range is `rowsPerRange` rows.
    func testAnEntityOfFewRowsIsCutIntoRangesForEveryConnection() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE T (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER)")
            try db.execute(
                sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10004) INSERT INTO T SELECT i, 1 FROM n")
            let connections = [try DatabaseQueue(), try DatabaseQueue()]
            let balanced = KeyRangeReaders(connections: connections, rowsPerRange: 2048, rangesPerConnection: 8)
            XCTAssertEqual(balanced.rowsPerRange(forCount: 10_004), 626)
            XCTAssertEqual(balanced.rowsPerRange(forCount: 1_000), KeyRangeReaders.fewestBalancedRows)
            XCTAssertEqual(balanced.rowsPerRange(forCount: 1_000_000), 2048)
            let spanned = try XCTUnwrap(try balanced.rangeStarts(db, everyKeyOf: "T"))
            XCTAssertEqual(spanned.starts, Array(stride(from: 1, through: 10_004, by: 626)))
            XCTAssertEqual(spanned.count, 10_004)
            // The pass over the keys keeps a start every 256 keys and takes every second of them.
            let scanned = try balanced.rangeStarts(db, keysSQL: "SELECT Z_PK FROM T ORDER BY Z_PK")
            XCTAssertEqual(scanned.starts, Array(stride(from: 1, through: 10_004, by: 512)))
            XCTAssertEqual(scanned.count, 10_004)
            for starts in [spanned.starts, scanned.starts] { XCTAssertGreaterThanOrEqual(starts.count, 2 * 8) }
            let plain = KeyRangeReaders(connections: connections, rowsPerRange: 2048)
            XCTAssertEqual(try plain.rangeStarts(db, everyKeyOf: "T")?.starts, [1, 2049, 4097, 6145, 8193])
            XCTAssertEqual(try plain.rangeStarts(db, keysSQL: "SELECT Z_PK FROM T ORDER BY Z_PK").starts, [1, 2049, 4097, 6145, 8193])
        }
    }
}
