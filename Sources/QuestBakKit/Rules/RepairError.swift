import CoreDataStore
import Foundation
import QuestBakArchive

/// Why a repair cannot be made.
package enum RepairError: Error, Equatable, LocalizedError {
    /// A required property has no value and no default to fill it with.
    case noDefault(entity: String, property: String)

    /// The sentence that says why, naming the entity and record.
    public var errorDescription: String? {
        switch self {
        case .noDefault(let entity, let property):
            return "\(entity).\(property) is missing in some records and no schema gives it a default"
        }
    }
}
