import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// A relationship that names a record the store does not have becomes nil (a to-one) or is left
/// out (a link of a many-to-many join table), and is reported; the record that held it is kept.
/// A relationship may name a record of its destination or of any sub-entity of it.
struct OrphanRule: RepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.orphan, .changesField)] }

    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> {
        // To-ones, and the many-to-manys (both sides to-many) whose links a join table keeps.
        Set(
            entity.relationships.filter { relationship in
                guard let destination = version.entity(named: relationship.destination) else { return false }
                return !relationship.isToMany || (relationship.inverse.flatMap(destination.relationship(named:))?.isToMany ?? false)
            }.map(\.name))
    }

    func apply(in context: RepairContext) throws -> [String] {
        let db = context.db
        for plan in context.entities {
            for (index, relationship) in plan.toOne.enumerated() {
                guard let exists = context.existsSQL("o.\(relationship.column)", in: relationship.destination) else { continue }
                // Every key the restore's inserts named is a key they inserted where the query
                // looks (`InsertedValues`): it could find no orphan.
                if let inserted = context.inserted, let table = context.layout.entity(named: relationship.destination)?.table,
                    !inserted.toOneMayNameNothing(
                        index, of: plan, destinations: context.numbers(ofSubtree: relationship.destination), table: table,
                        log: context.log)
                {
                    continue
                }
                let condition = "o.\(CoreDataSQL.entityColumn) = \(plan.number) AND o.\(relationship.column) IS NOT NULL AND NOT \(exists)"
                let orphans = try Row.fetchAll(
                    db,
                    sql:
                        "SELECT o.\(CoreDataSQL.keyColumn), o.\(relationship.column) FROM \(plan.table) o WHERE \(condition) ORDER BY o.\(CoreDataSQL.keyColumn)"
                )
                try Self.report(orphans, of: plan.name, field: relationship.name, in: context)
                if !orphans.isEmpty {
                    try db.execute(
                        sql:
                            "UPDATE \(plan.table) SET \(relationship.column) = NULL WHERE \(CoreDataSQL.keyColumn) IN (SELECT o.\(CoreDataSQL.keyColumn) FROM \(plan.table) o WHERE \(condition))"
                    )
                }
            }
            for link in plan.toMany {
                guard case .joinTable(let join, let source, let destination) = link.storage,
                    let sourceExists = context.existsSQL("o.\(source)", in: plan.name),
                    let destinationExists = context.existsSQL("o.\(destination)", in: link.destination)
                else { continue }
                let condition = "NOT \(sourceExists) OR NOT \(destinationExists)"
                let orphans = try Row.fetchAll(
                    db, sql: "SELECT o.\(source), o.\(destination) FROM \(join) o WHERE \(condition) ORDER BY 1, 2")
                try Self.report(orphans, of: plan.name, field: link.name, in: context)
                if !orphans.isEmpty {
                    try db.execute(sql: "DELETE FROM \(join) WHERE rowid IN (SELECT o.rowid FROM \(join) o WHERE \(condition))")
                }
            }
        }
        FaultPoint.reached("orphans repaired")
        return []
    }

    /// One entry per orphan: a row of (the record's key, the key it named that names nothing).
    private static func report(_ orphans: [Row], of entity: String, field: String, in context: RepairContext) throws {
        for row in orphans {
            try context.log.record(
                RepairEntry(
                    rule: .orphan, kind: .repair, entity: entity, primaryKey: row[0], cloudID: nil, field: field,
                    old: .value(.integer(row[1])), new: .value(.null)))
        }
    }
}
