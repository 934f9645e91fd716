import Foundation

extension QuestBak {
    /// How ``QuestBak/restore(archive:into:options:progress:)`` restores an archive.
    public struct RestoreOptions: Sendable {
        /// Replace an existing store at the destination, keeping it (and its `-wal` and `-shm`)
        /// beside it as `<store>.questbak-backup-<time>`. Without it, one is refused
        /// (`.outputExists`).
        public var replace = false
        /// What `Date.now` defaults of properties the archive lacks become. nil: the archive's
        /// creation time.
        public var now: Date?
        /// Restore as this schema version (a TimeQuest archive, with ``schemas``), migrating on
        /// the way. nil: the archive's own version.
        public var targetVersion: String?
        /// Repairs that make identifiers give random ones rather than ones derived from the record.
        public var randomIdentifiers = false
        /// Restore an archive of a schema newer than the known ones, as far as it can be read.
        public var allowNewer = false
        /// Keep records apart that share a cloud identifier but differ in content.
        public var keepDistinctIdentifiers = false
        /// Keys that open an encrypted archive.
        public var identities: [AgeIdentity] = []
        /// Models to restore a TimeQuest archive by (none by default).
        public var schemas: KnownSchemas = .none
        /// Where to write every repair made, one JSON object a line (`rule`, `kind`, `entity`,
        /// `_pk`, `field`, `old`, `new`). nil: the result's counts only.
        public var repairLog: URL?

        /// Options with every default: a new store, the archive's time, no keys.
        public init() {}
    }

    /// How ``QuestBak/merge(archive:into:options:progress:)`` merges.
    public struct MergeOptions: Sendable {
        /// Which value a field keeps when the store and the archive both have one and they differ.
        public var preference: MergePreference = .store
        /// Entity name → the date property that says which copy is newer, for `.newer`.
        public var newerBy: [String: String] = [:]
        /// What `Date.now` defaults become in the archive's records. nil: its creation time.
        public var now: Date?
        /// Repairs that make identifiers give random ones rather than derived ones.
        public var randomIdentifiers = false
        /// Merge an archive of a schema newer than the known ones.
        public var allowNewer = false
        /// Keep records apart that share a cloud identifier but differ in content, also when
        /// matching them with the store's.
        public var keepDistinctIdentifiers = false
        /// Keys that open an encrypted archive.
        public var identities: [AgeIdentity] = []
        /// Models to read a TimeQuest archive and store by (none by default).
        public var schemas: KnownSchemas = .none
        /// Where to write every insert, fill, conflict and repair, one JSON object a line.
        public var repairLog: URL?

        /// Options with every default: the store's values win, no keys.
        public init() {}
    }

    /// Restores the archive at `archive` into a new store at `store`, making the repairs its
    /// records need (each one counted in the result and, with `repairLog`, written out).
    ///
    /// The store is built beside `store`, read back and checked, and only then put in place:
    /// `store` appears complete or not at all. Folders missing on the way are made.
    ///
    /// - Returns: Records read and written by entity, the repairs by rule, notes.
    /// - Throws: ``QuestBakError``: `.invalidInput` for a damaged archive, `.outputExists` for an
    ///   existing store without `replace`, `.busy` for a store in use, `.cancelled` when the task
    ///   is cancelled (and then no store and no temporary file is left).
    @discardableResult
    public static func restore(
        archive: URL, into store: URL, options: RestoreOptions = RestoreOptions(), progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> RestoreResult {
        try await perform { workDirectory, cancellation in
            var restore = Importer.Options()
            restore.validate = true
            restore.replace = options.replace
            restore.now = options.now?.timeIntervalSinceReferenceDate
            restore.targetVersion = options.targetVersion
            restore.randomIDs = options.randomIdentifiers
            restore.allowNewer = options.allowNewer
            restore.keepDistinctIDs = options.keepDistinctIdentifiers
            restore.keys = ArchiveKeys(identities: options.identities)
            restore.profiles = options.schemas.profiles
            restore.backupStamp = backupStamp(Date())
            restore.progress = progress
            restore.cancellation = cancellation
            let repairLog = try RepairLogOutput.open(options.repairLog)
            let result = try Importer.run(archive: archive.path, into: store, options: restore, workDirectory: workDirectory)
            try repairLog?.write([result.log])
            return result
        }
    }

    /// Merges the records of the archive at `archive` into the store at `store`, which has data
    /// of its own: nothing of the store is deleted; records the store lacks are inserted, fields
    /// it lacks filled, conflicts settled by `preference`. The store is replaced atomically and
    /// the old one kept beside it; a merge that changes nothing leaves it as it was.
    ///
    /// - Throws: ``QuestBakError``: `.invalidInput` when the archive is another app's or damaged,
    ///   `.busy` when the store changed during the merge, `.cancelled` when the task is cancelled
    ///   (and then the store is as it was).
    @discardableResult
    public static func merge(
        archive: URL, into store: URL, options: MergeOptions = MergeOptions(), progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> MergeResult {
        try await perform { workDirectory, cancellation in
            var merge = Merger.Options()
            merge.preference = options.preference
            merge.newerBy = options.newerBy
            merge.restore.validate = true
            merge.restore.now = options.now?.timeIntervalSinceReferenceDate
            merge.restore.randomIDs = options.randomIdentifiers
            merge.restore.allowNewer = options.allowNewer
            merge.restore.keepDistinctIDs = options.keepDistinctIdentifiers
            merge.restore.keys = ArchiveKeys(identities: options.identities)
            merge.restore.profiles = options.schemas.profiles
            merge.restore.backupStamp = backupStamp(Date())
            merge.restore.progress = progress
            merge.restore.cancellation = cancellation
            let repairLog = try RepairLogOutput.open(options.repairLog)
            let result = try Merger.run(archive: archive.path, into: store, options: merge, workDirectory: workDirectory)
            try repairLog?.write([result.log])
            return result
        }
    }
}
