import CoreDataStore
import Foundation
import QuestBakArchive

extension QuestBak {
    /// How ``QuestBak/rescue(store:into:options:)`` and
    /// ``QuestBak/mergeRescue(from:into:options:)`` write.
    public struct RescueOptions: Sendable {
        /// The archive's creation time; also what `Date.now` defaults of properties new in the
        /// app's model become when an older archive is migrated. nil: now.
        public var createdAt: Date?
        /// The archive's compression; nil: the build's default (zstd, or gzip in a build
        /// without libzstd).
        public var compression: ArchiveCompression?

        /// Options with every default: now, the build's compression.
        public init() {}

        func storeRescueOptions(_ cancellation: Cancellation) -> StoreRescue.Options {
            let now = createdAt ?? Date()
            var options = StoreRescue.Options(
                createdAt: Int64(now.timeIntervalSince1970.rounded(.down)), compression: compression,
                backupStamp: QuestBak.backupStamp(now))
            options.cancellation = cancellation
            return options
        }
    }

    /// Saves a store the app cannot open, before anything deletes it: call it when
    /// `ModelContainer` fails on the store.
    ///
    /// First the store's files (the store, its `-wal` and `-shm`, and its external-storage
    /// folder) are copied into `folder/store-files` as they are, so that nothing is lost even
    /// when the store is too damaged to read. Then the store is backed up by the model it
    /// carries, not the app's, to `folder/store.qbak`, and the archive is verified. The store
    /// itself is only read.
    ///
    /// - Parameters:
    ///   - store: The store file the app could not open.
    ///   - folder: A new or empty folder the app names (an earlier rescue may hold the only
    ///     good copy, so a folder with files in it is refused).
    ///   - options: The archive's creation time and compression.
    /// - Returns: What was copied and what the archive holds. An export that fails does not
    ///   throw: ``RescueResult/exported`` is false and the result says why; the
    ///   copy is kept.
    /// - Throws: ``QuestBakError``: `.missingInput` for a missing store, `.outputExists` for a
    ///   folder with files in it, `.io` when the copy cannot be made (then nothing is saved),
    ///   `.cancelled` when the task is cancelled (the export is checked between batches of
    ///   records; the copy, once made, is kept).
    public static func rescue(
        store: URL, into folder: URL, options: RescueOptions = RescueOptions()
    ) async throws(QuestBakError) -> RescueResult {
        try await perform { _, cancellation in
            try StoreRescue.rescue(storeAt: store, into: folder, options: options.storeRescueOptions(cancellation))
        }
    }

    /// Merges what ``QuestBak/rescue(store:into:options:)`` saved in `folder` into `store`, a
    /// fresh store the app made with its own model. Close the `ModelContainer` first: the store
    /// is replaced by the merged one, and the one it was is kept beside it.
    ///
    /// The two models decide: an archive of the same model is merged as it is; an archive of an
    /// older model is migrated to the app's on the way, as Core Data's lightweight migration
    /// would, and every value the app's model has no place for is listed in
    /// ``RescueMergeResult/unplaced`` (and in `folder/merge-report.jsonl`), never dropped
    /// unsaid; an archive of a newer model is not merged: it and the copy are kept for a build
    /// that can read them, and ``RescueMergeResult/outcome`` says so.
    ///
    /// - Throws: ``QuestBakError``: `.invalidInput` when the rescue holds no archive or a
    ///   damaged one, or the two stores are of different apps; `.cancelled` when the task is
    ///   cancelled (then the store is as it was).
    public static func mergeRescue(
        from folder: URL, into store: URL, options: RescueOptions = RescueOptions()
    ) async throws(QuestBakError) -> RescueMergeResult {
        try await perform { _, cancellation in
            try StoreRescue.merge(rescuedIn: folder, into: store, options: options.storeRescueOptions(cancellation))
        }
    }
}
