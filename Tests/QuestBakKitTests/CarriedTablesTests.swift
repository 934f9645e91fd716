import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// Tables that belong to no entity (a many-to-many join table, another tool's table) travel in
/// the archive and come back exactly: a backup drops nothing without saying so.
final class CarriedTablesTests: XCTestCase {
    func export(_ store: URL, to archive: URL) throws -> Exporter.Summary {
        try Exporter.export(
            storeAt: store, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600, compression: .none))
    }

    func member(_ archive: URL, _ path: String) throws -> [String] {
        let result = try Questbak.runTool(["tar", "-xOf", archive.path, path])
        XCTAssertEqual(result.status, 0, result.standardError)
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    /// A TimeQuest store with a join-table-shaped table and a SQLite tool's own table.
    func storeWithExtraTables(_ directory: TemporaryTestDirectory) throws -> URL {
        let store = try directory.copyFixture("v1-typical")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE Z_1TAGS ( Z_1ROUTINES INTEGER, Z_9TAGS INTEGER, PRIMARY KEY (Z_1ROUTINES, Z_9TAGS) );
                    CREATE INDEX Z_1TAGS_Z_9TAGS_INDEX ON Z_1TAGS (Z_9TAGS, Z_1ROUTINES);
                    INSERT INTO Z_1TAGS VALUES (1, 2), (1, 3), (2, 3);
                    CREATE TABLE sqlitemanager_extras (note TEXT, weight REAL, raw BLOB, n INTEGER);
                    INSERT INTO sqlitemanager_extras VALUES ('a' || char(0) || 'b', 1.0, x'00ff', 9223372036854775807),
                        (CAST(x'c328' AS TEXT), 9e999, NULL, -1), (NULL, -0.5, x'', 0);
                    """)
        }
        try queue.close()
        return store
    }

    func testExtraTablesAreCarriedAndRestoredExactly() throws {
        let directory = try TemporaryTestDirectory()
        let store = try storeWithExtraTables(directory)
        let archive = directory.path("a.qbak")
        let summary = try export(store, to: archive)
        XCTAssertEqual(summary.tables.map(\.name), ["Z_1TAGS", "sqlitemanager_extras"])
        XCTAssertEqual(summary.tables.map(\.count), [3, 3])
        XCTAssertEqual(summary.tables.first?.indexes, ["CREATE INDEX Z_1TAGS_Z_9TAGS_INDEX ON Z_1TAGS (Z_9TAGS, Z_1ROUTINES)"])
        XCTAssertEqual(
            try member(archive, "tables/Z_1TAGS.jsonl"),
            [
                #"{"table":"Z_1TAGS","count":3}"#, #"{"Z_1ROUTINES":1,"Z_9TAGS":2}"#, #"{"Z_1ROUTINES":1,"Z_9TAGS":3}"#,
                #"{"Z_1ROUTINES":2,"Z_9TAGS":3}"#,
            ])
        XCTAssertTrue(
            try member(archive, "tables/sqlitemanager_extras.jsonl").contains(
                #"{"note":{"textBytes":"wyg="},"weight":{"real":"Infinity"},"raw":null,"n":-1}"#))

        let restored = directory.path("r.store")
        let work = try TemporaryTestDirectory()
        _ = try Importer.run(archive: archive.path, into: restored, options: .timeQuest, workDirectory: work.url)
        let original = try DatabaseQueue(path: store.path)
        let copy = try DatabaseQueue(path: restored.path)
        defer {
            try? original.close()
            try? copy.close()
        }
        for (table, order) in [("Z_1TAGS", "1, 2"), ("sqlitemanager_extras", "1, 2, 3, 4")] {
            let sql = "SELECT * FROM \(table) ORDER BY \(order)"
            let before = try original.read { try ExactSQL.fetchAll($0, sql: sql) }
            let after = try copy.read { try ExactSQL.fetchAll($0, sql: sql) }
            XCTAssertEqual(before.map { $0.map(\.summary) }, after.map { $0.map(\.summary) }, table)
            XCTAssertEqual(before, after, table)
            let schema = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE tbl_name = '\(table)' ORDER BY name"
            XCTAssertEqual(
                try original.read { try Row.fetchAll($0, sql: schema) }, try copy.read { try Row.fetchAll($0, sql: schema) }, table)
        }
        // And the restored store's archive carries the same tables, byte for byte.
        let again = try export(restored, to: directory.path("b.qbak"))
        XCTAssertEqual(again.tables, summary.tables)
    }

    /// A carried table's columns may be named with a double quote (only its own name must be a
    /// plain identifier): every statement about them doubles the quote, so the table is exported,
    /// restored and exported again like any other. GRDB's quoting alone made the export fail.
    func testACarriedTableWithQuotesInItsColumnNamesRestoresExactly() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        try DatabaseQueue(path: store.path).write { db in
            try db.execute(
                sql: #"""
                    CREATE TABLE quoted_names ("co""l" TEXT, "n""" INTEGER, """" BLOB);
                    CREATE INDEX quoted_names_index ON quoted_names ("n""", "co""l");
                    INSERT INTO quoted_names VALUES ('a', 1, x'01'), ('b"', 2, NULL);
                    """#)
        }
        let summary = try export(store, to: directory.path("a.qbak"))
        XCTAssertEqual(summary.tables.map(\.name), ["quoted_names"])
        XCTAssertEqual(summary.tables.map(\.count), [2])
        let restored = directory.path("r.store")
        let work = try TemporaryTestDirectory()
        _ = try Importer.run(archive: directory.path("a.qbak").path, into: restored, options: .timeQuest, workDirectory: work.url)
        let rows = "SELECT * FROM quoted_names ORDER BY 2"
        let schema = "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'quoted_names' ORDER BY name"
        for sql in [rows, schema] {
            let before = try DatabaseQueue(path: store.path).read { try ExactSQL.fetchAll($0, sql: sql) }
            XCTAssertEqual(before.count, 2, sql)
            XCTAssertEqual(before, try DatabaseQueue(path: restored.path).read { try ExactSQL.fetchAll($0, sql: sql) }, sql)
        }
        XCTAssertEqual(try export(restored, to: directory.path("b.qbak")).tables, summary.tables)
    }

    func testAnotherAppsJoinTableIsInItsArchive() throws {
        try checkAnotherAppsStore(identifiers: ["1.0.0"])
    }

    /// No version identifier is no version: the archive claims none (not "unversioned", not "newer").
    func testAStoreWithoutAVersionIdentifierClaimsNone() throws {
        let summary = try checkAnotherAppsStore(identifiers: [])
        XCTAssertEqual(summary.schemaVersion, "")
    }

    @discardableResult
    func checkAnotherAppsStore(identifiers: [String]) throws -> Exporter.Summary {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("expenses.store")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE ZCATEGORY ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR );
                    CREATE TABLE ZEXPENSE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAMOUNT DECIMAL );
                    CREATE TABLE Z_1EXPENSES ( Z_1CATEGORIES INTEGER, Z_2EXPENSES INTEGER, PRIMARY KEY (Z_1CATEGORIES, Z_2EXPENSES) );
                    CREATE INDEX Z_1EXPENSES_Z_2EXPENSES_INDEX ON Z_1EXPENSES (Z_2EXPENSES, Z_1CATEGORIES);
                    CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                    CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                    INSERT INTO ZCATEGORY VALUES (1, 1, 1, 'Food'), (2, 1, 1, 'Travel');
                    INSERT INTO ZEXPENSE VALUES (1, 2, 1, 100), (2, 2, 1, 12.5);
                    INSERT INTO Z_1EXPENSES VALUES (1, 1), (2, 1), (2, 2);
                    INSERT INTO Z_PRIMARYKEY VALUES (1, 'Category', 0, 2), (2, 'Expense', 0, 2);
                    """)
            try db.execute(
                sql: "INSERT INTO Z_METADATA VALUES (1, 'U', ?)",
                arguments: [
                    BinaryPropertyList.encode(.dictionary(["NSStoreModelVersionIdentifiers": .array(identifiers.map { .string($0) })]))
                ])
        }
        try queue.close()
        let archive = directory.path("e.qbak")
        let summary = try export(store, to: archive)
        XCTAssertEqual(summary.schema, ArchiveManifest.Source.genericSchema, "a 1.0.0 store of another app is not TimeQuest")
        XCTAssertEqual(summary.tables.map(\.name), ["Z_1EXPENSES", "Z_PRIMARYKEY"], "no model describes it: the join table is carried")
        XCTAssertEqual(try member(archive, "tables/Z_1EXPENSES.jsonl").count, 4)
        XCTAssertNoThrow(try ArchiveReader(path: archive.path).read(), "the reader verifies the table member")
        return summary
    }

    func testHostileTableStatementsAreRefused() throws {
        let directory = try TemporaryTestDirectory()
        let store = try storeWithExtraTables(directory)
        let archive = directory.path("a.qbak")
        _ = try export(store, to: archive)
        let extracted = directory.path("x")
        try FileManager.default.createDirectory(at: extracted, withIntermediateDirectories: true)
        XCTAssertEqual(try Questbak.runTool(["tar", "-xf", archive.path, "-C", extracted.path]).status, 0)
        let manifestURL = extracted.appendingPathComponent("manifest.json")
        let original = try Data(contentsOf: manifestURL)
        let attacks: [(String, String)] = [
            ("CREATE TABLE Z_1TAGS ( Z_1ROUTINES INTEGER, Z_9TAGS INTEGER ); DROP TABLE ZROUTINE", "Multiple statements"),
            ("CREATE VIEW Z_1TAGS AS SELECT * FROM ZROUTINE", "is not a create table statement"),
            ("CREATE TABLE ZROUTINE_COPY AS SELECT * FROM ZROUTINE", "no such table: main.Z_1TAGS"),
            ("CREATE TABLE Z_1TAGS (a); ", "no such column: Z_9TAGS"),
            ("CREATE TEMP TABLE Z_1TAGS (a)", "is not a create table statement"),
        ]
        for (index, (sql, says)) in attacks.enumerated() {
            var manifest = try XCTUnwrap(JSONSerialization.jsonObject(with: original) as? [String: Any])
            var tables = try XCTUnwrap(manifest["tables"] as? [[String: Any]])
            tables[0]["sql"] = sql
            manifest["tables"] = tables
            try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
            let hostile = directory.path("hostile-\(index).qbak")
            let names =
                ["manifest.json"]
                + (try FileManager.default.subpathsOfDirectory(atPath: extracted.path)).filter {
                    $0.hasSuffix(".jsonl") || $0.hasPrefix("store/") && $0.contains(".")
                }.sorted()
            XCTAssertEqual(try Questbak.runTool(["tar", "--format=ustar", "-cf", hostile.path, "-C", extracted.path] + names).status, 0)
            let target = directory.path("t-\(index).store")
            let work = try TemporaryTestDirectory()
            XCTAssertThrowsError(try Importer.run(archive: hostile.path, into: target, options: .timeQuest, workDirectory: work.url), sql) {
                error in
                guard case ArchiveError.invalidLine(_, "tables/Z_1TAGS.jsonl", _, let reason) = error else {
                    return XCTFail("\(sql): \(error)")
                }
                XCTAssertTrue(reason.contains(says), "\(sql): \(reason)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), sql)
        }
    }

    func testInspectListsOtherTablesAndWarnsOfAZMAXBelowTheLargestKey() throws {
        let directory = try TemporaryTestDirectory()
        let store = try storeWithExtraTables(directory)
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Routine'") }
        try queue.close()
        let inspection = try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: TimeQuestSchemas.versions)
        XCTAssertEqual(inspection.otherTables, ["Z_1TAGS": 3, "sqlitemanager_extras": 3])
        XCTAssertEqual(inspection.warnings.count, 1)
        XCTAssertTrue(inspection.warnings.first?.hasPrefix("Routine: Z_MAX is 1, below its largest Z_PK") == true, "\(inspection.warnings)")
    }
}
