import CoreDataStore
import Foundation
import QuestBakArchive

extension StoreRescue {
    /// How the rescued records reached the fresh store, or why they did not.
    public enum Outcome: String, Sendable, Encodable {
        /// The archive's model is the fresh store's: its records were merged as they are.
        case merged
        /// The archive's model is older: it was migrated to the fresh store's model (as
        /// `ModelMigrator` migrates a store), then merged.
        case migratedAndMerged
        /// The archive's model is newer than the app's: nothing was merged. The archive and the
        /// copy of the store's files are kept for a build that knows that model.
        case keptNewer
    }

    /// A value, or a whole record, the fresh store's model has no place for (a removed
    /// attribute, relationship or entity): not merged, and kept in the result and the report.
    public struct Unplaced: Sendable, Encodable, Equatable {
        /// The record's entity in the rescued store's model.
        public var entity: String
        /// The record's `Z_PK` in the rescued store.
        public var primaryKey: Int64
        /// The property; nil when the whole record has no place (its entity is gone).
        public var field: String?
        /// The value (or the record's values), as JSON.
        public var value: String
    }

    /// What `mergeRescue` did with a rescue.
    public struct MergeResult: Sendable, Encodable {
        /// Merged as it was, migrated and merged, or kept for a newer build.
        public var outcome: Outcome
        /// The rescue's archive.
        public var archive: String
        /// The fresh store the records were merged into.
        public var store: String
        /// The version identifier of the archive's model.
        public var archiveSchemaVersion: String
        /// The version identifier of the fresh store's model.
        public var storeSchemaVersion: String
        /// Per entity of the fresh store's model: records matched, inserted, changed.
        public var entities: [Merger.EntityResult]
        /// Records the merge added to the fresh store.
        public var inserted: Int
        /// What the fresh store's model has no place for, every value of it.
        public var unplaced: [Unplaced]
        /// What the migration changed on the way, by `kind.rule` (defaults filled, cloudIDs made,
        /// values with no place).
        public var migrationCounts: [String: Int]
        /// What the merge did, by `kind.rule`.
        public var mergeCounts: [String: Int]
        /// Repairs the archive's own records needed before they could be merged (duplicates of a
        /// uniqueness constraint, links to nothing), by `kind.rule`, as `import --validate`
        /// makes them; the archive keeps the records as they were.
        public var archiveRepairs: [String: Int]
        /// Every entry of the migration and the merge, one JSON object a line; nil when nothing
        /// was merged.
        public var report: String?
        /// The fresh store as it was before the merge, kept beside it.
        public var backupFiles: [String]
        /// What the call did as a whole (a migration's notes, why nothing was merged), one
        /// sentence each.
        public var notes: [String]
    }

    /// Merges the archive of the rescue in `folder` into `store`, a store the app made with its
    /// own model (close its `ModelContainer` first: the store is replaced by the merged one,
    /// and the one it was is kept beside it). Whether the archive is migrated first, or kept
    /// for a newer build, is decided by the two models: the same entity hashes merge as they
    /// are; a newer version identifier (`VersionedSchema.versionIdentifier`) on the archive's
    /// model keeps it; any other model is taken for an older one and migrated, every value it
    /// loses reported.
    package static func merge(rescuedIn folder: URL, into store: URL, options: Options = Options()) throws -> MergeResult {
        let archive = folder.appendingPathComponent(archiveName)
        guard StoreFilesCopy.entryType(archive.path) != nil else {
            throw ArchiveError.unreadable(
                path: archive.path,
                reason:
                    "the rescue has no archive (its export failed?); the store's files as they were are in \(folder.appendingPathComponent(filesFolderName).path)"
            )
        }
        let work = try TemporaryDirectory.create(prefix: "questbak-rescue")
        defer { TemporaryDirectory.remove(work) }

        // The archive given back as it was archived, to read its model from the store it makes.
        let archived = work.appendingPathComponent("archived/default.store")
        var restore = Importer.Options()
        restore.asArchived = true
        restore.profiles = []
        restore.cancellation = options.cancellation
        _ = try Importer.run(archive: archive.path, into: archived, options: restore, workDirectory: try subfolder(work, "restore"))
        let archiveModel = try Schema.model(ofStoreAt: archived)
        let storeModel = try Schema.model(ofStoreAt: store)

        var result = MergeResult(
            outcome: .merged, archive: archive.path, store: store.path, archiveSchemaVersion: archiveModel.versionIdentifier,
            storeSchemaVersion: storeModel.versionIdentifier, entities: [], inserted: 0, unplaced: [], migrationCounts: [:],
            mergeCounts: [:], archiveRepairs: [:], report: nil, backupFiles: [], notes: [])
        if ModelVersionHashes(schema: archiveModel) != ModelVersionHashes(schema: storeModel),
            VersionIdentifier.isNewer(archiveModel.versionIdentifier, than: storeModel.versionIdentifier)
        {
            result.outcome = .keptNewer
            result.notes.append(
                "the archive's model (\(archiveModel.versionIdentifier)) is newer than the store's (\(storeModel.versionIdentifier)): "
                    + "nothing was merged; the archive \(archive.path) and the store's files in "
                    + "\(folder.appendingPathComponent(filesFolderName).path) are kept for a build that knows that model")
            return result
        }

        var merging = archive
        var logs: [RepairLog] = []
        if ModelVersionHashes(schema: archiveModel) != ModelVersionHashes(schema: storeModel) {
            // Migrated as `questbak migrate --to` migrates a store: by the fresh store's model.
            let migrated = work.appendingPathComponent("migrated/default.store")
            try FileManager.default.createDirectory(at: migrated.deletingLastPathComponent(), withIntermediateDirectories: true)
            let now = Date(timeIntervalSince1970: TimeInterval(options.createdAt)).timeIntervalSinceReferenceDate
            var migrateOptions = Migrator.Options(now: now)
            migrateOptions.cancellation = options.cancellation
            let migration = try ModelMigrator.migrate(
                storeAt: archived, toModelOf: store, output: migrated, options: migrateOptions,
                workDirectory: try subfolder(work, "migrate"))
            logs = migration.earlierLogs + [migration.log]
            result.outcome = .migratedAndMerged
            result.migrationCounts = migration.counts
            // The scratch store's own path means nothing to the app.
            result.notes += (migration.notes ?? []).map { "migration: " + $0 }
            for log in logs {
                for entry in try log.firstEntries(log.total) where entry.kind == RepairEntry.Kind.unstorable.rawValue {
                    result.unplaced.append(
                        Unplaced(entity: entry.entity, primaryKey: entry.primaryKey, field: entry.field, value: entry.old ?? "null"))
                }
            }
            merging = work.appendingPathComponent("migrated.qbak")
            var exportOptions = Exporter.Options(createdAt: options.createdAt)
            exportOptions.compression = .none
            exportOptions.profiles = []
            exportOptions.cancellation = options.cancellation
            _ = try Exporter.export(storeAt: migrated, to: .file(merging, overwrite: false), options: exportOptions)
        }

        var mergeOptions = Merger.Options()
        // The archive's own repairs are made (and counted), not a reason to refuse the rescue.
        mergeOptions.restore.validate = true
        mergeOptions.restore.profiles = []
        mergeOptions.restore.cancellation = options.cancellation
        mergeOptions.restore.backupStamp = options.backupStamp
        mergeOptions.restore.now = Date(timeIntervalSince1970: TimeInterval(options.createdAt)).timeIntervalSinceReferenceDate
        let merge = try Merger.run(
            archive: merging.path, displayName: archive.path, into: store, options: mergeOptions,
            workDirectory: try subfolder(work, "merge"))
        result.entities = merge.entities
        result.inserted = merge.entities.reduce(0) { $0 + $1.inserted }
        result.mergeCounts = merge.counts
        result.archiveRepairs = merge.archiveRepairs
        result.backupFiles = merge.backupFiles
        result.notes += merge.notes.filter { !$0.contains(work.path) }
        result.report = try writeReport(folder.appendingPathComponent(reportName), logs: logs + [merge.log])
        if !result.unplaced.isEmpty {
            result.notes.append(
                "\(result.unplaced.count) value(s) the store's model has no place for were not merged; they are in the result, in "
                    + "\(folder.appendingPathComponent(reportName).path), and in the archive")
        }
        return result
    }

    private static func subfolder(_ parent: URL, _ name: String) throws -> URL {
        let url = parent.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Every entry of `logs`, in order, one JSON object a line, written atomically and durably.
    private static func writeReport(_ url: URL, logs: [RepairLog]) throws -> String {
        let file = try AtomicOutputFile(destination: url, overwrite: true)
        let handle = FileHandle(fileDescriptor: file.fileDescriptor, closeOnDealloc: false)
        do {
            for log in logs {
                try log.forEachEntryLine { line in try handle.write(contentsOf: Data((line + "\n").utf8)) }
            }
        } catch {
            file.abandon()
            throw OutputError.io(path: url.path, reason: error.localizedDescription)
        }
        try file.commit()
        return url.path
    }
}
