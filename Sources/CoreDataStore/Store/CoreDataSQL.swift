import Foundation
import GRDB

/// Core Data's own SQL, in one place: the bookkeeping tables (`Z_PRIMARYKEY`, `Z_METADATA`,
/// `Z_MODELCACHE`), the persistent-history tables, the entity-number ranges and the files beside a
/// store (spec: store-format.md, "The file" and "Bookkeeping tables").
package enum CoreDataSQL {
    // MARK: Core Data's own names, spelled once

    /// Every entity table begins with these: the row's key, its entity's number (`Z_PRIMARYKEY`'s
    /// `Z_ENT`) and how many times it was saved (the optimistic-locking count).
    package static let keyColumn = "Z_PK"
    package static let entityColumn = "Z_ENT"
    package static let optColumn = "Z_OPT"
    /// The three, in the order an entity table declares them.
    package static let rowColumns = [keyColumn, entityColumn, optColumn]
    /// Their definitions, as the first columns of every `CREATE TABLE` Core Data writes.
    package static let rowColumnDefinitions = "\(keyColumn) INTEGER PRIMARY KEY, \(entityColumn) INTEGER, \(optColumn) INTEGER"

    /// The table of entity numbers and key counters, one row per entity: its number
    /// (`entityColumn`), name, parent's number (0 for a root) and the largest key handed out.
    package static let primaryKeyTable = "Z_PRIMARYKEY"
    package static let nameColumn = "Z_NAME"
    package static let superColumn = "Z_SUPER"
    package static let maxColumn = "Z_MAX"
    /// The store's UUID and metadata plist.
    package static let metadataTable = "Z_METADATA"
    /// The compiled model, when the store carries one.
    package static let modelCacheTable = "Z_MODELCACHE"
    /// Core Data's bookkeeping tables.
    package static let bookkeepingTables = [primaryKeyTable, metadataTable, modelCacheTable]

    package static let bookkeeping = [
        "CREATE TABLE \(primaryKeyTable) (\(entityColumn) INTEGER PRIMARY KEY, \(nameColumn) VARCHAR, \(superColumn) INTEGER, \(maxColumn) INTEGER)",
        "CREATE TABLE \(metadataTable) (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        "CREATE TABLE \(modelCacheTable) (Z_CONTENT BLOB)",
    ]

    package static let history = [
        "CREATE TABLE ACHANGE ( \(rowColumnDefinitions), ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE ATRANSACTION ( \(rowColumnDefinitions), ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE ATRANSACTIONSTRING ( \(rowColumnDefinitions), ZNAME VARCHAR )",
        "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
        "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
        "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
        "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
        "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
        "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
        "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
        "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
    ]

    /// Entity numbers of the persistent-history entities in `Z_PRIMARYKEY`.
    package static let historyEntities: [(number: Int64, name: String)] = [
        (16001, "CHANGE"), (16002, "TRANSACTION"), (16003, "TRANSACTIONSTRING"),
    ]

    /// Core Data's own entities (history 16xxx, CloudKit mirroring 17xxx) are bookkeeping, not data.
    static let firstCoreDataEntityNumber: Int64 = 16000

    static func isModelEntity(number: Int64) -> Bool { number < firstCoreDataEntityNumber }

    /// The files SQLite keeps beside a store: its write-ahead log, the WAL index, and a rollback
    /// journal (which a crash may leave hot).
    package static let sidecarSuffixes = ["-wal", "-shm", "-journal"]
    /// The store file and every sidecar.
    package static let storeFileSuffixes = [""] + sidecarSuffixes

    package static func sidecar(of store: URL, _ suffix: String) -> URL { URL(fileURLWithPath: store.path + suffix) }

    package static let requiredTables = [primaryKeyTable, metadataTable]

    /// Core Data's tables a version-3 archive may carry as rows: `Z_PRIMARYKEY` always, and
    /// `Z_METADATA` and `Z_MODELCACHE` when they hold more than the one row their files stand for.
    package static let tablesCarriedAsRows = Set(bookkeepingTables)

    /// SQLite's own table of AUTOINCREMENT counters, which a version-3 archive carries as rows
    /// (the only `sqlite_*` table it does: a counter above a table's largest key is data).
    package static let autoincrementTable = "sqlite_sequence"

    /// Core Data's own tables: the bookkeeping ones, persistent history (`ACHANGE`, `ATRANSACTION…`)
    /// and CloudKit mirroring (`ANSCK…`).
    package static func isCoreDataTable(_ name: String) -> Bool {
        let upper = name.uppercased()
        return bookkeepingTables.contains(upper) || isHistoryOrMirroringTable(upper)
    }

    /// Persistent history and CloudKit mirroring: counted by a backup, not carried.
    package static func isHistoryOrMirroringTable(_ name: String) -> Bool {
        let upper = name.uppercased()
        return upper.hasPrefix("ACHANGE") || upper.hasPrefix("ATRANSACTION") || upper.hasPrefix("ANSCK")
    }

    // MARK: Z_PRIMARYKEY

    static let selectEntityKeys =
        "SELECT \(entityColumn), \(nameColumn), \(superColumn), \(maxColumn) FROM \(primaryKeyTable) ORDER BY \(entityColumn)"

    package static func insertEntityKey(_ db: Database, number: Int64, name: String, maximumPrimaryKey: Int64) throws {
        try db.execute(
            sql: "INSERT INTO \(primaryKeyTable) (\(entityColumn), \(nameColumn), \(superColumn), \(maxColumn)) VALUES (?, ?, 0, ?)",
            arguments: [number, name, maximumPrimaryKey])
    }

    /// Removes the model's entities (not Core Data's own) before they are numbered anew.
    package static func deleteModelEntityKeys(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM \(primaryKeyTable) WHERE \(entityColumn) < \(firstCoreDataEntityNumber)")
    }

    // MARK: The schema as statements

    /// Whether the declaration of `table` (in the attached database `schema`) may name a
    /// collation: then a `GROUP BY` or `=` of one of its columns may take two different texts for
    /// one, as a comparison of bytes would not. Core Data declares none. The word anywhere (a
    /// column named `ZCOLLATERAL` too) and a table not found answer yes, the answer that only
    /// costs the caller the query it would have run.
    package static func declaresCollation(_ db: Database, table: String, schema: String = "main") throws -> Bool {
        let declaration = try String.fetchOne(
            db, sql: "SELECT sql FROM \(schema).sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [table])
        return declaration.map { $0.range(of: "COLLATE", options: .caseInsensitive) != nil } ?? true
    }

    /// Every `CREATE` statement of the store in the order SQLite lists them (the order they were
    /// made in), SQLite's own objects and automatic indexes left out: what a restore replays.
    package static func schemaStatements(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")
    }

    // MARK: Z_METADATA

    static let selectMetadata = "SELECT Z_UUID, Z_PLIST FROM \(metadataTable) ORDER BY Z_VERSION LIMIT 1"
    package static let selectMetadataPlist = "SELECT Z_PLIST FROM \(metadataTable) ORDER BY Z_VERSION LIMIT 1"

    /// The one metadata row; an empty UUID is written as NULL (what the source store had).
    package static func insertMetadata(_ db: Database, uuid: String, plist: Data) throws {
        try ExactSQL.execute(
            db, sql: "INSERT INTO \(metadataTable) (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
            [uuid.isEmpty ? .null : .text(Data(uuid.utf8)), .blob(plist)])
    }

    package static func updateMetadataPlist(_ db: Database, plist: Data) throws {
        try db.execute(sql: "UPDATE \(metadataTable) SET Z_PLIST = ?", arguments: [plist])
    }

    // MARK: Z_MODELCACHE

    package static let selectModelCache = "SELECT Z_CONTENT FROM \(modelCacheTable) LIMIT 1"

    package static func insertModelCache(_ db: Database, _ content: Data) throws {
        try db.execute(sql: "INSERT INTO \(modelCacheTable) (Z_CONTENT) VALUES (?)", arguments: [content])
    }
}

extension String {
    /// The name as an SQL identifier, a double quote inside it doubled. Written here because GRDB's
    /// `quotedDatabaseIdentifier` only wraps a name in quotes (its source says escaping is still to
    /// do): right for the plain identifiers (`CompiledModel.isPlainIdentifier`) of a model's tables
    /// and columns, wrong for a name read from any store's `sqlite_master` or a pragma, such as a
    /// carried table's column, which may hold a quote.
    package var quotedSQLIdentifier: String { "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
