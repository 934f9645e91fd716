import CoreDataStore
import Foundation
import GRDB
import QuestBakFixtures
import XCTest

@testable import QuestBakKit

/// The merge's cloudID passes past the 256 suspects they look up in SQL (`SuspectHashes`): with a
/// filter as crowded as a 5M-record column's, each answers as the SQL it stands for, where they
/// used to answer "not shown" and send the merge to its key table.
final class SuspectHashesTests: XCTestCase {
    private static let count = 20_000

    private func id(_ number: Int, side: Int = 1) -> StoredValue {
        .text(Data(String(format: "%08X-BFBC-4B98-A4F6-%012X", number, side).utf8))
    }

    /// The filter these tests size (`expectedCount` 1: its smallest, 65,536 bits) flags far more
    /// than `suspectLimit` of `count` distinct cloudIDs: the hashes past it are what is tested.
    func testTheCrowdedFilterFlagsMoreThanTheSQLLooksUp() {
        var filter = ProbableSet(expectedCount: 1)
        var flagged = 0
        for number in 0..<Self.count {
            guard case .text(let bytes) = id(number) else { continue }
            if bytes.withUnsafeBytes({ filter.insert(RecordMerge.hash($0)) }) { flagged += 1 }
        }
        XCTAssertGreaterThan(flagged, InsertedValues.suspectLimit * 4)
        XCTAssertLessThan(flagged, SuspectHashes.limit)
    }

    /// `cloudIDsAreIdentities` past the limit, against the SQL filter it replaces: a cloudID
    /// repeated late in the column or early (among the first 256 suspects, once looked up in
    /// SQL) is found by both; a column of distinct ones passes both.
    func testPastTheLimitWhetherEveryCloudIDIsAnIdentityIsTheSQLFiltersAnswer() throws {
        let unique = (0..<Self.count).map { id($0) }
        let cases: [(name: String, values: [StoredValue], expected: Bool)] = [
            ("all unique", unique, true),
            ("one repeated, late", unique + [id(Self.count - 7)], false),
            ("one repeated, early", [id(3)] + unique, false),
            ("one repeated three times", unique + [id(12_345), id(12_345)], false),
        ]
        for (name, values, expected) in cases {
            let queue = try DatabaseQueue()
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE ZTHING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCLOUDID VARCHAR)")
                let insert = try db.makeStatement(sql: "INSERT INTO ZTHING (Z_ENT, ZCLOUDID) VALUES (1, ?)")
                for value in values { try ExactSQL.execute(insert, [value]) }
                let failing = try RecordMergeValueTests.recordsFailingTheIdentityFilter(db)
                let answer = try RecordMerge.cloudIDsAreIdentities(
                    column: "ZCLOUDID", of: "ZTHING", in: "main", rows: "i.Z_ENT = 1", expectedCount: 1, db: db)
                XCTAssertEqual(failing == 0, expected, "\(name): the SQL filter")
                XCTAssertEqual(answer, expected, "\(name): the pass")
            }
        }
    }

    /// `noCloudIDIsInBoth` past the limit, against the key table's lookup it leaves out: a store
    /// cloudID among the archive's late is found by both; disjoint columns by neither.
    func testPastTheLimitNoCloudIDIsInBothIsTheLookupsAnswer() throws {
        let store = (0..<Self.count).map { id($0, side: 1) }
        let archive = (0..<Self.count).map { id($0, side: 2) }
        let cases: [(name: String, archive: [StoredValue], expected: Bool)] = [
            ("disjoint", archive, true),
            ("one in both, late", archive + [store[Self.count - 11]], false),
        ]
        for (name, archiveValues, expected) in cases {
            let queue = try DatabaseQueue()
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ':memory:' AS incoming")
                for schema in ["main", "incoming"] {
                    try db.execute(sql: "CREATE TABLE \(schema).ZTHING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCLOUDID VARCHAR)")
                }
                for (schema, values) in [("main", store), ("incoming", archiveValues)] {
                    try db.inTransaction {
                        let insert = try db.makeStatement(sql: "INSERT INTO \(schema).ZTHING (Z_ENT, ZCLOUDID) VALUES (1, ?)")
                        for value in values { try ExactSQL.execute(insert, [value]) }
                        return .commit
                    }
                }
                // The lookup as `RecordMerge.match` runs it: the store's values in an indexed
                // column without affinity or collation, each archive value looked up.
                try db.execute(sql: "CREATE TEMP TABLE questbak_key (k0)")
                try db.execute(sql: "INSERT INTO temp.questbak_key SELECT ZCLOUDID FROM main.ZTHING")
                try db.execute(sql: "CREATE INDEX temp.questbak_key_index ON questbak_key (k0)")
                let found =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT count(*) FROM incoming.ZTHING i
                            WHERE EXISTS (SELECT 1 FROM temp.questbak_key k WHERE k.k0 = +i.ZCLOUDID)
                            """) ?? -1
                try db.execute(sql: "DROP TABLE temp.questbak_key")
                let answer = try RecordMerge.noCloudIDIsInBoth(
                    column: "ZCLOUDID", of: "ZTHING", storeRows: "s.Z_ENT = 1", archiveRows: "i.Z_ENT = 1", storeCount: 1, db: db)
                XCTAssertEqual(found == 0, expected, "\(name): the lookup")
                XCTAssertEqual(answer.noneInBoth, expected, "\(name): the pass")
            }
        }
    }

    /// The store's own suspects and the archive's, both past the limit, settled together: each
    /// answer of `noCloudIDIsInBoth` (none in both, and whether every store cloudID is an
    /// identity) is the SQL's, and the store's table is read twice whatever the case (the pass
    /// that fills the filter and the one that settles both sides), where it was read five times
    /// (each side's first 256 suspects asked in SQL, then each side's hashes by a pass of its own).
    func testBothSidesPastTheLimitAreSettledByOnePassOverTheStore() throws {
        let store = (0..<Self.count).map { id($0, side: 1) }
        let archive = (0..<Self.count).map { id($0, side: 2) }
        let cases: [(name: String, store: [StoredValue], archive: [StoredValue], noneInBoth: Bool, identities: Bool)] = [
            ("disjoint, the store's distinct", store, archive, true, true),
            ("one in both, late", store, archive + [store[Self.count - 11]], false, true),
            ("one repeated in the store, late", store + [store[Self.count - 5]], archive, true, false),
            ("one repeated in the store, early", [store[2]] + store, archive, true, false),
            ("both", store + [store[9_999]], archive + [store[17]], false, false),
        ]
        for (name, storeValues, archiveValues, noneInBoth, identities) in cases {
            let queue = try DatabaseQueue()
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ':memory:' AS incoming")
                for schema in ["main", "incoming"] {
                    try db.execute(sql: "CREATE TABLE \(schema).ZTHING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCLOUDID VARCHAR)")
                }
                for (schema, values) in [("main", storeValues), ("incoming", archiveValues)] {
                    try db.inTransaction {
                        let insert = try db.makeStatement(sql: "INSERT INTO \(schema).ZTHING (Z_ENT, ZCLOUDID) VALUES (1, ?)")
                        for value in values { try ExactSQL.execute(insert, [value]) }
                        return .commit
                    }
                }
                let inBoth =
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM incoming.ZTHING i WHERE i.ZCLOUDID IN (SELECT ZCLOUDID FROM main.ZTHING)")
                    ?? -1
                let failing = try RecordMergeValueTests.recordsFailingTheIdentityFilter(db)
                XCTAssertEqual(inBoth == 0, noneInBoth, "\(name): the SQL, none in both")
                XCTAssertEqual(failing == 0, identities, "\(name): the SQL, identities")
                // Every statement that reads the store's table but the guess of its first rows.
                let reads = StatementLog()
                db.trace(options: .statement) { event in
                    if case .statement(let statement) = event, statement.sql.contains("FROM main.ZTHING"),
                        !statement.sql.contains("LIMIT 4096")
                    {
                        reads.add(statement.sql)
                    }
                }
                let answer = try RecordMerge.noCloudIDIsInBoth(
                    column: "ZCLOUDID", of: "ZTHING", storeRows: "s.Z_ENT = 1", archiveRows: "i.Z_ENT = 1", storeCount: 1, db: db)
                db.trace(options: .statement, nil)
                XCTAssertEqual(answer.noneInBoth, noneInBoth, "\(name): the pass, none in both")
                XCTAssertEqual(answer.storeCloudIDsAreIdentities, identities, "\(name): the pass, identities")
                XCTAssertEqual(reads.count, 2, "\(name): the store's table read \(reads.count) times")
            }
        }
    }

    /// The settling's in-place sort (`BucketIndex.init(sorting:)`) leaves the hashes as the
    /// standard library's sort would, and its index finds each hash's first place, and no other
    /// hash: random hashes of several counts (one bucket, a bucket a few, empty), repeated ones,
    /// and many in one bucket (equal top bits), which that bucket's own sort orders.
    func testTheBucketSortOrdersTheHashesAndItsIndexFindsEachFirstPlace() {
        var random = SeededGenerator(seed: 34)
        var cases: [(name: String, hashes: [UInt64])] = [0, 1, 8, 9, 100, 4_097, 70_000].map { count in
            ("\(count) random", (0..<count).map { _ in random.next() })
        }
        let repeated = (0..<3_000).map { _ in random.next() }
        cases.append(("repeated", repeated + repeated.prefix(500) + repeated.suffix(20) + repeated.suffix(20)))
        cases.append(("one bucket's many", (0..<2_000).map { _ in random.next() >> 20 } + (0..<2_000).map { _ in random.next() }))
        for (name, hashes) in cases {
            // A buffer of its own (a copy sharing `hashes`' would be copied when sorted).
            var sorted = hashes.map { $0 }
            let buffer = sorted.withUnsafeBufferPointer { $0.baseAddress }
            let index = SuspectHashes.BucketIndex(sorting: &sorted)
            XCTAssertEqual(sorted, hashes.sorted(), "\(name): sorted")
            if !hashes.isEmpty { XCTAssertEqual(sorted.withUnsafeBufferPointer { $0.baseAddress }, buffer, "\(name): in place") }
            for (place, hash) in sorted.enumerated() where place == 0 || sorted[place - 1] != hash {
                XCTAssertEqual(index.index(of: hash, in: sorted), place, "\(name): the first place of \(hash)")
            }
            for _ in 0..<200 {
                let absent = random.next()
                if !hashes.contains(absent) { XCTAssertNil(index.index(of: absent, in: sorted), "\(name): \(absent)") }
                if let near = hashes.first.map({ $0 ^ 1 }), !hashes.contains(near) {
                    XCTAssertNil(index.index(of: near, in: sorted), "\(name): \(near)")
                }
            }
        }
    }

    /// A store pass's suspects are moved out of it for the settling, not copied (the same
    /// buffer, which the pass no longer holds, so sorting it copies nothing), and with
    /// `keeping` false none are; the filter is replaced by the smallest, and asked nothing after.
    func testTheStoresSuspectsAreMovedOutAndItsFilterDropped() {
        var suspects = SuspectHashes()
        for hash in [UInt64](repeating: 0, count: 300).indices.map({ UInt64($0) &* 0x9E37_79B9_7F4A_7C15 }) {
            XCTAssertTrue(suspects.add(hash, value: { .null }))
        }
        let buffer = suspects.hashes.withUnsafeBufferPointer { $0.baseAddress }
        var filter = ProbableSet(expectedCount: 5_000_000)
        XCTAssertFalse(filter.insert(42))
        let taken = SuspectHashes.release(&suspects, filter: &filter, keeping: true)
        XCTAssertEqual(taken.hashes.count, 300)
        XCTAssertTrue(suspects.isEmpty)
        XCTAssertEqual(taken.hashes.withUnsafeBufferPointer { $0.baseAddress }, buffer, "moved, not copied")
        XCTAssertFalse(filter.contains(42), "the filter is a new, empty one")
        var more = taken
        XCTAssertTrue(SuspectHashes.release(&more, filter: &filter, keeping: false).isEmpty)
        XCTAssertEqual(more.hashes.count, 300, "left where it was")
    }
}

/// The statements a test's trace saw (the trace's closure may be called on another thread).
private final class StatementLog: @unchecked Sendable {
    private let lock = NSLock()
    private var statements: [String] = []
    var count: Int { lock.withLock { statements.count } }
    func add(_ sql: String) { lock.withLock { statements.append(sql) } }
}
