import Foundation
import GRDB

/// Creates a new store in the exact Core Data layout (spec: "The file", "Bookkeeping tables",
/// "Entity tables") and fills it in one transaction.
package enum StoreWriter {
    /// What a write made: records by entity.
    public struct Summary: Sendable, Equatable {
        /// Records written, by entity name.
        public var counts: [String: Int]
        /// `Z_MAX` written, by entity name.
        public var maximumPrimaryKeys: [String: Int64]
    }

    /// Receives records while the store is being written.
    package final class Sink {
        let db: Database
        let schema: Schema
        package fileprivate(set) var counts: [String: Int] = [:]
        package fileprivate(set) var maximumPrimaryKeys: [String: Int64] = [:]
        /// The schema's tables (`ModelTables`, the one layout), made on the first insert.
        private var tables: ModelTables?
        /// By entity: the insert and the properties its columns hold after `Z_PK, Z_ENT, Z_OPT`.
        private var statements: [String: (statement: Statement, properties: [String], number: Int)] = [:]

        package init(db: Database, schema: Schema) {
            self.db = db
            self.schema = schema
        }

        /// The database the records go into, inside the write's transaction.
        public var database: Database { db }

        /// The `Z_ENT` of each entity's records. `Z_PRIMARYKEY` is written only once the records are
        /// in (its `Z_MAX` needs them), so what reads the store's layout inside `fill` takes them here.
        package var entityNumbers: [String: Int64] {
            Dictionary(
                uniqueKeysWithValues: schema.entities.compactMap { entity in
                    schema.entityNumber(of: entity.name).map { (entity.name, Int64($0)) }
                })
        }

        /// Inserts one record of `entityName`, with its `Z_OPT` as the record has it.
        public func insert(_ record: EntityRecord, into entityName: String) throws {
            let (statement, properties, number) = try prepared(for: entityName)
            let opt: StoredValue = record.opt.map { .integer($0) } ?? .null
            var arguments: [StoredValue] = [.integer(record.primaryKey), .integer(Int64(number)), opt]
            arguments += properties.map { ValueCoding.encode(record[$0]) }
            try ExactSQL.execute(statement, arguments)
            FaultPoint.reached("inserted \(entityName) \(record.primaryKey)")
            counts[entityName, default: 0] += 1
            maximumPrimaryKeys[entityName] = max(maximumPrimaryKeys[entityName] ?? 0, record.primaryKey)
        }

        private func prepared(for entityName: String) throws -> (statement: Statement, properties: [String], number: Int) {
            if let cached = statements[entityName] { return cached }
            let tables = try self.tables ?? ModelTables(schema: schema)
            self.tables = tables
            guard schema.entity(named: entityName) != nil, let number = tables.number(of: entityName),
                let table = tables.table(for: entityName)
            else {
                throw StoreError.schemaMismatch(
                    path: "", versionIdentifier: schema.versionIdentifier, differences: ["unknown entity \(entityName)"])
            }
            let columns = tables.propertyColumns(of: entityName)
            let names = CoreDataSQL.rowColumns + columns.map(\.column.name)
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            let statement = try db.makeStatement(
                sql: "INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES (\(placeholders))")
            statements[entityName] = (statement, columns.map(\.property), number)
            return (statement, columns.map(\.property), number)
        }
    }

    /// What the bookkeeping tables get once the records are in: decided after `fill`, because an
    /// import learns the source metadata only from the end of its archive.
    package struct Bookkeeping {
        public var metadata: StoreMetadata
        public var modelCache: Data?
        /// `Z_MAX` floors (a source store's `Z_MAX`, which deleted rows leave above the largest key).
        public var maximumPrimaryKeyFloor: [String: Int64]

        public init(metadata: StoreMetadata, modelCache: Data? = nil, maximumPrimaryKeyFloor: [String: Int64] = [:]) {
            self.metadata = metadata
            self.modelCache = modelCache
            self.maximumPrimaryKeyFloor = maximumPrimaryKeyFloor
        }
    }

    /// Writes a new store at `url`, which must not exist or be an empty file. `fill` inserts the
    /// records through the sink (and may run further SQL on `sink.db` in the same transaction)
    /// and returns the bookkeeping. Counts are taken after `fill`, `Z_MAX` is the highest key
    /// inserted or the floor. On failure nothing is left at `url`.
    @discardableResult
    package static func write(to url: URL, schema: Schema, fill: (Sink) throws -> Bookkeeping) throws -> Summary {
        var summary = Summary(counts: [:], maximumPrimaryKeys: [:])
        try writeDatabase(to: url, settings: .coreData) { db in
            let tables = try ModelTables(schema: schema)
            try createTables(db, tables: tables)
            let sink = Sink(db: db, schema: schema)
            let bookkeeping = try fill(sink)
            for entity in schema.entities {
                guard let table = tables.table(for: entity.name) else { continue }
                summary.counts[entity.name] = try StoreReader.rowCount(db, table: table.name)
                summary.maximumPrimaryKeys[entity.name] = max(
                    sink.maximumPrimaryKeys[entity.name] ?? 0, bookkeeping.maximumPrimaryKeyFloor[entity.name] ?? 0)
            }
            try writeBookkeeping(db, schema: schema, bookkeeping: bookkeeping, summary: summary)
        }
        return summary
    }

    /// Writes a new SQLite file at `url` (which must not exist or be an empty file) in WAL mode
    /// with the given page size and `auto_vacuum`, filled by `fill` in one transaction,
    /// checkpointed and closed. On failure nothing is left at `url`.
    package static func writeDatabase(to url: URL, settings: StoreFileSettings, fill: (Database) throws -> Void) throws {
        let path = url.path
        let existingSize = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
        guard existingSize == nil || existingSize == 0 else {
            throw StoreError.io(path: path, reason: "refusing to write a store over an existing file")
        }
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = false
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.writeWithoutTransaction { db in
                // Page size and auto_vacuum only take effect before the first table exists.
                try db.execute(sql: "PRAGMA page_size = \(settings.pageSize)")
                try db.execute(sql: "PRAGMA auto_vacuum = \(settings.autoVacuum)")
                let rollbackJournal = settings.journalMode == StoreFileSettings.rollbackJournal
                try db.execute(sql: rollbackJournal ? "PRAGMA journal_mode = DELETE" : "PRAGMA journal_mode = WAL")
                for pragma in Durability.sqlitePragmas { try db.execute(sql: pragma) }
                try db.inTransaction {
                    // Header fields another tool may have set; 0 unless the archive says otherwise.
                    if let userVersion = settings.userVersion { try db.execute(sql: "PRAGMA user_version = \(userVersion)") }
                    if let applicationID = settings.applicationId { try db.execute(sql: "PRAGMA application_id = \(applicationID)") }
                    try fill(db)
                    FaultPoint.reached("before commit of \(url.lastPathComponent)")
                    return .commit
                }
                FaultPoint.reached("committed \(url.lastPathComponent)")
                if !rollbackJournal { try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
                FaultPoint.reached("checkpointed \(url.lastPathComponent)")
            }
            try queue.close()
        } catch {
            for suffix in CoreDataSQL.storeFileSuffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
            throw StoreError.wrapping(error, path: path)
        }
    }

    /// Every entity table, then their indexes. A schema's records carry no to-many links, so no
    /// join table is made.
    private static func createTables(_ db: Database, tables: ModelTables) throws {
        for table in tables.tables { try db.execute(sql: table.createStatement) }
        for table in tables.tables {
            for sql in table.indexStatements { try db.execute(sql: sql) }
        }
        for sql in CoreDataSQL.bookkeeping + CoreDataSQL.history { try db.execute(sql: sql) }
    }

    private static func writeBookkeeping(_ db: Database, schema: Schema, bookkeeping: Bookkeeping, summary: Summary) throws {
        for (index, entity) in schema.entities.enumerated() {
            try CoreDataSQL.insertEntityKey(
                db, number: Int64(index + 1), name: entity.name, maximumPrimaryKey: summary.maximumPrimaryKeys[entity.name] ?? 0)
        }
        // Core Data registers its history entities with the first save that stores anything.
        if summary.counts.values.contains(where: { $0 > 0 }) {
            for (number, name) in CoreDataSQL.historyEntities {
                try CoreDataSQL.insertEntityKey(db, number: number, name: name, maximumPrimaryKey: 0)
            }
        }
        try CoreDataSQL.insertMetadata(db, uuid: bookkeeping.metadata.uuid, plist: bookkeeping.metadata.encodedPlist)
        if let modelCache = bookkeeping.modelCache { try CoreDataSQL.insertModelCache(db, modelCache) }
    }
}

/// A store file's page size and `auto_vacuum` mode, which SQLite fixes when the first table is
/// made, and what else its header keeps: WAL or a rollback journal, `user_version` and
/// `application_id`. The last three are nil when they are what Core Data gives a store (WAL, 0,
/// 0), so a manifest names them only when they are not, and archives written before them read
/// as they did.
public struct StoreFileSettings: Codable, Sendable, Equatable {
    /// `PRAGMA page_size`.
    public var pageSize: Int
    /// `PRAGMA auto_vacuum`: 0 none, 1 full, 2 incremental.
    public var autoVacuum: Int
    /// "delete" for a store in rollback-journal mode (Core Data before WAL, about 2013); nil for WAL.
    public var journalMode: String?
    /// `PRAGMA user_version`, nil for 0.
    public var userVersion: Int?
    /// `PRAGMA application_id`, nil for 0.
    public var applicationId: Int?

    /// Settings of the given values; nil for the ones at SQLite's default.
    public init(pageSize: Int, autoVacuum: Int, journalMode: String? = nil, userVersion: Int? = nil, applicationId: Int? = nil) {
        self.pageSize = pageSize
        self.autoVacuum = autoVacuum
        self.journalMode = journalMode
        self.userVersion = userVersion
        self.applicationId = applicationId
    }

    /// What Core Data creates (store-format.md, "The file"): 4096-byte pages, incremental vacuum.
    public static let coreData = StoreFileSettings(pageSize: 4096, autoVacuum: 2)

    /// `journalMode` of a store that is not in WAL mode. Only WAL is kept in the file; any
    /// rollback-journal mode (DELETE, TRUNCATE, PERSIST) opens as DELETE.
    public static let rollbackJournal = "delete"

    /// Only what SQLite fixes when the first table is made: page size and `auto_vacuum`.
    package var pageLayout: StoreFileSettings { StoreFileSettings(pageSize: pageSize, autoVacuum: autoVacuum) }

    package var summary: String {
        "page size \(pageSize), auto_vacuum \(autoVacuum), journal mode \(journalMode ?? "wal"), user_version \(userVersion ?? 0), application_id \(applicationId ?? 0)"
    }

    /// What is wrong with settings read from an archive, or nil.
    package var problem: String? {
        if let journalMode, journalMode != Self.rollbackJournal {
            return "journalMode \"\(UntrustedText.display(journalMode))\" is not \"\(Self.rollbackJournal)\" (absent for WAL)"
        }
        for (name, value) in [("userVersion", userVersion), ("applicationId", applicationId)] {
            if let value, value == 0 || Int32(exactly: value) == nil {
                return "\(name) \(value) is not a 32-bit integer other than 0 (absent for 0)"
            }
        }
        return nil
    }

    /// The settings of the store open on `db`.
    package static func of(_ db: Database) throws -> StoreFileSettings {
        let journal = try String.fetchOne(db, sql: "PRAGMA journal_mode")?.lowercased()
        let userVersion = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
        let applicationID = try Int.fetchOne(db, sql: "PRAGMA application_id") ?? 0
        return StoreFileSettings(
            pageSize: try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096,
            autoVacuum: try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0,
            journalMode: journal == "wal" ? nil : rollbackJournal,
            userVersion: userVersion == 0 ? nil : userVersion,
            applicationId: applicationID == 0 ? nil : applicationID)
    }
}
