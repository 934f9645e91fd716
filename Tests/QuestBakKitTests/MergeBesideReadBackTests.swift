import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// A merge runs its matching and settling beside the read-back proof of the archive's restore
/// (`Importer.Options.besideReadBack`): what it made counts only once the proof has passed, the
/// proof's failure is the merge's whatever the merge did, and a restore made again
/// (`StatementRestore.NotAsExported`) has the merge made again from the start.
final class MergeBesideReadBackTests: XCTestCase {
    /// The archive of a store whose 40 estimations differ from the base store's (natural key the
    /// same; cloudIDs and estimates not: a supersede and a conflict each), and the base store.
    private func archiveAndStore(in directory: TemporaryTestDirectory) throws -> (archive: URL, store: URL) {
        let incoming = directory.path("incoming.store")
        let store = directory.path("base.store")
        for (url, side) in [(store, 1), (incoming, 2)] {
            try InsertedValuesTests.clean().write(to: url, uuid: RuleRun.storeUUID)
            let queue = try DatabaseQueue(path: url.path)
            try queue.write { db in
                try db.execute(
                    sql: """
                        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)
                        INSERT INTO ZTASKESTIMATION (Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZCLOUDID)
                        SELECT e.Z_ENT, 1, e.ZSESSION, 'task ' || n.i, 10000 + n.i, 60 + \(side) + n.i,
                               printf('%08X-BFBC-4B98-A4F6-%012X', n.i, \(side))
                        FROM n, (SELECT * FROM ZTASKESTIMATION WHERE Z_PK = 1) e
                        """)
            }
            try queue.close()
        }
        let archive = directory.path("incoming.qbak")
        _ = try Exporter.export(storeAt: incoming, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
        return (archive, store)
    }

    /// `damage` is given the restore's file once it is committed (the point named "complete in
    /// its main file"), each time it is written; returns the result's counts, entries and the
    /// merged store's rows, or the error's message.
    private func merge(
        _ archive: URL, into base: URL, name: String, in directory: TemporaryTestDirectory,
        damage: (@Sendable (_ file: URL, _ time: Int) -> Void)? = nil
    ) throws -> String {
        let store = directory.path("\(name)/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: base, to: store)
        let work = directory.url.appendingPathComponent("\(name)-work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        if let damage {
            let times = Counter()
            Hooks.faultPoint = { label in
                let prefix = "complete in its main file "
                guard label.hasPrefix(prefix) else { return }
                // The restore's file is built beside the scratch store, in the work folder.
                let file = work.appendingPathComponent("archive-store").appendingPathComponent(String(label.dropFirst(prefix.count)))
                damage(file, times.next())
            }
        }
        defer { Hooks.faultPoint = nil }
        var options = Merger.Options()
        options.restore = .timeQuest
        // The fixture's archive needs repairs of its own (defaults, a cloudID).
        options.restore.validate = true
        let before = try Data(contentsOf: store)
        do {
            let result = try Merger.run(archive: archive.path, into: store, options: options, workDirectory: work)
            let entities = result.entities.map {
                "\($0.name) \($0.store) \($0.archive) \($0.matched.sorted { $0.key < $1.key }) \($0.inserted) \($0.changed)"
            }
            return "entities \(entities)\ncounts \(result.counts.sorted { $0.key < $1.key })\n"
                + "entries \(try result.log.firstEntries(10_000).map(\.sentence))\ntables \(try exactTables(store).sorted { $0.key < $1.key })"
        } catch {
            XCTAssertEqual(try Data(contentsOf: store), before, "\(name): a failed merge leaves the store as it was")
            return "error " + error.localizedDescription.replacingOccurrences(of: directory.url.path, with: "<folder>")
        }
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func next() -> Int {
            lock.withLock {
                count += 1
                return count
            }
        }
    }

    /// The restore's file damaged so that both fail: the proof (two indexes swap their B-trees:
    /// `integrity_check` finds damage) and the merge beside it (a column of the estimations
    /// renamed in the schema: the merge refuses a table whose columns differ from the store's).
    /// The error is the proof's, as when the merge ran only after the proof had passed.
    func testAMergeBesideAFailedReadBackFailsWithTheProofsError() throws {
        let directory = try TemporaryTestDirectory("questbak-merge-beside")
        let (archive, store) = try archiveAndStore(in: directory)
        let clean = try merge(archive, into: store, name: "clean", in: directory)
        XCTAssertTrue(clean.hasPrefix("entities") && clean.contains("merge.supersede"), String(clean.prefix(400)))
        let damaged = try merge(archive, into: store, name: "damaged", in: directory) { file, _ in
            ReadBackTests.change(file) { db in
                try ReadBackTests.swapIndexRoots(db)
                try db.execute(sql: "PRAGMA writable_schema = ON")
                try db.execute(
                    sql:
                        "UPDATE sqlite_master SET sql = replace(sql, 'ZTASKDISPLAYNAME', 'ZTASKDISPLAYLABEL') WHERE name = 'ZTASKESTIMATION'"
                )
                try db.execute(sql: "PRAGMA writable_schema = OFF")
            }
        }
        XCTAssertTrue(damaged.hasPrefix("error") && damaged.contains("integrity_check"), damaged)
        XCTAssertFalse(damaged.contains("columns"), damaged)
    }

    /// The restore's file changed in one record the first time only: its read-back finds
    /// another digest than the archive's, so the archive is restored again and proved by what
    /// the transaction encoded. The merge made beside the first proof is made again: the
    /// result, every entry and the merged store are those of a merge restored once.
    func testAMergeRestoredAgainIsTheMergeOfOneRestoredOnce() throws {
        let directory = try TemporaryTestDirectory("questbak-merge-beside")
        // An archive restored without a repair, so that its digests are its members' (a
        // read-back that finds others has it restored again), merged into its store changed:
        // ten estimations with other cloudIDs and estimates (each a supersede and a conflict).
        let source = try directory.copyFixture("v2-typical", as: "source")
        let archive = directory.path("v2-typical.qbak")
        _ = try Exporter.export(storeAt: source, to: .file(archive, overwrite: false), options: .timeQuest(createdAt: 1_767_225_600))
        let store = try directory.copyFixture("v2-typical", as: "changed")
        let queue = try DatabaseQueue(path: store.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 7, ZCLOUDID = printf('%08X-BFBC-4B98-A4F6-000000000001', Z_PK)
                    WHERE Z_PK IN (SELECT Z_PK FROM ZTASKESTIMATION ORDER BY Z_PK LIMIT 10)
                    """)
        }
        try queue.close()
        let once = try merge(archive, into: store, name: "once", in: directory)
        XCTAssertTrue(once.hasPrefix("entities") && once.contains("merge.conflict"), String(once.prefix(400)))
        let restoredTimes = Counter()
        let twice = try merge(archive, into: store, name: "twice", in: directory) { file, time in
            _ = restoredTimes.next()
            if time == 1 { ReadBackTests.change(file) { _ in } }
        }
        XCTAssertEqual(restoredTimes.next(), 3, "the archive restored twice")
        XCTAssertEqual(twice, once)
    }
}
