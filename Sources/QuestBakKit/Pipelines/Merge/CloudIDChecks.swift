import CoreDataStore
import Foundation
import GRDB

/// `RecordMerge.noCloudIDIsInBoth` of each entity with a cloudID, asked on a connection of its
/// own on a second core while the merge's own connection matches the entities before it: a
/// second device's store and archive cloudIDs are read and hashed there (a fifth of the matching,
/// which ran on one core after the read-back proof beside it had finished). The entities are
/// asked one after another, in the layout's order (the order the merge matches them in), each
/// answer kept for the merge to wait for when it reaches the entity; an error is thrown there.
///
/// *Why the answers are those the merge's connection would give.* Asked there, the question reads
/// the entity's rows of `main` (the merged file) and of `incoming` (the restored archive), their
/// tables' declarations, and the store's count of the entity's records, which sizes its filter.
/// It is asked in the matching, before the merge writes any page of `main` (the matching writes
/// only the temp store's map and key tables; records are inserted and changed only once every
/// entity is matched), and `incoming` is never written. Here `main` is the store's copy, which the
/// merged file was copied from (`copyFiles`) and which nothing writes after: the same bytes until
/// the merge writes; and `incoming` is the same file. The same SQL and the same Swift read the
/// same bytes: the same answer.
final class CloudIDChecks: Sendable {
    typealias Answer = (noneInBoth: Bool, storeCloudIDsAreIdentities: Bool?)

    private let slots: [String: BackgroundResult<Answer>]

    /// `storeCopy`: a file with the bytes the merged store has before the merge writes; `archive`:
    /// the restored archive the merge attaches as `incoming`.
    static func start(layout: MergeLayout, storeCopy: String, archive: String) -> CloudIDChecks {
        let entities = layout.entities.filter { entity in entity.cloudIDColumn != nil && entity.keys.contains { $0.kind == .cloudID } }
        let slots = entities.map { _ in BackgroundResult<Answer>() }
        DispatchQueue.global().async {
            var next = 0
            func answerTheRest(_ body: (Int) throws -> Answer) {
                while next < slots.count {
                    slots[next].fill(Result { try body(next) })
                    next += 1
                }
            }
            do {
                let queue = try DatabaseQueue(path: storeCopy, configuration: StoreReader.besideConfiguration(readonly: true))
                defer { try? queue.close() }
                try queue.inDatabase { db in
                    try db.execute(sql: "ATTACH DATABASE ? AS incoming", arguments: [archive])
                    // Each page is read once, in order, by one scan a side: a small cache does
                    // as well as the default 2 MB each, which the merge's peak memory would hold
                    // beside the proof's and the merge's own caches (61 MB at 1M estimations).
                    for schema in ["main", "incoming"] { try db.execute(sql: "PRAGMA \(schema).cache_size = -256") }
                    answerTheRest { index in
                        let entity = entities[index]
                        return try RecordMerge.noCloudIDIsInBoth(
                            column: entity.cloudIDColumn ?? "", of: entity.table, storeRows: entity.rows("s"),
                            archiveRows: entity.rows("i"),
                            storeCount: RecordMerge.count("main", entity, db: db), db: db)
                    }
                }
            } catch {
                answerTheRest { _ in throw error }
            }
        }
        return CloudIDChecks(slots: Dictionary(uniqueKeysWithValues: zip(entities.map(\.name), slots)))
    }

    private init(slots: [String: BackgroundResult<Answer>]) { self.slots = slots }

    /// The entity's answer, waited for; nil for an entity not asked here.
    func answer(for entity: String) throws -> Answer? {
        try slots[entity]?.value()
    }

    /// Waits for every answer (before the connection's files are removed), ignoring errors.
    func finish() {
        for slot in slots.values { _ = slot.error() }
    }
}
