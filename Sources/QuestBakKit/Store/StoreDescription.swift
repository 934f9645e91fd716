import Foundation
import GRDB

/// How a store that is not TimeQuest's is described: by its own model, when `Z_MODELCACHE`
/// decodes, its hashes are the metadata's, and its layout explains every table, column and row;
/// otherwise by its tables, with the reason. Export, inspect and restore share this one decision.
package enum StoreDescription {
    /// How an archive's records are written (its manifest's `source.schema`).
    package enum Kind: String {
        case timeQuest = "timequest"
        case model
        case generic
    }

    case model(ModelLayout)
    /// One sentence: why no model describes the store (its records are then written by their
    /// tables, every value in its SQLite storage class, no type inferred).
    case tables(reason: String)

    package static func resolve(_ db: Database, path: String) throws -> StoreDescription {
        guard let content = try StoreReader.modelCache(db) else {
            return .tables(
                reason: "the store has no model cache (Z_MODELCACHE; Core Data before about 2015 wrote none)"
            )
        }
        let model: CompiledModel
        do {
            model = try ModelCacheDecoder.decode(content)
        } catch {
            return .tables(reason: "its model cache cannot be decoded: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
        }
        let differing = try StoreReader.metadata(db, path: path).hashDifferences(from: ModelVersionHashes(model: model))
        if !differing.isEmpty {
            return .tables(
                reason:
                    "its model cache disagrees with its metadata (hashes differ for \(differing.joined(separator: ", ")))"
            )
        }
        let layout = try ModelLayout(db, model: model)
        if !layout.problems.isEmpty {
            return .tables(
                reason: "its model does not explain its tables: " + layout.problems.prefix(5).joined(separator: "; ")
                    + (layout.problems.count > 5 ? "; and \(layout.problems.count - 5) more" : ""))
        }
        return .model(layout)
    }
}
