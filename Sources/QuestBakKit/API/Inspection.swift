import Foundation

extension QuestBak {
    /// How ``QuestBak/diff(_:_:options:progress:)`` reads its two sides.
    public struct DiffOptions: Sendable {
        /// Keys that open either side when it is an encrypted archive.
        public var identities: [AgeIdentity] = []

        /// Options with every default: no keys.
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
    /// added, removed and changed records by entity, matched by their identity (cloudID,
    /// uniqueness constraints), field by field.
    ///
    /// Two sides that differ are a result, not an error: see `Differ.Result.isEmpty`.
    ///
    /// - Throws: ``QuestBakError``: `.invalidInput` when the sides are of different apps,
    ///   `.cancelled` when the task is cancelled.
    public static func diff(
        _ a: URL, _ b: URL, options: DiffOptions = DiffOptions(), progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> Differ.Result {
        try await perform { workDirectory, cancellation in
            try Differ.diff(
                a, b, keys: ArchiveKeys(identities: options.identities), workDirectory: workDirectory, progress: progress,
                cancellation: cancellation)
        }
    }
}
