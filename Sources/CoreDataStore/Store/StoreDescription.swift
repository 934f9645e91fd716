import Foundation
import GRDB

/// How a store that is none of the candidate schemas (an app profile's known versions, which
/// the caller passes: none unless asked) is described: by its own model, when `Z_MODELCACHE`
/// decodes, its hashes are the metadata's, and its layout explains every table, column and row;
/// otherwise by its tables, with the reason. Export, inspect and restore share this one decision.
package enum StoreDescription {
    /// How an archive's records are written (its manifest's `source.schema`).
    package enum Kind: String {
        /// By a candidate schema. The word is the archive format's (format 2 was TimeQuest's, the
        /// first app profile), kept so that archives and `inspect` say what they always said.
        case knownSchema = "timequest"
        case model
        case generic
    }

    /// A store of one of the candidate versions.
    case knownVersion(ModelVersion)
    case model(ModelLayout)
    /// One sentence: why no model describes the store (its records are then written by their
    /// tables, every value in its SQLite storage class, no type inferred).
    case tables(reason: String)

    /// How a store is described, with what is odd about that, one sentence each. A candidate
    /// schema only when the model hashes say so (or, without hashes, its version and tables):
    /// metadata that names a model of other hashes is another model, whatever its entities are
    /// called. A store with a candidate's entities and hashes whose tables match no candidate is an
    /// error, not another app's: an archive that cannot be restored as that app's is no backup of it.
    /// `readers` (other connections to the same unchanging file) check another app's rows at once.
    package static func resolve(
        _ db: Database, path: String, candidates: [ModelVersion], readers: KeyRangeReaders? = nil
    ) throws -> (StoreDescription, warnings: [String]) {
        let metadata = try StoreReader.metadata(db, path: path)
        let names = Set(try StoreReader.modelTables(db).map(\.entity.name))
        let hasCandidatesEntities = candidates.contains { names == Set($0.entities.map(\.name)) }
        var warnings: [String] = []
        if metadata.entityHashes.isEmpty || metadata.versionMatchingHashes(in: candidates) != nil {
            do {
                return (.knownVersion(try StoreReader.detectVersion(db, path: path, candidates: candidates)), [])
            } catch let error as StoreError {
                switch error {
                case .schemaMismatch, .unsupportedVersion, .unknownVersion: if hasCandidatesEntities { throw error }
                default: throw error
                }
            }
        } else if hasCandidatesEntities {
            warnings.append(
                "the store has the entities of a known schema, but its model hashes are none of its versions': described by its own model, as another app's"
            )
        }
        return (try ownDescription(db, path: path, readers: readers), warnings)
    }

    /// The store's own model when it describes the store exactly, else its tables.
    package static func ownDescription(_ db: Database, path: String, readers: KeyRangeReaders? = nil) throws -> StoreDescription {
        guard let content = try StoreReader.modelCache(db) else {
            return .tables(
                reason: "the store has no model cache (\(CoreDataSQL.modelCacheTable); Core Data before about 2015 wrote none)"
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
        let layout = try ModelLayout(db, model: model, readers: readers)
        if !layout.problems.isEmpty {
            return .tables(
                reason: "its model does not explain its tables: " + layout.problems.prefix(5).joined(separator: "; ")
                    + (layout.problems.count > 5 ? "; and \(layout.problems.count - 5) more" : ""))
        }
        return .model(layout)
    }
}

extension CompiledModel {
    /// The model a store carries (`Z_MODELCACHE`), read through a snapshot so the store is left
    /// untouched; refused, saying why, when the store has none it can read.
    package static func model(ofStoreAt url: URL) throws -> CompiledModel {
        let snapshot = try StoreSnapshot(storeAt: url)
        return try snapshot.read { try model(of: $0, path: snapshot.path) }
    }

    /// The model the store open in `db` carries: the one reader of a store's model cache.
    package static func model(of db: Database, path: String) throws -> CompiledModel {
        try StoreReader.requireCoreDataSQL(db, path: path)
        guard let content = try StoreReader.modelCache(db) else {
            throw StoreError.noModel(
                path: path, reason: "it has no model cache (\(CoreDataSQL.modelCacheTable)), as Core Data's stores from before about 2015")
        }
        do {
            return try ModelCacheDecoder.decode(content)
        } catch {
            throw StoreError.noModel(
                path: path, reason: "its model cache cannot be decoded: \((error as? LocalizedError)?.errorDescription ?? "\(error)")")
        }
    }
}
