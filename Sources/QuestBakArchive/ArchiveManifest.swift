import CoreDataStore
import Foundation

/// `manifest.json`, the first member of every archive: what the archive holds and how to check it.
/// Documented in docs/archive-format.md; a change here is a change to a public format.
public struct ArchiveManifest: Codable, Sendable, Equatable {
    /// The `format` every archive names.
    public static let formatName = "questbak-archive"
    /// The `formatVersion` this build writes and the newest it reads; newer archives are refused
    /// by name. Version 2 added `_opt`, `{"textBytes": …}` and integer dates; version 3 added
    /// archives of any app's store, described by its own model or by its tables (`sql`,
    /// `source.schema` "model" and "generic"), docs/archive-format.md.
    public static let highestSupportedFormatVersion = 3
    /// What an archive of a known schema (an app profile's, TimeQuest's the first) is written as:
    /// nothing in one changed with version 3, so readers of version 2 keep reading them.
    public static let knownSchemaFormatVersion = 2
    /// The longest record line (newline included) the format allows: export refuses a record
    /// that would need more, and readers refuse a longer line, so every archive restores.
    public static let maximumLineBytes = 64 << 20
    /// The manifest's path in the archive.
    public static let path = "manifest.json"

    /// The program that wrote the archive.
    public struct Tool: Codable, Sendable, Equatable {
        /// Its name.
        public var name: String
        /// Its version.
        public var version: String

        package init(name: String, version: String) {
            self.name = name
            self.version = version
        }
    }

    /// The store the archive was made from.
    public struct Source: Codable, Sendable, Equatable {
        /// The store's UUID, from its metadata.
        public var storeUUID: String
        /// The model version identifiers in its metadata.
        public var versionIdentifiers: [String]
        /// The Core Data framework version that last wrote its metadata.
        public var frameworkVersion: Int64?
        /// Committed WAL frames the export read that were not yet in the main file.
        public var walFrames: Int
        /// "timequest" for a store of a known TimeQuest schema; "generic" for any other Core
        /// Data store, whose entity members then use the store's column names.
        public var schema: String

        package init(storeUUID: String, versionIdentifiers: [String], frameworkVersion: Int64? = nil, walFrames: Int, schema: String) {
            self.storeUUID = storeUUID
            self.versionIdentifiers = versionIdentifiers
            self.frameworkVersion = frameworkVersion
            self.walFrames = walFrames
            self.schema = schema
        }

        /// `schema` for a store of a known schema (an app profile's): the word is "timequest", the
        /// first app's, kept so that archives say what they always said.
        public static let knownSchema = StoreDescription.Kind.knownSchema.rawValue
        /// `schema` for any other Core Data store that its own model (`Z_MODELCACHE`) describes
        /// exactly: records under property names, typed by that model (format version 3).
        public static let modelSchema = StoreDescription.Kind.model.rawValue
        /// `schema` for a store no model describes (none, or one that does not explain its
        /// tables): records under column names, values in their SQLite storage class.
        public static let genericSchema = StoreDescription.Kind.generic.rawValue
    }

    /// One entity's records: a JSON Lines member.
    public struct EntityMember: Codable, Sendable, Equatable {
        /// The entity's name.
        public var name: String
        /// The member's path in the archive.
        public var path: String
        /// Records in the member.
        public var count: Int
        /// The store's `Z_MAX` for the entity, kept so a restore hands out the same new keys.
        public var maximumPrimaryKey: Int64
        /// The member's size in bytes, as stored (compressed).
        public var bytes: Int64
        /// The SHA-256 of the member's bytes, as stored.
        public var sha256: String

        package init(name: String, path: String, count: Int, maximumPrimaryKey: Int64, bytes: Int64, sha256: String) {
            self.name = name
            self.path = path
            self.count = count
            self.maximumPrimaryKey = maximumPrimaryKey
            self.bytes = bytes
            self.sha256 = sha256
        }
    }

    /// A table that belongs to no entity (a many-to-many join table, another tool's table),
    /// carried row by row with the statements that create it, so a backup drops nothing.
    public struct TableMember: Codable, Sendable, Equatable {
        /// The table's name.
        public var name: String
        /// The member's path in the archive.
        public var path: String
        /// Rows in the member.
        public var count: Int
        /// The member's size in bytes, as stored (compressed).
        public var bytes: Int64
        /// The SHA-256 of the member's bytes, as stored.
        public var sha256: String
        /// The table's `CREATE TABLE` statement, as the store has it.
        public var sql: String
        /// Its `CREATE INDEX` statements.
        public var indexes: [String]

        package init(name: String, path: String, count: Int, bytes: Int64, sha256: String, sql: String, indexes: [String]) {
            self.name = name
            self.path = path
            self.count = count
            self.bytes = bytes
            self.sha256 = sha256
            self.sql = sql
            self.indexes = indexes
        }
    }

    /// A file carried as it is: the store's metadata, its model cache, an external-storage file.
    public struct FileMember: Codable, Sendable, Equatable {
        /// The member's path in the archive.
        public var path: String
        /// The member's size in bytes, as stored (compressed).
        public var bytes: Int64
        /// The SHA-256 of the member's bytes, as stored.
        public var sha256: String

        package init(path: String, bytes: Int64, sha256: String) {
            self.path = path
            self.bytes = bytes
            self.sha256 = sha256
        }
    }

    /// Always `formatName`.
    public var format: String
    /// The format version the archive is written in.
    public var formatVersion: Int
    /// Missing in archives of early tools: read as "1.0.0" (seed 004).
    public var schemaVersion: String?
    /// When the archive was made, ISO 8601 in UTC, as the manifest spells it (the public face is
    /// `creationDate`).
    package var createdAt: String
    /// When the archive was made; nil when the manifest's `createdAt` is not a time.
    public var creationDate: Date? {
        DateText.secondsSinceReferenceDate(iso8601: createdAt).map { Date(timeIntervalSinceReferenceDate: $0) }
    }
    /// The program that wrote it.
    public var tool: Tool
    /// The store it was made from.
    public var source: Source
    /// One member per entity.
    public var entities: [EntityMember]
    /// Files carried as they are.
    public var files: [FileMember]
    /// Tables that belong to no entity; absent when there are none (format version 2 on).
    public var tables: [TableMember]?
    /// Rows of Core Data's own tables (history, CloudKit mirroring): counted, not archived.
    public var bookkeepingRows: [String: Int]
    /// Format version 3, "model" and "generic" archives: every `CREATE` statement of the store
    /// (tables, indexes, triggers, views) in the order SQLite lists them, so a restore makes the
    /// same tables, columns and indexes, unique ones included.
    public var sql: [String]?
    /// Format version 3: the store file's page size and `auto_vacuum` mode.
    public var sqlite: StoreFileSettings?
    /// Format version 3: what is odd about the store and what the export did about it, one
    /// sentence each (also printed by `export`). Absent when there is nothing to say.
    public var warnings: [String]?

    package init(
        format: String, formatVersion: Int, schemaVersion: String? = nil, createdAt: String, tool: Tool, source: Source,
        entities: [EntityMember], files: [FileMember], tables: [TableMember]? = nil, bookkeepingRows: [String: Int], sql: [String]? = nil,
        sqlite: StoreFileSettings? = nil, warnings: [String]? = nil
    ) {
        self.format = format
        self.formatVersion = formatVersion
        self.schemaVersion = schemaVersion
        self.createdAt = createdAt
        self.tool = tool
        self.source = source
        self.entities = entities
        self.files = files
        self.tables = tables
        self.bookkeepingRows = bookkeepingRows
        self.sql = sql
        self.sqlite = sqlite
        self.warnings = warnings
    }

    /// Whether records are typed by a schema questbak knows (an app profile's) rather than restored
    /// statement by statement from `sql`.
    public var restoresFromStatements: Bool { source.schema != Source.knownSchema }

    /// The schema version, "1.0.0" for an archive that names none (the first TimeQuest archives).
    public var effectiveSchemaVersion: String { schemaVersion ?? "1.0.0" }

    /// Whether every record line carries its `Z_OPT` as `_opt` (`RecordJSON.optKey`), as format 2
    /// and later write it; format 1's lines have none.
    package var recordLinesCarryOpt: Bool { formatVersion >= 2 }

    /// The manifest as the archive holds it: JSON with sorted keys.
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    package static let metadataPath = "store/metadata.plist"
    package static let modelCachePath = "store/modelcache.bin"
    package static func entityPath(_ entity: String) -> String { "entities/\(entity).jsonl" }
    package static func tablePath(_ table: String) -> String { "tables/\(table).jsonl" }
}

/// The first line of every entity member, so that a member taken out alone still says what it is.
struct EntityHeader: Codable, Equatable {
    var schemaVersion: String?
    var entity: String
    var count: Int

    /// Written by hand for a fixed key order: schemaVersion, entity, count.
    func line() -> [UInt8] {
        var object = JSONObjectWriter()
        object.add("schemaVersion", string: schemaVersion)
        object.add("entity", .string(entity))
        object.add("count", .integer(Int64(count)))
        return object.finished + [0x0A]
    }
}
