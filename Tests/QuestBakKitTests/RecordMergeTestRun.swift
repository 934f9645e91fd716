import CoreDataStore
import Foundation
import GRDB

@testable import QuestBakKit

/// `RecordMerge` alone, as the merge tests run it: `incoming` (a store attached as `incoming`)
/// merged into `store` by TimeQuest's newest model, the store's values preferred unless told, in one
/// transaction; the counts by entity.
enum RecordMergeTestRun {
    static func merge(
        _ incoming: URL, into store: URL, log: RepairLog, usesShortcuts: Bool = true, preference: Merger.Preference = .store,
        referenceChecksBeside: Bool = false
    ) throws -> [String: RecordMerge.Counts] {
        let layout = try MergeLayout(version: TimeQuestSchemas.newest)
        var referenceChecks: ReferenceChecks?
        var cloudIDChecks: CloudIDChecks?
        if referenceChecksBeside {
            // As the merge asks them: of a copy of the store as it was before, and of the archive.
            let copy = store.deletingLastPathComponent().appendingPathComponent(store.lastPathComponent + "-before")
            try FileManager.default.copyItem(at: store, to: copy)
            referenceChecks = ReferenceChecks.start(layout: layout, storeCopy: copy.path, archive: incoming.path)
            cloudIDChecks = CloudIDChecks.start(layout: layout, storeCopy: copy.path, archive: incoming.path)
        }
        defer { cloudIDChecks?.finish() }
        // As the merge opens it: waiting for the checks' connections beside it, which open the
        // same files at the same time (the loser of two first opens of a WAL file is told "locked").
        let queue = try DatabaseQueue(path: store.path, configuration: StoreReader.besideConfiguration(readonly: false))
        let counts = try queue.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS incoming", arguments: [incoming.path])
            var merge = RecordMerge(
                db: db, layout: layout, preference: preference, newerColumns: [:],
                keepDistinctIDs: false, log: log, storePath: store.path)
            merge.usesShortcuts = usesShortcuts
            merge.referenceChecks = referenceChecks
            merge.cloudIDChecks = cloudIDChecks
            try db.inTransaction {
                try merge.run()
                try log.finishWrites()
                return .commit
            }
            try db.execute(sql: "DETACH DATABASE incoming")
            return merge.counts
        }
        try queue.close()
        return counts
    }
}
