import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// What every repair rule works on: a store being written (inside its transaction), the schemas
/// that drive the rules, the inputs that make a repair reproducible, and the log every change
/// goes to. Rules run as SQL, so the work needs memory for one record or one duplicate group at
/// a time, not for the whole store.
struct RepairContext {
    let db: Database
    let schema: Schema
    /// Where defaults the target schema lacks come from (the newest schema knows them all).
    let defaultsSchema: Schema
    /// What `Date.now` defaults resolve to, in seconds since 2001: the archive's creation time
    /// or `--now`, never the clock, so an import is reproducible.
    let now: Double
    let randomIDs: Bool
    /// `.migration` when the source had no cloudIDs of its own (V1 going to V2): then every
    /// cloudID given is part of the migration, not a repair of damage.
    let cloudIDKind: RepairEntry.Kind
    let log: RepairLog
    /// The store or archive being repaired, for error messages.
    let path: String
    /// Records of one natural key whose cloudIDs differ stay distinct (the behaviour before the
    /// identity rule): off by default, since sync and reinstalls copy records under fresh UUIDs.
    var keepDistinctIDs = false
    /// cloudIDs a lightweight migration gave every record of an entity (Core Data binds one
    /// `UUID().uuidString` for all): they identify no record, so each record gets the cloudID made
    /// from its natural key, as a record without one does.
    var sharedCloudIDs: Set<String> = []
}

// MARK: Shared by the rules

extension RepairContext {
    /// Entities with parents before children, so keys that mention a parent see its final state.
    var entitiesParentsFirst: [Entity] {
        var ordered: [Entity] = []
        var placed: Set<String> = []
        while ordered.count < schema.entities.count {
            let before = ordered.count
            for entity in schema.entities where !placed.contains(entity.name) {
                let parents = entity.toOneRelationships.map(\.destination).filter { $0 != entity.name }
                if parents.allSatisfy(placed.contains) {
                    ordered.append(entity)
                    placed.insert(entity.name)
                }
            }
            if ordered.count == before {  // a cycle: keep the remaining ones alphabetical
                ordered += schema.entities.filter { !placed.contains($0.name) }
                break
            }
        }
        return ordered
    }

    /// An empty scratch table of (duplicate, keeper, carried cloudID) pairs, in SQLite's temp schema.
    func resetPairs() throws {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_pairs (duplicate INTEGER PRIMARY KEY, keeper INTEGER, carried TEXT)")
        try db.execute(sql: "DELETE FROM temp.questbak_pairs")
    }

    /// Removes every duplicate in `temp.questbak_pairs` (reported in full, `dedup`), after
    /// pointing its children at its keeper (`repoint`) and giving the keeper the cloudID the
    /// duplicate carried over, if any (`merge`).
    func applyDuplicatePairs(of entity: Entity) throws {
        let pairs = try Row.fetchAll(db, sql: "SELECT duplicate, keeper, carried FROM temp.questbak_pairs ORDER BY duplicate")
        guard !pairs.isEmpty else { return }
        let layout = TableLayout(entity: entity)
        let children: [(entity: Entity, layout: TableLayout, column: String, relationship: String)] = schema.entities.flatMap { child in
            child.toOneRelationships.filter { $0.destination == entity.name }.compactMap { relationship in
                let childLayout = TableLayout(entity: child)
                return childLayout.column(for: relationship.name).map { (child, childLayout, $0.name, relationship.name) }
            }
        }
        for pair in pairs {
            let duplicate: Int64 = pair[0]
            let keeper: Int64 = pair[1]
            let dropped = try recordValues(entity, primaryKey: duplicate)
            var cloudID: String?
            if case .string(let text)? = dropped[Entity.cloudIDAttribute] { cloudID = text }
            try log.record(
                RepairEntry(
                    rule: .dedup, kind: .repair, entity: entity.name, primaryKey: duplicate, cloudID: cloudID,
                    field: nil, old: .record(dropped), new: .value(.integer(keeper))))
            for child in children {
                let moved = try Int64.fetchAll(
                    db, sql: "SELECT Z_PK FROM \(child.layout.tableName) WHERE \(child.column) = ? ORDER BY Z_PK", arguments: [duplicate])
                for childKey in moved {
                    try log.record(
                        RepairEntry(
                            rule: .repoint, kind: .repair, entity: child.entity.name, primaryKey: childKey, cloudID: nil,
                            field: child.relationship, old: .value(.integer(duplicate)), new: .value(.integer(keeper))))
                }
                try db.execute(
                    sql: "UPDATE \(child.layout.tableName) SET \(child.column) = ? WHERE \(child.column) = ?",
                    arguments: [keeper, duplicate])
            }
            try db.execute(sql: "DELETE FROM \(layout.tableName) WHERE Z_PK = ?", arguments: [duplicate])
            if let carried = pair[2] as String?, let column = layout.column(for: Entity.cloudIDAttribute)?.name {
                let previous = try String.fetchOne(db, sql: "SELECT \(column) FROM \(layout.tableName) WHERE Z_PK = ?", arguments: [keeper])
                try log.record(
                    RepairEntry(
                        rule: .merge, kind: .repair, entity: entity.name, primaryKey: keeper, cloudID: carried,
                        field: Entity.cloudIDAttribute, old: .value(previous.map { .string($0) } ?? .null), new: .value(.string(carried))))
                try db.execute(sql: "UPDATE \(layout.tableName) SET \(column) = ? WHERE Z_PK = ?", arguments: [carried, keeper])
            }
        }
    }

    /// The record's stored values by property, for reporting a dropped duplicate in full.
    func recordValues(_ entity: Entity, primaryKey: Int64) throws -> [String: Value] {
        var values: [String: Value] = [:]
        let plan = try RecordColumns(db, entity: entity, entityNumber: nil, where: "Z_PK = ?")
        try plan.forEachRow(db, [.integer(primaryKey)]) { row in
            for property in plan.properties {
                values[property.name] = try plan.value(row, property, entity: entity, primaryKey: primaryKey, path: path)
            }
        }
        values[RecordJSON.primaryKeyKey] = .integer(primaryKey)
        return values
    }

    /// The one value a query returns, decoded as `kind`.
    func storedValue(
        _ sql: String, _ arguments: [StoredValue], entity: Entity, primaryKey: Int64, property: String, kind: AttributeKind
    ) throws -> Value {
        let stored = try ExactSQL.fetchAll(db, sql: sql, arguments).first?.first ?? .null
        do {
            return try ValueCoding.decode(stored, as: kind)
        } catch let failure as ValueCoding.Failure {
            throw StoreError.undecodableValue(
                path: path, entity: entity.name, primaryKey: primaryKey, property: property, reason: failure.reason)
        }
    }

    /// Entries were logged before cloudIDs were final; give each surviving record its final one.
    func finalizeLog() throws {
        for entity in schema.entities {
            let layout = TableLayout(entity: entity)
            guard let cloudColumn = layout.column(for: Entity.cloudIDAttribute)?.name else { continue }
            let lookup = try db.makeStatement(sql: "SELECT \(cloudColumn) FROM \(layout.tableName) WHERE Z_PK = ?")
            try log.resolveCloudIDs(entity: entity.name) { try String.fetchOne(lookup, arguments: [$0]) }
        }
    }
}
