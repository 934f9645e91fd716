import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// The merge's per-record tests in Swift answer as the SQL and the comparison they replace, for
/// values of every storage class, odd bytes included.
final class RecordMergeValueTests: XCTestCase {
    private let uuid = "2F537EDD-BFBC-4B98-A4F6-E7FF7A82F2C3"

    private func text(_ string: String) -> StoredValue { .text(Data(string.utf8)) }

    /// Store cloudIDs of every kind: well formed in both cases, with a NUL inside or after, too
    /// short, not UTF-8, a BLOB of a UUID's bytes, numbers, and values the store shares.
    private var values: [StoredValue] {
        var withNulInside = Data(uuid.utf8)
        withNulInside[10] = 0
        var notUTF8 = Data(uuid.utf8)
        notUTF8[0] = 0xFF
        return [
            text(uuid), text(uuid.lowercased()), text("2f537edd-BFBC-4b98-A4F6-e7ff7a82f2c3"), .text(withNulInside),
            .text(Data(uuid.utf8) + Data([0]) + Data("x".utf8)), text(String(uuid.dropLast())), text(uuid + "0"), .text(notUTF8),
            text("2F537EDD+BFBC-4B98-A4F6-E7FF7A82F2C3"), text("2F537EDD-BFBC-4B98-A4F6-E7FF7A82F2CG"), .blob(Data(uuid.utf8)),
            .blob(Data("not a uuid".utf8)), .integer(1), .integer(-123_456_789), .real(1.5), .real(-1e300), text(""), .blob(Data()),
            // Shared in the store below: as text, as a BLOB, and the text twin of a shared BLOB.
            text("00000000-0000-0000-0000-000000000000"), .blob(Data("11111111-1111-1111-1111-111111111111".utf8)),
            text("11111111-1111-1111-1111-111111111111"), text("not shared, not well formed"),
        ]
    }

    func testWhetherAStoreCloudIDIsNoIdentityIsAnsweredAsTheSQLItReplaces() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            // The store's column has TEXT affinity, as Core Data declares it; the merge's scratch
            // table's has none.
            try db.execute(sql: "CREATE TABLE store (cloud VARCHAR)")
            try db.execute(sql: "CREATE TEMP TABLE differing (c)")
            let insertStore = try db.makeStatement(sql: "INSERT INTO store (cloud) VALUES (?)")
            for shared in [
                text("00000000-0000-0000-0000-000000000000"), .blob(Data("11111111-1111-1111-1111-111111111111".utf8)),
                text("22222222-2222-2222-2222-222222222222"),
            ] {
                try ExactSQL.execute(insertStore, [shared])
                try ExactSQL.execute(insertStore, [shared])
            }
            try ExactSQL.execute(insertStore, [text(uuid)])
            var shared = Set<StoredValue>()
            try ExactSQL.forEachRow(db, sql: "SELECT cloud FROM store WHERE cloud IS NOT NULL GROUP BY cloud HAVING count(*) > 1") {
                shared.insert($0[0])
            }
            XCTAssertEqual(shared.count, 3)
            let insert = try db.makeStatement(sql: "INSERT INTO differing (c) VALUES (?)")
            for value in values { try ExactSQL.execute(insert, [value]) }
            // What `RecordMerge.mergeMatched` asked before, row by row.
            let sql = """
                SELECT c, c IS NOT NULL AND (NOT \(DeterministicID.wellFormedSQL("c"))
                    OR c IN (SELECT cloud FROM store GROUP BY cloud HAVING count(*) > 1)) FROM differing ORDER BY rowid
                """
            var compared = 0
            try ExactSQL.forEachRow(db, sql: sql) { row in
                XCTAssertEqual(
                    try RecordMerge.isNoIdentity(row[0], shared: shared, in: db), row.integer(1) == 1, "for \(row[0].summary): \(row[0])")
                compared += 1
            }
            XCTAssertEqual(compared, values.count)
            // Some are identities, some not: the test sees both answers.
            XCTAssertTrue(try values.contains { try !RecordMerge.isNoIdentity($0, shared: shared, in: db) })
            XCTAssertTrue(try values.contains { try RecordMerge.isNoIdentity($0, shared: shared, in: db) })
        }
    }

    func testTwoValuesAreTheSameAsTheDuplicateRuleComparesAKeysParts() {
        let all =
            values + [
                .null, .integer(2), .real(2), .real(2.5), .integer(Int64.max), .real(Double(Int64.max)), .real(.nan), .real(-0.0),
                .integer(0),
            ]
        for lhs in all {
            for rhs in all {
                XCTAssertEqual(RecordMerge.same(lhs, rhs), StoredValue.sameKey([lhs], [rhs]), "\(lhs) and \(rhs)")
            }
        }
    }

    /// The merge's filters (`noCloudIDIsInBoth`, `cloudIDsAreIdentities`) rest on one property
    /// of `RecordMerge.hash`: equal bytes give equal hashes, whatever buffer holds them. Texts of
    /// every length around the eight-byte steps, NULs and non-UTF-8 bytes included, hashed from
    /// two copies; and texts that differ only where a step or the last word could lose a byte
    /// (a NUL before or after, the length) hash apart.
    func testTheMergesHashGivesEqualBytesEqualHashes() {
        var texts: [[UInt8]] = []
        for length in 0...41 {
            texts.append((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            texts.append([UInt8](repeating: 0, count: length))
            texts.append([UInt8](repeating: 0xFF, count: length))
        }
        texts += [[0x61], [0x61, 0], [0, 0x61], Array(uuid.utf8), Array(uuid.utf8) + [0], [0] + Array(uuid.utf8)]
        func hash(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { RecordMerge.hash($0) } }
        for text in texts {
            let copy = Data(text)
            XCTAssertEqual(hash(text), copy.withUnsafeBytes { RecordMerge.hash($0) }, "\(text)")
        }
        let distinct = Set(texts.map { $0 })
        XCTAssertEqual(Set(distinct.map(hash)).count, distinct.count)
    }

    /// `String(validUTF8:)`, which the settling's cloudIDs and report values are made by, answers
    /// as `String(validating:as:)` over ASCII, the byte after it, multi-byte characters, invalid
    /// sequences (a lone continuation byte, overlong forms, a surrogate, past U+10FFFF, a cut
    /// character), NULs and empty text.
    func testValidUTF8TextIsWhatTheStandardLibrarysValidationGives() {
        let samples: [[UInt8]] = [
            [], [0], [0x41, 0, 0x42], Array(uuid.utf8), [0x7F], [0x80], [0x41, 0x80], [0xC2, 0x80], [0xC3, 0xA9, 0x41],
            [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
            [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x41, 0xFF], [0xFE], Array("Größe, 時間".utf8),
        ]
        for bytes in samples {
            let data = Data(bytes)
            XCTAssertEqual(String(validUTF8: data), String(validating: data, as: UTF8.self), "\(bytes)")
            XCTAssertEqual(StoredValue.text(data).validText, String(validating: data, as: UTF8.self), "\(bytes)")
            XCTAssertEqual(
                Value.text(data), String(validating: data, as: UTF8.self).map { .string($0) } ?? .textBytes(data), "\(bytes)")
        }
    }

    /// `RecordMerge.cloudIDsAreIdentities` says every record passes the archive's side of the
    /// cloudID key's filter exactly when the SQL filter it stands for passes them all; and never
    /// for a table that declares a collation, whose `GROUP BY` may take two texts for one.
    func testWhetherEveryCloudIDIsAnIdentityIsAnsweredAsTheSQLFilterItReplaces() throws {
        func id(_ number: Int) -> StoredValue { text(String(format: "%08X-BFBC-4B98-A4F6-E7FF7A82F2C3", number)) }
        let unique = (0..<1_000).map(id)
        // Entity 1's records; entity 2 shares the table and holds the same cloudIDs, each once.
        let cases: [(name: String, values: [StoredValue], collation: Bool)] = [
            ("all unique", unique, false),
            ("lower case", unique + [text(uuid.lowercased())], false),
            ("one repeated", unique + [id(500)], false),
            ("the last two equal", unique + [text(uuid), text(uuid)], false),
            ("a NULL", unique + [.null], false),
            ("malformed", unique + [text(String(uuid.dropLast()))], false),
            ("a NUL after", unique + [.text(Data(uuid.utf8) + Data([0]))], false),
            ("a BLOB", unique + [.blob(Data(uuid.utf8))], false),
            ("a number", unique + [.integer(7)], false),
            ("empty", [], false),
            ("case twins, NOCASE", unique + [text(uuid), text(uuid.lowercased())], true),
            ("all unique, NOCASE", unique, true),
        ]
        var answers: Set<Bool> = []
        for (name, values, collation) in cases {
            let queue = try DatabaseQueue()
            try queue.write { db in
                try db.execute(
                    sql:
                        "CREATE TABLE ZTHING (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, ZCLOUDID VARCHAR\(collation ? " COLLATE NOCASE" : ""))"
                )
                let insert = try db.makeStatement(sql: "INSERT INTO ZTHING (Z_ENT, ZCLOUDID) VALUES (?, ?)")
                for value in values { try ExactSQL.execute(insert, [.integer(1), value]) }
                for value in unique { try ExactSQL.execute(insert, [.integer(2), value]) }
                // The filter `RecordMerge` leaves out when the answer is yes, as it wrote it.
                let failing = try Self.recordsFailingTheIdentityFilter(db)
                let answer = try RecordMerge.cloudIDsAreIdentities(
                    column: "ZCLOUDID", of: "ZTHING", in: "main", rows: "i.Z_ENT = 1", expectedCount: values.count, db: db)
                if collation {
                    XCTAssertFalse(answer, name)
                } else {
                    XCTAssertEqual(answer, failing == 0, "\(name): \(failing) records fail the filter")
                }
                answers.insert(answer)
            }
        }
        XCTAssertEqual(answers, [true, false], "the cases give both answers")
    }

    /// How many of entity 1's records of `ZTHING` fail the SQL filter `RecordMerge` leaves out
    /// when `cloudIDsAreIdentities` says yes, as it wrote it (their cloudID is no identity).
    static func recordsFailingTheIdentityFilter(_ db: Database) throws -> Int {
        try Int.fetchOne(
            db,
            sql: """
                SELECT count(*) FROM ZTHING i WHERE i.Z_ENT = 1 AND (\(DeterministicID.wellFormedSQL("i.ZCLOUDID"))
                    AND i.ZCLOUDID IN (SELECT x.ZCLOUDID FROM ZTHING x WHERE x.Z_ENT = 1 GROUP BY x.ZCLOUDID HAVING count(*) = 1)) IS NOT 1
                """) ?? -1
    }

    /// An archive's cloudID two archive records share is a default, not an identity, even when
    /// the store holds it once: neither record is matched by it (each is found by its natural
    /// key), and the one the store holds is not matched twice.
    func testACloudIDTwoArchiveRecordsShareIdentifiesNeither() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("store.store")
        let incoming = directory.path("incoming.store")
        try InsertedValuesTests.clean().write(to: store, uuid: RuleRun.storeUUID)
        try InsertedValuesTests.clean().write(to: incoming, uuid: RuleRun.storeUUID)
        let edit = try DatabaseQueue(path: incoming.path)
        try edit.write { db in
            try db.execute(
                sql: "UPDATE ZTASKESTIMATION SET ZCLOUDID = (SELECT ZCLOUDID FROM ZTASKESTIMATION WHERE Z_PK = 1) WHERE Z_PK = 2")
        }
        try edit.close()
        let counts = try RecordMergeTestRun.merge(incoming, into: store, log: try RepairLog(directory: directory.url))
        XCTAssertEqual(counts["TaskEstimation"]?.matchedBy, ["cloudID": 1, "natural key": 2])
        XCTAssertEqual(counts["TaskEstimation"]?.inserted, 0)
        // The other entities' cloudIDs are all identities: matched by them.
        XCTAssertEqual(counts["GameSession"]?.matchedBy, ["cloudID": 1])
    }
}
