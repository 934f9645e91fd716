import Foundation

extension QuestBak {
    /// How ``QuestBak/backUp(store:to:options:progress:)`` writes an archive.
    public struct BackupOptions: Sendable {
        /// How each member is compressed: zstd, gzip or none; by default zstd, or gzip in a build
        /// without libzstd (`ArchiveCompression.preferred`).
        public var compression: ArchiveCompression = .preferred
        /// The archive's creation time, stamped into the manifest and on every member (whole
        /// seconds). nil: now. Two backups of one store with one date are byte-identical.
        public var createdAt: Date?
        /// Before the archive is put in place, restore it into a scratch folder and compare every
        /// record with the store it was made from: an archive that does not give the store back
        /// is not kept (the error is `.invalidInput`), and the summary's `verification` says what
        /// was compared.
        public var verify = false
        /// Replace an existing archive at the destination. Without it, one is refused
        /// (`.outputExists`).
        public var overwrite = false
        /// Encrypt the archive to these (age): every byte, the manifest included. Empty: a plain
        /// archive.
        public var recipients: [AgeRecipient] = []
        /// Models to recognise a store by besides its own (none by default).
        public var schemas: KnownSchemas = .none

        /// Options with every default: the build's preferred codec, now, not verified, not
        /// encrypted.
        public init() {}
    }

    /// How ``QuestBak/verify(archive:options:progress:)`` reads an archive.
    public struct VerifyOptions: Sendable {
        /// Keys that open an encrypted archive.
        public var identities: [AgeIdentity] = []
        /// Models to restore a TimeQuest archive by (none by default).
        public var schemas: KnownSchemas = .none

        /// Options with every default: no keys, no schemas.
        public init() {}
    }

    /// Backs up the store at `store` into one archive at `archive`, written atomically: the
    /// archive appears complete or not at all.
    ///
    /// The store is read from a consistent snapshot (its `-wal` included), so the app may keep
    /// it open; a store that keeps changing throws `.busy`.
    ///
    /// - Parameters:
    ///   - store: The SQLite store file (`default.store`, `Model.sqlite`).
    ///   - archive: Where the archive is written.
    ///   - options: Compression, creation time, verification, encryption.
    ///   - progress: Told how far the reading of each entity is.
    /// - Returns: What was written: the members, their digests, warnings about the store.
    /// - Throws: ``QuestBakError``; `.cancelled` when the task is cancelled, and then no archive
    ///   and no temporary file is left.
    @discardableResult
    public static func backUp(
        store: URL, to archive: URL, options: BackupOptions = BackupOptions(), progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> BackupResult {
        try await perform { _, cancellation in
            var export = Exporter.Options(
                createdAt: Int64((options.createdAt ?? Date()).timeIntervalSince1970.rounded(.down)),
                compression: options.compression, progress: progress)
            export.verify = options.verify
            export.recipients = options.recipients
            export.profiles = options.schemas.profiles
            export.cancellation = cancellation
            return try Exporter.export(storeAt: store, to: .file(archive, overwrite: options.overwrite), options: export)
        }
    }

    /// Proves that the archive at `archive` restores: it is restored into a scratch folder as a
    /// restore would restore it, every record is encoded again and compared with the member it
    /// came from, and nothing is kept.
    ///
    /// An archive whose records need repairs, or that gives back other records, is not an error:
    /// the result's `restoresExactly` is false and its `counts` say what a restore would change.
    ///
    /// - Throws: ``QuestBakError``: `.invalidInput` for a damaged archive, `.unsupportedVersion`
    ///   for a newer one, `.cancelled` when the task is cancelled.
    public static func verify(
        archive: URL, options: VerifyOptions = VerifyOptions(), progress: ProgressHandler? = nil
    ) async throws(QuestBakError) -> VerifyResult {
        try await perform { workDirectory, cancellation in
            try ArchiveVerifier.verify(
                archive: archive.path, keys: ArchiveKeys(identities: options.identities), profiles: options.schemas.profiles,
                workDirectory: workDirectory, progress: progress, cancellation: cancellation)
        }
    }
}
