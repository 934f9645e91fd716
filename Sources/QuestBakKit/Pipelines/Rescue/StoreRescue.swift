import CoreDataStore
import Foundation
import QuestBakArchive

/// What an app calls when `ModelContainer` cannot open its store (a failed migration, a model
/// the build does not know), before it deletes the store to start again, and after: see the
/// DocC article "Rescue before a reset".
///
/// 1. `rescue(storeAt:into:options:)` copies the store's files aside (the store, `-wal`, `-shm`
///    and the support folder), then exports the store by the model it carries (its own
///    `Z_MODELCACHE`, whatever the app's model is) to a verified archive beside the copy. The
///    copy comes first, so that a store too damaged to export is still kept whole.
/// 2. The app makes a fresh store with its own model.
/// 3. `merge(rescuedIn:into:options:)` merges the archive into the fresh store: as it is when
///    the models are the same, migrated to the fresh store's model on the way when the
///    archive's is older (what the new model has no place for is in the result), and not at all
///    when the archive's model is newer than the app's (the archive and the copy wait for a
///    build that knows it, and the result says so).
///
/// Nothing here changes the store that failed to open: it is only read.
package enum StoreRescue {
    /// The archive's name in the rescue folder.
    public static let archiveName = "store.qbak"
    /// The folder in the rescue folder that holds the store's files as they were.
    public static let filesFolderName = "store-files"
    /// The merge's report in the rescue folder: every change the migration and the merge made,
    /// and every value the new model has no place for, one JSON object a line.
    public static let reportName = "merge-report.jsonl"

    package struct Options: Sendable {
        /// The archive's creation time (Unix seconds); also what `Date.now` defaults of
        /// properties new in the app's model become when an older archive is migrated.
        public var createdAt: Int64
        /// The archive's compression; nil: the exporter's default.
        public var compression: ArchiveCompression?
        /// Names the fresh store's backup the merge keeps beside it
        /// (`<store>.questbak-backup-<stamp>`).
        public var backupStamp: String
        /// Checked by the export, the migration and the merge between batches of records.
        package var cancellation: Cancellation?

        public init(
            createdAt: Int64 = Int64(Date().timeIntervalSince1970), compression: ArchiveCompression? = nil, backupStamp: String = "rescue"
        ) {
            self.createdAt = createdAt
            self.compression = compression
            self.backupStamp = backupStamp
        }
    }

    /// What `rescue` saved (the API's name for it is public).
    package typealias RescueResult = QuestBak.RescueResult

    /// Copies the store's files into `folder/store-files` and exports the store by its own model
    /// to `folder/store.qbak`, verified. `folder` must be new or empty: an earlier rescue there
    /// may hold the only good copy. Throws when the copy cannot be made (then nothing is saved);
    /// an export that fails does not throw: the result says why, and the copy is kept.
    package static func rescue(storeAt store: URL, into folder: URL, options: Options = Options()) throws -> RescueResult {
        switch StoreFilesCopy.entryType(store.path, followingLinks: true) {
        case nil: throw StoreError.notFound(path: store.path)
        case S_IFDIR?:
            throw StoreError.notAStore(path: store.path, reason: "it is a folder; name the store file in it (such as default.store)")
        default: break
        }
        let folderType = StoreFilesCopy.entryType(folder.path, followingLinks: true)
        switch folderType {
        case nil: break
        case S_IFDIR?:
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            guard contents.isEmpty else { throw OutputError.exists(path: folder.path) }
        default: throw OutputError.cannotCreate(path: folder.path, reason: "it is a file; name a folder for the rescue")
        }
        let files = folder.appendingPathComponent(filesFolderName)
        let copied: StoreFilesCopy.Copied
        do {
            copied = try StoreFilesCopy.copy(storeAt: store, into: files)
        } catch {
            // No partial copy is left to be taken for a whole one; the folder was new or empty.
            try? FileManager.default.removeItem(at: files)
            if folderType == nil { try? FileManager.default.removeItem(at: folder) }
            throw error
        }

        let archive = folder.appendingPathComponent(archiveName)
        var exportOptions = Exporter.Options(createdAt: options.createdAt)
        if let compression = options.compression { exportOptions.compression = compression }
        exportOptions.verify = true
        exportOptions.cancellation = options.cancellation
        // By the model the store carries, never by a schema this library knows: the app's model
        // may be older or newer than the store's.
        exportOptions.profiles = []
        var result = RescueResult(
            store: store, folder: folder, copiedFiles: copied.files.map { URL(fileURLWithPath: $0) }, copiedBytes: copied.bytes,
            notCopied: copied.notCopied.map { URL(fileURLWithPath: $0) },
            archive: nil, exportFailure: nil, exportError: nil, schemaVersion: nil, entities: [:], records: 0, warnings: [])
        do {
            let summary = try Exporter.export(storeAt: store, to: .file(archive, overwrite: false), options: exportOptions)
            result.archive = summary.archive
            result.schemaVersion = summary.schemaVersion
            result.entities = Dictionary(summary.entities.map { ($0.name, $0.count) }, uniquingKeysWith: +)
            result.records = summary.verification?.records ?? summary.entities.reduce(0) { $0 + $1.count }
            result.warnings = summary.warnings
        } catch is CancellationError {
            // Cancelled, not failed: the copy is made, and the caller asked to stop.
            throw CancellationError()
        } catch {
            result.exportError = error
            result.exportFailure = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        }
        return result
    }
}
