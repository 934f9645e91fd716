import CoreDataStore
import Foundation
import QuestBakArchive

extension StoreRescue {
    /// What `mergeRescue` did with a rescue (the API's names are public).
    package typealias Outcome = QuestBak.RescueMergeResult.Outcome
    package typealias Unplaced = QuestBak.RescueMergeResult.Unplaced
    package typealias MergeResult = QuestBak.RescueMergeResult

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
        let archiveModel = try CompiledModel.model(ofStoreAt: archived)
        let storeModel = try CompiledModel.model(ofStoreAt: store)

        var result = MergeResult(
            outcome: .merged, archive: archive, store: store, archiveSchemaVersion: archiveModel.versionIdentifier,
            storeSchemaVersion: storeModel.versionIdentifier, entities: [], inserted: 0, unplaced: [], migrationCounts: [:],
            mergeCounts: [:], archiveRepairs: [:], report: nil, backupFiles: [], notes: [])
        if ModelVersionHashes(model: archiveModel) != ModelVersionHashes(model: storeModel),
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
        if ModelVersionHashes(model: archiveModel) != ModelVersionHashes(model: storeModel) {
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
    private static func writeReport(_ url: URL, logs: [RepairLog]) throws -> URL {
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
        return url
    }
}
