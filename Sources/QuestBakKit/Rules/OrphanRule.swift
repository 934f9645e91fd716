import CoreDataStore
import GRDB
import QuestBakArchive

/// A relationship to a record that does not exist becomes nil, and is reported; the record
/// itself is kept.
struct OrphanRule: RepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.orphan, .changesField)] }

    func fields(of entity: Entity, in schema: Schema) -> Set<String> {
        Set(entity.toOneRelationships.filter { schema.entity(named: $0.destination) != nil }.map(\.name))
    }

    func apply(in context: RepairContext) throws {
        let (db, schema, log) = (context.db, context.schema, context.log)
        for entity in schema.entities {
            let layout = TableLayout(entity: entity)
            for relationship in entity.toOneRelationships {
                guard let column = layout.column(for: relationship.name)?.name,
                    let parent = schema.entity(named: relationship.destination)
                else { continue }
                let parentTable = TableLayout(entity: parent).tableName
                let condition =
                    "\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(parentTable) p WHERE p.Z_PK = \(layout.tableName).\(column))"
                let orphans = try Row.fetchAll(db, sql: "SELECT Z_PK, \(column) FROM \(layout.tableName) WHERE \(condition) ORDER BY Z_PK")
                for row in orphans {
                    try log.record(
                        RepairEntry(
                            rule: .orphan, kind: .repair, entity: entity.name, primaryKey: row[0], cloudID: nil,
                            field: relationship.name, old: .value(.integer(row[1])), new: .value(.null)))
                }
                if !orphans.isEmpty { try db.execute(sql: "UPDATE \(layout.tableName) SET \(column) = NULL WHERE \(condition)") }
            }
        }
        FaultPoint.reached("orphans repaired")
    }
}
