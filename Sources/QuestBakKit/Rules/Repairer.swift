import CoreDataStore
import Foundation
import GRDB
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

/// The validation and repair passes of an import or a migration, as their call sites name them:
/// `RepairPipeline.rules` applied to one store inside its transaction.
struct Repairer {
    let context: RepairContext

    init(
        db: Database, schema: Schema, defaultsSchema: Schema, now: Double, randomIDs: Bool, cloudIDKind: RepairEntry.Kind, log: RepairLog,
        path: String, keepDistinctIDs: Bool = false, sharedCloudIDs: Set<String> = []
    ) {
        context = RepairContext(
            db: db, schema: schema, defaultsSchema: defaultsSchema, now: now, randomIDs: randomIDs, cloudIDKind: cloudIDKind, log: log,
            path: path, keepDistinctIDs: keepDistinctIDs, sharedCloudIDs: sharedCloudIDs)
    }

    func run() throws {
        try RepairPipeline.run(in: context)
    }
}
