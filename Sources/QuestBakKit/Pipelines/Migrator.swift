import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// Why a store cannot be migrated to a model.
package enum MigrationError: Error, Equatable, LocalizedError {
    /// The change between the models is not one Core Data's lightweight migration makes.
    case notLightweight(from: String, to: String, problems: [String])
    /// The store already has the target model.
    case alreadyAtVersion(path: String, version: String)
    /// The target model is older than the store's.
    case downgrade(path: String, from: String, to: String)
    /// The store's model is none of the models of the chain it was given (Core Data's staged
    /// migration fails the same way: "Cannot use staged migration with an unknown model version").
    case unknownModelVersion(path: String, version: String, known: [String])
    /// A store of another app: it has none of the entities of the versions it was to be one of,
    /// so whatever its metadata names (another app's "1.0.0", a "2.1.0"), it is no version of them.
    case anotherAppsStore(path: String, entities: [String], versions: [String])
    /// Records the new model does not accept, which Core Data's migration would refuse at
    /// launch (134110): one sentence each, naming the entity, `_pk`s and property.
    case invalidRecords(from: String, to: String, problems: [String])

    /// The sentence that says why, naming the store and versions.
    public var errorDescription: String? {
        switch self {
        case .notLightweight(let from, let to, let problems):
            return "schema \(from) → \(to) is not a lightweight migration:\n" + problems.map { "  - \($0)" }.joined(separator: "\n")
        case .alreadyAtVersion(let path, let version):
            return "\(path): the store is already schema \(version)"
        case .downgrade(let path, let from, let to):
            return "\(path): cannot migrate schema \(from) back to \(to)"
        case .invalidRecords(let from, let to, let problems):
            return
                "schema \(from) → \(to): the new model refuses records of the store, so the new build could not open it (Core Data 134110):\n"
                + problems.map { "  - \($0)" }.joined(separator: "\n")
        case .anotherAppsStore(let path, let entities, let versions):
            return
                "\(path): the store is another app's: it has none of the entities of the versions it can be migrated from (\(versions.joined(separator: ", "))); its own: \(SameApp.list(entities))"
        case .unknownModelVersion(let path, let version, let known):
            return
                "\(path): unknown model version: its model (\(version.isEmpty ? "no version identifier" : version)) is none of the given models (\(known.joined(separator: ", "))), so Core Data's staged migration could not start from it either"
        }
    }
}

/// `questbak migrate`'s options and result. The migration itself is `ModelMigrator`'s, one for
/// every target: the lightweight migration Core Data performs when the app opens an old store
/// (spec: "Lightweight migration"), to a new build's model or an app profile's version, then the
/// fixes the app would otherwise need on first launch (every record its own cloudID, where Core
/// Data gives all rows the single value `UUID().uuidString` evaluated once, and a profile's other
/// repairs, those of `import --validate`), each reported.
package enum Migrator {
    package struct Options {
        /// What `Date.now` defaults of new properties become (seconds since 2001).
        public var now: Double
        public var randomIDs = false
        /// Swap the source store, keeping a backup, instead of writing a new one.
        public var inPlace = false
        public var backupStamp = "backup"
        /// Told how far the migration is: each entity's records as it migrates them (step
        /// "migrate"), then the repairs (step "repair").
        package var progress: ((RecordProgress) -> Void)?
        /// Checked between the steps of a chain (a migration to a new build's model) and before
        /// the migrated store is put in place.
        package var cancellation: Cancellation?

        public init(now: Double) {
            self.now = now
        }
    }

    /// What a migration did (the API's name for it is public).
    package typealias Result = QuestBak.MigrateResult
}
