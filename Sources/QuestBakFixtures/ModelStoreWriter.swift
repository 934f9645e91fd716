import Foundation
import GRDB
import QuestBakKit

/// A value for one column of a fixture row, written exactly as given.
package enum FixtureValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    /// UTF-8 text, NUL included.
    case text(String)
    case blob(Data)
    /// A decimal as its text. It reaches the DECIMAL column as text, so that the column's NUMERIC
    /// affinity decides how it is stored, as for Core Data (100 stays INTEGER, 12.5 becomes REAL).
    case decimal(String)
}

/// One row of an entity. `values` are keyed by attribute name, by `attribute.element…` for a
/// composite's elements, or by a to-one relationship's name (the destination's `Z_PK`); `links`
/// hold to-many relationships (destination keys), stored wherever the layout keeps them.
package struct ModelRow: Sendable, Equatable {
    package var entity: String
    package var primaryKey: Int64
    package var opt: Int64
    package var values: [String: FixtureValue]
    package var links: [String: [Int64]]

    package init(_ entity: String, _ primaryKey: Int64, opt: Int64 = 1, _ values: [String: FixtureValue], links: [String: [Int64]] = [:]) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.opt = opt
        self.values = values
        self.links = links
    }
}

/// A table that belongs to no entity (another tool's own table), created after Core Data's.
package struct ForeignTable: Sendable, Equatable {
    package var name: String
    package var columnDefinitions: String
    package var rows: [[FixtureValue]]
}

/// Everything a store of any app holds: its model, rows, and what lives beside it.
package struct ModelStore: Sendable {
    package var model: CompiledModel
    package var uuid: String
    /// Rows in the main file.
    package var rows: [ModelRow]
    /// Rows committed after the main file was written and left only in `-wal`.
    package var walRows: [ModelRow] = []
    /// `Z_MAX` floors by root entity (deleted rows leave it above the largest key).
    package var maximumPrimaryKeyFloor: [String: Int64] = [:]
    package var foreignTables: [ForeignTable] = []
    /// Files in `.<store name>_SUPPORT/_EXTERNAL_DATA/`, by file name.
    package var externalData: [String: Data] = [:]
    package var frameworkVersion: Int64 = StoreMetadata.defaultFrameworkVersion

    package init(model: CompiledModel, uuid: String, rows: [ModelRow]) {
        self.model = model
        self.uuid = uuid
        self.rows = rows
    }
}

/// Writes a `ModelStore` as a real SQLite file in Core Data's exact layout: the tables of
/// `ModelTables`, the bookkeeping and history tables, metadata whose hashes are computed
/// from the same model, and that model in `Z_MODELCACHE`. Deterministic: the same bytes on every run.
package enum ModelStoreWriter {
    package struct WriteError: Error, LocalizedError, Equatable {
        package var reason: String
        package var errorDescription: String? { "cannot write the store: \(reason)" }
    }

    /// `.<store name>_SUPPORT/_EXTERNAL_DATA` beside the store (model-cache.md, "External storage":
    /// inferred, no real store with externally stored data was seen).
    package static func externalDataFolder(for store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(".\(store.deletingPathExtension().lastPathComponent)_SUPPORT")
            .appendingPathComponent("_EXTERNAL_DATA")
    }

    /// The metadata Core Data would write for the model: `StoreMetadata`'s keys, with the hashes
    /// recomputed from the compiled model rather than from a questbak schema.
    package static func metadata(for store: ModelStore) -> StoreMetadata {
        let hashes = ModelVersionHashes(model: store.model)
        return StoreMetadata(
            uuid: store.uuid,
            plist: .dictionary([
                "NSStoreType": .string("SQLite"),
                "NSStoreUUID": .string(store.uuid),
                "NSStoreModelVersionIdentifiers": .array(store.model.versionIdentifiers.map(PropertyListValue.string)),
                "NSStoreModelVersionHashes": .dictionary(hashes.entityHashes.mapValues { .data($0) }),
                "NSStoreModelVersionChecksumKey": .string(hashes.checksum),
                "NSStoreModelVersionHashesDigest": .string(hashes.digest),
                "NSStoreModelVersionHashesVersion": .integer(3),
                "NSPersistenceFrameworkVersion": .integer(store.frameworkVersion),
                "_NSAutoVacuumLevel": .string("2"),
            ]))
    }

    /// Writes the store at `url`, replacing any store, sidecars and external data there.
    package static func write(_ store: ModelStore, to url: URL) throws {
        let layout = try ModelTables(model: store.model)
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        let support = externalDataFolder(for: url).deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: support.path) { try FileManager.default.removeItem(at: support) }
        let modelCache = try ModelCacheEncoder.encode(store.model)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            // Page size and auto_vacuum only take effect before the first table exists.
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "PRAGMA auto_vacuum = 2")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.inTransaction {
                for sql in layout.createStatements + CoreDataSQL.bookkeeping + CoreDataSQL.history { try db.execute(sql: sql) }
                let highest = try insert(store.rows, layout: layout, db: db)
                for (number, entity) in layout.numberedEntities.enumerated() {
                    // Keys are handed out per table, so the root's row counts them; its
                    // sub-entities' rows stay at 0 (inferred from the shared table).
                    let maximum =
                        entity.superentity == nil
                        ? max(highest[entity.name] ?? 0, store.maximumPrimaryKeyFloor[entity.name] ?? 0) : 0
                    let parent = entity.superentity.flatMap { layout.number(of: $0) } ?? 0
                    try db.execute(
                        sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)",
                        arguments: [number + 1, entity.name, parent, maximum])
                }
                if !store.rows.isEmpty {
                    for (number, name) in CoreDataSQL.historyEntities {
                        try db.execute(
                            sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, 0)", arguments: [number, name])
                    }
                }
                try db.execute(
                    sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
                    arguments: [store.uuid, metadata(for: store).encodedPlist])
                try CoreDataSQL.insertModelCache(db, modelCache)
                // Another tool's table comes later than Core Data's: it was added to a store that existed.
                for table in store.foreignTables {
                    try db.execute(sql: "CREATE TABLE \(table.name) (\(table.columnDefinitions))")
                    for row in table.rows {
                        let (placeholders, arguments) = try bind(row)
                        try db.execute(
                            sql: "INSERT INTO \(table.name) VALUES (\(placeholders.joined(separator: ", ")))", arguments: arguments)
                    }
                }
                return .commit
            }
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try queue.close()
        if !store.walRows.isEmpty { try appendLeavingWAL(store.walRows, layout: layout, to: url) }
        if !store.externalData.isEmpty {
            let folder = externalDataFolder(for: url)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (name, bytes) in store.externalData.sorted(by: { $0.key < $1.key }) {
                try bytes.write(to: folder.appendingPathComponent(name))
            }
        }
    }

    /// Inserts `rows` and stores their links; returns the largest key inserted per root entity.
    static func insert(_ rows: [ModelRow], layout: ModelTables, db: Database) throws -> [String: Int64] {
        var highest: [String: Int64] = [:]
        for row in rows {
            guard let table = layout.table(for: row.entity), let number = layout.number(of: row.entity) else {
                throw WriteError(reason: "no entity \(row.entity)")
            }
            var cells: [String: FixtureValue] = [:]
            for (key, value) in row.values.sorted(by: { $0.key < $1.key }) {
                let path = key.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                guard let column = layout.column(for: path, of: row.entity) else {
                    throw WriteError(reason: "\(row.entity) \(row.primaryKey): no column for \(key)")
                }
                if case .toOne = column.source {
                    switch value {
                    case .integer, .null: break
                    default: throw WriteError(reason: "\(row.entity) \(row.primaryKey): \(key) must be a Z_PK or null")
                    }
                }
                cells[column.name] = value
            }
            var placeholders = ["?", "?", "?"]
            var arguments: StatementArguments = [row.primaryKey, number, row.opt]
            for column in table.columns {
                let (placeholder, argument) = try bind([cells[column.name] ?? .null])
                placeholders += placeholder
                arguments += argument
            }
            let names = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
            try db.execute(
                sql: "INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES (\(placeholders.joined(separator: ", ")))",
                arguments: arguments)
            highest[table.rootEntity] = max(highest[table.rootEntity] ?? 0, row.primaryKey)
        }
        var pairs: [String: (join: ModelTables.JoinTable, keys: Set<[Int64]>)] = [:]
        for row in rows {
            for (name, targets) in row.links.sorted(by: { $0.key < $1.key }) {
                guard let (_, relationship) = layout.relationship(name, of: row.entity) else {
                    throw WriteError(reason: "\(row.entity) has no relationship \(name)")
                }
                let accepted = Set(layout.descendants(of: relationship.destination).compactMap { layout.number(of: $0) }.map(Int64.init))
                func destination(_ table: String, _ key: Int64, column: String) throws -> Int64? {
                    guard let found = try Row.fetchOne(db, sql: "SELECT Z_ENT, \(column) FROM \(table) WHERE Z_PK = ?", arguments: [key]),
                        let entity = found[0] as Int64?, accepted.contains(entity)
                    else {
                        throw WriteError(reason: "\(row.entity).\(name) links to \(key), not a \(relationship.destination) in \(table)")
                    }
                    return found[1]
                }
                switch try layout.storage(of: name, from: row.entity) {
                case .foreignKey:
                    throw WriteError(reason: "\(row.entity).\(name) is a to-one: give it as a value, not a link")
                case .inverseForeignKey(let table, let column):
                    // The other side's key is the data; the link is only checked against it.
                    for key in targets {
                        guard try destination(table, key, column: column) == row.primaryKey else {
                            throw WriteError(reason: "\(row.entity).\(name) lists \(key), whose \(column) is not \(row.primaryKey)")
                        }
                    }
                case .hiddenColumn(let table, let column):
                    for key in targets {
                        _ = try destination(table, key, column: column)
                        try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE Z_PK = ?", arguments: [row.primaryKey, key])
                    }
                case .joinTable(let join, let sourceIsLower):
                    guard let other = layout.table(for: relationship.destination) else { continue }
                    for key in targets {
                        _ = try destination(other.name, key, column: "Z_PK")
                        let pair = sourceIsLower ? [row.primaryKey, key] : [key, row.primaryKey]
                        pairs[join.name, default: (join, [])].keys.insert(pair)
                    }
                }
            }
        }
        for (name, entry) in pairs.sorted(by: { $0.key < $1.key }) {
            for pair in entry.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                try db.execute(
                    sql: "INSERT INTO \(name) (\(entry.join.lower.column), \(entry.join.higher.column)) VALUES (?, ?)",
                    arguments: [pair[0], pair[1]])
            }
        }
        return highest
    }

    /// Placeholders and arguments for values. Text and blobs are written as SQL literals: GRDB
    /// binds a Swift string only up to its first NUL, and an empty `Data` as NULL.
    static func bind(_ values: [FixtureValue]) throws -> (placeholders: [String], arguments: StatementArguments) {
        var placeholders: [String] = []
        var arguments: StatementArguments = []
        func hex(_ bytes: Data) -> String { "X'" + bytes.map { String(format: "%02X", $0) }.joined() + "'" }
        for value in values {
            switch value {
            case .null: placeholders.append("NULL")
            case .integer(let number):
                placeholders.append("?")
                arguments += [number]
            case .real(let number):
                guard number.isFinite else { throw WriteError(reason: "SQLite stores no \(number)") }
                placeholders.append("?")
                arguments += [number]
            case .text(let text), .decimal(let text): placeholders.append("CAST(\(hex(Data(text.utf8))) AS TEXT)")
            case .blob(let bytes): placeholders.append(hex(bytes))
            }
        }
        return (placeholders, arguments)
    }

    /// Commits `rows` to the store at `url` and keeps them the way a running app leaves them:
    /// in `-wal`, not checkpointed into the main file (as `FixtureGenerator` does for `v1-wal`).
    static func appendLeavingWAL(_ rows: [ModelRow], layout: ModelTables, to url: URL) throws {
        try WriteAheadLog.commitLeavingWAL(to: url) { db in
            for (root, key) in try insert(rows, layout: layout, db: db).sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_NAME = ?", arguments: [key, root])
            }
        }
    }
}
