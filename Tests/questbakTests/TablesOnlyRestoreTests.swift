import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// Issue #23, section 1: every store shape export accepts restores exactly. Each test exports a
/// shape of `StoreShapes.tablesOnly`, imports it into a new store and compares the two: the
/// schema as `sqlite_master` lists it (in its order), the file's header fields and journal mode,
/// and every table row by row, each value in its storage class.
final class TablesOnlyRestoreTests: XCTestCase {
    /// What a store holds, as lines to compare: persistent history is left out (a restore starts
    /// it empty, as Core Data rebuilds it).
    static func contents(of store: URL) throws -> [String] {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: store.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            var lines = try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid").map {
                "schema \($0[0] as String) \($0[1] as String) on \($0[2] as String): \(($0[3] as String?) ?? "(none)")"
            }
            for pragma in ["user_version", "application_id", "page_size", "auto_vacuum", "journal_mode"] {
                lines.append("\(pragma) \(try String.fetchOne(db, sql: "PRAGMA \(pragma)") ?? "?")")
            }
            let tables = try String.fetchAll(
                db,
                sql:
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND (name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR name = 'sqlite_sequence') ORDER BY name"
            )
            for table in tables where !["ACHANGE", "ATRANSACTION", "ANSCK"].contains(where: { table.uppercased().hasPrefix($0) }) {
                let columns = try db.columns(in: table).map(\.name.quotedDatabaseIdentifier)
                let order = columns.indices.map { String($0 + 1) }.joined(separator: ", ")
                for row in try Row.fetchAll(
                    db, sql: "SELECT \(columns.joined(separator: ", ")) FROM \(table.quotedDatabaseIdentifier) ORDER BY \(order)")
                {
                    let values = row.databaseValues.map { value -> String in
                        switch value.storage {
                        case .null: return "null"
                        case .int64(let number): return "integer \(number)"
                        case .double(let number): return "real \(number)"
                        case .string(let text): return "text \(text.debugDescription)"
                        case .blob(let bytes): return "blob \(bytes.base64EncodedString())"
                        }
                    }
                    lines.append("\(table): \(values.joined(separator: ", "))")
                }
            }
            return lines
        }
    }

    /// Exports `shape`, imports the archive into a new store, and asserts the two hold the same.
    @discardableResult
    func assertRestoresExactly(
        _ shape: @Sendable (URL) throws -> URL, file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> (archive: URL, source: URL, restored: URL, directory: TemporaryTestDirectory)
    {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let source = try shape(directory.url)
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", source.path, "-o", archive.path, "-q"])
        XCTAssertEqual(export.status, 0, "export: \(export.standardError)", file: file, line: line)
        let restored = directory.path("restored/default.store")
        let restore = try Questbak.run(["import", archive.path, "--into", restored.path, "-q"])
        XCTAssertEqual(restore.status, 0, "import: \(restore.standardError)", file: file, line: line)
        let verify = try Questbak.run(["verify", archive.path])
        XCTAssertEqual(verify.status, 0, "verify: \(verify.standardOutput)\(verify.standardError)", file: file, line: line)
        if export.status == 0, restore.status == 0 {
            let expected = try Self.contents(of: source)
            let found = try Self.contents(of: restored)
            XCTAssertEqual(found, expected, "differs: \(Set(found).symmetricDifference(expected).sorted())", file: file, line: line)
        }
        return (archive, source, restored, directory)
    }

    func manifest(_ archive: URL) throws -> [String: Any] {
        let result = try Questbak.runTool(["tar", "--zstd", "-xOf", archive.path, "manifest.json"])
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
    }

    /// Core Data before about 2015: no model cache table, no checksum keys, a rollback journal.
    /// Import used to say "its statements (sql) make no table Z_MODELCACHE"; the store now comes
    /// back without one, still in rollback-journal mode (the manifest says `journalMode` "delete").
    func testAStoreWithoutAModelCacheRestoresAsItWas() throws {
        let made = try assertRestoresExactly(TablesOnlyShapes.legacyCoreData)
        let sqlite = try XCTUnwrap(try manifest(made.archive)["sqlite"] as? [String: Any])
        XCTAssertEqual(sqlite["journalMode"] as? String, "delete")
        XCTAssertFalse(FileManager.default.fileExists(atPath: made.restored.path + "-wal"))
    }

    /// An untyped table whose Z_PK and to-one key hold TEXT (import used to say "_pk must be an
    /// integer"): every value back in its storage class, '12' as TEXT, 2.5 as REAL, a BLOB.
    func testTextKeysInAnUntypedTableKeepTheirStorageClass() throws {
        let made = try assertRestoresExactly(TablesOnlyShapes.untypedTable)
        let restored = try Self.contents(of: made.restored)
        XCTAssertTrue(restored.contains { $0.hasPrefix("ZSESSIONMETRICS: text \"S-1\"") }, "\(restored)")
        XCTAssertTrue(restored.contains { $0.contains("text \"player-2\"") && $0.contains("real 2.5") }, "\(restored)")
        // A model store's to-one holding TEXT: by its tables, the TEXT kept.
        let textKey = try assertRestoresExactly(TablesOnlyShapes.textToOneKey)
        XCTAssertEqual((try manifest(textKey.archive)["source"] as? [String: Any])?["schema"] as? String, "generic")
        XCTAssertTrue(
            try Self.contents(of: textKey.restored).contains { $0.hasPrefix("ZRECIPE: integer 1,") && $0.contains("text \"author-x\"") })
    }

    /// A trigger and a view made before a later table (export 0, then import 74 "statements did
    /// not read back as written"): the schema comes back in its order, and the triggers do not
    /// fire on the restore's own inserts (the audit log and the touched settings stay as stored).
    func testATriggerMadeBeforeALaterTableRestoresInOrder() throws {
        let made = try assertRestoresExactly(TablesOnlyShapes.triggerBeforeLaterTable)
        let restored = try Self.contents(of: made.restored)
        XCTAssertEqual(restored.filter { $0.hasPrefix("audit_log:") }.count, 2, "\(restored)")
        XCTAssertTrue(restored.contains("sqlite_sequence: text \"audit_log\", integer 3"), "\(restored)")
        XCTAssertTrue(restored.contains("later_settings: text \"theme\", text \"dark\""), "\(restored)")
    }

    /// fts5, fts4 and rtree tables: SQLite makes each virtual table and its shadow tables again
    /// from its statement; the shadow tables' rows are carried and put back exactly, so the
    /// indexes match the source's byte for byte and answer the same queries.
    func testVirtualTablesAndTheirShadowTablesRestore() throws {
        let made = try assertRestoresExactly(TablesOnlyShapes.virtualTables)
        let tables = try XCTUnwrap(try manifest(made.archive)["tables"] as? [[String: Any]]).compactMap { $0["name"] as? String }
        XCTAssertTrue(tables.contains("player_search_data") && tables.contains("play_area_node"), "\(tables)")
        XCTAssertFalse(tables.contains("player_search") || tables.contains("video_search") || tables.contains("play_area"), "\(tables)")
        let found = try DatabaseQueue(path: made.restored.path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM player_search WHERE player_search MATCH 'coins OR puzzles' ORDER BY rowid")
        }
        XCTAssertEqual(found, ["Ada counts coins"])
    }

    /// A virtual table of a module this SQLite lacks cannot be made again: export refuses it
    /// (65), naming it, and leaves no archive.
    func testAVirtualTableOfAModuleThisSQLiteLacksIsRefusedByExport() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.legacyCoreData(directory.url)
        try editSchema(
            of: store,
            "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES ('table', 'ghost', 'ghost', 0, 'CREATE VIRTUAL TABLE ghost USING nosuchmodule(a)')"
        )
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 65, export.standardError)
        XCTAssertTrue(export.standardError.contains("a module this SQLite lacks (no such module: nosuchmodule)"), export.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    /// `user_version` and `application_id` come back (they used to be 0), on a store by its
    /// tables and on one by its own model (kitchen-sink, with a trigger and an fts5 table too).
    func testUserVersionAndApplicationIdRestore() throws {
        let tables = try assertRestoresExactly(TablesOnlyShapes.headerFields)
        let sqlite = try XCTUnwrap(try manifest(tables.archive)["sqlite"] as? [String: Any])
        XCTAssertEqual(sqlite["userVersion"] as? Int, 42)
        XCTAssertEqual(sqlite["applicationId"] as? Int, -1_094_795_586)
        let model = try assertRestoresExactly(TablesOnlyShapes.modelStoreWithExtras)
        let manifest = try manifest(model.archive)
        XCTAssertEqual((manifest["source"] as? [String: Any])?["schema"] as? String, "model")
        XCTAssertEqual((manifest["sqlite"] as? [String: Any])?["userVersion"] as? Int, 3)
        XCTAssertEqual((manifest["sqlite"] as? [String: Any])?["journalMode"] as? String, "delete")
        XCTAssertTrue(try Self.contents(of: model.restored).contains("user_version 3"))
    }

    /// A second Z_METADATA row and a duplicated Z_MODELCACHE row (dropped unsaid before) are
    /// carried row by row, said in a warning, and restored.
    func testASecondMetadataRowAndADuplicatedModelCacheRowAreCarried() throws {
        let made = try assertRestoresExactly(TablesOnlyShapes.extraBookkeepingRows)
        let manifest = try manifest(made.archive)
        XCTAssertEqual((manifest["source"] as? [String: Any])?["schema"] as? String, "model")
        let tables = try XCTUnwrap(manifest["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.first { $0["name"] as? String == "Z_METADATA" }?["count"] as? Int, 2)
        XCTAssertEqual(tables.first { $0["name"] as? String == "Z_MODELCACHE" }?["count"] as? Int, 2)
        XCTAssertTrue((manifest["warnings"] as? [String] ?? []).contains { $0.hasPrefix("Z_METADATA holds 2 rows") }, "\(manifest)")
    }

    /// Two different model caches whose first (the one Core Data reads) is not the lowest: the
    /// rows travel sorted, so a restore would make the other one the store's model. Export
    /// refuses (65) rather than write an archive that restores another model.
    func testModelCacheRowsARestoreWouldReorderAreRefusedByExport() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.extraBookkeepingRows(directory.url)
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "INSERT INTO Z_MODELCACHE VALUES (x'00')") }
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 65, export.standardError)
        XCTAssertTrue(
            export.standardError.contains("Z_MODELCACHE holds 3 rows whose first (the store's model) is not the lowest"),
            export.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    /// A generated column another tool added: import could not put its values back, so export
    /// refuses the store first (65, with the sentence import would give), leaving no archive.
    func testAGeneratedColumnIsRefusedByExport() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.legacyCoreData(directory.url)
        try DatabaseQueue(path: store.path).write { db in
            try db.execute(sql: "CREATE TABLE extras (a INTEGER, doubled AS (a * 2))")
            try db.execute(sql: "INSERT INTO extras (a) VALUES (21)")
        }
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 65, export.standardError)
        XCTAssertTrue(export.standardError.contains("table extras has a generated column doubled"), export.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    /// Imports `archive` with its manifest changed by `edit` (members as they are); returns the
    /// result and the target, which must not have been made.
    func importEdited(
        _ archive: URL, in directory: TemporaryTestDirectory, _ edit: (inout [String: Any]) throws -> Void
    ) throws -> (result: CommandResult, target: URL) {
        let unpacked = directory.path("unpacked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: unpacked, withIntermediateDirectories: true)
        XCTAssertEqual(try Questbak.runTool(["tar", "--zstd", "-xf", archive.path, "-C", unpacked.path]).status, 0)
        let members = try Questbak.runTool(["tar", "--zstd", "-tf", archive.path]).standardOutput.split(separator: "\n").map(String.init)
        let manifestURL = unpacked.appendingPathComponent("manifest.json")
        var manifest = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        try edit(&manifest)
        try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]).write(to: manifestURL)
        let edited = directory.path("edited-\(UUID().uuidString).qbak")
        XCTAssertEqual(try Questbak.runTool(["tar", "--zstd", "-cf", edited.path, "-C", unpacked.path] + members).status, 0)
        let target = directory.path("r-\(UUID().uuidString)/default.store")
        return (try Questbak.run(["import", edited.path, "--into", target.path]), target)
    }

    /// An entity table another tool made again without Z_PK has no records to key: export refused
    /// it as an unexpected SQLite error (exit 1); now with a sentence (65), leaving no archive.
    func testAnEntityTableWithoutZPKIsRefusedByExport() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.legacyCoreData(directory.url)
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "ALTER TABLE ZVIDEORECORD RENAME COLUMN Z_PK TO ID") }
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 65, export.standardError)
        XCTAssertTrue(export.standardError.contains("table ZVIDEORECORD of entity VideoRecord has no column Z_PK"), export.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    /// A column named `_pk` would repeat the record's key, which import refuses ("appears
    /// twice"): export refuses it first (65), leaving no archive.
    func testAColumnNamedLikeTheRecordKeyIsRefusedByExport() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.legacyCoreData(directory.url)
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "ALTER TABLE ZVIDEORECORD ADD COLUMN _pk INTEGER") }
        let archive = directory.path("backup.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 65, export.standardError)
        XCTAssertTrue(
            export.standardError.contains("table ZVIDEORECORD of entity VideoRecord has a column named _pk"), export.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path))
    }

    /// Statements SQLite would store otherwise (`CREATE TABLE … AS SELECT`, a comment after the
    /// closing parenthesis) or cannot restore (a generated column) are refused while the archive
    /// is read: 65, naming the statement, nothing written (they used to fail at read-back, 74).
    func testStatementsSQLiteWouldStoreOtherwiseAreRefusedWhileReading() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.legacyCoreData(directory.url)
        let archive = directory.path("backup.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
        let cases = [
            ("CREATE TABLE copied AS SELECT 1 AS q", "as \"CREATE TABLE copied(q)\", not as written"),
            ("CREATE TABLE commented (a) -- a note", "as \"CREATE TABLE commented (a)\", not as written"),
            ("CREATE TABLE generated (a INTEGER, b AS (a + 1))", "table generated has a generated column b"),
        ]
        for (statement, reason) in cases {
            var count = 0
            let (restore, target) = try importEdited(archive, in: directory) { manifest in
                var sql = try XCTUnwrap(manifest["sql"] as? [String])
                sql.append(statement)
                count = sql.count
                manifest["sql"] = sql
            }
            XCTAssertEqual(restore.status, 65, "\(statement): \(restore.standardError)")
            XCTAssertTrue(restore.standardError.contains("statement \(count) (\"\(statement)\")"), restore.standardError)
            XCTAssertTrue(restore.standardError.contains(reason), "\(statement): \(restore.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: target.deletingLastPathComponent().path))
        }
    }

    /// The manifest's header fields are checked by name: a journal mode other than "delete", and
    /// a user_version or application_id of 0 (written as absent) or beyond 32 bits, are refused
    /// (65) before anything is written.
    func testSQLiteSettingsAnExportCannotWriteAreRefusedByName() throws {
        let directory = try TemporaryTestDirectory("questbak-tables-only")
        let store = try TablesOnlyShapes.headerFields(directory.url)
        let archive = directory.path("backup.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
        let cases: [(String, Any, String)] = [
            ("journalMode", "wal", "sqlite: journalMode \"wal\" is not \"delete\""),
            ("userVersion", 0, "sqlite: userVersion 0 is not a 32-bit integer other than 0"),
            ("applicationId", 4_294_967_296, "sqlite: applicationId 4294967296 is not a 32-bit integer other than 0"),
        ]
        for (key, value, reason) in cases {
            let (restore, target) = try importEdited(archive, in: directory) { manifest in
                var sqlite = try XCTUnwrap(manifest["sqlite"] as? [String: Any])
                sqlite[key] = value
                manifest["sqlite"] = sqlite
            }
            XCTAssertEqual(restore.status, 65, "\(key): \(restore.standardError)")
            XCTAssertTrue(restore.standardError.contains(reason), "\(key): \(restore.standardError)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: target.deletingLastPathComponent().path))
        }
    }
}
