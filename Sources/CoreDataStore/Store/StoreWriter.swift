import Foundation
import GRDB

/// Creates a new SQLite file with a store's settings and fills it in one transaction: the one
/// way a store is written (a restore, a migration, a merge). Writing a store from a schema's
/// records is tooling's (`QuestBakFixtures`: `StoreWriter.write(to:schema:fill:)`).
package enum StoreWriter {
    /// Writes a new SQLite file at `url` (which must not exist or be an empty file) in WAL mode
    /// with the given page size and `auto_vacuum`, filled by `fill` in one transaction,
    /// checkpointed and closed. On failure nothing is left at `url`.
    ///
    /// `writingPagesOnce`: a store kept in WAL mode is built with a rollback journal and put in
    /// WAL mode once committed. In WAL mode each page is written twice, into the WAL inside the
    /// transaction and into the file by the checkpoint, while a new file's pages need no
    /// rollback journal, so each is written once (a restore: 6.6% of its samples, and the
    /// checkpoint's time before its read-back). The pages are the same; the header's read and
    /// write versions are 2, as a store made in WAL mode has them. The fixtures keep the WAL
    /// build: their committed bytes are the generator's (`FixtureTests`).
    package static func writeDatabase(
        to url: URL, settings: StoreFileSettings, writingPagesOnce: Bool = false, fill: (Database) throws -> Void
    ) throws {
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
                let switchesToWAL = !rollbackJournal && writingPagesOnce
                try db.execute(sql: rollbackJournal || switchesToWAL ? "PRAGMA journal_mode = DELETE" : "PRAGMA journal_mode = WAL")
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
                if switchesToWAL {
                    let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                    guard mode == "wal" else { throw StoreError.io(path: path, reason: "journal mode \(mode ?? "none"), not WAL") }
                } else if !rollbackJournal {
                    try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
                }
                // Named for every journal mode: the whole store is now in its main file, whether
                // committed with a rollback journal, switched to WAL after it, or checkpointed.
                FaultPoint.reached("complete in its main file \(url.lastPathComponent)")
            }
            try queue.close()
        } catch {
            for suffix in CoreDataSQL.storeFileSuffixes { try? FileManager.default.removeItem(atPath: path + suffix) }
            throw StoreError.wrapping(error, path: path)
        }
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
