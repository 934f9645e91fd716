import Foundation
import GRDB

/// One row of an entity: its `Z_PK`, its `Z_OPT` and its stored properties by name (a
/// composite's element by its path, `size.width`). A to-one relationship's value is the target's
/// `Z_PK` as `.integer`, or `.null`.
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
    /// How long a connection opened beside others of questbak's on the same private file waits
    /// for their locks.
    static let besideBusyTimeout: TimeInterval = 10

    /// A connection to a file questbak made (a snapshot's copy, a restored archive) that other
    /// connections of its own open and read at the same time: the import's read-back proof and
    /// its range readers, the merge's integrity check and reference checks, the merge itself
    /// attaching the restored archive. Two connections that open a WAL file whose index no
    /// connection holds yet race to build it: the one that loses is answered SQLITE_BUSY
    /// (`SQLITE_BUSY_RECOVERY`) at its first read, which GRDB's default (`immediateError`) made a
    /// merge fail with "database is locked" under load. Nothing else writes these files, so a
    /// wait ends as soon as the other connection has built the index.
    package static func besideConfiguration(readonly: Bool) -> Configuration {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.busyMode = .timeout(besideBusyTimeout)
        return configuration
    }

    /// Whether the file at `path` passes `PRAGMA integrity_check`, asked on a read-only
    /// connection of its own: a check that runs on another thread beside the caller's reads.
    package static func passesIntegrityCheck(path: String) throws -> Bool {
        let queue = try DatabaseQueue(path: path, configuration: besideConfiguration(readonly: true))
        defer { try? queue.close() }
        return try queue.read { try String.fetchOne($0, sql: "PRAGMA integrity_check") } == "ok"
    }

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
            let table = CompiledEntity.tableName(root.name)
            if seen.insert(table).inserted, try db.tableExists(table) { tables.append((root, table)) }
        }
        return tables
    }

    /// Everything in which the store's tables differ from `version`'s; empty when they match.
    package static func differences(_ db: Database, from version: ModelVersion) throws -> [String] {
        var differences: [String] = []
        let keys = Dictionary(try entityKeys(db).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let tables = try ModelTables(model: version.compiled)
        for entity in version.entities {
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
        let schemaNames = Set(version.entities.map(\.name))
        for (key, _) in try modelTables(db) where !schemaNames.contains(key.name) {
            differences.append("unexpected entity \(key.name)")
        }
        return differences
    }

    /// Which of `candidates` the store is: the version its metadata names, confirmed against the
    /// tables; without a version in the metadata, the one candidate the tables match exactly.
    package static func detectVersion(_ db: Database, path: String, candidates: [ModelVersion]) throws -> ModelVersion {
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
        var closest: (version: ModelVersion, differences: [String])?
        for candidate in candidates {
            let differences = try differences(db, from: candidate)
            if differences.isEmpty { return candidate }
            if differences.count < closest?.differences.count ?? .max { closest = (candidate, differences) }
        }
        throw StoreError.schemaMismatch(
            path: path, versionIdentifier: nil,
            differences: ["closest is schema \(closest?.version.versionIdentifier ?? "?")"] + (closest?.differences ?? []))
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
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.quotedSQLIdentifier)") ?? 0
    }

    /// Streams the records of `plan`'s entity in ascending `Z_PK` (only those `condition` admits,
    /// with `arguments`), each value decoded as the layout says: the one row reader beside the
    /// archive's member encoding, for callers that want values, not lines (a repair reporting a
    /// record it drops, tests). A composite's element is named by its path (`size.width`). The
    /// plan is a layout's of this store, whose every column the layout found there.
    package static func forEachRecord(
        _ db: Database, plan: ModelLayout.EntityPlan, path: String, where condition: String? = nil, _ arguments: [StoredValue] = [],
        _ body: (EntityRecord) throws -> Void
    ) throws {
        let columns = [CoreDataSQL.keyColumn, CoreDataSQL.optColumn] + plan.fields.map(\.column) + plan.toOne.map(\.column)
        let filter = ["\(CoreDataSQL.entityColumn) = \(plan.number)", condition].compactMap { $0 }.joined(separator: " AND ")
        let sql =
            "SELECT \(columns.joined(separator: ", ")) FROM \(plan.table) WHERE \(filter) ORDER BY \(CoreDataSQL.keyColumn)"
        func undecodable(_ primaryKey: Int64, _ property: String, _ reason: String) -> StoreError {
            StoreError.undecodableValue(path: path, entity: plan.name, primaryKey: primaryKey, property: property, reason: reason)
        }
        try ExactSQL.forEachRow(db, sql: sql, arguments) { row in
            guard let primaryKey = row.integer(0) else {
                throw undecodable(0, CoreDataSQL.keyColumn, "\(row[0].summary) is not an integer key")
            }
            let opt: Int64?
            switch row[1] {
            case .null: opt = nil
            case .integer(let number): opt = number
            case let other: throw undecodable(primaryKey, CoreDataSQL.optColumn, "\(other.summary) is not an integer")
            }
            var values: [String: Value] = [:]
            for (index, field) in plan.fields.enumerated() {
                let name = field.path.joined(separator: ".")
                do {
                    values[name] = try ValueCoding.decode(row[2 + index], as: field.kind)
                } catch let failure as ValueCoding.Failure {
                    throw undecodable(primaryKey, name, failure.reason)
                }
            }
            for (index, relationship) in plan.toOne.enumerated() {
                switch row[2 + plan.fields.count + index] {
                case .null: values[relationship.name] = .null
                case .integer(let target): values[relationship.name] = .integer(target)
                case let other: throw undecodable(primaryKey, relationship.name, "\(other.summary) is not a key")
                }
            }
            try body(EntityRecord(primaryKey: primaryKey, opt: opt, values: values))
        }
    }
}
