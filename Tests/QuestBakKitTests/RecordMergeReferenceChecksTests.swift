import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// The merge asks two things of references on other connections, beside its matching
/// (`ReferenceChecks`): the store's references to no record before it writes (of the store's
/// copy), and which of the archive's reference fields name a record in every record (then
/// `reportDangling` is not run for them). Asked there or on the merge's own connection, the
/// merge must leave the same store and the same report.
final class RecordMergeReferenceChecksTests: XCTestCase {
    /// 30 estimations in both, matched by natural key, their estimates differing (a conflict
    /// each); `archiveDangling` of the archive's name a session the archive does not have, and
    /// `storeDangling` of the store's one the store does not have; `archiveNew` more only in the
    /// archive (inserted: the merge writes records, so the store's references are counted again
    /// after it and compared with the count before).
    ///
    /// Their cloudIDs (`cloudIDs`) differ on the two sides (a second device), are the same (a
    /// store's own archive), or differ but for the archive's last record, which has the store's
    /// fifth's (past the first 64 the cloudID check guesses from: its passes answer).
    private func stores(
        in directory: TemporaryTestDirectory, archiveDangling: Int, storeDangling: Int, archiveNew: Int,
        cloudIDs: CloudIDs = .distinct
    ) throws -> (incoming: URL, base: URL) {
        let incoming = directory.path("incoming.store")
        let base = directory.path("base.store")
        for (store, side) in [(base, 1), (incoming, 2)] {
            try InsertedValuesTests.clean().write(to: store, uuid: RuleRun.storeUUID)
            let dangling = side == 1 ? storeDangling : archiveDangling
            let count = side == 1 ? 30 : 30 + archiveNew
            let queue = try DatabaseQueue(path: store.path)
            try queue.write { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
                        INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZCLOUDID)
                        SELECT e.Z_ENT, 1, CASE WHEN n.i <= \(dangling) THEN 900000 + n.i ELSE e.ZSESSION END, 'task ' || n.i, 10000 + n.i,
                               60 + \(side) + n.i, \(cloudID(side: side, last: count, cloudIDs))
                        FROM n, (SELECT * FROM ZTASKESTIMATION WHERE Z_PK = 1) e
                        """)
            }
            try queue.close()
        }
        return (incoming, base)
    }

    enum CloudIDs { case distinct, same, oneInBothPastTheGuess }

    /// SQL for the cloudID of estimation `n.i` on `side` (1 the store, 2 the archive).
    private func cloudID(side: Int, last: Int, _ cloudIDs: CloudIDs) -> String {
        switch cloudIDs {
        case .distinct: return "printf('%08X-BFBC-4B98-A4F6-%012X', n.i, \(side))"
        case .same: return "printf('%08X-BFBC-4B98-A4F6-%012X', n.i, 1)"
        case .oneInBothPastTheGuess:
            return side == 1
                ? "printf('%08X-BFBC-4B98-A4F6-%012X', n.i, 1)"
                : "printf('%08X-BFBC-4B98-A4F6-%012X', CASE WHEN n.i = \(last) THEN 5 ELSE n.i END, CASE WHEN n.i = \(last) THEN 1 ELSE 2 END)"
        }
    }

    private func merge(_ incoming: URL, _ base: URL, beside: Bool, name: String, in directory: TemporaryTestDirectory) throws -> String {
        let store = directory.path("\(name).store")
        try FileManager.default.copyItem(at: base, to: store)
        let work = directory.url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let log = try RepairLog(directory: work)
        do {
            let counts = try RecordMergeTestRun.merge(incoming, into: store, log: log, referenceChecksBeside: beside)
            let summary = counts.sorted { $0.key < $1.key }.map {
                "\($0.key) \($0.value.matchedBy.sorted { $0.key < $1.key }) \($0.value.inserted) \($0.value.changed)"
            }
            return "counts \(summary)\nlog \(log.counts.sorted { $0.key < $1.key })\n"
                + "entries \(try log.firstEntries(10_000).map(\.sentence))\ntables \(try exactTables(store).sorted { $0.key < $1.key })"
        } catch {
            return "error \(error.localizedDescription)"
        }
    }

    /// And the cloudIDs' check (`CloudIDChecks`): the same answers beside as on the merge's
    /// connection where no cloudID is in both, where every one is, and where one is past the guess.
    func testReferencesAskedBesideTheMatchingLeaveWhatTheMergesOwnConnectionLeaves() throws {
        let cases: [(Int, Int, Int, CloudIDs)] = [
            (0, 0, 0, .distinct), (3, 0, 0, .distinct), (0, 2, 4, .distinct), (5, 2, 4, .distinct), (0, 0, 0, .same),
            (3, 2, 4, .same), (0, 0, 70, .oneInBothPastTheGuess),
        ]
        for (archiveDangling, storeDangling, archiveNew, cloudIDs) in cases {
            let directory = try TemporaryTestDirectory("questbak-reference-checks")
            let (incoming, base) = try stores(
                in: directory, archiveDangling: archiveDangling, storeDangling: storeDangling, archiveNew: archiveNew,
                cloudIDs: cloudIDs)
            let message = "archive \(archiveDangling), store \(storeDangling), new \(archiveNew), \(cloudIDs)"
            let beside = try merge(incoming, base, beside: true, name: "beside", in: directory)
            let own = try merge(incoming, base, beside: false, name: "own", in: directory)
            XCTAssertEqual(beside, own, message)
            XCTAssertTrue(own.hasPrefix("counts"), "\(message): \(own.prefix(300))")
            // Each dangling reference of the archive's is listed, from either connection.
            XCTAssertEqual(own.components(separatedBy: "merge.dangling").count - 1, archiveDangling > 0 ? 1 : 0, message)
            XCTAssertEqual(
                beside.components(separatedBy: "dangling").count > 1, archiveDangling > 0,
                "\(message): \(beside.prefix(600))")
        }
    }

    /// The store's count before the merge, asked beside and waited for once the records are
    /// merged, still fails the merge where it cannot be counted (its copy is not there): a merge
    /// that inserts records and one that writes none alike.
    func testACountBesideThatFailsFailsTheMergeWhetherOrNotItWrote() throws {
        for archiveNew in [4, 0] {
            let directory = try TemporaryTestDirectory("questbak-reference-checks")
            let (incoming, base) = try stores(in: directory, archiveDangling: 0, storeDangling: 0, archiveNew: archiveNew)
            let store = directory.url.appendingPathComponent("merged.store")
            try FileManager.default.copyItem(at: base, to: store)
            let layout = try MergeLayout(version: TimeQuestSchemas.newest)
            let missing = directory.url.appendingPathComponent("no-copy.store").path
            let checks = ReferenceChecks.start(layout: layout, storeCopy: missing, archive: incoming.path)
            defer { _ = (checks.danglingBefore.error(), checks.archiveNamesOnlyRecords.error()) }
            let queue = try DatabaseQueue(path: store.path, configuration: StoreReader.besideConfiguration(readonly: false))
            defer { try? queue.close() }
            let log = try RepairLog(directory: directory.url)
            var inserted = -1
            XCTAssertThrowsError(
                try queue.writeWithoutTransaction { db in
                    try db.execute(sql: "ATTACH DATABASE ? AS incoming", arguments: [incoming.path])
                    var merge = RecordMerge(
                        db: db, layout: layout, preference: .store, newerColumns: [:], keepDistinctIDs: false, log: log,
                        storePath: store.path)
                    merge.referenceChecks = checks
                    try db.inTransaction {
                        defer { inserted = merge.counts.values.map(\.inserted).reduce(0, +) }
                        try merge.run()
                        return .commit
                    }
                }, "new \(archiveNew)"
            ) { error in
                XCTAssertEqual((error as? DatabaseError)?.resultCode, .SQLITE_CANTOPEN, "new \(archiveNew): \(error)")
            }
            // The records were merged before the count was waited for.
            XCTAssertEqual(inserted, archiveNew)
        }
    }

    /// Which archive fields the check shows naming only records, and the store's count before.
    func testTheChecksAnswerAsTheQueriesTheyStandFor() throws {
        let directory = try TemporaryTestDirectory("questbak-reference-checks")
        let (incoming, base) = try stores(in: directory, archiveDangling: 3, storeDangling: 2, archiveNew: 0)
        let layout = try MergeLayout(version: TimeQuestSchemas.newest)
        let checks = ReferenceChecks.start(layout: layout, storeCopy: base.path, archive: incoming.path)
        let named = try checks.archiveNamesOnlyRecords.value()
        XCTAssertFalse(named.contains("TaskEstimation.session"))
        XCTAssertTrue(named.contains("GameSession.routine"), "\(named.sorted())")
        XCTAssertEqual(try checks.danglingBefore.value()["ZTASKESTIMATION.ZSESSION"], 2)
        let cleanDirectory = try TemporaryTestDirectory("questbak-reference-checks")
        let (clean, _) = try stores(in: cleanDirectory, archiveDangling: 0, storeDangling: 0, archiveNew: 0)
        XCTAssertTrue(
            try ReferenceChecks.start(layout: layout, storeCopy: base.path, archive: clean.path).archiveNamesOnlyRecords.value()
                .contains("TaskEstimation.session"))
    }
}
