import Foundation
import GRDB

/// Everything that can go wrong reading or writing a Core Data store. Each case names the file
/// and, where there is one, the entity, record and property, so the message alone says where to
/// look.
public enum StoreError: Error, Equatable {
    /// No file at the path.
    case notFound(path: String)
    /// The file exists but may not be read (permissions).
    case unreadable(path: String, reason: String)
    /// SQLite refused the file or a statement; `code` is SQLite's primary result code.
    case sqlite(path: String, code: Int32, message: String)
    /// A SQLite file without Core Data's tables.
    case notACoreDataStore(path: String, missingTables: [String])
    /// The path holds something other than a SQLite store (a folder, an archive, another file).
    case notAStore(path: String, reason: String)
    /// The store carries no model questbak can read (no `Z_MODELCACHE`, or one that cannot be
    /// decoded), where its model was asked for.
    case noModel(path: String, reason: String)
    /// The store's metadata plist cannot be read.
    case unreadableMetadata(path: String, reason: String)
    /// The metadata names a version we know, but the tables do not have its shape.
    case schemaMismatch(path: String, versionIdentifier: String?, differences: [String])
    /// The metadata names a version this build does not know (typically a newer app's store).
    case unsupportedVersion(path: String, versionIdentifiers: [String], supported: [String])
    /// The metadata names versions that are neither known nor later than the known ones.
    case unknownVersion(path: String, versionIdentifiers: [String], known: [String])
    /// A value a record holds cannot be read as its property's type, naming the record and property.
    case undecodableValue(path: String, entity: String, primaryKey: Int64, property: String, reason: String)
    /// A record too large for one archive line (`ArchiveManifest.maximumLineBytes`).
    case recordTooLarge(path: String, entity: String, primaryKey: Int64, lineBytes: Int, limit: Int)
    /// The source kept changing while it was being copied (an app writing to it).
    case sourceKeptChanging(path: String, attempts: Int)
    /// Reading or writing failed in the operating system.
    case io(path: String, reason: String)

    package static func wrapping(_ error: Error, path: String) -> Error {
        if let error = error as? DatabaseError {
            return StoreError.sqlite(path: path, code: error.resultCode.primaryResultCode.rawValue, message: error.message ?? "\(error)")
        }
        return error
    }
}

extension StoreError: LocalizedError {
    /// The sentence that says what failed, naming the store and, where known, the table, record and field.
    public var errorDescription: String? {
        switch self {
        case .notFound(let path):
            return "\(path): no such file"
        case .unreadable(let path, let reason):
            return "\(path): cannot be read: \(reason)"
        case .sqlite(let path, let code, let message):
            return "\(path): SQLite error \(code): \(message)"
        case .notACoreDataStore(let path, let missing):
            return
                "\(path): not a Core Data / SwiftData store (missing table\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", ")))"
        case .notAStore(let path, let reason):
            return "\(path) is not a store: \(reason)"
        case .noModel(let path, let reason):
            return "\(path): its model is not known: \(reason)"
        case .unreadableMetadata(let path, let reason):
            return "\(path): cannot read \(CoreDataSQL.metadataTable): \(reason)"
        case .schemaMismatch(let path, let version, let differences):
            let claim = version.map { "says it is schema \($0) but " } ?? "matches no known schema: "
            return "\(path): \(claim)differs from it:\n" + differences.map { "  - \($0)" }.joined(separator: "\n")
        case .unsupportedVersion(let path, let identifiers, let supported):
            return
                "\(path): schema version \(identifiers.joined(separator: ", ")) is not supported by this questbak (supported: \(supported.joined(separator: ", "))); upgrade questbak"
        case .unknownVersion(let path, let identifiers, let known):
            let quoted = identifiers.map { "\"\($0)\"" }.joined(separator: ", ")
            return
                "\(path): schema version \(quoted) is not one this questbak knows (\(known.joined(separator: ", "))) and not a later version of them"
        case .undecodableValue(let path, let entity, let primaryKey, let property, let reason):
            return "\(path): \(entity) \(CoreDataSQL.keyColumn) \(primaryKey), property \(property): \(reason)"
        case .recordTooLarge(let path, let entity, let primaryKey, let lineBytes, let limit):
            return
                "\(path): \(entity) \(CoreDataSQL.keyColumn) \(primaryKey) would be a record line of \(lineBytes) bytes; the archive format allows \(limit)"
        case .sourceKeptChanging(let path, let attempts):
            return "\(path): the store changed during each of \(attempts) copy attempts; close the app that writes to it and retry"
        case .io(let path, let reason):
            return "\(path): \(reason)"
        }
    }
}
