import Foundation
import GRDB

/// One row of an entity: its `Z_PK`, its `Z_OPT` and its stored properties by schema name. A
/// to-one relationship's value is the target's `Z_PK` as `.integer`, or `.null`.
package struct EntityRecord: Sendable, Equatable {
    public var primaryKey: Int64
    /// `Z_OPT`, the number of times Core Data saved the row (1 when first inserted); nil when the
    /// store holds NULL there.
    public var opt: Int64?
    public var values: [String: Value]

    public init(primaryKey: Int64, opt: Int64? = 1, values: [String: Value]) {
        self.primaryKey = primaryKey
        self.opt = opt
        self.values = values
    }

    public subscript(property: String) -> Value {
        get { values[property] ?? .null }
        set { values[property] = newValue }
    }
}

/// A `Z_PRIMARYKEY` row.
package struct EntityKey: Sendable, Equatable {
    public var number: Int64
    public var name: String
    public var superNumber: Int64
    public var maximumPrimaryKey: Int64
}

/// Reads Core Data's tables inside a snapshot's read transaction.
package enum StoreReader {
    public static func requireCoreDataSQL(_ db: Database, path: String) throws {
        let missing = try CoreDataSQL.requiredTables.filter { try !db.tableExists($0) }
        if !missing.isEmpty { throw StoreError.notACoreDataStore(path: path, missingTables: missing) }
    }

    public static func metadata(_ db: Database, path: String) throws -> StoreMetadata {
        try requireCoreDataSQL(db, path: path)
        guard let row = try ExactSQL.fetchAll(db, sql: CoreDataSQL.selectMetadata).first else {
            throw StoreError.unreadableMetadata(path: path, reason: "the table is empty")
        }
        guard case .blob(let plistData) = row[1] else {
            throw StoreError.unreadableMetadata(path: path, reason: "Z_PLIST is \(row[1].summary), not a BLOB")
        }
        // Z_UUID as stored, read exactly; NULL reads as "" (and is written back as NULL), not as
        // the plist's UUID.
        let uuid: String
        switch row[0] {
        case .null: uuid = ""
        case .text(let bytes):
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw StoreError.unreadableMetadata(path: path, reason: "Z_UUID is not UTF-8 text")
            }
            uuid = text
        case let other: throw StoreError.unreadableMetadata(path: path, reason: "Z_UUID is \(other.summary), not text")
        }
        do {
            return StoreMetadata(uuid: uuid, plist: try BinaryPropertyList.decode(plistData), originalBytes: plistData)
        } catch {
            throw StoreError.unreadableMetadata(path: path, reason: error.localizedDescription)
        }
    }

    public static func modelCache(_ db: Database) throws -> Data? {
        guard try db.tableExists(CoreDataSQL.modelCacheTable) else { return nil }
        return try Data.fetchOne(db, sql: CoreDataSQL.selectModelCache)
    }

    public static func entityKeys(_ db: Database) throws -> [EntityKey] {
        try Row.fetchAll(db, sql: CoreDataSQL.selectEntityKeys).map { row in
            EntityKey(
                number: row[CoreDataSQL.entityColumn] ?? 0, name: row[CoreDataSQL.nameColumn] ?? "",
                superNumber: row[CoreDataSQL.superColumn] ?? 0, maximumPrimaryKey: row[CoreDataSQL.maxColumn] ?? 0)
        }
    }

    /// The store's entity tables (bookkeeping and history excluded), in entity-number order.
    /// Sub-entities share their root's table, so each table appears once.
    public static func modelTables(_ db: Database) throws -> [(entity: EntityKey, table: String)] {
        let keys = try entityKeys(db)
        let byNumber = Dictionary(keys.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: Set<String> = []
        var tables: [(EntityKey, String)] = []
        for key in keys where CoreDataSQL.isModelEntity(number: key.number) {
            var root = key
            while root.superNumber != 0, let parent = byNumber[root.superNumber], parent.number != root.number { root = parent }
            let table = Entity.tableName(root.name)
            if seen.insert(table).inserted, try db.tableExists(table) { tables.append((root, table)) }
        }
        return tables
    }

    /// Everything in which the store's tables differ from `schema`; empty when they match.
    public static func differences(_ db: Database, from schema: Schema) throws -> [String] {
        var differences: [String] = []
        let keys = Dictionary(try entityKeys(db).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let tables = try ModelTables(schema: schema)
        for entity in schema.entities {
            guard let table = tables.table(for: entity.name) else { continue }
            if keys[entity.name] == nil { differences.append("\(CoreDataSQL.primaryKeyTable) has no entity \(entity.name)") }
            guard try db.tableExists(table.name) else {
                differences.append("missing table \(table.name) (entity \(entity.name))")
                continue
            }
            let columns = Dictionary(
                try db.columns(in: table.name).map { ($0.name.uppercased(), $0.type.uppercased()) },
                uniquingKeysWith: { first, _ in first })
            for column in table.columns {
                guard let declared = columns[column.name] else {
                    differences.append("\(table.name): missing column \(column.name) (\(column.source.holds))")
                    continue
                }
                if !declared.hasPrefix(column.declaredType) {
                    differences.append("\(table.name).\(column.name): type \(declared), expected \(column.declaredType)")
                }
            }
            if let number = tables.number(of: entity.name), columns[CoreDataSQL.entityColumn] != nil {
                let stray =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name) WHERE \(CoreDataSQL.entityColumn) IS NOT \(number)") ?? 0
                if stray > 0 {
                    differences.append(
                        "\(table.name): \(stray) row\(stray == 1 ? "" : "s") with \(CoreDataSQL.entityColumn) other than \(number) (\(entity.name))"
                    )
                }
            }
            let expected = Set(CoreDataSQL.rowColumns + table.columns.map(\.name))
            for extra in columns.keys.sorted() where !expected.contains(extra) {
                differences.append("\(table.name): unexpected column \(extra)")
            }
        }
        let schemaNames = Set(schema.entities.map(\.name))
        for (key, _) in try modelTables(db) where !schemaNames.contains(key.name) {
            differences.append("unexpected entity \(key.name)")
        }
        return differences
    }

    /// Which of `candidates` the store is: the version its metadata names, confirmed against the
    /// tables; without a version in the metadata, the one candidate the tables match exactly.
    public static func detectSchema(_ db: Database, path: String, candidates: [Schema]) throws -> Schema {
        let identifiers = try metadata(db, path: path).versionIdentifiers
        if let named = identifiers.lazy.compactMap({ id in candidates.first { $0.versionIdentifier == id } }).first {
            let differences = try differences(db, from: named)
            guard differences.isEmpty else {
                throw StoreError.schemaMismatch(path: path, versionIdentifier: named.versionIdentifier, differences: differences)
            }
            return named
        }
        if !identifiers.isEmpty {
            let known = candidates.map(\.versionIdentifier)
            guard identifiers.contains(where: { VersionIdentifier.isNewer($0, thanAll: known) }) else {
                throw StoreError.unknownVersion(path: path, versionIdentifiers: identifiers, known: known)
            }
            throw StoreError.unsupportedVersion(path: path, versionIdentifiers: identifiers, supported: known)
        }
        var closest: (schema: Schema, differences: [String])?
        for candidate in candidates {
            let differences = try differences(db, from: candidate)
            if differences.isEmpty { return candidate }
            if differences.count < closest?.differences.count ?? .max { closest = (candidate, differences) }
        }
        throw StoreError.schemaMismatch(
            path: path, versionIdentifier: nil,
            differences: ["closest is schema \(closest?.schema.versionIdentifier ?? "?")"] + (closest?.differences ?? []))
    }

    /// The tables that belong to no entity: every table but the entity tables, Core Data's own
    /// (bookkeeping, history, mirroring) and SQLite's `sqlite_*` tables. A backup carries them.
    package static func otherTables(_ db: Database) throws -> [(name: String, sql: String, indexes: [String])] {
        let entityTables = Set(try StoreReader.modelTables(db).map { $0.table.uppercased() })
        let rows = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        var tables: [(String, String, [String])] = []
        for row in rows {
            let name: String = row[0]
            let upper = name.uppercased()
            guard !upper.hasPrefix("SQLITE_"), !entityTables.contains(upper), !CoreDataSQL.isCoreDataTable(name) else { continue }
            let indexes = try String.fetchAll(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name",
                arguments: [name])
            tables.append((name, row[1] ?? "", indexes))
        }
        return tables
    }

    /// Rows in Core Data's own tables (persistent history, CloudKit mirroring), by table.
    public static func bookkeepingRowCounts(_ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        for table in tables where CoreDataSQL.isHistoryOrMirroringTable(table) {
            counts[table] = try rowCount(db, table: table)
        }
        return counts
    }

    public static func rowCount(_ db: Database, table: String) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.quotedDatabaseIdentifier)") ?? 0
    }

    /// Streams an entity's records in ascending `Z_PK`, decoding each column by the schema.
    public static func forEachRecord(
        _ db: Database, entity: Entity, entityNumber: Int?, path: String, _ body: (EntityRecord) throws -> Void
    ) throws {
        let plan = try RecordColumns(db, entity: entity, entityNumber: entityNumber)
        try plan.forEachRow(db) { row in
            let primaryKey = try plan.primaryKey(row, entity: entity, path: path)
            var values: [String: Value] = [:]
            for property in plan.properties {
                values[property.name] = try plan.value(row, property, entity: entity, primaryKey: primaryKey, path: path)
            }
            try body(
                EntityRecord(
                    primaryKey: primaryKey, opt: try plan.opt(row, entity: entity, primaryKey: primaryKey, path: path), values: values))
        }
    }
}

/// Which columns of an entity's table hold which properties, and the one way they are read: every
/// reader of entity rows (export, dumps, repairs, read-back digests) goes through it.
package struct RecordColumns {
    package struct Property {
        package var name: String
        var kind: AttributeKind
        /// The result column, or nil when the table lacks the column (the value is then null).
        var column: Int?
    }

    /// The stored properties in the archive's key order (`Entity.storedPropertyNames`).
    package var properties: [Property]
    var sql: String

    package init(_ db: Database, entity: Entity, entityNumber: Int?, where extraCondition: String? = nil) throws {
        let tables = try ModelTables(entity: entity)
        let tableName = tables.table(for: entity.name)?.name ?? entity.tableName
        let columnOf = Dictionary(
            tables.propertyColumns(of: entity.name).map { ($0.property, $0.column.name) }, uniquingKeysWith: { first, _ in first })
        let available = Set(try db.columns(in: tableName).map { $0.name.uppercased() })
        var selected = [CoreDataSQL.keyColumn, available.contains(CoreDataSQL.optColumn) ? CoreDataSQL.optColumn : "NULL"]
        properties = entity.storedPropertyNames.map { name in
            let kind = entity.attribute(named: name)?.kind ?? .integer
            guard let column = columnOf[name], available.contains(column) else {
                return Property(name: name, kind: kind, column: nil)
            }
            selected.append(column)
            return Property(name: name, kind: kind, column: selected.count - 1)
        }
        // Sub-entity rows (another Z_ENT) are not this entity's; TimeQuest has none.
        let conditions = [entityNumber.map { "\(CoreDataSQL.entityColumn) = \($0)" }, extraCondition].compactMap { $0 }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        sql = "SELECT \(selected.joined(separator: ", ")) FROM \(tableName)\(filter) ORDER BY \(CoreDataSQL.keyColumn)"
    }

    package func forEachRow(_ db: Database, _ arguments: [StoredValue] = [], _ body: (ExactRow) throws -> Void) throws {
        try ExactSQL.forEachRow(db, sql: sql, arguments, body)
    }

    package func primaryKey(_ row: ExactRow, entity: Entity, path: String) throws -> Int64 {
        guard let key = row.integer(0) else {
            throw StoreError.undecodableValue(
                path: path, entity: entity.name, primaryKey: 0, property: CoreDataSQL.keyColumn,
                reason: "\(row[0].summary) is not an integer key")
        }
        return key
    }

    package func opt(_ row: ExactRow, entity: Entity, primaryKey: Int64, path: String) throws -> Int64? {
        switch row[1] {
        case .null: return nil
        case .integer(let number): return number
        case let other:
            throw StoreError.undecodableValue(
                path: path, entity: entity.name, primaryKey: primaryKey, property: CoreDataSQL.optColumn,
                reason: "\(other.summary) is not an integer")
        }
    }

    package func value(_ row: ExactRow, _ property: Property, entity: Entity, primaryKey: Int64, path: String) throws -> Value {
        guard let column = property.column else { return .null }
        do {
            return try ValueCoding.decode(row[column], as: property.kind)
        } catch let failure as ValueCoding.Failure {
            throw StoreError.undecodableValue(
                path: path, entity: entity.name, primaryKey: primaryKey, property: property.name, reason: failure.reason)
        }
    }
}
