import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures
@testable import QuestBakKit

/// Export reads a large entity's rows in ranges of keys on other connections at once
/// (`KeyRangeReaders`); the archive must be byte for byte the one a single pass writes, whatever
/// the ranges, wherever a range is cut for its size, and a failure must be the single pass's.
final class ExportKeyRangeTests: XCTestCase {
    /// Every store shape the fixtures and generators make, exported in one pass, in ranges of two
    /// rows cut after every line, and in ranges of three rows: the three archives are identical.
    func testEveryStoreShapeExportsTheSameBytesReadInRanges() throws {
        var shapesWithRanges = 0
        for shape in StoreShapes.all {
            let directory = try TemporaryTestDirectory("questbak-ranges")
            let folder = directory.path("source")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let store = try shape.make(folder)
            let (onePass, summary) = try export(store, readers: 0, in: directory)
            let (cutEverywhere, _) = try export(store, readers: 2, rows: 2, bytes: 1, in: directory)
            let (inThrees, _) = try export(store, readers: 3, rows: 3, bytes: 1 << 20, in: directory)
            XCTAssertEqual(cutEverywhere, onePass, "\(shape.name): ranges of two rows, cut after every line")
            XCTAssertEqual(inThrees, onePass, "\(shape.name): ranges of three rows")
            if summary.entities.contains(where: { $0.count > 2 }) { shapesWithRanges += 1 }
        }
        // A comparison where no entity was cut into ranges proves nothing.
        XCTAssertGreaterThanOrEqual(shapesWithRanges, 8)
    }

    /// A generated store of thousands of records, in the default ranges (more than one for
    /// estimations) and in ranges cut at 10,000 bytes: the same archive, and the same progress.
    func testALargeStoreExportsTheSameBytesAndProgressReadInRanges() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("bulk/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        try BulkStore.write(to: store, estimations: 12_000)
        let onePassProgress = ProgressLog()
        let (onePass, summary) = try export(store, readers: 0, in: directory, progress: onePassProgress)
        XCTAssertEqual(summary.entities.first { $0.name == "TaskEstimation" }?.count, 12_000)
        for (rows, bytes) in [(nil, nil), (1_000, 10_000)] as [(Int?, Int?)] {
            let progress = ProgressLog()
            let (ranges, _) = try export(store, readers: 2, rows: rows, bytes: bytes, in: directory, progress: progress)
            XCTAssertEqual(ranges, onePass, "ranges of \(rows ?? 0) rows, cut at \(bytes ?? 0) bytes (0: the defaults)")
            XCTAssertEqual(progress.events, onePassProgress.events)
        }
        XCTAssertEqual(
            onePassProgress.events.filter { $0.entity == "TaskEstimation" }.map(\.rowsDone), [10_000, 12_000],
            "every 10,000 records and at the end")
    }

    /// A value the model cannot decode, in a record of a later range: the export fails as the
    /// single pass fails, naming the same record, and writes nothing.
    func testAnUndecodableValueInALaterRangeFailsAsInOnePass() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let keys = try DatabaseQueue(path: store.path).read {
            try Int64.fetchAll($0, sql: "SELECT Z_PK FROM ZTASKESTIMATION ORDER BY Z_PK")
        }
        XCTAssertGreaterThan(keys.count, 10)
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(sql: "UPDATE ZTASKESTIMATION SET ZRECORDEDAT = x'00FF' WHERE Z_PK = ?", arguments: [keys[keys.count - 3]])
        }
        try queue.close()
        func failure(readers: Int) throws -> String {
            do {
                _ = try export(store, readers: readers, rows: 2, bytes: 1, in: directory)
                XCTFail("exported a store with a BLOB date")
                return ""
            } catch {
                return "\(error)"
            }
        }
        let onePass = try failure(readers: 0)
        XCTAssertTrue(onePass.contains("\(keys[keys.count - 3])"), onePass)
        XCTAssertEqual(try failure(readers: 2), onePass)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path("out").path), [])
    }

    /// Another app's store whose rows its model does not all explain: the checks of its rows run
    /// at once on the other connections, and come to what they come to one after the other (a join
    /// table carried untyped; a row of no entity, which leaves the store to its tables).
    func testTheRowChecksOfAnotherAppsStoreSayTheSameRunAtOnce() throws {
        for (change, said) in [
            ("INSERT INTO Z_5TAGS VALUES (99, 1)", "join table Z_5TAGS has 1 row(s) that link no Recipe"),
            ("UPDATE ZSTEP SET Z_ENT = 42 WHERE Z_PK = 1", "ZSTEP has 1 row(s) whose Z_ENT is no entity of the model"),
        ] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture("AnyApp/kitchen-sink")
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { try $0.execute(sql: change) }
            try queue.close()
            let (onePass, summary) = try export(store, readers: 0, in: directory)
            XCTAssertTrue(summary.warnings.contains { $0.contains(said) }, "\(summary.warnings)")
            for readers in [1, 2, 4] {
                let (atOnce, other) = try export(store, readers: readers, rows: 2, bytes: 1, in: directory)
                XCTAssertEqual(atOnce, onePass, "\(change), \(readers) readers")
                XCTAssertEqual(other.warnings, summary.warnings)
            }
        }
    }

    /// Only a table whose `Z_PK` is its rowid is read in ranges: every other key SQLite allows
    /// is read in one pass, since ranges of it need not be the order of `ORDER BY Z_PK`.
    func testOnlyATableKeyedByItsRowidIsReadInRanges() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            let tables: [(String, Bool)] = [
                ("CREATE TABLE A (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER)", true),
                ("CREATE TABLE B (z_pk integer primary key, Z_ENT INTEGER)", true),
                ("CREATE TABLE C (Z_PK INTEGER, Z_ENT INTEGER, PRIMARY KEY (Z_PK))", true),
                ("CREATE TABLE D (Z_PK INTEGER PRIMARY KEY DESC, Z_ENT INTEGER)", false),
                ("CREATE TABLE E (Z_PK INT PRIMARY KEY, Z_ENT INTEGER)", false),
                ("CREATE TABLE F (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER) WITHOUT ROWID", false),
                ("CREATE TABLE G (Z_PK INTEGER, Z_ENT INTEGER)", false),
                ("CREATE TABLE H (Z_PK INTEGER, Z_ENT INTEGER, PRIMARY KEY (Z_PK, Z_ENT))", false),
                ("CREATE TABLE I (ID INTEGER PRIMARY KEY, Z_PK INTEGER, Z_ENT INTEGER)", false),
            ]
            for (sql, keyedByRowid) in tables {
                try db.execute(sql: sql)
                let name = String(sql.split(separator: " ")[2])
                XCTAssertEqual(try KeyRangeReaders.isKeyedByRowid(db, table: name), keyedByRowid, sql)
            }
        }
    }

    private final class ProgressLog: @unchecked Sendable {
        private let lock = NSLock()
        private var logged: [RecordProgress] = []
        var events: [RecordProgress] { lock.withLock { logged } }
        func add(_ event: RecordProgress) { lock.withLock { logged.append(event) } }
    }

    private func export(
        _ store: URL, readers: Int, rows: Int? = nil, bytes: Int? = nil, in directory: TemporaryTestDirectory,
        progress: ProgressLog? = nil
    ) throws -> (Data, Exporter.Summary) {
        let output = directory.path("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let archive = output.appendingPathComponent("archive.qbak")
        try? FileManager.default.removeItem(at: archive)
        var options = Exporter.Options.timeQuest(createdAt: 1_767_225_600, compression: .zstd)
        options.rangeReaders = readers
        if let rows { options.rowsPerRange = rows }
        if let bytes { options.bytesPerRange = bytes }
        if let progress { options.progress = { progress.add($0) } }
        let summary = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: options)
        defer { try? FileManager.default.removeItem(at: archive) }
        return (try Data(contentsOf: archive), summary)
    }
}

/// External-storage references are found in one pass over each table for all its BLOB columns;
/// they are listed as before: table by table, column by column, each column's by `Z_PK`.
final class ExternalReferenceTests: XCTestCase {
    func testReferencesInSeveralBlobColumnsAreListedColumnByColumnInKeyOrder() throws {
        let queue = try DatabaseQueue()
        func reference(_ name: String) -> Data { Data([2]) + Data(name.utf8) }
        let a = "AAAAAAAA-0000-0000-0000-000000000001"
        let b = "BBBBBBBB-0000-0000-0000-000000000002"
        let c = "CCCCCCCC-0000-0000-0000-000000000003"
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)")
            try db.execute(sql: "INSERT INTO Z_PRIMARYKEY VALUES (1, 'Recipe', 0, 9)")
            try db.execute(sql: "CREATE TABLE ZRECIPE (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZPHOTO BLOB, ZNAME VARCHAR, ZTHUMB BLOB)")
            let rows: [(Int, DatabaseValueConvertible?, DatabaseValueConvertible?, DatabaseValueConvertible?)] = [
                (9, reference(a), "x", reference(b)),
                (3, nil, "y", reference(c)),
                (5, reference(c), reference(a), Data([2, 1])),  // a reference's length only in a BLOB column counts
                (7, Data([1]) + Data(a.utf8), nil, reference(a).base64EncodedString()),  // not the form: ignored
                (1, reference(b), nil, nil),
            ]
            for row in rows {
                try db.execute(sql: "INSERT INTO ZRECIPE VALUES (?, 1, ?, ?, ?)", arguments: [row.0, row.1, row.2, row.3])
            }
            let found = try ExternalStorage.references(db).map { "\($0.column) \($0.primaryKey.reportable) \($0.name.prefix(1))" }
            XCTAssertEqual(found, ["ZPHOTO 1 B", "ZPHOTO 5 C", "ZPHOTO 9 A", "ZTHUMB 3 C", "ZTHUMB 9 B"])
        }
    }
}
