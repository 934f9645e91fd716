import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// Issue #23, "Nothing changes unsaid on import" and "Right exit statuses": an archive value a
/// store would give back as another value, or in another spelling than the one its checksums
/// hold, is refused while the line is read (65, naming the member, line and key, or the
/// entity, `_pk` and property), and nothing is written; what a restore does change is in the
/// report. Every reader: TimeQuest's records, records typed by a model, records and tables kept
/// in their storage classes.
final class ValueEdgeCommandTests: XCTestCase {
    // MARK: Helpers

    /// `import --into` and `import --validate` both refuse the archive with `status`, saying each
    /// of `mentions`, and leave nothing where the store would go.
    func assertImportRefused(
        _ archive: URL, status: Int32 = 65, mentions: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let directory = try TemporaryTestDirectory()
        let target = directory.path("restored/default.store")
        for arguments in [["--into", target.path], ["--validate"]] {
            let result = try Questbak.run(["import", archive.path] + arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.standardError)", file: file, line: line)
            for text in mentions {
                XCTAssertTrue(
                    result.standardError.contains(text), "\(arguments): no \"\(text)\" in: \(result.standardError)", file: file, line: line)
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("restored").path), "nothing written", file: file, line: line)
    }

    /// A TimeQuest archive (format 1, whose records carry no `_opt`) of one member whose only record is `record`, with
    /// `PLACEHOLDER` in it replaced by `raw` JSON text (numbers JSONSerialization cannot write).
    func timeQuestArchive(
        _ entity: String, _ record: String, raw: String = "", version: String = "2.0.0", in directory: TemporaryTestDirectory,
        edit: (inout ArchiveBuilder) -> Void = { _ in }
    ) throws -> URL {
        var builder = ArchiveBuilder(schemaVersion: version)
        builder.members = [.init(entity, records: [record])]
        edit(&builder)
        let archive = directory.path("tq-\(UUID().uuidString).qbak")
        try builder.write(to: archive)
        guard !raw.isEmpty else { return archive }
        let edited = directory.path("tq-\(UUID().uuidString).qbak")
        try ArchiveRepack.repack(archive, to: edited) { folder in
            let url = folder.appendingPathComponent("entities/\(entity).jsonl")
            let text = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(of: "\"PLACEHOLDER\"", with: raw)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return edited
    }

    /// The kitchen-sink fixture (format 3, typed by its model) exported from a copy, after `sql`.
    func kitchenSinkArchive(in directory: TemporaryTestDirectory, sql: [String] = []) throws -> (archive: URL, export: CommandResult) {
        let store = try directory.copyFixture("AnyApp/kitchen-sink", as: "ks-\(UUID().uuidString)")
        if !sql.isEmpty {
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { db in for statement in sql { try db.execute(sql: statement) } }
            try queue.close()
        }
        let archive = directory.path("ks-\(UUID().uuidString).qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 0, export.standardError)
        return (archive, export)
    }

    func edited(_ archive: URL, in directory: TemporaryTestDirectory, _ edit: (URL) throws -> Void) throws -> URL {
        let output = directory.path("edited-\(UUID().uuidString).qbak")
        try ArchiveRepack.repack(archive, to: output, edit)
        return output
    }

    func json(_ result: CommandResult, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any], result.standardError, file: file, line: line)
    }

    // MARK: 5. Nothing changes unsaid

    func testAMetadataPlistThatCannotBeDecodedIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v2-typical")
        let archive = directory.path("tq.qbak")
        XCTAssertEqual(try Questbak.run(["export", source.path, "-o", archive.path, "-q"]).status, 0)
        let garbage = try edited(archive, in: directory) { folder in
            try Data("not a property list".utf8).write(to: folder.appendingPathComponent("store/metadata.plist"))
        }
        try assertImportRefused(garbage, mentions: ["store/metadata.plist", "cannot be decoded"])
        // A property list, but no dictionary of metadata.
        let array = try edited(archive, in: directory) { folder in
            try Data(base64Encoded: "YnBsaXN0MDChAQgKAAAAAAAAAQEAAAAAAAAAAgAAAAAAAAAAAAAAAAAAAAs=")!.write(
                to: folder.appendingPathComponent("store/metadata.plist"))
        }
        try assertImportRefused(array, mentions: ["store/metadata.plist"])
        // The export itself restores, with the metadata it carries and no entry.
        let restored = try Questbak.run(["import", archive.path, "--into", directory.path("ok/default.store").path, "--json"])
        XCTAssertEqual(restored.status, 0, restored.standardError)
        XCTAssertNil((try json(restored)["counts"] as? [String: Int])?["bookkeeping.metadata"])
    }

    func testZMAXRaisedAndMetadataComputedAreEntriesOfTheReport() throws {
        let directory = try TemporaryTestDirectory()
        let archive = try timeQuestArchive("Routine", RecordLines.routine(5), version: "1.0.0", in: directory) { builder in
            builder.members[0].maximumPrimaryKey = 2
            builder.carriesMetadata = false
        }
        let reportFile = directory.path("report.json")
        let result = try Questbak.run([
            "import", archive.path, "--into", directory.path("r/default.store").path, "--report", reportFile.path,
        ])
        XCTAssertEqual(result.status, 0, result.standardError)
        let report = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: reportFile)) as? [String: Any])
        XCTAssertEqual(report["counts"] as? [String: Int], ["bookkeeping.z-max": 1, "bookkeeping.metadata": 1])
        let entries = report["entries"] as? [[String: Any]] ?? []
        XCTAssertTrue(
            entries.contains {
                $0["rule"] as? String == "z-max" && $0["entity"] as? String == "Routine" && $0["field"] as? String == "Z_MAX"
                    && $0["old"] as? Int == 2 && $0["new"] as? Int == 5
            }, "\(entries)")
        XCTAssertTrue(
            entries.contains {
                $0["rule"] as? String == "metadata" && $0["kind"] as? String == "bookkeeping" && $0["field"] as? String == "Z_PLIST"
            },
            "\(entries)")
        XCTAssertTrue(result.standardOutput.contains("metadata computed"), result.standardOutput)
    }

    /// A TimeQuest archive carries an `[Int]` as its elements, so a restore writes them as its own
    /// keyed archive: when the store holds other bytes, export says so, since import cannot know.
    func testATransformableARestoreWouldWriteInOtherBytesIsSaidByExport() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let plain = try Questbak.run(["export", store.path, "-o", directory.path("plain.qbak").path])
        XCTAssertEqual(plain.status, 0, plain.standardError)
        XCTAssertFalse(plain.standardError.contains("activeDays"), plain.standardError)
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { try $0.execute(sql: "UPDATE ZROUTINE SET ZACTIVEDAYS = CAST('[1,2]' AS BLOB) WHERE Z_PK = 2") }
        try queue.close()
        let archive = directory.path("json-array.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(export.status, 0, export.standardError)
        XCTAssertTrue(export.standardError.contains("Routine.activeDays: 1 value(s) (the first of _pk 2)"), export.standardError)
        // The array itself comes back.
        let restored = directory.path("r/default.store")
        XCTAssertEqual(try Questbak.run(["import", archive.path, "--into", restored.path]).status, 0)
        let again = try Questbak.run(["export", restored.path, "-o", directory.path("again.qbak").path])
        XCTAssertFalse(again.standardError.contains("activeDays"), again.standardError)
    }

    func testNegativeZeroAndUnderflowAreRefusedByNameInEveryReader() throws {
        let directory = try TemporaryTestDirectory()
        // TimeQuest's records: a Double, an Int and a date.
        for (key, raw) in [
            ("estimatedSeconds", "-0.0"), ("estimatedSeconds", "1e-400"), ("actualSeconds", "-1e-400"), ("orderIndex", "-0"),
            ("recordedAt", "-0.0"),
        ] {
            let archive = try timeQuestArchive(
                "TaskEstimation", RecordLines.estimation(1, session: nil, [key: "PLACEHOLDER"]), raw: raw, in: directory)
            try assertImportRefused(archive, mentions: ["entities/TaskEstimation.jsonl line 2", key])
        }
        // Records typed by a model.
        let (model, _) = try kitchenSinkArchive(in: directory)
        for (key, raw) in [("rating", "-0.0"), ("rating", "1e-400"), ("ratingCount", "-0"), ("createdAt", "-0.0")] {
            let archive = try edited(model, in: directory) {
                try ArchiveRepack.setValue(in: $0, member: "entities/Recipe.jsonl", primaryKey: 2, key: key, json: raw)
            }
            try assertImportRefused(archive, mentions: ["entities/Recipe.jsonl line 3", key])
        }
        // Tables kept in their storage classes: -0.0 in an INTEGER and in a TEXT column.
        for (member, key, raw) in [
            ("tables/Z_PRIMARYKEY.jsonl", "Z_MAX", "-0.0"), ("tables/sqlitemanager_extras.jsonl", "value", "-0.0"),
            ("tables/sqlitemanager_extras.jsonl", "id", "-0"), ("tables/sqlitemanager_extras.jsonl", "value", "1e-400"),
        ] {
            let archive = try edited(model, in: directory) {
                try ArchiveRepack.setValue(in: $0, member: member, lineNumber: 2, key: key, json: raw)
            }
            try assertImportRefused(archive, mentions: ["\(member) line 2", key])
        }
        // A store described by its tables.
        let (generic, _) = try kitchenSinkArchive(in: directory, sql: ["UPDATE ZRECIPE SET ZSERVINGS = 'many' WHERE Z_PK = 2"])
        let archive = try edited(generic, in: directory) {
            try ArchiveRepack.setValue(in: $0, member: "entities/Recipe.jsonl", primaryKey: 1, key: "ZRATING", json: "-0.0")
        }
        try assertImportRefused(archive, mentions: ["entities/Recipe.jsonl line 2", "ZRATING", "REAL -0.0"])
    }

    func testANumberGivenForAToManyIsRefusedByName() throws {
        let directory = try TemporaryTestDirectory()
        for value in ["5", "[1]", "null"] {
            let archive = try timeQuestArchive("Routine", RecordLines.routine(1, ["tasks": "PLACEHOLDER"]), raw: value, in: directory)
            try assertImportRefused(archive, mentions: ["entities/Routine.jsonl line 2", "tasks is a to-many relationship"])
        }
    }

    func testAModelValueOutsideItsAttributesRangeIsRefusedByEntityKeyAndProperty() throws {
        let directory = try TemporaryTestDirectory()
        let (model, _) = try kitchenSinkArchive(in: directory)
        for (key, raw) in [
            ("ratingCount", "40000"), ("ratingCount", "-32769"), ("servings", "2147483648"), ("sweetness", "1e+300"),
            ("sweetness", "0.1"),
        ] {
            let archive = try edited(model, in: directory) {
                try ArchiveRepack.setValue(in: $0, member: "entities/Recipe.jsonl", primaryKey: 2, key: key, json: raw)
            }
            try assertImportRefused(archive, mentions: ["entities/Recipe.jsonl line 3", "\(key) must be", "(Recipe _pk 2)"])
        }
    }

    /// A store that holds such a value is backed up by its tables (the value kept as stored,
    /// a warning naming it), and that archive restores: export never writes what import refuses.
    func testAStoreHoldingAValueItsTypeCannotHoldExportsByItsTablesAndRestores() throws {
        for (column, value, property) in [
            ("ZRATINGCOUNT", "40000", "ratingCount"), ("ZSERVINGS", "2147483648", "servings"), ("ZSWEETNESS", "1e300", "sweetness"),
        ] {
            let directory = try TemporaryTestDirectory()
            let (archive, export) = try kitchenSinkArchive(in: directory, sql: ["UPDATE ZRECIPE SET \(column) = \(value) WHERE Z_PK = 2"])
            XCTAssertTrue(export.standardError.contains("Recipe 2 \(property)"), export.standardError)
            XCTAssertTrue(export.standardError.contains("exported by its tables"), export.standardError)
            let target = directory.path("r/default.store")
            let restored = try Questbak.run(["import", archive.path, "--into", target.path])
            XCTAssertEqual(restored.status, 0, restored.standardError)
            let stored = try DatabaseQueue(path: target.path).read {
                try Row.fetchOne($0, sql: "SELECT \(column) FROM ZRECIPE WHERE Z_PK = 2")
            }
            XCTAssertEqual(
                stored?[0] as DatabaseValue?, try DatabaseQueue().read { try DatabaseValue.fetchOne($0, sql: "SELECT \(value)") })
        }
    }

    // MARK: 6. Right exit statuses

    func testValuesAColumnWouldGiveBackOtherwiseAreRefusedWhileReading() throws {
        let directory = try TemporaryTestDirectory()
        let (model, _) = try kitchenSinkArchive(in: directory)
        let abc = Data("abc".utf8).base64EncodedString()
        for (key, raw) in [
            ("identifier", "\"ddea764d-0c81-4b64-8dbb-a05bec188ac4\""), ("calories", "-0"), ("createdAt", "5"), ("createdAt", "1.5"),
            ("createdAt", "\"2026-01-01T00:00:00.123456000Z\""), ("name", "{\"textBytes\":\"\(abc)\"}"), ("rating", "3"),
        ] {
            let archive = try edited(model, in: directory) {
                try ArchiveRepack.setValue(in: $0, member: "entities/Recipe.jsonl", primaryKey: 2, key: key, json: raw)
            }
            try assertImportRefused(archive, mentions: ["entities/Recipe.jsonl line 3", key])
        }
        for (key, raw, says) in [
            ("value", "{\"real\":\"Infinity\"}", "TEXT"), ("id", "1.0", "INTEGER 1"), ("value", "5", "INTEGER 5"),
            ("name", "{\"textBytes\":\"\(abc)\"}", "valid UTF-8"),
        ] {
            let archive = try edited(model, in: directory) {
                try ArchiveRepack.setValue(in: $0, member: "tables/sqlitemanager_extras.jsonl", lineNumber: 2, key: key, json: raw)
            }
            try assertImportRefused(archive, mentions: ["tables/sqlitemanager_extras.jsonl line 2", key, says])
        }
        let (generic, _) = try kitchenSinkArchive(in: directory, sql: ["UPDATE ZRECIPE SET ZSERVINGS = 'many' WHERE Z_PK = 2"])
        for (key, raw) in [("ZSERVINGS", "2.0"), ("ZCREATEDAT", "788918400.0"), ("ZNAME", "7")] {
            let archive = try edited(generic, in: directory) {
                try ArchiveRepack.setValue(in: $0, member: "entities/Recipe.jsonl", primaryKey: 3, key: key, json: raw)
            }
            try assertImportRefused(archive, mentions: ["entities/Recipe.jsonl line 4", key])
        }
        // What the columns keep as given is restored: a REAL with a fraction in a TIMESTAMP column.
        let kept = try edited(generic, in: directory) {
            try ArchiveRepack.setValue(in: $0, member: "entities/Recipe.jsonl", primaryKey: 3, key: "ZCREATEDAT", json: "1.5")
        }
        let restored = try Questbak.run(["import", kept.path, "--into", directory.path("kept/default.store").path])
        XCTAssertEqual(restored.status, 0, restored.standardError)
    }

    // MARK: Values at the edges restore exactly

    /// Every value shape registered for the corpus test exports, verifies, and restores into a
    /// store that exports to the same members again.
    func testValuesAtTheEdgesExportAndRestoreExactly() throws {
        XCTAssertEqual(StoreShapes.values.count, 3)
        for shape in StoreShapes.values {
            let directory = try TemporaryTestDirectory()
            let store = try shape.make(directory.path("source"))
            let archive = directory.path("a.qbak")
            let export = try Questbak.run(["export", store.path, "-o", archive.path, "--compression", "none"])
            XCTAssertEqual(export.status, 0, "\(shape.name): \(export.standardError)")
            let verify = try Questbak.run(["verify", archive.path])
            XCTAssertEqual(verify.status, 0, "\(shape.name): \(verify.standardOutput) \(verify.standardError)")
            let restored = directory.path("restored/default.store")
            let imported = try Questbak.run(["import", archive.path, "--into", restored.path])
            XCTAssertEqual(imported.status, 0, "\(shape.name): \(imported.standardError)")
            let again = directory.path("again.qbak")
            XCTAssertEqual(try Questbak.run(["export", restored.path, "-o", again.path, "--compression", "none"]).status, 0, shape.name)
            for pattern in ["entities/*", "tables/*"] {
                let first = try Questbak.runTool(["tar", "-xOf", archive.path, "--wildcards", pattern]).outputData
                let second = try Questbak.runTool(["tar", "-xOf", again.path, "--wildcards", pattern]).outputData
                XCTAssertFalse(first.isEmpty, shape.name)
                XCTAssertEqual(first, second, "\(shape.name): \(pattern) differ after a round trip")
            }
        }
    }
}
