import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// `diff`'s thin twins (`Differ.Shortcuts.loadsTwinsThin`): a store A's member that B may hold
/// byte for byte is loaded thin (`Differ.ThinTables`) and whole only when a statement reads more
/// of it, and a store B of A's bytes is not read at all (`Differ.StoreBytes`). Each input is
/// diffed with the shortcut and without it, and the counts, how each entity was matched, the
/// fields only one side has and the listing must be the same.
final class DifferThinTwinTests: XCTestCase {
    private struct Outcome {
        var lines: [String]
        var thinEntities: Set<String>
        var readBAsA: Bool
    }

    private func diff(_ a: URL, _ b: URL, thin: Bool) throws -> Outcome {
        let work = try TemporaryTestDirectory()
        var shortcuts = Differ.Shortcuts()
        shortcuts.loadsTwinsThin = thin
        return try Differ.diff(a, b, profiles: [.timeQuest], workDirectory: work.url, shortcuts: shortcuts) { listing in
            return Outcome(lines: try DiffTestSides.lines(of: listing), thinEntities: listing.thinEntities, readBAsA: listing.readBAsA)
        }
    }

    /// The outcome with the shortcut, after asserting its lines are those without it.
    private func checked(_ a: URL, _ b: URL, _ label: String, file: StaticString = #filePath, line: UInt = #line) throws -> Outcome {
        let fast = try diff(a, b, thin: true)
        let full = try diff(a, b, thin: false)
        XCTAssertEqual(fast.lines, full.lines, label, file: file, line: line)
        XCTAssertEqual(full.thinEntities, [], label, file: file, line: line)
        XCTAssertFalse(full.readBAsA, label, file: file, line: line)
        return fast
    }

    private func edit(_ store: URL, _ sql: String) throws {
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: sql) }
    }

    func testAStoreAndItsArchiveOrCopyKeepTheirTwinsThin() throws {
        let sides = try DiffTestSides("v2-typical")
        let archive = try checked(sides.store, sides.archive, "store, archive")
        XCTAssertEqual(archive.lines.first, "0 added, 0 removed, 0 changed")
        // Every entity whose records all have a cloudID of their own stays thin; the profile's
        // cloudID is not well formed, so it is loaded whole from the start.
        XCTAssertTrue(archive.thinEntities.contains("TaskEstimation"), "\(archive.thinEntities)")
        XCTAssertTrue(archive.thinEntities.contains("GameSession"), "\(archive.thinEntities)")
        XCTAssertFalse(archive.thinEntities.contains("PlayerProfile"), "\(archive.thinEntities)")
        XCTAssertFalse(archive.readBAsA)
        let copy = try checked(sides.store, sides.copy, "store, copy")
        XCTAssertTrue(copy.readBAsA)
        XCTAssertEqual(copy.thinEntities, archive.thinEntities)
        // An archive A is read as before: nothing thin.
        let reversed = try checked(sides.archive, sides.store, "archive, store")
        XCTAssertEqual(reversed.thinEntities, [])
    }

    /// A diff whose twins stay thin leaves no copy of a store in the temporary folder: the thin
    /// tables' reload once held the side that held it, a cycle that kept each snapshot (and its
    /// folder) alive as long as the process, which in an app is long.
    func testAThinDiffLeavesNoSnapshotBehind() throws {
        let sides = try DiffTestSides("v2-typical")
        // This process's only: the other tests of a parallel run make their own at the same time.
        func snapshots() throws -> Set<String> {
            Set(
                try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
                    $0.hasPrefix("questbak-snapshot-\(getpid()).")
                })
        }
        let before = try snapshots()
        for b in [sides.copy, sides.archive] {
            let outcome = try diff(sides.store, b, thin: true)
            XCTAssertFalse(outcome.thinEntities.isEmpty, "a diff with nothing thin tests nothing here")
            XCTAssertEqual(try snapshots().subtracting(before), [], b.lastPathComponent)
        }
    }

    func testEveryFixtureAgainstItsCopyAndArchive() throws {
        // v1-anomalies: orphans, cloudIDs shared and malformed; kitchen-sink: to-manys and
        // sub-entities; bennie-game: entities that name each other; the gates' stores.
        for fixture in [
            "v1-anomalies", "v1-edge-cases", "v1-typical", "v1-wal", "v2-typical", "AnyApp/kitchen-sink", "AnyApp/bennie-game",
        ] {
            let sides = try DiffTestSides(fixture)
            for (a, b) in [(sides.store, sides.archive), (sides.store, sides.copy)] {
                let outcome = try checked(a, b, "\(fixture): \(a.lastPathComponent) \(b.lastPathComponent)")
                XCTAssertEqual(outcome.lines.first, "0 added, 0 removed, 0 changed", fixture)
            }
        }
    }

    /// A thin twin that a later statement reads further is loaded whole first: a cloudID shared
    /// by two estimations (the count pairs not every record, the natural key reads the table), a
    /// malformed or missing one after the first record (loaded whole at once), and a record
    /// changed after the first line (B's member is not A's: A's is loaded whole, and compared).
    func testAThinTwinReadFurtherIsLoadedWholeFirst() throws {
        let last = "(SELECT max(Z_PK) FROM ZTASKESTIMATION)"
        for (change, staysThin) in [
            (
                "UPDATE ZTASKESTIMATION SET ZCLOUDID = (SELECT ZCLOUDID FROM ZTASKESTIMATION ORDER BY Z_PK LIMIT 1) WHERE Z_PK = \(last)",
                false
            ),
            ("UPDATE ZTASKESTIMATION SET ZCLOUDID = 'not a cloudID' WHERE Z_PK = \(last)", false),
            ("UPDATE ZTASKESTIMATION SET ZCLOUDID = NULL WHERE Z_PK = \(last)", false),
            ("UPDATE ZTASKESTIMATION SET ZSESSION = 99999 WHERE Z_PK = \(last)", true),
        ] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture("v2-typical")
            let original = directory.path("original.qbak")
            try DiffTestSides.export(store, to: original)
            try edit(store, change)
            let archive = directory.path("a.qbak")
            try DiffTestSides.export(store, to: archive)
            let same = try checked(store, archive, change)
            XCTAssertEqual(same.lines.first, "0 added, 0 removed, 0 changed", change)
            XCTAssertEqual(same.thinEntities.contains("TaskEstimation"), staysThin, "\(change): \(same.thinEntities)")
            // Against the archive from before the change: its first line is A's, its digest not.
            let before = try checked(store, original, change)
            XCTAssertNotEqual(before.lines.first, "0 added, 0 removed, 0 changed", change)
            XCTAssertFalse(before.thinEntities.contains("TaskEstimation"), "\(change): \(before.thinEntities)")
        }
    }

    /// The store `store`'s archive restores, in `directory`.
    private func restoredCopy(of store: URL, in directory: TemporaryTestDirectory) throws -> URL {
        let archive = directory.path("restored.qbak")
        try DiffTestSides.export(store, to: archive)
        let restored = directory.path("restored/default.store")
        let work = try TemporaryTestDirectory()
        _ = try Importer.run(archive: archive.path, into: restored, options: Importer.Options.timeQuest, workDirectory: work.url)
        return restored
    }

    /// Two stores whose bytes differ but whose content is the same (`StoreBytes.sameContent`: a
    /// store and the one its archive restores) are one side: B is not read. A store of other
    /// content, or of its schema in another order (`VACUUM`), is read.
    func testStoresOfOtherBytesAreReadOnceWhenTheirContentIsTheSame() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let restored = try restoredCopy(of: a, in: directory)
        XCTAssertFalse(try Differ.StoreBytes.sameFile(a.path, restored.path))
        let restore = try checked(a, restored, "restored")
        XCTAssertTrue(restore.readBAsA)
        XCTAssertEqual(restore.lines.first, "0 added, 0 removed, 0 changed")
        XCTAssertEqual(restore.thinEntities, try checked(a, a, "itself").thinEntities)
        try edit(
            restored,
            "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION)")
        let restoredChanged = try checked(a, restored, "restored, changed")
        XCTAssertFalse(restoredChanged.readBAsA)
        XCTAssertTrue(restoredChanged.lines.contains { $0.hasPrefix("TaskEstimation by cloudID: 0 0 1") }, "\(restoredChanged.lines)")
        let b = try directory.copyFixture("v2-typical", as: "other")
        // The same records, other bytes and another order of the schema: rewritten by VACUUM.
        try DatabaseQueue(path: b.path).writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        let vacuumed = try checked(a, b, "vacuumed")
        XCTAssertFalse(vacuumed.readBAsA)
        XCTAssertEqual(vacuumed.lines.first, "0 added, 0 removed, 0 changed")
        try edit(
            b, "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION)")
        let changed = try checked(a, b, "changed")
        XCTAssertFalse(changed.readBAsA)
        XCTAssertTrue(changed.lines.contains { $0.hasPrefix("TaskEstimation by cloudID: 0 0 1") }, "\(changed.lines)")
    }

    /// `sameContent` says no for any difference a query could see: a value (its storage class
    /// too), a rowid, a row more or less (in either half of a large table), the schema, an
    /// index's entries, a statistics table, the header's settings; and for what it cannot read
    /// alike (a table without a rowid).
    func testSameContentSeesEveryDifferenceAQueryCouldSee() throws {
        let directory = try TemporaryTestDirectory()
        let original = directory.path("original.sqlite")
        try DatabaseQueue(path: original.path).writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR, ZSIZE FLOAT, ZDATA BLOB);
                    CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME DESC);
                    CREATE TABLE plain (a, b);
                    INSERT INTO ZITEM VALUES (1, 'one', 1.5, X'00'), (2, 'two', -0.0, NULL), (3, 'two', 2, X'');
                    INSERT INTO plain VALUES (1, 'x'), (1, 'x');
                    CREATE TABLE big (v INTEGER);
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO big SELECT i FROM n;
                    CREATE TABLE "odd""name" ("col""x" TEXT, y);
                    CREATE INDEX "odd""index" ON "odd""name" ("col""x" COLLATE NOCASE);
                    INSERT INTO "odd""name" VALUES ('a', 1), ('B', 2);
                    """)
        }
        // Each change on a connection of its own (a schema written around SQLite is read again).
        func same(_ changes: String...) throws -> Bool {
            let copy = directory.path("copy.sqlite")
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: original, to: copy)
            for change in changes { try DatabaseQueue(path: copy.path).writeWithoutTransaction { try $0.execute(sql: change) } }
            return try Differ.StoreBytes.sameContent(
                try StoreSnapshot(storeAt: original), try StoreSnapshot(storeAt: copy), rowidsPerPart: 4096)
        }
        // Every name is quoted with a quote inside it doubled: a table, column and index named
        // with one are compared like any other (GRDB's quoting alone made their queries fail).
        XCTAssertTrue(try same())
        XCTAssertTrue(try same("UPDATE ZITEM SET ZNAME = ZNAME"))
        for change in [
            "UPDATE ZITEM SET ZNAME = 'One' WHERE Z_PK = 1",
            #"UPDATE "odd""name" SET "col""x" = 'b' WHERE y = 2"#,
            "UPDATE ZITEM SET ZNAME = CAST(ZNAME AS BLOB) WHERE Z_PK = 1",
            "UPDATE ZITEM SET ZNAME = 'one' || char(0) WHERE Z_PK = 1",
            "UPDATE ZITEM SET ZSIZE = 1.5000000000000002 WHERE Z_PK = 1",
            "UPDATE ZITEM SET ZDATA = NULL WHERE Z_PK = 3",
            "UPDATE ZITEM SET Z_PK = 4 WHERE Z_PK = 3",
            "UPDATE plain SET rowid = 5 WHERE rowid = 2",
            "INSERT INTO ZITEM VALUES (4, 'four', 4, NULL)",
            "DELETE FROM plain WHERE rowid = 2",
            // A table compared in ranges of rowids: a difference in the first, one inside, the last.
            "UPDATE big SET v = 0 WHERE rowid = 3",
            "UPDATE big SET v = 0 WHERE rowid = 19999",
            "DELETE FROM big WHERE rowid = 10001",
            "DROP INDEX ZITEM_ZNAME_INDEX",
            "DROP INDEX ZITEM_ZNAME_INDEX; CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME)",
            "CREATE VIEW v AS SELECT 1",
            // The same rows, but the indexes now after the tables in `sqlite_master`: another
            // order of the schema, which a read of it without ORDER BY would see.
            "VACUUM",
            "ANALYZE",
            "PRAGMA user_version = 1",
            "PRAGMA application_id = 7",
            "CREATE TABLE keyed (k TEXT PRIMARY KEY) WITHOUT ROWID",
        ] {
            XCTAssertFalse(try same(change), change)
        }
        // An index that no longer holds its table's entries (built for another column, its
        // schema then written back): the schema and the tables are the same, the index's entries not.
        func indexSQL(_ column: String) -> String {
            """
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (\(column) DESC)' WHERE name = 'ZITEM_ZNAME_INDEX';
            """
        }
        XCTAssertFalse(try same(indexSQL("ZSIZE"), "REINDEX ZITEM_ZNAME_INDEX", indexSQL("ZNAME")), "index entries")
        XCTAssertTrue(try same(indexSQL("ZSIZE"), indexSQL("ZNAME")), "the schema written back alone")
    }

    /// The ranges of rowids `sameContent` compares cut every integer into consecutive pieces.
    func testRowidCutsCoverEveryRowid() {
        XCTAssertEqual(Differ.StoreBytes.rowidCuts(from: nil, to: nil, every: 10), [])
        XCTAssertEqual(Differ.StoreBytes.rowidCuts(from: 1, to: 10, every: 10), [])
        XCTAssertEqual(Differ.StoreBytes.rowidCuts(from: 1, to: 11, every: 10), [11])
        XCTAssertEqual(Differ.StoreBytes.rowidCuts(from: 1, to: 35, every: 10), [11, 21, 31])
        // Sparse rowids: at most about 64 ranges, from the lowest rowid to the highest.
        let wide = Differ.StoreBytes.rowidCuts(from: Int64.min, to: Int64.max, every: 10)
        XCTAssertLessThanOrEqual(wide.count, 64)
        XCTAssertEqual(wide, wide.sorted())
        XCTAssertGreaterThan(wide.first!, Int64.min)
    }

    /// A cancelled diff stops in the comparison of two stores' content.
    func testTheContentComparisonStopsWhenCancelled() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let b = try restoredCopy(of: a, in: directory)
        let cancellation = Cancellation()
        cancellation.cancel()
        XCTAssertThrowsError(
            try Differ.StoreBytes.same(try StoreSnapshot(storeAt: a), try StoreSnapshot(storeAt: b), cancellation: cancellation)
        ) {
            XCTAssertTrue($0 is CancellationError, "\($0)")
        }
        XCTAssertTrue(try Differ.StoreBytes.same(try StoreSnapshot(storeAt: a), try StoreSnapshot(storeAt: b)))
    }

    /// A store that stands for both sides is read without hashing its members
    /// (`Exporter.Options.hashesMemberLines`): the same lines, and no digest, where a hashed
    /// read lists each member's SHA-256.
    func testAStoreReadWithoutHashingGivesTheSameLinesAndNoDigest() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        func read(hashing: Bool) throws -> (lines: [String: [UInt8]], digests: [String: String]) {
            var options = Exporter.Options(createdAt: 0, compression: .none)
            options.profiles = [.timeQuest]
            options.hashesMemberLines = hashing
            var lines: [String: [UInt8]] = [:]
            let records = try Exporter.records(of: try StoreSnapshot(storeAt: store), options: options) { name, bytes in
                lines[name, default: []] += bytes
            }
            return (lines, Dictionary(uniqueKeysWithValues: records.manifest.entities.map { ($0.name, $0.sha256) }))
        }
        let hashed = try read(hashing: true)
        let unhashed = try read(hashing: false)
        XCTAssertFalse(hashed.lines.isEmpty)
        XCTAssertEqual(hashed.lines, unhashed.lines)
        for name in hashed.lines.keys {
            XCTAssertEqual(hashed.digests[name]?.count, 64, name)
            XCTAssertEqual(unhashed.digests[name], "", name)
        }
    }

    func testSameFileComparesEveryByte() throws {
        let directory = try TemporaryTestDirectory()
        let (one, other) = (directory.path("one"), directory.path("other"))
        var bytes = Data(repeating: 7, count: (1 << 20) + 5)
        try bytes.write(to: one)
        try bytes.write(to: other)
        XCTAssertTrue(try Differ.StoreBytes.sameFile(one.path, other.path))
        bytes[bytes.count - 1] = 8
        try bytes.write(to: other)
        XCTAssertFalse(try Differ.StoreBytes.sameFile(one.path, other.path))
        try bytes.dropLast().write(to: other)
        XCTAssertFalse(try Differ.StoreBytes.sameFile(one.path, other.path))
        XCTAssertFalse(try Differ.StoreBytes.sameFile(one.path, directory.path("absent").path))
        XCTAssertTrue(try Differ.StoreBytes.sameFile(directory.path("absent").path, directory.path("none").path))
    }
}
