import CoreDataStore
import Foundation
import QuestBakArchive

/// Why a store cannot be redacted as asked.
package enum RedactionError: Error, LocalizedError, Equatable {
    /// A key file with no bytes would key every replacement with nothing.
    case emptyKey
    /// A `keep` that names no property of the store.
    case unknownProperty(String, known: [String])
    /// Two different values would become one and could not be kept apart (should not happen:
    /// replacements are lengthened until they differ).
    case collision(String)

    /// The sentence that says why, naming the property or key.
    public var errorDescription: String? {
        switch self {
        case .emptyKey: return "the key file is empty"
        case .unknownProperty(let name, let known):
            let list = known.prefix(12).joined(separator: ", ") + (known.count > 12 ? ", and \(known.count - 12) more" : "")
            return "\(name) is no property of the store (ENTITY.PROPERTY, such as \(list))"
        case .collision(let what): return "two different values would have the same replacement: \(what)"
        }
    }
}
