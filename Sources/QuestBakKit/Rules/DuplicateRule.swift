import CoreDataStore
import GRDB
import QuestBakArchive

/// Records with the same natural key are one record stored twice (sync, reinstall), even when
/// their cloudIDs differ: seed 000 makes the natural key the identity because copies get fresh
/// UUIDs. (`keepDistinctIDs` keeps records whose well-formed cloudIDs differ as two, the earlier
/// behaviour.) The lowest `Z_PK` of each group is kept, with its own cloudID; children of the
/// others are re-pointed to it; each dropped record is reported in full, its cloudID with it, so
/// the app can delete it from CloudKit; a keeper without a cloudID takes its duplicate's. Entities are visited
/// parents first, so a key that names a parent sees the parent's final `Z_PK`. Singletons have a
/// rule of their own (`SingletonMergeRule`). Natural keys are the app profile's: a store no
/// profile describes has none (its model's uniqueness constraints are `UniqueConstraintRule`'s).
struct DuplicateRule: RepairRule {
    var effects: [RepairRuleEffect] {
        [
            RepairRuleEffect(.dedup, .removesRecord), RepairRuleEffect(.repoint, .repointsRelationship),
            RepairRuleEffect(.merge, .changesField),
        ]
    }

    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> {
        var fields = Set(entity.toOneRelationships.filter { Self.appliesTo(version.identity(of: $0.destination)) }.map(\.name))
        if Self.appliesTo(version.identity(of: entity.name)), entity.cloudID != nil { fields.insert(CompiledEntity.cloudIDAttribute) }
        return fields
    }

    /// Entities with a natural key that are not singletons.
    static func appliesTo(_ identity: Identity) -> Bool {
        identity.singletonCloudID == nil && !identity.naturalKey.isEmpty
    }

    func apply(in context: RepairContext) throws -> [String] {
        for plan in context.entitiesParentsFirst {
            guard let entity = context.profileEntity(plan), context.identity(of: entity.name).singletonCloudID == nil else { continue }
            try removeDuplicates(of: entity, plan: plan, in: context)
            FaultPoint.reached("duplicates of \(entity.name) removed")
        }
        return []
    }

    func removeDuplicates(of entity: CompiledEntity, plan: ModelLayout.EntityPlan, in context: RepairContext) throws {
        let key = context.identity(of: entity.name).naturalKey
        guard !key.isEmpty else { return }
        let keyColumns = key.compactMap { context.column($0, of: plan) }
        guard keyColumns.count == key.count else { return }
        // No two records the restore inserted share a complete key: no group has two records.
        if try context.inserted?.naturalKeysMayRepeat(
            of: plan, columns: keyColumns, log: context.log, db: context.db, rows: context.rows(of: plan)) == false
        {
            return
        }
        let cloudColumn = context.column(CompiledEntity.cloudIDAttribute, of: plan)
        try context.resetPairs()
        // A key with a missing part proves nothing about identity: such records are never merged.
        let complete = keyColumns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
        let sql = """
            SELECT \(CoreDataSQL.keyColumn), \(cloudColumn ?? "NULL"), \(keyColumns.joined(separator: ", ")) \(context.rows(of: plan))
            AND \(complete) ORDER BY \(keyColumns.joined(separator: ", ")), \(CoreDataSQL.keyColumn)
            """
        var group = DuplicateGroup(distinctIDsAreDistinct: context.keepDistinctIDs)
        let insert = try context.db.makeStatement(sql: "INSERT INTO temp.questbak_pairs (duplicate, keeper, carried) VALUES (?, ?, ?)")
        try ExactSQL.forEachRow(context.db, sql: sql) { row in
            let primaryKey = row.integer(0) ?? 0
            let cloudID = row[1].validText.flatMap { DeterministicID.isWellFormed($0) ? $0 : nil }
            let rowKey = (0..<keyColumns.count).map { row[2 + $0] }
            // Rows arrive in SQLite's order of the key, so one key's rows are adjacent; they are
            // one key when SQLite calls them equal: text and BLOBs byte for byte, numbers by value.
            if !StoredValue.sameKey(rowKey, group.key) {
                group = DuplicateGroup(key: rowKey, distinctIDsAreDistinct: context.keepDistinctIDs)
            }
            if let match = group.keeper(for: primaryKey, cloudID: cloudID) {
                try insert.execute(arguments: [primaryKey, match.keeper, match.carried])
            }
        }
        try context.applyDuplicatePairs(of: plan)
    }
}
