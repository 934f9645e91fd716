import Foundation

extension QuestBak {
    /// How ``QuestBak/diff(_:_:options:progress:eachRecord:)`` reads its two sides.
    public struct DiffOptions: Sendable {
        /// Keys that open either side when it is an encrypted archive.
        public var identities: [AgeIdentity] = []
        /// Apps whose schemas a side may be of, besides its own model: their natural keys
        /// recognise records (none by default).
        public var schemas: KnownSchemas = .none

        /// Options with every default: no keys, no known schemas.
        public init() {}
    }

    /// What the store at `store` holds: its entities and rows, model, metadata, what is odd about
    /// it, and how a backup would write it. Reads a consistent snapshot; changes nothing.
    ///
    /// - Parameters:
    ///   - store: The store file.
    ///   - schemas: Models to recognise the store by besides its own (none by default).
    /// - Throws: ``QuestBakError``: `.missingInput` for a missing store, `.invalidInput` for a
    ///   file that is not a Core Data store, `.busy` for one that kept changing.
    public static func inspect(store: URL, schemas: KnownSchemas = .none) throws(QuestBakError) -> StoreInspection {
        try performNow { try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: schemas.schemas) }
    }

    /// The manifest of the archive at `archive`: its format, source store, members and their
    /// digests. Reads the manifest only (an archive is checked in full by
    /// ``QuestBak/verify(archive:options:progress:)``).
    ///
    /// - Parameters:
    ///   - archive: The archive file.
    ///   - identities: Keys that open an encrypted archive.
    public static func inspect(archive: URL, identities: [AgeIdentity] = []) throws(QuestBakError) -> ArchiveManifest {
        try performNow { try ArchiveReader(path: archive.path, keys: ArchiveKeys(identities: identities)).readManifest() }
    }

    /// The records that differ between `a` and `b`, each a store or an archive of one app:
    /// how many were added, removed and changed in each entity, matched by their identity
    /// (cloudID, uniqueness constraints, a known schema's natural key), field by field.
    ///
    /// Two sides that differ are a result, not an error: see ``DiffResult/isEmpty``.
    ///
    /// - Parameters:
    ///   - a: One side, a store or an archive.
    ///   - b: The other side.
    ///   - options: Keys and known schemas.
    ///   - progress: Told how far the reading of each side is.
    ///   - eachRecord: Given every differing record, entity by entity, as it is read from the
    ///     diff's scratch store: the listing is never held in memory, however many records differ.
    /// - Throws: ``QuestBakError``: `.invalidInput` when the sides are of different apps,
    ///   `.cancelled` when the task is cancelled.
    public static func diff(
        _ a: URL, _ b: URL, options: DiffOptions = DiffOptions(), progress: ProgressHandler? = nil,
        eachRecord: (@Sendable (_ entity: String, _ line: DiffResult.Line) -> Void)? = nil
    ) async throws(QuestBakError) -> DiffResult {
        try await perform { workDirectory, cancellation in
            try Differ.diff(
                a, b, keys: ArchiveKeys(identities: options.identities), profiles: options.schemas.profiles,
                workDirectory: workDirectory, progress: progress, cancellation: cancellation
            ) { listing in
                if let eachRecord {
                    for entity in listing.result.entities {
                        try listing.forEachLine(of: entity.name) { eachRecord(entity.name, $0) }
                    }
                }
                return listing.result
            }
        }
    }
}
