import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Every record ends with its own well-formed cloudID: missing, empty, malformed and repeated
/// ones (all but the lowest `Z_PK` keep theirs) are replaced by a name-based UUIDv5, so restoring
/// one backup on two devices gives the same IDs.
///
/// - An entity of an app profile's version (one with a `cloudID` attribute) gets IDs made from
///   the entity and the record's natural key (its `Z_PK` where the profile gives none), and a
///   singleton its pinned sentinel; the one cloudID a migration gave every record is replaced
///   too. Entities are visited parents first, so a child's ID can name its parent's final one.
/// - An entity only its own model describes, wherever it has a `cloudID` text attribute, gets IDs
///   made from the store's UUID, the entity and the record's `Z_PK`. A lightweight migration fills
///   a new cloudID column with one shared value (SwiftData archives its default once): all but
///   the lowest `Z_PK` then get their own.
struct CloudIDRule: RepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.cloudID, .assignsCloudID)] }

    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> {
        entity.cloudID == nil ? [] : [CompiledEntity.cloudIDAttribute]
    }

    func apply(in context: RepairContext) throws -> [String] {
        for plan in context.entitiesParentsFirst {
            guard let entity = context.profileEntity(plan), entity.cloudID != nil else { continue }
            try assignCloudIDs(entity, plan: plan, in: context)
            FaultPoint.reached("cloudIDs of \(entity.name) assigned")
        }
        for plan in context.entities where context.profileEntity(plan) == nil {
            try assignStoreCloudIDs(plan, in: context)
        }
        return []
    }

    func assignCloudIDs(_ entity: CompiledEntity, plan: ModelLayout.EntityPlan, in context: RepairContext) throws {
        let (db, log) = (context.db, context.log)
        guard let cloudColumn = context.column(CompiledEntity.cloudIDAttribute, of: plan) else { return }
        let table = plan.table
        // Only this entity's rows: a sub-entity sharing the table has cloudIDs of its own.
        let entityRows = "\(CoreDataSQL.entityColumn) = \(plan.number)"
        if let sentinel = context.identity(of: entity.name).singletonCloudID {
            let sql =
                "SELECT \(CoreDataSQL.keyColumn), \(cloudColumn) FROM \(table) WHERE \(entityRows) AND \(cloudColumn) IS NOT ? ORDER BY \(CoreDataSQL.keyColumn)"
            for row in try ExactSQL.fetchAll(db, sql: sql, [.text(Data(sentinel.utf8))]) {
                guard case .integer(let primaryKey) = row[0] else { continue }
                try log.record(
                    RepairEntry(
                        rule: .cloudID, kind: context.cloudIDKind, entity: entity.name, primaryKey: primaryKey,
                        cloudID: sentinel, field: CompiledEntity.cloudIDAttribute, old: .value(row[1].reportable),
                        new: .value(.string(sentinel))))
            }
            try db.execute(sql: "UPDATE \(table) SET \(cloudColumn) = ? WHERE \(entityRows)", arguments: [sentinel])
            return
        }
        // A cloudID a migration gave every record is, for each of them, no cloudID.
        func usable(_ id: String) -> Bool { DeterministicID.isWellFormed(id) && !context.sharedCloudIDs.contains(id) }
        // Most stores need nothing: every cloudID well-formed and used once. One query says so,
        // unless the restore saw every cloudID it inserted well-formed and once (`InsertedValues`).
        let needy =
            try context.inserted?.cloudIDsMayNeedRepair(
                in: cloudColumn, of: plan, log: log, db: db, rows: context.rows(of: plan)) == false
            ? 0
            : try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM \(table) WHERE \(entityRows) AND (\(cloudColumn) IS NULL
                       OR NOT \(DeterministicID.wellFormedSQL(cloudColumn))
                       OR \(cloudColumn) IN (SELECT \(cloudColumn) FROM \(table) WHERE \(entityRows) GROUP BY \(cloudColumn) HAVING count(*) > 1))
                    """) ?? 0
        let shared = try context.sharedCloudIDs.reduce(0) { count, id in
            count
                + (try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE \(entityRows) AND \(cloudColumn) = ?", arguments: [id])
                    ?? 0)
        }
        guard needy + shared > 0 else { return }
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_ids (id TEXT PRIMARY KEY)")
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_new_ids (pk INTEGER PRIMARY KEY, id TEXT)")
        try db.execute(sql: "DELETE FROM temp.questbak_ids")
        try db.execute(sql: "DELETE FROM temp.questbak_new_ids")
        // The IDs that stay: well-formed, first occurrence. Generated ones must avoid them.
        let keep = try db.makeStatement(sql: "INSERT OR IGNORE INTO temp.questbak_ids (id) VALUES (?)")
        let firstOccurrences =
            "SELECT \(cloudColumn) FROM \(table) WHERE \(entityRows) AND \(cloudColumn) IS NOT NULL GROUP BY \(cloudColumn)"
        try ExactSQL.forEachRow(db, sql: firstOccurrences) { row in
            if let id = row[0].validText, usable(id) { try keep.execute(arguments: [id]) }
        }
        let key = context.identity(of: entity.name).naturalKey
        let keyColumns = key.compactMap { context.column($0, of: plan) }
        let selectedKey = keyColumns.isEmpty ? "" : ", " + keyColumns.map { "t.\($0)" }.joined(separator: ", ")
        let sql = """
            SELECT t.\(CoreDataSQL.keyColumn), t.\(cloudColumn), m.first\(selectedKey) FROM \(table) t
            LEFT JOIN (SELECT \(cloudColumn) AS id, min(\(CoreDataSQL.keyColumn)) AS first FROM \(table) WHERE \(entityRows) GROUP BY \(cloudColumn)) m
              ON m.id = t.\(cloudColumn)
            WHERE t.\(entityRows)
            ORDER BY t.\(CoreDataSQL.keyColumn)
            """
        let claim = try db.makeStatement(sql: "INSERT OR IGNORE INTO temp.questbak_ids (id) VALUES (?)")
        let assign = try db.makeStatement(sql: "INSERT INTO temp.questbak_new_ids (pk, id) VALUES (?, ?)")
        try ExactSQL.forEachRow(db, sql: sql) { row in
            let primaryKey = row.integer(0) ?? 0
            let current = row[1]
            if let id = current.validText, usable(id), row.integer(2) == primaryKey { return }
            var name = try identityName(entity, primaryKey: primaryKey, keyValues: (0..<keyColumns.count).map { row[3 + $0] }, in: context)
            var candidate: String
            var attempt = 0
            repeat {
                candidate = context.randomIDs ? UUID().uuidString : DeterministicID.uuid(name: name).uuidString
                attempt += 1
                name += "#\(attempt)"
                try claim.execute(arguments: [candidate])
            } while db.changesCount == 0
            try assign.execute(arguments: [primaryKey, candidate])
            try log.record(
                RepairEntry(
                    rule: .cloudID, kind: context.cloudIDKind, entity: entity.name, primaryKey: primaryKey, cloudID: candidate,
                    field: CompiledEntity.cloudIDAttribute,
                    old: .value(current.reportable), new: .value(.string(candidate))))
        }
        try db.execute(
            sql: """
                UPDATE \(table) SET \(cloudColumn) = (SELECT id FROM temp.questbak_new_ids n WHERE n.pk = \(table).\(CoreDataSQL.keyColumn))
                WHERE \(CoreDataSQL.keyColumn) IN (SELECT pk FROM temp.questbak_new_ids)
                """)
    }

    /// The text a deterministic cloudID is derived from: the entity and its natural key, with a
    /// parent named by its (already final) cloudID rather than its device-local `Z_PK`.
    private func identityName(
        _ entity: CompiledEntity, primaryKey: Int64, keyValues: [StoredValue], in context: RepairContext
    ) throws -> String {
        guard !keyValues.isEmpty else { return "\(entity.name)|pk:\(primaryKey)" }
        var parts = [entity.name]
        for (property, stored) in zip(context.identity(of: entity.name).naturalKey, keyValues) {
            if let relationship = entity.relationship(named: property), let parent = context.plan(named: relationship.destination) {
                let parentCloud = try context.column(CompiledEntity.cloudIDAttribute, of: parent).flatMap { column in
                    try ExactSQL.fetchAll(
                        context.db, sql: "SELECT \(column) FROM \(parent.table) WHERE \(CoreDataSQL.keyColumn) = ?", [stored]
                    )
                    .first?.first?.validText
                }
                parts.append(parentCloud ?? "nil")
            } else {
                switch stored {
                case .null: parts.append("nil")
                case .integer(let number): parts.append(String(number))
                case .real(let number): parts.append(String(number.bitPattern, radix: 16))
                case .text(let bytes): parts.append(String(validating: bytes, as: UTF8.self) ?? "bytes:" + bytes.base64EncodedString())
                case .blob(let bytes): parts.append(bytes.base64EncodedString())
                }
            }
        }
        return parts.joined(separator: "|")
    }

    /// The cloudIDs of an entity no profile describes: named by the store, the entity and the record.
    func assignStoreCloudIDs(_ plan: ModelLayout.EntityPlan, in context: RepairContext) throws {
        let db = context.db
        guard let field = plan.fields.first(where: { $0.path == [CompiledEntity.cloudIDAttribute] && $0.kind == .string }) else { return }
        let column = field.column
        let rows = context.rows(of: plan)
        // Every cloudID the restore inserted was well-formed and used once: none needs one.
        if try context.inserted?.cloudIDsMayNeedRepair(in: column, of: plan, log: context.log, db: db, rows: rows) == false {
            return
        }
        let key = CoreDataSQL.keyColumn
        // The records that need one are chosen before any is given one (a new ID changes the
        // groups the choice reads), and kept in a temporary table rather than in memory: after a
        // migration every record of the entity can need one, millions of them.
        try db.execute(sql: "DROP TABLE IF EXISTS temp.questbak_needs_cloud_id")
        // Keyed by the record's key, so reading them in order walks the table without a sort.
        try db.execute(sql: "CREATE TEMP TABLE questbak_needs_cloud_id (pk INTEGER PRIMARY KEY)")
        try db.execute(
            sql: """
                INSERT INTO temp.questbak_needs_cloud_id (pk)
                SELECT \(key) AS pk \(rows) AND (\(column) IS NULL OR NOT \(DeterministicID.wellFormedSQL(column))
                   OR \(key) NOT IN (SELECT min(\(key)) \(rows) GROUP BY \(column)))
                """)
        let needy = try Int64.fetchCursor(db, sql: "SELECT pk FROM temp.questbak_needs_cloud_id ORDER BY pk")
        while let primaryKey = try needy.next() {
            let id = DeterministicID.uuid(name: "\(context.storeUUID)/\(plan.name)/\(primaryKey)").uuidString
            let old = try ExactSQL.fetchAll(db, sql: "SELECT \(column) FROM \(plan.table) WHERE \(key) = ?", [.integer(primaryKey)])
            try context.log.record(
                RepairEntry(
                    rule: .cloudID, kind: context.cloudIDKind, entity: plan.name, primaryKey: primaryKey, cloudID: id,
                    field: CompiledEntity.cloudIDAttribute,
                    old: .value(old.first?.first?.reportable ?? .null), new: .value(.string(id))))
            try db.execute(sql: "UPDATE \(plan.table) SET \(column) = ? WHERE \(key) = ?", arguments: [id, primaryKey])
        }
        try db.execute(sql: "DROP TABLE temp.questbak_needs_cloud_id")
    }
}
