import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// `redact STORE -o OUT`: a copy of a store safe to share, that the app, export and the migration
/// gate treat as they treat the original.
final class RedactCommandTests: XCTestCase {
    /// Fixtures of TimeQuest (one with a live WAL) and of other apps (one with an external-storage file).
    static let fixtures = ["v2-typical", "v1-wal", "AnyApp/kitchen-sink", "AnyApp/bennie-game"]

    struct Report: Decodable {
        struct Column: Decodable {
            var column: String
            var property: String?
            var kind: String
            var action: String
        }
        struct Table: Decodable {
            var name: String
            var rows: Int
            var action: String
            var columns: [Column]
        }
        var describedBy: String
        var tables: [Table]
        var externalFiles: Int
        var collisionsAvoided: Int

        /// Columns whose values were replaced (not kept, not shifted dates).
        func replaced(_ table: Table) -> [Column] {
            table.columns.filter { !$0.action.hasPrefix("kept") && !$0.action.hasPrefix("shifted") }
        }
    }

    /// Redacts `fixture` (copied) with a key file; returns the source copy, the output and the report.
    func redact(
        _ fixture: String, in directory: TemporaryTestDirectory, extra: [String] = [], key: String = "a key for tests",
        output name: String = "out"
    ) throws -> (source: URL, output: URL, report: Report) {
        let flat = name.replacingOccurrences(of: "/", with: "-")
        let source = directory.path("source-" + flat).appendingPathComponent("default.store")
        if !FileManager.default.fileExists(atPath: source.path) {
            try FileManager.default.copyItem(
                at: Repository.fixtures.appendingPathComponent(fixture), to: source.deletingLastPathComponent())
        }
        let keyFile = directory.path("key-" + flat)
        try Data(key.utf8).write(to: keyFile)
        let outputFolder = directory.path(name)
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let output = outputFolder.appendingPathComponent("default.store")
        let reportFile = directory.path("report-\(flat).json")
        let result = try Questbak.run(
            ["redact", source.path, "-o", output.path, "--key-file", keyFile.path, "--report", reportFile.path, "-q"] + extra)
        XCTAssertEqual(result.status, 0, "\(fixture): \(result.standardError)")
        let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: reportFile))
        return (source, output, report)
    }

    func read<T>(_ store: URL, _ body: (Database) throws -> T) throws -> T {
        // A copy, so that reading never checkpoints or changes the files under test.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("redact-read-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: scratch.appendingPathComponent("s.store" + suffix).path)
        }
        let queue = try DatabaseQueue(path: scratch.appendingPathComponent("s.store").path)
        defer { try? queue.close() }
        return try queue.read(body)
    }

    /// Every file of a folder, recursively, by relative path.
    func files(under folder: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        while let url = enumerator?.nextObject() as? URL {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            result[String(url.path.dropFirst(folder.path.count))] = try Data(contentsOf: url)
        }
        return result
    }

    /// Every original value of a redacted column that must not be in the output: text of 4 bytes
    /// or more (UUID text also as its 16 bytes), and every blob (a 16-byte one also as UUID text).
    /// Text that is a name the schema or metadata carries is not a value of the store's.
    func originals(of source: URL, report: Report) throws -> [Data] {
        try read(source) { db in
            let names =
                try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL").joined(separator: "\n")
                + (try String.fetchAll(db, sql: "SELECT Z_NAME FROM Z_PRIMARYKEY").joined(separator: "\n"))
            let metadata = try Data.fetchAll(db, sql: "SELECT Z_PLIST FROM Z_METADATA WHERE Z_PLIST IS NOT NULL").reduce(Data(), +)
            var needles: Set<Data> = []
            for table in report.tables {
                for column in report.replaced(table) {
                    for value in try DatabaseValue.fetchAll(db, sql: "SELECT \(column.column) FROM \(table.name)") {
                        switch value.storage {
                        case .string(let text):
                            if let uuid = UUID(uuidString: text) {
                                needles.insert(withUnsafeBytes(of: uuid.uuid) { Data($0) })
                                needles.insert(Data(text.utf8))
                            } else if text.utf8.count >= 4, !names.contains(text), metadata.range(of: Data(text.utf8)) == nil {
                                needles.insert(Data(text.utf8))
                            }
                        case .blob(let bytes):
                            // An archive of nothing but structure (an empty array) holds nothing to replace.
                            if let list = try? BinaryPropertyList.decode(bytes), !Self.holdsValues(list) { continue }
                            needles.insert(bytes)
                            if bytes.count == 16 {
                                let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
                                needles.insert(Data(uuid.uuidString.utf8))
                                needles.insert(Data(uuid.uuidString.lowercased().utf8))
                            }
                        default: break
                        }
                    }
                }
            }
            return needles.sorted { $0.count > $1.count }
        }
    }

    /// Whether a property list holds a string or data that is not a keyed archive's structure.
    static func holdsValues(_ list: PropertyListValue) -> Bool {
        switch list {
        case .string(let text): return text != "$null"
        case .data: return true
        case .array(let elements): return elements.contains(where: holdsValues)
        case .dictionary(let entries):
            return entries.contains { !["$classname", "$classes", "$archiver"].contains($0.key) && holdsValues($0.value) }
        default: return false
        }
    }

    /// Rows of a table by rowid, every column, as SQLite values.
    func rows(_ db: Database, _ table: String) throws -> [Int64: [String: DatabaseValue]] {
        var result: [Int64: [String: DatabaseValue]] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT rowid AS questbak_rowid, * FROM \(table)") {
            var values: [String: DatabaseValue] = [:]
            for column in row.columnNames where column != "questbak_rowid" { values[column] = row[column] }
            result[row["questbak_rowid"]] = values
        }
        return result
    }

    func testNoOriginalValueIsLeftInAnyOutputFile() throws {
        for fixture in Self.fixtures {
            let directory = try TemporaryTestDirectory()
            let (source, output, report) = try redact(fixture, in: directory)
            XCTAssertTrue(report.describedBy.contains("its own model"), "\(fixture): \(report.describedBy)")
            let needles = try originals(of: source, report: report)
            XCTAssertGreaterThan(needles.count, 5, fixture)
            let outputFiles = try files(under: output.deletingLastPathComponent())
            XCTAssertTrue(outputFiles.keys.contains("/default.store"), "\(outputFiles.keys)")
            XCTAssertFalse(outputFiles.keys.contains("/default.store-journal"))
            for (name, bytes) in outputFiles {
                for needle in needles where bytes.range(of: needle) != nil {
                    XCTFail(
                        "\(fixture): \(name) still holds \(String(decoding: needle, as: UTF8.self).debugDescription) (\(needle.count) bytes)"
                    )
                }
            }
            if fixture == "AnyApp/kitchen-sink" {
                // The external-storage file: renamed, rewritten, as long, and named by its record.
                let originalFiles = try files(under: source.deletingLastPathComponent()).filter { $0.key.contains("_EXTERNAL_DATA") }
                let redactedFiles = outputFiles.filter { $0.key.contains("_EXTERNAL_DATA") }
                XCTAssertEqual(originalFiles.count, 1)
                XCTAssertEqual(redactedFiles.count, originalFiles.count)
                XCTAssertEqual(report.externalFiles, 1)
                XCTAssertEqual(redactedFiles.values.first?.count, originalFiles.values.first?.count)
                XCTAssertNotEqual(Set(redactedFiles.keys), Set(originalFiles.keys))
                for (name, bytes) in originalFiles {
                    for (other, redacted) in outputFiles where redacted.range(of: bytes) != nil { XCTFail("\(other) holds \(name)") }
                }
                let newName = try XCTUnwrap(redactedFiles.keys.first).split(separator: "/").last.map(String.init) ?? ""
                let referenced = try read(output) { db in
                    try Data.fetchAll(db, sql: "SELECT ZPHOTO FROM ZRECIPE WHERE length(ZPHOTO) = 37").map { Data($0.dropFirst()) }
                }
                XCTAssertEqual(referenced, [Data(newName.utf8)])
            }
        }
    }

    /// Counts, keys, links and Core Data's own tables stay; history is emptied; dates keep their
    /// order and intervals; equal values stay equal and distinct ones distinct, across the store.
    func testTheShapeOfTheStoreStays() throws {
        for fixture in Self.fixtures {
            let directory = try TemporaryTestDirectory()
            let (source, output, report) = try redact(fixture, in: directory)
            let before = try read(source) { db in
                try Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, try rows(db, $0.name)) })
            }
            let after = try read(output) { db in
                try Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, try rows(db, $0.name)) })
            }
            var forward: [DatabaseValue: DatabaseValue] = [:]
            var backward: [DatabaseValue: DatabaseValue] = [:]
            var offsets: Set<Double> = []
            for table in report.tables {
                let old = before[table.name] ?? [:]
                let new = after[table.name] ?? [:]
                if table.name.hasPrefix("A") && table.name == table.name.uppercased() {
                    XCTAssertTrue(table.action.hasPrefix("emptied"), "\(fixture) \(table.name): \(table.action)")
                    XCTAssertEqual(new.count, 0, "\(fixture) \(table.name)")
                    continue
                }
                XCTAssertEqual(new.count, old.count, "\(fixture) \(table.name)")
                XCTAssertEqual(Set(new.keys), Set(old.keys), "\(fixture) \(table.name)")
                if table.name.hasPrefix("Z_") {
                    XCTAssertEqual(new, old, "\(fixture) \(table.name) is Core Data's own and stays as it is")
                    continue
                }
                let replaced = Set(report.replaced(table).map(\.column))
                let dates = Set(table.columns.filter { $0.action.contains("shifted") }.map(\.column))
                for (key, oldRow) in old {
                    let newRow = try XCTUnwrap(new[key])
                    for (column, value) in oldRow {
                        let redacted = newRow[column] ?? .null
                        if dates.contains(column), let date = Double.fromDatabaseValue(value),
                            let shifted = Double.fromDatabaseValue(redacted)
                        {
                            offsets.insert(shifted - date)
                        } else if replaced.contains(column), value.storage.isTextOrBlob, value != "".databaseValue,
                            !(Data.fromDatabaseValue(value).flatMap { try? BinaryPropertyList.decode($0) }.map { !Self.holdsValues($0) }
                                ?? false)
                        {
                            XCTAssertNotEqual(redacted, value, "\(fixture) \(table.name).\(column)")
                            if let known = forward[value] { XCTAssertEqual(known, redacted, "equal values stay equal") }
                            if let known = backward[redacted] { XCTAssertEqual(known, value, "distinct values stay distinct") }
                            forward[value] = redacted
                            backward[redacted] = value
                            if case .string(let text) = value.storage, case .string(let other) = redacted.storage,
                                UUID(uuidString: text) == nil
                            {
                                XCTAssertEqual(text.unicodeScalars.count, other.unicodeScalars.count, "text keeps its length")
                            }
                        } else if !dates.contains(column) {
                            XCTAssertEqual(redacted, value, "\(fixture) \(table.name).\(column) is kept")
                        }
                    }
                }
            }
            XCTAssertEqual(offsets.count, 1, "\(fixture): one offset for every date: \(offsets)")
            XCTAssertNotEqual(offsets.first, 0, fixture)
        }
    }

    func testTheRedactedStorePassesExportVerify() throws {
        for fixture in Self.fixtures {
            let directory = try TemporaryTestDirectory()
            let (_, output, _) = try redact(fixture, in: directory)
            let export = try Questbak.run(["export", output.path, "-o", directory.path("r.qbak").path, "--verify", "-q"])
            XCTAssertEqual(export.status, 0, "\(fixture): \(export.standardError)")
        }
    }

    /// As a fixture, a redacted TimeQuest store passes the same gate checks as its source, with
    /// goldens recorded from it.
    func testARedactedTimeQuestStorePassesTheGateAsItsSourceDoes() throws {
        let directory = try TemporaryTestDirectory()
        let original = directory.path("original")
        try FileManager.default.createDirectory(at: original, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("v1-wal"), to: original.appendingPathComponent("v1-wal"))
        let sourceGate = try Questbak.run(["verify-migration", "--fixtures", original.path], environment: ["QUESTBAK_RECORD": "0"])
        XCTAssertEqual(sourceGate.status, 0, sourceGate.standardOutput)

        let fixtures = directory.path("redacted")
        let (_, output, _) = try redact("v1-wal", in: directory, output: "redacted/v1-wal")
        XCTAssertEqual(try Questbak.run(["verify-migration", "--fixtures", fixtures.path, "--record"]).status, 3)
        let gate = try Questbak.run(["verify-migration", "--fixtures", fixtures.path], environment: ["QUESTBAK_RECORD": "0"])
        XCTAssertEqual(gate.status, 0, gate.standardOutput)
        func checks(_ text: String) -> [String] { text.split(separator: "\n").filter { $0.hasPrefix("ok ") }.map(String.init) }
        XCTAssertEqual(checks(gate.standardOutput), checks(sourceGate.standardOutput))
        XCTAssertFalse(checks(gate.standardOutput).isEmpty)
        XCTAssertTrue(FileManager.default.fileExists(atPath: output.path))
    }

    /// Another app's redacted store passes the model gate against its new build's model.
    func testARedactedStoreOfAnotherAppPassesTheModelGate() throws {
        let directory = try TemporaryTestDirectory()
        let next = directory.path("next.store")
        var store = ModelStore(model: ModelMigrationCommandTests.nextModel(), uuid: "11111111-2222-4333-8444-555555555555", rows: [])
        store.frameworkVersion = 1526
        try ModelStoreWriter.write(store, to: next)
        let fixtures = directory.path("fixtures")
        _ = try redact("AnyApp/kitchen-sink", in: directory, output: "fixtures/kitchen-sink")
        let gate = ["verify-migration", "--fixtures", fixtures.path, "--to", next.path]
        XCTAssertEqual(try Questbak.run(gate + ["--record"]).status, 3)
        let passed = try Questbak.run(gate)
        XCTAssertEqual(passed.status, 0, passed.standardOutput + passed.standardError)
        for name in ["migrate", "golden", "invariants", "valid", "round-trip"] {
            XCTAssertTrue(passed.standardOutput.contains("ok   kitchen-sink/default.store: \(name)"), passed.standardOutput)
        }
    }

    func testKeepCopiesAPropertyAsItIs() throws {
        let directory = try TemporaryTestDirectory()
        let (source, output, report) = try redact(
            "AnyApp/kitchen-sink", in: directory, extra: ["--keep", "Recipe.name", "--keep", "Liquid.name"])
        // Liquid is a sub-entity of Ingredient: its inherited name is Ingredient's column.
        let ingredients = "SELECT ZNAME FROM ZINGREDIENT ORDER BY Z_PK"
        XCTAssertEqual(
            try read(source) { try String?.fetchAll($0, sql: ingredients) }, try read(output) { try String?.fetchAll($0, sql: ingredients) }
        )
        let column = try XCTUnwrap(report.tables.first { $0.name == "ZRECIPE" }?.columns.first { $0.property == "Recipe.name" })
        XCTAssertEqual(column.action, "kept as asked")
        let sql = "SELECT ZNAME, ZCODE FROM ZRECIPE ORDER BY Z_PK"
        let before = try read(source) { try Row.fetchAll($0, sql: sql) }
        let after = try read(output) { try Row.fetchAll($0, sql: sql) }
        XCTAssertEqual(before.map { $0[0] as String? }, after.map { $0[0] as String? })
        XCTAssertNotEqual(before.map { $0[1] as String? }, after.map { $0[1] as String? })

        let unknown = try Questbak.run(["redact", source.path, "-o", directory.path("other.store").path, "--keep", "Recipe.nothing"])
        XCTAssertEqual(unknown.status, 64, unknown.standardError)
        XCTAssertTrue(unknown.standardError.contains("Recipe.nothing is no property of the store"), unknown.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("other.store").path))
    }

    func testTheSameKeyGivesTheSameStoreAndTheSourceStaysAsItWas() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("AnyApp/kitchen-sink")
        let before = try files(under: source.deletingLastPathComponent())
        let (_, first, _) = try redact("AnyApp/kitchen-sink", in: directory, output: "first")
        let (_, second, _) = try redact("AnyApp/kitchen-sink", in: directory, output: "second")
        let (_, third, _) = try redact("AnyApp/kitchen-sink", in: directory, key: "another key", output: "third")
        XCTAssertEqual(try files(under: first.deletingLastPathComponent()), try files(under: second.deletingLastPathComponent()))
        XCTAssertNotEqual(try Data(contentsOf: first), try Data(contentsOf: third))

        // The source of a run, with its live WAL, byte for byte as it was.
        let run = try Questbak.run(["redact", source.path, "-o", directory.path("fourth.store").path, "-q"])
        XCTAssertEqual(run.status, 0, run.standardError)
        XCTAssertEqual(try files(under: source.deletingLastPathComponent()), before)
        // A key file that is empty or missing, and a report that exists: refused, no store written.
        let empty = directory.path("empty-key")
        try Data().write(to: empty)
        let fifth = directory.path("fifth.store")
        let refusedKey = try Questbak.run(["redact", source.path, "-o", fifth.path, "--key-file", empty.path])
        XCTAssertEqual(refusedKey.status, 65, refusedKey.standardError)
        XCTAssertTrue(refusedKey.standardError.contains("the key file is empty"), refusedKey.standardError)
        let missingKey = try Questbak.run(["redact", source.path, "-o", fifth.path, "--key-file", directory.path("nothing").path])
        XCTAssertEqual(missingKey.status, 66, missingKey.standardError)
        let reportExists = try Questbak.run(["redact", source.path, "-o", fifth.path, "--report", empty.path])
        XCTAssertEqual(reportExists.status, 73, reportExists.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fifth.path))
        // Never over an existing store.
        let again = try Questbak.run(["redact", source.path, "-o", directory.path("fourth.store").path])
        XCTAssertEqual(again.status, 73, again.standardError)
    }

    /// Numbers stay unless asked; then integers keep their number of digits, keys and links stay.
    func testScrambleNumbers() throws {
        let directory = try TemporaryTestDirectory()
        let (source, output, _) = try redact("AnyApp/kitchen-sink", in: directory, extra: ["--scramble-numbers"])
        let sql = "SELECT Z_PK, ZAUTHOR, ZCALORIES FROM ZRECIPE ORDER BY Z_PK"
        let before = try read(source) { try Row.fetchAll($0, sql: sql) }
        let after = try read(output) { try Row.fetchAll($0, sql: sql) }
        XCTAssertEqual(before.map { $0[0] as Int64 }, after.map { $0[0] as Int64 })
        XCTAssertEqual(before.map { $0[1] as Int64? }, after.map { $0[1] as Int64? })
        XCTAssertNotEqual(before.map { $0[2] as Int64? }, after.map { $0[2] as Int64? })
        for (old, new) in zip(before, after) {
            XCTAssertEqual((old[2] as Int64?).map { String($0).count }, (new[2] as Int64?).map { String($0).count })
        }
    }

    /// A store without a model cache is redacted table by table, and the report says so.
    func testAStoreWithoutAModelIsRedactedByStorageClass() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source-out/default.store")
        try FileManager.default.createDirectory(at: source.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent("v2-typical/default.store"), to: source)
        try DatabaseQueue(path: source.path).write { try $0.execute(sql: "DELETE FROM Z_MODELCACHE") }
        let (_, output, report) = try redact("v2-typical", in: directory)
        XCTAssertTrue(report.describedBy.contains("storage class"), report.describedBy)
        XCTAssertTrue(report.describedBy.contains("no model cache"), report.describedBy)
        XCTAssertEqual(report.table(named: "ZROUTINE")?.action, "redacted by storage class (no model describes it)")
        let needles = try originals(of: source, report: report)
        XCTAssertGreaterThan(needles.count, 5)
        let bytes = try Data(contentsOf: output)
        for needle in needles where bytes.range(of: needle) != nil { XCTFail("still holds \(String(decoding: needle, as: UTF8.self))") }
        let names = try read(output) { try String.fetchAll($0, sql: "SELECT ZNAME FROM ZROUTINE") }
        XCTAssertFalse(names.isEmpty)
    }
}

extension RedactCommandTests {
    /// Short values have few replacements of their shape: those another value took are refused and
    /// the next tried (then lengthened), so a uniqueness constraint on them still holds; another
    /// tool's full-text table is filled through its virtual table, its index holding no original.
    func testShortValuesStayDistinctAndFullTextTablesAreRedacted() throws {
        let directory = try TemporaryTestDirectory()
        let source = directory.path("source-out/default.store")
        try FileManager.default.copyItem(
            at: Repository.fixtures.appendingPathComponent("AnyApp/kitchen-sink"), to: source.deletingLastPathComponent())
        let letters = (UnicodeScalar("a").value...UnicodeScalar("z").value).map { String(UnicodeScalar($0)!) } + ["é", "ü", "ß", "ø", "å"]
        try DatabaseQueue(path: source.path).write { db in
            try db.execute(sql: "CREATE TABLE other_tool (id INTEGER PRIMARY KEY, letter TEXT UNIQUE, seen TIMESTAMP)")
            for (index, letter) in letters.enumerated() {
                try db.execute(sql: "INSERT INTO other_tool (letter, seen) VALUES (?, ?)", arguments: [letter, 700_000_000 + index])
            }
            // History whose tombstone keeps a deleted child's name, and a CloudKit mirroring table.
            try db.execute(sql: "INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 16003, 1, 'Theodora-author')")
            try db.execute(
                sql:
                    "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID, ZCOLUMNS) VALUES (1, 16001, 1, 2, 1, 9, 1, ?)",
                arguments: [Data("tombstone Bartholomew".utf8)])
            try db.execute(
                sql: "CREATE TABLE ANSCKRECORDMETADATA (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCKRECORDNAME VARCHAR)")
            try db.execute(sql: "INSERT INTO ANSCKRECORDMETADATA VALUES (1, 16010, 1, '_icloud_user_Cornelius')")
            try db.execute(sql: "CREATE VIRTUAL TABLE notes USING fts5(body)")
            try db.execute(sql: "INSERT INTO notes (body) VALUES ('Wilhelmina rides the bus to Zanzibar street')")
        }
        let (_, output, report) = try redact("AnyApp/kitchen-sink", in: directory)
        XCTAssertEqual(report.table(named: "other_tool")?.action, "redacted by storage class (another tool's table)")
        let redacted = try read(output) { db in try String.fetchAll(db, sql: "SELECT letter FROM other_tool ORDER BY id") }
        XCTAssertEqual(redacted.count, letters.count)
        XCTAssertEqual(Set(redacted).count, letters.count, "\(redacted)")
        XCTAssertGreaterThan(report.collisionsAvoided, 0)
        XCTAssertTrue(Set(redacted).isDisjoint(with: ["é", "ü", "ß", "ø", "å"]))
        let seen = try read(output) { db in try Int64.fetchAll(db, sql: "SELECT seen FROM other_tool ORDER BY id") }
        XCTAssertEqual(zip(seen, seen.dropFirst()).map { $1 - $0 }, Array(repeating: 1, count: letters.count - 1))
        let bytes = try Data(contentsOf: output)
        for table in ["ACHANGE", "ATRANSACTIONSTRING", "ANSCKRECORDMETADATA"] {
            XCTAssertEqual(try read(output) { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(table)") }, 0, table)
            XCTAssertTrue(report.table(named: table)?.action.hasPrefix("emptied") == true, table)
        }
        XCTAssertTrue(report.table(named: "ANSCKRECORDMETADATA")?.action.contains("CloudKit") == true)
        for word in ["Wilhelmina", "wilhelmina", "Zanzibar", "zanzibar", "Theodora", "Bartholomew", "Cornelius"] {
            XCTAssertNil(bytes.range(of: Data(word.utf8)), word)
        }
        let body = try read(output) { db in try String.fetchOne(db, sql: "SELECT body FROM notes") }
        XCTAssertEqual(body?.count, "Wilhelmina rides the bus to Zanzibar street".count)
        let export = try Questbak.run(["export", output.path, "-o", directory.path("r.qbak").path, "--verify", "-q"])
        XCTAssertEqual(export.status, 0, export.standardError)
    }
}

extension RedactCommandTests {
    /// An archive is redacted into an archive: restored as archived in a private folder, redacted,
    /// exported and proved; the new archive restores, and neither it (decompressed) nor its
    /// restored store holds an original value.
    func testAnArchiveIsRedactedIntoAnArchive() throws {
        for fixture in ["v1-wal", "AnyApp/kitchen-sink"] {
            let directory = try TemporaryTestDirectory()
            let source = try directory.copyFixture(fixture)
            let archive = directory.path("original.qbak")
            XCTAssertEqual(try Questbak.run(["export", source.path, "-o", archive.path, "-q"]).status, 0)
            let redacted = directory.path("redacted.qbak")
            let reportFile = directory.path("report.json")
            try Data("k".utf8).write(to: directory.path("key"))
            let run = try Questbak.run([
                "redact", archive.path, "-o", redacted.path, "--key-file", directory.path("key").path, "--report", reportFile.path, "-q",
            ])
            XCTAssertEqual(run.status, 0, "\(fixture): \(run.standardError)")
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: reportFile))
            XCTAssertEqual(try Questbak.run(["verify", redacted.path]).status, 0, fixture)
            let restored = directory.path("restored/default.store")
            try FileManager.default.createDirectory(at: restored.deletingLastPathComponent(), withIntermediateDirectories: true)
            let imported = try Questbak.run(["import", redacted.path, "--into", restored.path])
            XCTAssertEqual(imported.status, 0, "\(fixture): \(imported.standardError)")
            let tar = try Questbak.runTool(["zstd", "-dc", redacted.path])
            XCTAssertEqual(tar.status, 0)
            let needles = try originals(of: source, report: report)
            XCTAssertGreaterThan(needles.count, 5, fixture)
            let outputs = [tar.outputData] + Array(try files(under: restored.deletingLastPathComponent()).values)
            for bytes in outputs {
                for needle in needles where bytes.range(of: needle) != nil {
                    XCTFail("\(fixture): still holds \(String(decoding: needle, as: UTF8.self).debugDescription)")
                }
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("again.qbak").path))
            let again = try Questbak.run(["redact", archive.path, "-o", redacted.path])
            XCTAssertEqual(again.status, 73, again.standardError)
        }
    }
}

extension DatabaseValue.Storage {
    var isTextOrBlob: Bool {
        switch self {
        case .string, .blob: return true
        default: return false
        }
    }
}

extension RedactCommandTests.Report {
    func table(named name: String) -> Table? { tables.first { $0.name == name } }
}
