import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// Links kept on the destination's row are set by one `UPDATE … FROM` the links
/// (`StatementRestore.applyDestinationLinks`); before, by a subquery per row. Both must leave the
/// same rows and report the same dropped links, whatever the links hold.
final class DestinationLinksTests: XCTestCase {
    /// Steps with a hidden column per to-many; links to missing steps, a step two recipes name,
    /// the same link twice (two sources merged into one), a step no link names (its value stays).
    func testTheJoinSetsWhatTheSubqueryPerRowSet() throws {
        let links: [(table: String, column: String, target: Int64, source: Int64)] = [
            ("ZSTEP", "ZRECIPE1", 1, 10), ("ZSTEP", "ZRECIPE1", 2, 10), ("ZSTEP", "ZRECIPE1", 3, 11), ("ZSTEP", "ZRECIPE1", 3, 12),
            ("ZSTEP", "ZRECIPE1", 4, 13), ("ZSTEP", "ZRECIPE1", 4, 13), ("ZSTEP", "ZRECIPE1", 99, 14), ("ZSTEP", "ZDRAFT2", 2, 20),
            ("ZSTEP", "ZDRAFT2", 5, 21), ("ZSTEP", "ZDRAFT2", 5, 19), ("ZNOTE", "ZBOOK1", 7, 30), ("ZNOTE", "ZBOOK1", 8, 31),
        ]
        let joined = try applied(links) { try StatementRestore.applyDestinationLinks($0, log: $1) }
        let perRow = try applied(links) { try Self.previousApplyDestinationLinks($0, log: $1) }
        XCTAssertEqual(joined.rows, perRow.rows)
        XCTAssertEqual(joined.entries, perRow.entries)
        // The comparison saw links set, dropped and a value no link touches.
        XCTAssertTrue(joined.rows.contains(["ZSTEP", "3", "3", "11", "NULL"]), "\(joined.rows)")
        XCTAssertTrue(joined.rows.contains(["ZSTEP", "4", "3", "13", "NULL"]), "\(joined.rows)")
        XCTAssertTrue(joined.rows.contains(["ZSTEP", "5", "3", "NULL", "19"]), "\(joined.rows)")
        XCTAssertTrue(joined.rows.contains(["ZSTEP", "6", "3", "NULL", "77"]), "\(joined.rows)")
        XCTAssertEqual(joined.entries.count, 3, "\(joined.entries)")
    }

    /// The join is made first, and the links are checked only when it reached fewer rows than
    /// there are links. Random links (some clean groups, some with missing targets, targets
    /// named twice, a link twice), and a table whose `Z_PK` is not its rowid and holds a key
    /// twice (one link reaching two rows must not hide a link to a missing row): the same rows
    /// and entries as the statements before the join.
    func testTheJoinFirstLeavesWhatTheChecksFirstLeft() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<40 {
            var links: [(table: String, column: String, target: Int64, source: Int64)] = []
            for (table, column) in [("ZSTEP", "ZRECIPE1"), ("ZSTEP", "ZDRAFT2"), ("ZNOTE", "ZBOOK1")] {
                // Every fourth group of a round is clean: each target once, every target a row.
                let clean = (round + column.count) % 4 == 0
                var targets = Array(Int64(1)...Int64(12)).shuffled(using: &generator).prefix(Int.random(in: 0...12, using: &generator))
                if !clean, Bool.random(using: &generator) { targets.append(Int64.random(in: 13...20, using: &generator)) }
                if !clean, let again = targets.randomElement(using: &generator) { targets.append(again) }
                for target in targets { links.append((table, column, target, Int64.random(in: 1...9, using: &generator))) }
                if !clean, let twice = links.last { links.append(twice) }
            }
            // Two links, and the join reaches two rows: key 1's two.
            links.append(("ZLOOSE", "ZOWNER1", 1, 5))
            links.append(("ZLOOSE", "ZOWNER1", 30, 6))
            links.shuffle(using: &generator)
            let joined = try applied(links) { try StatementRestore.applyDestinationLinks($0, log: $1) }
            let before = try applied(links) { try Self.previousApplyDestinationLinks($0, log: $1) }
            XCTAssertEqual(joined.rows, before.rows, "round \(round): \(links)")
            XCTAssertEqual(joined.entries, before.entries, "round \(round): \(links)")
            // The link to a key the loose table lacks is dropped, though the one to its key
            // held twice reaches two rows.
            XCTAssertEqual(joined.entries.filter { $0.contains("30") }.count, 1, "\(joined.entries)")
        }
    }

    /// The tables' rows and the entries after `apply` ran on `links`: steps and notes keyed by
    /// their rowid, and a table whose `Z_PK` is a plain column holding key 1 twice.
    func applied(
        _ links: [(table: String, column: String, target: Int64, source: Int64)], _ apply: (Database, RepairLog) throws -> Void
    ) throws -> (rows: [[String]], entries: [String]) {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        let queue = try DatabaseQueue()
        let rows = try queue.write { db -> [[String]] in
            try db.execute(sql: "CREATE TABLE ZSTEP (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZRECIPE1 INTEGER, ZDRAFT2 INTEGER)")
            try db.execute(sql: "CREATE TABLE ZNOTE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZBOOK1 INTEGER)")
            try db.execute(sql: "CREATE TABLE ZLOOSE (Z_PK INTEGER, Z_ENT INTEGER, ZOWNER1 INTEGER)")
            for key in 1...12 {
                try db.execute(sql: "INSERT INTO ZSTEP VALUES (?, 3, NULL, ?)", arguments: [key, key == 6 ? 77 : nil])
                try db.execute(sql: "INSERT INTO ZNOTE VALUES (?, 4, NULL)", arguments: [key])
            }
            for key in [1, 1, 2] { try db.execute(sql: "INSERT INTO ZLOOSE VALUES (?, 5, NULL)", arguments: [key]) }
            try db.execute(
                sql:
                    "CREATE TEMP TABLE questbak_links (tableName TEXT, columnName TEXT, target INTEGER, source INTEGER, entity TEXT, relationship TEXT)"
            )
            for link in links {
                try db.execute(
                    sql: "INSERT INTO temp.questbak_links VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [link.table, link.column, link.target, link.source, "Recipe", link.column.lowercased()])
            }
            try apply(db, log)
            return try ["ZSTEP", "ZNOTE", "ZLOOSE"].flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY Z_PK, rowid").map { row in
                    [table] + row.databaseValues.map { $0.description }
                }
            }
        }
        return (rows, try log.firstEntries(10_000).map(\.sentence))
    }

    /// `applyDestinationLinks` as it was before the join (commit e969070): the reference.
    static func previousApplyDestinationLinks(_ db: Database, log: RepairLog) throws {
        try db.execute(
            sql: "CREATE INDEX IF NOT EXISTS temp.questbak_links_target ON questbak_links (tableName, columnName, target, source)")
        let targets = try Row.fetchAll(db, sql: "SELECT DISTINCT tableName, columnName FROM temp.questbak_links ORDER BY 1, 2")
        for target in targets {
            let table: String = target[0]
            let column: String = target[1]
            let scope = "FROM temp.questbak_links WHERE tableName = ? AND columnName = ?"
            let dropped = try Row.fetchAll(
                db,
                sql: """
                    SELECT source, target, entity, relationship, rowid \(scope)
                      AND (target NOT IN (SELECT Z_PK FROM \(table))
                           OR source > (SELECT min(l.source) FROM temp.questbak_links l
                                        WHERE l.tableName = ? AND l.columnName = ? AND l.target = questbak_links.target))
                    ORDER BY source, target
                    """, arguments: [table, column, table, column])
            for row in dropped {
                try log.record(
                    RepairEntry(
                        rule: .orphan, kind: .repair, entity: row[2], primaryKey: row[0], cloudID: nil, field: row[3],
                        old: .value(.integer(row[1])), new: .value(.null)))
                try db.execute(sql: "DELETE FROM temp.questbak_links WHERE rowid = ?", arguments: [row[4]])
            }
            try db.execute(
                sql:
                    "UPDATE \(table) SET \(column) = (SELECT source \(scope) AND target = \(table).Z_PK) WHERE Z_PK IN (SELECT target \(scope))",
                arguments: [table, column, table, column])
        }
    }
}
