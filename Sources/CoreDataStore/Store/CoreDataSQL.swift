import Foundation
import GRDB

/// Core Data's own SQL, in one place: the bookkeeping tables (`Z_PRIMARYKEY`, `Z_METADATA`,
/// `Z_MODELCACHE`), the persistent-history tables, the entity-number ranges and the files beside a
/// store (spec: store-format.md, "The file" and "Bookkeeping tables").
package enum CoreDataSQL {
    package static let bookkeeping = [
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
        "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
    ]

    package static let history = [
        "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
        "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
        "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
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

    package static let requiredTables = ["Z_PRIMARYKEY", "Z_METADATA"]

    /// Core Data's tables a version-3 archive may carry as rows: `Z_PRIMARYKEY` always, and
    /// `Z_METADATA` and `Z_MODELCACHE` when they hold more than the one row their files stand for.
    package static let tablesCarriedAsRows: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

    /// SQLite's own table of AUTOINCREMENT counters, which a version-3 archive carries as rows
    /// (the only `sqlite_*` table it does: a counter above a table's largest key is data).
    package static let autoincrementTable = "sqlite_sequence"

    /// Core Data's own tables: the bookkeeping ones, persistent history (`ACHANGE`, `ATRANSACTION…`)
    /// and CloudKit mirroring (`ANSCK…`).
    package static func isCoreDataTable(_ name: String) -> Bool {
        let upper = name.uppercased()
        return ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"].contains(upper) || isHistoryOrMirroringTable(upper)
    }

    /// Persistent history and CloudKit mirroring: counted by a backup, not carried.
    package static func isHistoryOrMirroringTable(_ name: String) -> Bool {
        let upper = name.uppercased()
        return upper.hasPrefix("ACHANGE") || upper.hasPrefix("ATRANSACTION") || upper.hasPrefix("ANSCK")
    }

    // MARK: Z_PRIMARYKEY

    package static let primaryKeyTable = "Z_PRIMARYKEY"

    static let selectEntityKeys = "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"

    package static func insertEntityKey(_ db: Database, number: Int64, name: String, maximumPrimaryKey: Int64) throws {
        try db.execute(
            sql: "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, ?)",
            arguments: [number, name, maximumPrimaryKey])
    }

    /// Removes the model's entities (not Core Data's own) before they are numbered anew.
    package static func deleteModelEntityKeys(_ db: Database) throws {
        try db.execute(sql: "DELETE FROM Z_PRIMARYKEY WHERE Z_ENT < \(firstCoreDataEntityNumber)")
    }

    // MARK: The schema as statements

    /// Every `CREATE` statement of the store in the order SQLite lists them (the order they were
    /// made in), SQLite's own objects and automatic indexes left out: what a restore replays.
    package static func schemaStatements(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")
    }

    // MARK: Z_METADATA

    static let selectMetadata = "SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1"
    package static let selectMetadataPlist = "SELECT Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1"

    /// The one metadata row; an empty UUID is written as NULL (what the source store had).
    package static func insertMetadata(_ db: Database, uuid: String, plist: Data) throws {
        try ExactSQL.execute(
            db, sql: "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)",
            [uuid.isEmpty ? .null : .text(Data(uuid.utf8)), .blob(plist)])
    }

    package static func updateMetadataPlist(_ db: Database, plist: Data) throws {
        try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [plist])
    }

    // MARK: Z_MODELCACHE

    package static let selectModelCache = "SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1"

    package static func insertModelCache(_ db: Database, _ content: Data) throws {
        try db.execute(sql: "INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)", arguments: [content])
    }
}
