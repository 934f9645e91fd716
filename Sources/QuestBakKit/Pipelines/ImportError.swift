import CoreDataStore
import Foundation
import QuestBakArchive

/// Why an archive cannot be restored or merged as asked.
package enum ImportError: Error, Equatable, LocalizedError {
    /// The archive needs repairs and repairs were not allowed; nothing was written.
    case repairsNeeded(archive: String, counts: [String: Int])
    /// The archive cannot be restored or merged as asked, and why.
    case notImportable(archive: String, reason: String)
    /// A restore to an older schema version than the archive's.
    case downgrade(archive: String, from: String, to: String)
    /// The target version asked for is none of the known ones.
    case unknownTargetVersion(version: String, supported: [String])
    /// The template store cannot serve (missing, or of another model).
    case template(path: String, reason: String)
    /// A merge was asked to say which copy is newer by a property the store's model does not
    /// have as a date.
    case notADateProperty(entity: String, property: String, reason: String)
    /// The store cannot take the archive's records (its keys are used up).
    case notMergeable(store: String, reason: String)
    /// The store changed while the merge ran (the app saved meanwhile); nothing was put in place.
    case storeChangedDuringMerge(store: String)
    /// The written store did not read back as written.
    case verificationFailed(store: String, entity: String, expected: String, found: String)

    /// The sentence that says why, naming the archive and, where known, the entity and record.
    public var errorDescription: String? {
        switch self {
        case .repairsNeeded(let archive, let counts):
            let list = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            return "\(archive): the archive needs repairs (\(list)); nothing was written"
        case .notImportable(let archive, let reason):
            return "\(archive): cannot be imported: \(reason)"
        case .downgrade(let archive, let from, let to):
            return "\(archive): schema \(from) cannot be imported as the older \(to) without losing data"
        case .unknownTargetVersion(let version, let supported):
            return "schema version \(version) to write is not a known schema (known: \(supported.joined(separator: ", ")))"
        case .template(let path, let reason):
            return "\(path): cannot use as a template: \(reason)"
        case .notADateProperty(let entity, let property, let reason):
            return "\(entity).\(property) cannot say which copy is newer: \(reason)"
        case .notMergeable(let store, let reason):
            return "\(store): cannot merge into it: \(reason); nothing was put in place"
        case .storeChangedDuringMerge(let store):
            return "\(store): the store changed while the merge ran (is the app open?); nothing was put in place"
        case .verificationFailed(let store, let entity, let expected, let found):
            return "\(store): \(entity) did not read back as written (expected \(expected), found \(found)); nothing was put in place"
        }
    }
}
