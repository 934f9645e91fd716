import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Wherever an entity has a `cloudID` text attribute, every record ends with its own well-formed
/// one: missing, malformed and repeated ones (all but the lowest `Z_PK` keep theirs) are replaced
/// by a UUIDv5 of the store, the entity and the record, so one backup restored on two devices
/// gives the same IDs. A lightweight migration fills a new cloudID column with one shared value
/// (SwiftData archives its default once), which this undoes.
struct ModelCloudIDRule: ModelRepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.cloudID, .assignsCloudID)] }
    var phase: ModelRepairPhase { .repairing }

    func apply(in context: ModelRepairContext) throws -> [String] {
        let db = context.db
        for plan in context.layout.entities {
            guard let field = plan.fields.first(where: { $0.path == [Entity.cloudIDAttribute] && $0.kind == .string }) else { continue }
            let column = field.column
            let rows = "FROM \(plan.table) WHERE Z_ENT = \(plan.number)"
            let needy = try Row.fetchAll(
                db,
                sql: """
                    SELECT Z_PK, \(column) \(rows) AND (\(column) IS NULL OR NOT \(DeterministicID.wellFormedSQL(column))
                       OR Z_PK NOT IN (SELECT min(Z_PK) \(rows) GROUP BY \(column)))
                    ORDER BY Z_PK
                    """)
            for row in needy {
                let primaryKey: Int64 = row[0]
                let id = DeterministicID.uuid(name: "\(context.storeUUID)/\(plan.name)/\(primaryKey)").uuidString
                let old = try ExactSQL.fetchAll(db, sql: "SELECT \(column) FROM \(plan.table) WHERE Z_PK = ?", [.integer(primaryKey)])
                try context.log.record(
                    RepairEntry(
                        rule: .cloudID, kind: context.cloudIDKind, entity: plan.name, primaryKey: primaryKey, cloudID: id,
                        field: Entity.cloudIDAttribute,
                        old: .value(old.first?.first?.reportable ?? .null), new: .value(.string(id))))
                try db.execute(sql: "UPDATE \(plan.table) SET \(column) = ? WHERE Z_PK = ?", arguments: [id, primaryKey])
            }
        }
        return []
    }
}
