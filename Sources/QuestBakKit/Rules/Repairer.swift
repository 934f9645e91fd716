import Foundation
import GRDB

public enum RepairError: Error, Equatable, LocalizedError {
    case noDefault(entity: String, property: String)

    public var errorDescription: String? {
        switch self {
        case .noDefault(let entity, let property):
            return "\(entity).\(property) is missing in some records and no schema gives it a default"
        }
    }
}

/// The validation and repair passes, run as SQL on a store being written (inside its
/// transaction), so the work needs memory for one record or one duplicate group at a time,
/// not for the whole store. Each pass is driven by the schema value alone.
struct Repairer {
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
    let path: String

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

    func run() throws {
        try repairOrphans()
        FaultPoint.reached("orphans repaired")
        for entity in entitiesParentsFirst where entity.identity.singletonCloudID == nil {
            try removeDuplicates(of: entity)
            FaultPoint.reached("duplicates of \(entity.name) removed")
        }
        for entity in schema.entities where entity.identity.singletonCloudID != nil {
            try mergeSingleton(entity)
        }
        try fillDefaults()
        FaultPoint.reached("defaults filled")
        for entity in entitiesParentsFirst where entity.cloudID != nil {
            try assignCloudIDs(entity)
            FaultPoint.reached("cloudIDs of \(entity.name) assigned")
        }
        try finalizeLog()
    }

    // MARK: Orphans

    /// A relationship to a record that does not exist becomes nil, and is reported; the record
    /// itself is kept.
    func repairOrphans() throws {
        for entity in schema.entities {
            let layout = TableLayout(entity: entity)
            for relationship in entity.toOneRelationships {
                guard let column = layout.column(for: relationship.name)?.name,
                    let parent = schema.entity(named: relationship.destination)
                else { continue }
                let parentTable = TableLayout(entity: parent).tableName
                let condition = "\(column) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(parentTable) p WHERE p.Z_PK = \(layout.tableName).\(column))"
                let orphans = try Row.fetchAll(db, sql: "SELECT Z_PK, \(column) FROM \(layout.tableName) WHERE \(condition) ORDER BY Z_PK")
                for row in orphans {
                    try log.record(RepairEntry(
                        rule: .orphan, kind: .repair, entity: entity.name, primaryKey: row[0], cloudID: nil,
                        field: relationship.name, old: .value(.integer(row[1])), new: .value(.null)))
                }
                if !orphans.isEmpty { try db.execute(sql: "UPDATE \(layout.tableName) SET \(column) = NULL WHERE \(condition)") }
            }
        }
    }

    // MARK: Duplicates

    /// Records with the same natural key are one record stored twice (sync, reinstall), unless
    /// both carry well-formed cloudIDs that differ: then CloudKit knows them as two. The lowest
    /// `Z_PK` of each group is kept; children of the others are re-pointed to it; each dropped
    /// record is reported in full.
    func removeDuplicates(of entity: Entity) throws {
        let key = entity.identity.naturalKey
        guard !key.isEmpty else { return }
        let layout = TableLayout(entity: entity)
        let keyColumns = key.compactMap { layout.column(for: $0)?.name }
        guard keyColumns.count == key.count else { return }
        let cloudColumn = layout.column(for: Entity.cloudIDAttribute)?.name
        try resetPairs()
        // A key with a missing part proves nothing about identity: such records are never merged.
        let complete = keyColumns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
        let sql = """
            SELECT Z_PK, \(cloudColumn ?? "NULL"), \(keyColumns.joined(separator: ", ")) FROM \(layout.tableName)
            WHERE \(complete) ORDER BY \(keyColumns.joined(separator: ", ")), Z_PK
            """
        var group = DuplicateGroup()
        let insert = try db.makeStatement(sql: "INSERT INTO temp.questbak_pairs (duplicate, keeper, carried) VALUES (?, ?, ?)")
        try ExactSQL.forEachRow(db, sql: sql) { row in
            let primaryKey = row.integer(0) ?? 0
            let cloudID = row[1].validText.flatMap { DeterministicID.isWellFormed($0) ? $0 : nil }
            let rowKey = (0..<keyColumns.count).map { row[2 + $0] }
            // Rows arrive in SQLite's order of the key, so one key's rows are adjacent; they are
            // one key when SQLite calls them equal: text and BLOBs byte for byte, numbers by value.
            if !StoredValue.sameKey(rowKey, group.key) { group = DuplicateGroup(key: rowKey) }
            if let match = group.keeper(for: primaryKey, cloudID: cloudID) {
                try insert.execute(arguments: [primaryKey, match.keeper, match.carried])
            }
        }
        try applyDuplicatePairs(of: entity)
    }

    /// An empty scratch table of (duplicate, keeper) pairs, in SQLite's temp schema.
    private func resetPairs() throws {
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_pairs (duplicate INTEGER PRIMARY KEY, keeper INTEGER, carried TEXT)")
        try db.execute(sql: "DELETE FROM temp.questbak_pairs")
    }

    private func applyDuplicatePairs(of entity: Entity) throws {
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
            try log.record(RepairEntry(
                rule: .dedup, kind: .repair, entity: entity.name, primaryKey: duplicate, cloudID: cloudID,
                field: nil, old: .record(dropped), new: .value(.integer(keeper))))
            for child in children {
                let moved = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM \(child.layout.tableName) WHERE \(child.column) = ? ORDER BY Z_PK", arguments: [duplicate])
                for childKey in moved {
                    try log.record(RepairEntry(
                        rule: .repoint, kind: .repair, entity: child.entity.name, primaryKey: childKey, cloudID: nil,
                        field: child.relationship, old: .value(.integer(duplicate)), new: .value(.integer(keeper))))
                }
                try db.execute(sql: "UPDATE \(child.layout.tableName) SET \(child.column) = ? WHERE \(child.column) = ?", arguments: [keeper, duplicate])
            }
            try db.execute(sql: "DELETE FROM \(layout.tableName) WHERE Z_PK = ?", arguments: [duplicate])
            if let carried = pair[2] as String?, let column = layout.column(for: Entity.cloudIDAttribute)?.name {
                let previous = try String.fetchOne(db, sql: "SELECT \(column) FROM \(layout.tableName) WHERE Z_PK = ?", arguments: [keeper])
                try log.record(RepairEntry(
                    rule: .merge, kind: .repair, entity: entity.name, primaryKey: keeper, cloudID: carried,
                    field: Entity.cloudIDAttribute, old: .value(previous.map { .string($0) } ?? .null), new: .value(.string(carried))))
                try db.execute(sql: "UPDATE \(layout.tableName) SET \(column) = ? WHERE Z_PK = ?", arguments: [carried, keeper])
            }
        }
    }

    /// A singleton's extra records are merged into the lowest `Z_PK` by the schema's merge rules
    /// (max XP and streak, latest play date, earliest creation), then removed.
    func mergeSingleton(_ entity: Entity) throws {
        let layout = TableLayout(entity: entity)
        let keys = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM \(layout.tableName) ORDER BY Z_PK")
        guard let keeper = keys.first, keys.count > 1 else { return }
        for (property, rule) in entity.identity.merge.sorted(by: { $0.key < $1.key }) {
            guard let column = layout.column(for: property)?.name, let attribute = entity.attribute(named: property) else { continue }
            let aggregate = rule == .maximum ? "max" : "min"
            let merged = try storedValue("SELECT \(aggregate)(\(column)) FROM \(layout.tableName)", [], entity: entity, primaryKey: keeper, property: property, kind: attribute.kind)
            let current = try storedValue("SELECT \(column) FROM \(layout.tableName) WHERE Z_PK = ?", [.integer(keeper)], entity: entity, primaryKey: keeper, property: property, kind: attribute.kind)
            if merged != current {
                try log.record(RepairEntry(
                    rule: .merge, kind: .repair, entity: entity.name, primaryKey: keeper, cloudID: nil,
                    field: property, old: .value(current), new: .value(merged)))
                try ExactSQL.execute(db, sql: "UPDATE \(layout.tableName) SET \(column) = ? WHERE Z_PK = ?", [ValueCoding.encode(merged), .integer(keeper)])
            }
        }
        try resetPairs()
        for duplicate in keys.dropFirst() {
            try db.execute(sql: "INSERT INTO temp.questbak_pairs (duplicate, keeper) VALUES (?, ?)", arguments: [duplicate, keeper])
        }
        try applyDuplicatePairs(of: entity)
    }

    // MARK: Defaults

    func defaultValue(for attribute: Attribute, in entity: Entity) throws -> Value? {
        let declared = attribute.defaultValue
            ?? defaultsSchema.entity(named: entity.name)?.attribute(named: attribute.name)?.defaultValue
        switch declared {
        case .value(let value)?: return value
        case .now?: return .date(now)
        case .newUUIDString?: return nil  // cloudIDs have a pass of their own
        case nil: throw RepairError.noDefault(entity: entity.name, property: attribute.name)
        }
    }

    /// A missing non-optional value gets its property-level default.
    func fillDefaults() throws {
        for entity in schema.entities {
            let layout = TableLayout(entity: entity)
            for attribute in entity.attributes where !attribute.isOptional && attribute.name != Entity.cloudIDAttribute {
                guard let column = layout.column(for: attribute.name)?.name else { continue }
                let missing = try Int64.fetchAll(db, sql: "SELECT Z_PK FROM \(layout.tableName) WHERE \(column) IS NULL ORDER BY Z_PK")
                guard !missing.isEmpty, let value = try defaultValue(for: attribute, in: entity) else { continue }
                for primaryKey in missing {
                    try log.record(RepairEntry(
                        rule: .defaultFill, kind: .repair, entity: entity.name, primaryKey: primaryKey, cloudID: nil,
                        field: attribute.name, old: .value(.null), new: .value(value)))
                }
                try ExactSQL.execute(db, sql: "UPDATE \(layout.tableName) SET \(column) = ? WHERE \(column) IS NULL", [ValueCoding.encode(value)])
            }
        }
    }

    // MARK: cloudIDs

    /// Every record ends with its own well-formed cloudID: missing, empty, malformed and
    /// repeated ones (all but the lowest `Z_PK` keep theirs) are replaced by a UUIDv5 of the
    /// entity and the record's natural key, so restoring one backup on two devices gives the same
    /// IDs; a singleton gets its pinned sentinel.
    func assignCloudIDs(_ entity: Entity) throws {
        let layout = TableLayout(entity: entity)
        guard let cloudColumn = layout.column(for: Entity.cloudIDAttribute)?.name else { return }
        let table = layout.tableName
        if let sentinel = entity.identity.singletonCloudID {
            let sql = "SELECT Z_PK, \(cloudColumn) FROM \(table) WHERE \(cloudColumn) IS NOT ? ORDER BY Z_PK"
            for row in try ExactSQL.fetchAll(db, sql: sql, [.text(Data(sentinel.utf8))]) {
                guard case .integer(let primaryKey) = row[0] else { continue }
                try log.record(RepairEntry(
                    rule: .cloudID, kind: cloudIDKind, entity: entity.name, primaryKey: primaryKey,
                    cloudID: sentinel, field: Entity.cloudIDAttribute, old: .value(row[1].reportable), new: .value(.string(sentinel))))
            }
            try db.execute(sql: "UPDATE \(table) SET \(cloudColumn) = ?", arguments: [sentinel])
            return
        }
        // Most stores need nothing: every cloudID well-formed and used once. One query says so.
        let needy = try Int.fetchOne(db, sql: """
            SELECT count(*) FROM \(table) WHERE \(cloudColumn) IS NULL OR NOT \(DeterministicID.wellFormedSQL(cloudColumn))
               OR \(cloudColumn) IN (SELECT \(cloudColumn) FROM \(table) GROUP BY \(cloudColumn) HAVING count(*) > 1)
            """) ?? 0
        guard needy > 0 else { return }
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_ids (id TEXT PRIMARY KEY)")
        try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS questbak_new_ids (pk INTEGER PRIMARY KEY, id TEXT)")
        try db.execute(sql: "DELETE FROM temp.questbak_ids")
        try db.execute(sql: "DELETE FROM temp.questbak_new_ids")
        // The IDs that stay: well-formed, first occurrence. Generated ones must avoid them.
        let keep = try db.makeStatement(sql: "INSERT OR IGNORE INTO temp.questbak_ids (id) VALUES (?)")
        let firstOccurrences = "SELECT \(cloudColumn) FROM \(table) WHERE \(cloudColumn) IS NOT NULL GROUP BY \(cloudColumn)"
        try ExactSQL.forEachRow(db, sql: firstOccurrences) { row in
            if let id = row[0].validText, DeterministicID.isWellFormed(id) { try keep.execute(arguments: [id]) }
        }
        let key = entity.identity.naturalKey
        let keyColumns = key.compactMap { layout.column(for: $0)?.name }
        let selectedKey = keyColumns.isEmpty ? "" : ", " + keyColumns.map { "t.\($0)" }.joined(separator: ", ")
        let sql = """
            SELECT t.Z_PK, t.\(cloudColumn), m.first\(selectedKey) FROM \(table) t
            LEFT JOIN (SELECT \(cloudColumn) AS id, min(Z_PK) AS first FROM \(table) GROUP BY \(cloudColumn)) m ON m.id = t.\(cloudColumn)
            ORDER BY t.Z_PK
            """
        let claim = try db.makeStatement(sql: "INSERT OR IGNORE INTO temp.questbak_ids (id) VALUES (?)")
        let assign = try db.makeStatement(sql: "INSERT INTO temp.questbak_new_ids (pk, id) VALUES (?, ?)")
        try ExactSQL.forEachRow(db, sql: sql) { row in
            let primaryKey = row.integer(0) ?? 0
            let current = row[1]
            if let id = current.validText, DeterministicID.isWellFormed(id), row.integer(2) == primaryKey { return }
            var name = try identityName(entity, primaryKey: primaryKey, keyValues: (0..<keyColumns.count).map { row[3 + $0] })
            var candidate: String
            var attempt = 0
            repeat {
                candidate = randomIDs ? UUID().uuidString : DeterministicID.uuid(name: name).uuidString
                attempt += 1
                name += "#\(attempt)"
                try claim.execute(arguments: [candidate])
            } while db.changesCount == 0
            try assign.execute(arguments: [primaryKey, candidate])
            try log.record(RepairEntry(
                rule: .cloudID, kind: cloudIDKind, entity: entity.name, primaryKey: primaryKey, cloudID: candidate, field: Entity.cloudIDAttribute,
                old: .value(current.reportable), new: .value(.string(candidate))))
        }
        try db.execute(sql: """
            UPDATE \(table) SET \(cloudColumn) = (SELECT id FROM temp.questbak_new_ids n WHERE n.pk = \(table).Z_PK)
            WHERE Z_PK IN (SELECT pk FROM temp.questbak_new_ids)
            """)
    }

    /// The text a deterministic cloudID is derived from: the entity and its natural key, with a
    /// parent named by its (already final) cloudID rather than its device-local `Z_PK`.
    private func identityName(_ entity: Entity, primaryKey: Int64, keyValues: [StoredValue]) throws -> String {
        guard !keyValues.isEmpty else { return "\(entity.name)|pk:\(primaryKey)" }
        var parts = [entity.name]
        for (property, stored) in zip(entity.identity.naturalKey, keyValues) {
            if let relationship = entity.relationship(named: property), let parent = schema.entity(named: relationship.destination) {
                let parentLayout = TableLayout(entity: parent)
                let parentCloud = try parentLayout.column(for: Entity.cloudIDAttribute).flatMap { column in
                    try ExactSQL.fetchAll(db, sql: "SELECT \(column.name) FROM \(parentLayout.tableName) WHERE Z_PK = ?", [stored]).first?.first?.validText
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

    // MARK: Report

    /// Entries were logged before cloudIDs were final; give each surviving record its final one.
    func finalizeLog() throws {
        for entity in schema.entities {
            let layout = TableLayout(entity: entity)
            guard let cloudColumn = layout.column(for: Entity.cloudIDAttribute)?.name else { continue }
            let lookup = try db.makeStatement(sql: "SELECT \(cloudColumn) FROM \(layout.tableName) WHERE Z_PK = ?")
            try log.resolveCloudIDs(entity: entity.name) { try String.fetchOne(lookup, arguments: [$0]) }
        }
    }

    /// The record's stored values by property, for reporting a dropped duplicate in full.
    private func recordValues(_ entity: Entity, primaryKey: Int64) throws -> [String: Value] {
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
    private func storedValue(
        _ sql: String, _ arguments: [StoredValue], entity: Entity, primaryKey: Int64, property: String, kind: AttributeKind
    ) throws -> Value {
        let stored = try ExactSQL.fetchAll(db, sql: sql, arguments).first?.first ?? .null
        do {
            return try ValueCoding.decode(stored, as: kind)
        } catch let failure as ValueCoding.Failure {
            throw StoreError.undecodableValue(path: path, entity: entity.name, primaryKey: primaryKey, property: property, reason: failure.reason)
        }
    }
}
