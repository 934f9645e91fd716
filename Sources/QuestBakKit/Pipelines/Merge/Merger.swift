import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// `questbak import ARCHIVE --merge --into STORE`: an archive's records merged into a store that
/// has data of its own (a reinstalled device that has played since the backup, a second device
/// before its first sync). Nothing of the store is deleted; every insert, fill, conflict and
/// superseded cloudID is reported; the store is replaced atomically, the old one kept beside it.
///
/// The story: the archive is restored as it would be by `import` (verified, and repaired with
/// `validate`) into a scratch store of the store's own version; a snapshot of the store is copied
/// beside it; `RecordMerge` merges the scratch store's records into the copy in one transaction;
/// the copy is read back and checked; and it replaces the store, unless the merge changed nothing,
/// in which case the store is left byte for byte as it was.
package enum Merger {
    /// Which value a field keeps when both have one (the API's name for it is public).
    package typealias Preference = QuestBak.MergePreference

    package struct Options {
        /// How the archive is restored before the merge, as `import` restores it: `validate`
        /// (repairs of the archive's own data; without it an archive that needs any is refused),
        /// `now`, `randomIDs`, `allowNewer`, `profiles`; `keepDistinctIDs` also keeps such records
        /// apart when matching; `dryRun` and `backupStamp` are the merge's own. The target version,
        /// template and replace are the merge's to set: the store's version, no template, replaced.
        public var restore = Importer.Options()
        public var preference: Preference = .store
        /// Entity name → the date property that says which copy is newer, for `.newer`.
        public var newerBy: [String: String] = [:]

        public init() {}
    }

    /// What a merge did with one entity's records, and in all (the API's names are public).
    package typealias EntityResult = QuestBak.MergeResult.Entity
    package typealias Result = QuestBak.MergeResult

    /// Property names that say when a record last changed, tried in this order for `.newer`
    /// when `newerBy` names none for an entity.
    package static let conventionalModificationDates = [
        "updatedAt", "modifiedAt", "lastModified", "lastModifiedAt", "modificationDate", "dateModified", "lastUpdated",
    ]

    package static func run(
        archive file: String, displayName: String? = nil, into target: URL, options: Options, workDirectory: URL
    ) throws -> Result {
        let path = displayName ?? file
        StorePlacement.removeStaleTemporaries(besides: target)
        let before = try FileFingerprint.of(CoreDataSQL.storeFileSuffixes.map { CoreDataSQL.sidecar(of: target, $0) })
        let snapshot = try StoreSnapshot(storeAt: target)
        let (description, _) = try snapshot.read { db in
            try StoreReader.requireCoreDataSQL(db, path: target.path)
            return try StoreDescription.resolve(db, path: target.path, candidates: options.restore.schemas)
        }
        let manifest = try ArchiveReader(path: file, displayPath: path, keys: options.restore.keys).readManifest()
        let kind = manifest.source.schema
        var targetVersion: String?
        switch description {
        case .tables(let reason):
            throw ImportError.notImportable(
                archive: path,
                reason: "no model describes the store \(target.path) (\(reason)), so its records cannot be matched to the archive's")
        case .knownVersion(let version):
            guard kind == ArchiveManifest.Source.knownSchema else {
                throw ImportError.notImportable(
                    archive: path,
                    reason: "it is an archive of another app's store (\(UntrustedText.display(kind))); \(target.path) is TimeQuest's")
            }
            targetVersion = version.versionIdentifier
        case .model(let storeLayout):
            guard kind != ArchiveManifest.Source.knownSchema else {
                throw ImportError.notImportable(archive: path, reason: "it is a TimeQuest archive; \(target.path) is another app's store")
            }
            // Another app's archive is no older or newer version of this store's model (SameApp).
            let storeEntities = storeLayout.entities.map(\.name)
            guard SameApp.check(storeEntities, manifest.entities.map(\.name)) else {
                throw ImportError.notImportable(
                    archive: path,
                    reason: "it is not of the same app as \(target.path): they have no entity in common (the archive's: "
                        + "\(SameApp.list(manifest.entities.map(\.name))); the store's: \(SameApp.list(storeEntities)))")
            }
            guard kind == ArchiveManifest.Source.modelSchema else {
                throw ImportError.notImportable(
                    archive: path,
                    reason: "it is a generic archive (no model described the store it came from), so its records cannot be matched")
            }
        }

        // The archive, restored as `import` would, as the store's version, into a scratch store.
        var importOptions = options.restore
        importOptions.targetVersion = targetVersion
        importOptions.template = nil
        importOptions.replace = false
        importOptions.dryRun = false
        let scratchFolder = workDirectory.appendingPathComponent("archive-store")
        let importWork = workDirectory.appendingPathComponent("import")
        try FileManager.default.createDirectory(at: importWork, withIntermediateDirectories: true)
        let scratch = scratchFolder.appendingPathComponent("default.store")

        // The merged store is built beside the target, from a snapshot of it.
        let merged = StorePlacement.temporaryStoreURL(besides: target)
        TemporaryFiles.createdStore(merged)
        defer { TemporaryFiles.removeStore(merged) }
        let log = try RepairLog(directory: workDirectory)
        // The merge reads the restored archive only, as the restore's read-back proof does: it
        // runs beside the proof, on this core while the proof has the other (`besideReadBack`),
        // and what it made counts only once the restore returns, the proof passed. A restore
        // made again (`NotAsExported`) runs it again, from the store's copy made again.
        var attempt: MergedCopy?
        var attempts = 0
        var integrityChecks: [BackgroundResult<Bool>] = []
        defer { withExtendedLifetime(snapshot) { for check in integrityChecks { _ = check.error() } } }
        importOptions.besideReadBack = { restoredStore, restoreLog in
            attempts += 1
            // What an attempt before made (or began, if it failed) is made again from the start.
            if attempts > 1 {
                attempt = nil
                try log.reset()
                for suffix in CoreDataSQL.storeFileSuffixes { try? FileManager.default.removeItem(atPath: merged.path + suffix) }
            }
            attempt = try mergeRecords(
                of: restoredStore, restoreLog: restoreLog, into: merged, from: snapshot, description: description, options: options,
                log: log, archive: path, targetVersion: targetVersion, integrityChecks: &integrityChecks)
        }
        let restored = try Importer.run(archive: file, displayName: path, into: scratch, options: importOptions, workDirectory: importWork)
        guard let done = attempt else { preconditionFailure("Importer.run returned without running besideReadBack") }
        let (layout, merge, framesWritten) = (done.layout, done.merge, done.framesWritten)
        // What the restore did to the scratch store's own folder is no concern of the user's.
        var notes = restored.notes.filter { !$0.contains(scratchFolder.path) }.map { "archive: " + $0 }
        let archiveRepairs = restored.counts.filter { $0.key.hasPrefix("repair.") || $0.key.hasPrefix("unstorable.") }
        if !archiveRepairs.isEmpty {
            notes.append(
                "the archive's own records were repaired before the merge (\(archiveRepairs.values.reduce(0, +)) repairs, the same a validating import of the archive alone would make and list)"
            )
        }
        notes += done.layoutNotes
        notes += merge.notes
        if merge.archiveCloudIDsAreMade {
            notes.append(
                "the archive's cloudIDs were made by its migration to \(targetVersion ?? "the store's version"): none is superseded in CloudKit"
            )
        }
        // The merged file was opened with no WAL (`copyFiles` copies the main file alone) and
        // written in one transaction, whose pages go to the WAL: with none there, no page of it
        // differs from the copy it was made from, and an integrity check reads the same bytes.
        // Any other answer of the copy's (damage, an error) is asked of the merged file again.
        let integrityShown = framesWritten == 0 && (try? done.integrityBeforeMerge.value()) == true
        let (written, referenced) = try verify(
            merged, layout: layout, counts: merge.counts, target: target, integrityShown: integrityShown)
        // The external-storage files that records merged in refer to, and the store lacks.
        let needed = referenced.subtracting(try ExternalStorage.files(forStore: target).files.map(\.name))
        let external = try ExternalStorage.files(forStore: scratch).files.filter { needed.contains($0.name) }.map {
            (name: $0.name, source: $0.url)
        }
        if !external.isEmpty {
            notes.append(
                "\(options.restore.dryRun ? "would write" : "wrote") \(external.count) external-storage file(s) to \(ExternalStorage.folder(forStore: target).path)"
            )
        }
        FaultPoint.reached("merged store read back and verified")

        // Conflicts the store won, superseded cloudIDs and untranslatable references change nothing.
        let storeChanged =
            ["merge.insert", "merge.fill", "merge.link"].contains { (log.counts[$0] ?? 0) > 0 }
            || merge.counts.values.contains { $0.changed > 0 }
        var backup: URL?
        if storeChanged && !options.restore.dryRun {
            guard try FileFingerprint.of(CoreDataSQL.storeFileSuffixes.map { CoreDataSQL.sidecar(of: target, $0) }) == before else {
                throw ImportError.storeChangedDuringMerge(store: target.path)
            }
            // The last point where a cancelled merge leaves the store as it was.
            try options.restore.cancellation?.check()
            let installed = try ExternalStorage.install(external, forStore: target)
            do {
                backup = try StorePlacement.place(merged, at: target, replace: true, backupStamp: options.restore.backupStamp)
            } catch {
                ExternalStorage.remove(installed)
                throw error
            }
        } else if !storeChanged {
            notes.append("the store already holds every record of the archive: left as it was")
        }
        let entities = layout.entities.map { entity in
            let counts = merge.counts[entity.name] ?? .init()
            return EntityResult(
                name: entity.name, store: counts.inStore, archive: counts.inArchive, matched: counts.matchedBy, inserted: counts.inserted,
                changed: counts.changed, written: written[entity.name] ?? 0)
        }.sorted { $0.name < $1.name }
        return Result(
            archive: URL(fileURLWithPath: file), archiveName: path, target: target, dryRun: options.restore.dryRun,
            unchanged: !storeChanged,
            schemaVersion: targetVersion ?? manifest.effectiveSchemaVersion, preference: options.preference, entities: entities,
            counts: log.counts, changes: log.total, archiveRepairs: archiveRepairs, backup: backup,
            backupFiles: backup.map { StorePlacement.backupFiles($0) } ?? [], notes: notes, log: log)
    }

    /// What the merge made of the restored archive in the store's copy, before it is read back.
    private struct MergedCopy {
        var layout: MergeLayout
        /// The layout's notes and those of the `.newer` columns, in that order.
        var layoutNotes: [String]
        var merge: RecordMerge
        /// The frames the merge's WAL held at its checkpoint: 0 where it wrote no page of the store.
        var framesWritten: Int?
        var integrityBeforeMerge: BackgroundResult<Bool>
    }

    /// The archive's records (`restored`, the restore's scratch store, read only) merged into a
    /// copy of the store (`merged`) in one transaction; `log` gets the merge's entries.
    private static func mergeRecords(
        of restored: URL, restoreLog: RepairLog, into merged: URL, from snapshot: StoreSnapshot, description: StoreDescription,
        options: Options, log: RepairLog, archive path: String, targetVersion: String?, integrityChecks: inout [BackgroundResult<Bool>]
    ) throws -> MergedCopy {
        let layout: MergeLayout
        switch description {
        case .knownVersion(let version): layout = try MergeLayout(version: version)
        case .model(let storeLayout):
            layout = try sameModel(store: snapshot, storeLayout: storeLayout, scratch: restored, archive: path)
        case .tables: preconditionFailure("refused above")
        }
        var notes = layout.notes
        let newerColumns = try newerColumns(layout, options: options, notes: &notes)

        try snapshot.copyFiles(to: merged)
        // The store's copy, which the merged store is, byte for byte, until the merge writes a
        // page of it: its integrity checked on a second core while the matching keeps this one
        // busy. `verify` takes its "ok" for the merged store's where the merge wrote no page.
        let copyPath = snapshot.copyPath
        let integrityBeforeMerge = BackgroundResult { try StoreReader.passesIntegrityCheck(path: copyPath) }
        integrityChecks.append(integrityBeforeMerge)
        // Read beside the matching too: the store's copy is not written after `copyFiles`, and
        // the restored archive not at all.
        let referenceChecks = ReferenceChecks.start(layout: layout, storeCopy: copyPath, archive: restored.path)
        defer { _ = (referenceChecks.danglingBefore.error(), referenceChecks.archiveNamesOnlyRecords.error()) }
        let cloudIDChecks = CloudIDChecks.start(layout: layout, storeCopy: copyPath, archive: restored.path)
        defer { cloudIDChecks.finish() }
        var merge: RecordMerge
        var framesWritten: Int?
        do {
            // It attaches the restored archive while the read-back proof opens it.
            var configuration = StoreReader.besideConfiguration(readonly: false)
            configuration.foreignKeysEnabled = false
            let queue = try DatabaseQueue(path: merged.path, configuration: configuration)
            merge = try queue.writeWithoutTransaction { db in
                for pragma in Durability.sqlitePragmas { try db.execute(sql: pragma) }
                try db.execute(sql: "ATTACH DATABASE ? AS incoming", arguments: [restored.path])
                var merge = RecordMerge(
                    db: db, layout: layout, preference: options.preference, newerColumns: newerColumns,
                    keepDistinctIDs: options.restore.keepDistinctIDs, log: log, storePath: snapshot.sourceURL.path)
                merge.archiveCloudIDsAreMade = (restoreLog.counts["migration.cloudID"] ?? 0) > 0
                merge.referenceChecks = referenceChecks
                merge.cloudIDChecks = cloudIDChecks
                try db.inTransaction {
                    try merge.run()
                    // The report's last batch written in the background must have been written.
                    try log.finishWrites()
                    FaultPoint.reached("before commit of the merge")
                    return .commit
                }
                try db.execute(sql: "DETACH DATABASE incoming")
                // One row: busy, the WAL's frames (-1 for a store not in WAL mode), those checkpointed.
                framesWritten = try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)")?[1]
                return merge
            }
            try queue.close()
        } catch let error as DatabaseError {
            throw StoreError.wrapping(error, path: snapshot.sourceURL.path)
        }
        return MergedCopy(
            layout: layout, layoutNotes: notes, merge: merge, framesWritten: framesWritten, integrityBeforeMerge: integrityBeforeMerge)
    }

    /// The archive's model must be the store's: the same entity hashes and the same tables.
    private static func sameModel(store: StoreSnapshot, storeLayout: ModelLayout, scratch: URL, archive: String) throws -> MergeLayout {
        let (storeHashes, model) = try store.read { db -> ([String: Data], CompiledModel) in
            let metadata = try StoreReader.metadata(db, path: store.path)
            guard let content = try StoreReader.modelCache(db) else {
                throw StoreError.noModel(path: store.path, reason: "it has no model cache")
            }
            return (metadata.entityHashes, try ModelCacheDecoder.decode(content))
        }
        let scratchSnapshot = try StoreSnapshot(storeAt: scratch)
        let (archiveHashes, archiveLayout) = try scratchSnapshot.read { db in
            (try StoreReader.metadata(db, path: archive).entityHashes, try ModelLayout(db, model: model))
        }
        let differing = Set(storeHashes.keys).union(archiveHashes.keys).filter { storeHashes[$0] != archiveHashes[$0] }.sorted()
        guard differing.isEmpty else {
            throw ImportError.notImportable(
                archive: archive,
                reason:
                    "its model is not the store's (entities that differ: \(differing.joined(separator: ", "))); migrate the older store to the newer model first"
            )
        }
        guard archiveLayout.entities == storeLayout.entities, archiveLayout.problems.isEmpty else {
            throw ImportError.notImportable(
                archive: archive, reason: "its store's tables are laid out otherwise than \(store.path)'s, though the model is the same")
        }
        return MergeLayout(model: model, layout: storeLayout)
    }

    /// For `.newer`: each entity's date column, named by `newerBy` or by convention; entities
    /// without one keep the store's values, and a note says so.
    private static func newerColumns(_ layout: MergeLayout, options: Options, notes: inout [String]) throws -> [String: String] {
        guard options.preference == .newer else { return [:] }
        for (entity, property) in options.newerBy.sorted(by: { $0.key < $1.key }) {
            guard let plan = layout.entity(named: entity) else {
                throw ImportError.notADateProperty(
                    entity: entity, property: property,
                    reason: "the store has no entity \(entity) (it has \(layout.entities.map(\.name).sorted().joined(separator: ", ")))")
            }
            guard let field = plan.field(named: property) else {
                throw ImportError.notADateProperty(entity: entity, property: property, reason: "\(entity) has no property \(property)")
            }
            guard field.kind == .date else {
                throw ImportError.notADateProperty(entity: entity, property: property, reason: "it is not a date")
            }
        }
        var columns: [String: String] = [:]
        var without: [String] = []
        for entity in layout.entities {
            let names = options.newerBy[entity.name].map { [$0] } ?? conventionalModificationDates
            if let field = names.lazy.compactMap({ entity.field(named: $0) }).first(where: { $0.kind == .date }) {
                columns[entity.name] = field.column
                notes.append("newer by \(entity.name).\(field.name)")
            } else {
                without.append(entity.name)
            }
        }
        if !without.isEmpty {
            notes.append(
                "no date property says which copy is newer for \(without.joined(separator: ", ")) and none was named for it: the store's values are kept there"
            )
        }
        return columns
    }

    /// Reads the merged store back: intact (unless `integrityShown`: the same bytes passed the
    /// integrity check already), every store record still there, every inserted one added, and no
    /// reference the merge wrote pointing at nothing.
    /// Also returns, from the same read, the external-storage files the merged records refer to.
    private static func verify(
        _ url: URL, layout: MergeLayout, counts: [String: RecordMerge.Counts], target: URL, integrityShown: Bool
    ) throws -> (written: [String: Int], externalFiles: Set<String>) {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        defer { try? queue.close() }
        return try queue.read { db in
            guard try integrityShown || String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok" else {
                throw ImportError.verificationFailed(store: url.path, entity: "(file)", expected: "integrity_check ok", found: "damage")
            }
            var written: [String: Int] = [:]
            for entity in layout.entities {
                let found = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(entity.table) r WHERE \(entity.rows("r"))") ?? 0
                let expected = (counts[entity.name]?.inStore ?? 0) + (counts[entity.name]?.inserted ?? 0)
                guard found == expected else {
                    throw ImportError.verificationFailed(
                        store: url.path, entity: entity.name, expected: "\(expected) records", found: "\(found) records")
                }
                written[entity.name] = found
            }
            return (written, Set(try ExternalStorage.references(db).map(\.name)))
        }
    }
}
