import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Records that break one of the model's uniqueness constraints (`#Unique`,
/// `@Attribute(.unique)`, `NSUniqueTuples`): the store's unique index refuses the later one as it
/// is restored. It is left out and reported in full, and every relationship and link that named
/// it is pointed at the record kept (the one restored first: the lower `_pk`), so nothing that
/// referred to either record is lost. It acts as records are restored (`keeper`, `drop`), so it
/// runs with or without `--validate`: a duplicate cannot be stored as it was. (Records that share
/// a profile's natural key, which no index refuses, are `DuplicateRule`'s, after the restore.)
struct UniqueConstraintRule: RepairRule {
    var effects: [RepairRuleEffect] { [RepairRuleEffect(.dedup, .removesRecord), RepairRuleEffect(.repoint, .repointsRelationship)] }
    var phase: RepairPhase { .restoring }

    func fields(of entity: CompiledEntity, in version: ModelVersion) -> Set<String> {
        Set(
            entity.relationships.filter { version.entity(named: $0.destination)?.uniqueTuples.isEmpty == false }.map(\.name))
    }

    /// Once every record is in: `repoint`.
    func apply(in context: RepairContext) throws -> [String] {
        try Self.prepare(context.db)  // (empty when the restore did not prepare it: nothing was dropped)
        try Self.repoint(context)
        return []
    }

    static func prepare(_ db: Database) throws {
        try db.execute(
            sql:
                "CREATE TEMP TABLE IF NOT EXISTS questbak_duplicates (tableName TEXT, duplicate INTEGER, keeper INTEGER, PRIMARY KEY (tableName, duplicate))"
        )
    }

    /// The record already restored that `row` duplicates by a uniqueness constraint, if any.
    static func keeper(
        of row: ModelMemberEncoding.Row, plan: ModelLayout.EntityPlan, context: RepairContext
    ) throws -> (
        keeper: Int64, constraint: [String]
    )? {
        var tuples: [[String]] = []
        var entity = context.model.entity(named: plan.name)
        var seen: Set<String> = []
        while let current = entity, seen.insert(current.name).inserted {
            tuples += current.uniqueTuples
            entity = current.superentity.flatMap { context.model.entity(named: $0) }
        }
        for tuple in tuples {
            var conditions: [String] = []
            var arguments: [StoredValue] = []
            for name in tuple {
                if let index = plan.fields.firstIndex(where: { $0.path == [name] }) {
                    conditions.append("\(plan.fields[index].column) = ?")
                    arguments.append(row.values[index])
                } else if let index = plan.toOne.firstIndex(where: { $0.name == name }) {
                    conditions.append("\(plan.toOne[index].column) = ?")
                    arguments.append(row.values[plan.fields.count + index])
                }
            }
            guard conditions.count == tuple.count else { continue }
            let sql =
                "SELECT \(CoreDataSQL.keyColumn) FROM \(plan.table) WHERE \(conditions.joined(separator: " AND ")) ORDER BY \(CoreDataSQL.keyColumn) LIMIT 1"
            if let found = try ExactSQL.fetchAll(context.db, sql: sql, arguments).first?.first, case .integer(let keeper) = found {
                return (keeper, tuple)
            }
        }
        return nil
    }

    /// Leaves the duplicate out (its links are restored under its own key and moved with it).
    static func drop(_ row: ModelMemberEncoding.Row, keeper: Int64, plan: ModelLayout.EntityPlan, context: RepairContext) throws {
        try context.log.record(
            RepairEntry(
                rule: .dedup, kind: .repair, entity: plan.name, primaryKey: row.primaryKey, cloudID: nil, field: nil,
                old: .record(Self.reportable(row, plan: plan)), new: .value(.integer(keeper))))
        try context.db.execute(
            sql: "INSERT OR REPLACE INTO temp.questbak_duplicates VALUES (?, ?, ?)", arguments: [plan.table, row.primaryKey, keeper])
    }

    /// Points every foreign key and link that names a dropped duplicate at its keeper; runs once
    /// every record is in, before the links kept on destination rows are set.
    static func repoint(_ context: RepairContext) throws {
        let db = context.db
        let pairs = try Row.fetchAll(db, sql: "SELECT tableName, duplicate, keeper FROM temp.questbak_duplicates ORDER BY 1, 2")
        for pair in pairs {
            let (table, duplicate, keeper): (String, Int64, Int64) = (pair[0], pair[1], pair[2])
            for plan in context.entities {
                for relationship in plan.toOne where context.layout.entity(named: relationship.destination)?.table == table {
                    let children = try Int64.fetchAll(
                        db,
                        sql:
                            "SELECT \(CoreDataSQL.keyColumn) FROM \(plan.table) WHERE \(CoreDataSQL.entityColumn) = \(plan.number) AND \(relationship.column) = ? ORDER BY \(CoreDataSQL.keyColumn)",
                        arguments: [duplicate])
                    for child in children {
                        try context.log.record(
                            RepairEntry(
                                rule: .repoint, kind: .repair, entity: plan.name, primaryKey: child, cloudID: nil, field: relationship.name,
                                old: .value(.integer(duplicate)), new: .value(.integer(keeper))))
                    }
                    try db.execute(
                        sql:
                            "UPDATE \(plan.table) SET \(relationship.column) = ? WHERE \(CoreDataSQL.entityColumn) = \(plan.number) AND \(relationship.column) = ?",
                        arguments: [keeper, duplicate])
                }
                for link in plan.toMany {
                    let destinationTable = context.layout.entity(named: link.destination)?.table
                    switch link.storage {
                    case .joinTable(let join, let source, let destination):
                        for (column, side) in [(source, plan.table), (destination, destinationTable)] where side == table {
                            let moved =
                                try Int.fetchOne(db, sql: "SELECT count(*) FROM \(join) WHERE \(column) = ?", arguments: [duplicate]) ?? 0
                            if moved > 0 {
                                try context.log.record(
                                    RepairEntry(
                                        rule: .repoint, kind: .repair, entity: plan.name, primaryKey: duplicate, cloudID: nil,
                                        field: link.name, old: .value(.integer(duplicate)), new: .value(.integer(keeper))))
                            }
                            // A link the keeper has already is one link, not two.
                            try db.execute(
                                sql: "UPDATE OR IGNORE \(join) SET \(column) = ? WHERE \(column) = ?", arguments: [keeper, duplicate])
                            try db.execute(sql: "DELETE FROM \(join) WHERE \(column) = ?", arguments: [duplicate])
                        }
                    case .destinationColumn(let linkTable, let linkColumn):
                        let scope = "tableName = ? AND columnName = ?"
                        if plan.table == table {
                            try db.execute(
                                sql: "UPDATE temp.questbak_links SET source = ? WHERE \(scope) AND source = ?",
                                arguments: [keeper, linkTable, linkColumn, duplicate])
                        }
                        if destinationTable == table {
                            try db.execute(
                                sql: "UPDATE temp.questbak_links SET target = ? WHERE \(scope) AND target = ?",
                                arguments: [keeper, linkTable, linkColumn, duplicate])
                        }
                    }
                }
            }
        }
    }

    /// A record's values by property (`profile.name` for a composite's element), for reporting a
    /// dropped duplicate in full.
    static func reportable(_ row: ModelMemberEncoding.Row, plan: ModelLayout.EntityPlan) -> [String: Value] {
        var values: [String: Value] = [RecordJSON.primaryKeyKey: .integer(row.primaryKey)]
        for (field, stored) in zip(plan.fields, row.values) {
            values[field.path.joined(separator: ".")] = (try? ValueCoding.decode(stored, as: field.kind)) ?? stored.reportable
        }
        for (relationship, stored) in zip(plan.toOne, row.values.dropFirst(plan.fields.count)) {
            values[relationship.name] = stored.reportable
        }
        return values
    }
}
