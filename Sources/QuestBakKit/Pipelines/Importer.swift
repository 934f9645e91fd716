import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// `questbak import`: an archive into a new store, verified, validated and repaired on the way,
/// put in place atomically (spec: "Write"; docs/archive-format.md).
package enum Importer {
    package struct Options {
        /// Allow repairs. Without it an archive that needs any is refused and nothing is written.
        public var validate = false
        /// Restore the records exactly as archived, duplicates and orphans included: repairs are
        /// neither made nor refused. What an export's own proof restores (`Exporter.Options.verify`):
        /// the archive must give back the store it was made from, whatever that store holds.
        public var asArchived = false
        /// The schema version to write; `nil` keeps the archive's.
        public var targetVersion: String?
        /// A store whose metadata (hashes, framework version, model cache) the new store takes.
        public var template: URL?
        /// Swap an existing target, keeping it as a backup.
        public var replace = false
        /// Do everything but put the store in place.
        public var dryRun = false
        /// What `Date.now` defaults become (seconds since 2001); `nil`: the archive's `createdAt`.
        public var now: Double?
        /// Random cloudIDs instead of deterministic UUIDv5 ones.
        public var randomIDs = false
        /// Read archives of a newer schema, reporting what the target cannot store.
        public var allowNewer = false
        /// Keep records of one natural key whose cloudIDs differ as distinct records.
        public var keepDistinctIDs = false
        /// Names the backup of a replaced store (`<store>.questbak-backup-<stamp>`).
        public var backupStamp = "backup"
        /// The apps whose known model versions an archive may be of (the command line passes
        /// `AppProfile.timeQuest`); an archive written by a profile's schema (format 1 or 2) needs
        /// its profile. None by default: the library applies no app's profile of its own accord.
        public var profiles: [AppProfile] = []
        /// The profiles' versions, oldest first; the last is the newest.
        var schemas: [ModelVersion] { AppProfile.versions(of: profiles) }
        /// What an age-encrypted archive is opened with (each pass decrypts it again).
        public var keys = ArchiveKeys()
        /// Told how far the restore is through each entity's records (the manifest's counts).
        public var progress: ((RecordProgress) -> Void)?
        /// Checked between batches of records and before the store is put in place.
        package var cancellation: Cancellation?
        /// Whether a repair rule may skip its check of an entity where what the restore inserted
        /// rules out anything to find (`InsertedValues`). Off only in the tests that compare the
        /// two ways: every check then runs, as before.
        package var skipsChecksTheInsertsRuleOut = true
        /// Whether a model archive's record lines are decoded on a second core, ahead of the
        /// inserts (`StatementRestore.write`). Off only in the tests that compare the two ways.
        package var decodesLinesAhead = true
        /// Whether a model archive's links kept on destination rows go into each destination's
        /// row as it is inserted (`StatementRestore.write`). Off only in the tests that compare the two ways.
        package var bindsLinksOnInsert = true
        /// How many more read-only connections encode large entities described by a model (a
        /// format 1 or 2 archive's schema, a format 3 archive's own) in ranges of keys for the
        /// read-back proof, each on a thread of its own (the digests
        /// are of the same bytes with any number, 0 included), and how many rows a range holds
        /// (the tests make it small, to cut every entity into ranges).
        package var readBackReaders = ProcessInfo.processInfo.activeProcessorCount > 1 ? 2 : 0
        package var readBackRowsPerRange = 2048
        /// Whether an archive's indexes (and Core Data's tables after them) are made once its
        /// records are in, not kept up row by row: a format 1 or 2 archive's
        /// (`StatementRestore.statementsAfterRecords`), another app's (`ModelIndexesAfterRecords`).
        /// Off only in the tests that compare the two ways.
        package var makesIndexesAfterRecords = true
        /// Work that reads the restored store (at the URL given, with the restore's log), run on
        /// the calling thread while the read-back proof runs on threads of its own, once the
        /// records are written: a merge's matching and settling, which kept one core busy after
        /// the proof while the other had nothing to do. The proof's failure is the restore's,
        /// whatever the work did (the work is waited for first, and runs again after a restore
        /// made again): it must keep nothing it made unless the restore returns. `nil`: none.
        package var besideReadBack: ((URL, RepairLog) throws -> Void)?
        /// How many links kept on destinations' rows are held in memory until their table is read
        /// (`PendingLinks`); the tests make it small, to write them part way, or 0.
        package var linksHeldInMemory = PendingLinks.limit

        public init() {}
    }

    /// What a restore did with one entity's records, and in all (the API's names are public).
    package typealias EntityResult = QuestBak.RestoreResult.Entity
    package typealias Result = QuestBak.RestoreResult

    /// Imports the archive file `file` (standard input is the caller's to save to a file first:
    /// it is read twice); `displayName` names it in messages and the result. `target` nil
    /// validates only, and, like a dry run, does everything but put a store in place. The
    /// returned log lives in `workDirectory`.
    ///
    /// In four steps, each its own function: what is refused before anything is written
    /// (`preflight`), where the new store is built (`Workplace`), the restore itself (one path for
    /// every archive, `StatementRestore`; a format 1 or 2 archive read through `LegacyArchive`),
    /// and putting the store in place (`place`).
    package static func run(
        archive file: String, displayName: String? = nil, into target: URL?, options: Options, workDirectory: URL
    ) throws -> Result {
        let path = displayName ?? file
        let source = try preflight(archive: file, path: path, into: target, options: options)
        let log = try RepairLog(directory: workDirectory)
        var workplace = try Workplace(target: target, options: options, workDirectory: workDirectory)
        defer { if !workplace.placed { StorePlacement.removeFolders(workplace.createdFolders) } }
        TemporaryFiles.createdStore(workplace.storeURL)
        defer { TemporaryFiles.removeStore(workplace.storeURL) }

        let progress = RecordProgressCounter(
            report: options.progress, totals: Dictionary(source.manifest.entities.map { ($0.name, $0.count) }, uniquingKeysWith: +),
            cancellation: options.cancellation)
        // The files are spooled only when they are to be written (not for a dry run or `verify`).
        let spool = target == nil || options.dryRun ? nil : workDirectory.appendingPathComponent("external")
        defer { if let spool { try? FileManager.default.removeItem(at: spool) } }
        let restored = try restore(source, to: workplace.storeURL, spool: spool, log: log, options: options, progress: progress)

        var notes = workplace.notes + restored.notes
        var backup: URL?
        if let target {
            (backup, notes) = try place(workplace.storeURL, at: target, external: restored.external, options: options, notes: notes)
            workplace.placed = !options.dryRun
        }
        return Result(
            archive: URL(fileURLWithPath: file), archiveName: path, target: target, dryRun: options.dryRun || target == nil,
            sourceSchemaVersion: source.manifest.effectiveSchemaVersion,
            targetSchemaVersion: source.restore.schemaVersion,
            entities: restored.entities, counts: log.counts, repairs: log.repairs, changes: log.total, backup: backup,
            backupFiles: backup.map { StorePlacement.backupFiles($0) } ?? [], notes: notes, log: log)
    }

    /// What `preflight` found: the archive's manifest and how it restores.
    private struct Source {
        var reader: ArchiveReader
        var manifest: ArchiveManifest
        var restore: StatementRestore
    }

    /// Everything refused before anything is written: a target that exists or cannot be made, an
    /// unreadable manifest, external-storage files that would land outside the store's folder,
    /// and options an archive of another app's store cannot honour.
    private static func preflight(archive file: String, path: String, into target: URL?, options: Options) throws -> Source {
        if let target {
            // Before any refusal: a run killed between linking its store into place and removing
            // its temporary name leaves both, and the next run refuses the existing target.
            StorePlacement.removeStaleTemporaries(besides: target)
            try StorePlacement.checkTarget(target, replace: options.replace, creatingFolders: true)
        }
        let reader = ArchiveReader(path: file, displayPath: path, keys: options.keys)
        let manifest = try reader.readManifest()
        let externalNames = manifest.files.map(\.path).filter { $0.hasPrefix(ExternalStorage.memberPrefix) }.map {
            String($0.dropFirst(ExternalStorage.memberPrefix.count))
        }
        if let target, !externalNames.isEmpty {
            // Refused before anything is written: the files would go wherever a link points.
            try ExternalStorage.checkConfined(forStore: target, names: externalNames)
        }
        guard manifest.restoresFromStatements else {
            let legacy = try LegacyArchive(manifest: manifest, archive: path, options: options)
            return Source(reader: reader, manifest: manifest, restore: try StatementRestore(legacy: legacy, archive: path))
        }
        if let requested = options.targetVersion, requested != manifest.effectiveSchemaVersion {
            throw ImportError.notImportable(
                archive: path,
                reason:
                    "it is an archive of another app's store (\(manifest.source.schema)), which restores only as the version it was (\(manifest.effectiveSchemaVersion.isEmpty ? "none" : manifest.effectiveSchemaVersion)), not as \(requested)"
            )
        }
        if options.template != nil {
            throw ImportError.notImportable(
                archive: path,
                reason:
                    "it is an archive of another app's store (\(manifest.source.schema)), which restores with its own metadata, not a template's"
            )
        }
        return Source(reader: reader, manifest: manifest, restore: try StatementRestore(manifest: manifest, archive: path))
    }

    /// Where the store is built: beside the target (so the final rename stays on one file
    /// system), in folders made for it if need be and removed again if the import fails; with
    /// what a dry run or a replace would do, said.
    private struct Workplace {
        var storeURL: URL
        var createdFolders: [URL] = []
        var notes: [String] = []
        /// Set once the store is in place: the folders made for it then stay.
        var placed = false

        init(target: URL?, options: Options, workDirectory: URL) throws {
            storeURL = workDirectory.appendingPathComponent("validated.store")
            if let target, !options.dryRun {
                createdFolders = try StorePlacement.createFolders(for: target)
                storeURL = StorePlacement.temporaryStoreURL(besides: target)
            }
            if let target, options.replace, options.dryRun, FileManager.default.fileExists(atPath: target.path) {
                // What would be set aside, in records, and where (a second replace in one second adds -2).
                let records =
                    (try? StoreSnapshot(storeAt: target).read { db in
                        try StoreReader.modelTables(db).reduce(0) { $0 + (try StoreReader.rowCount(db, table: $1.table)) }
                    }).map { "\($0) records, " } ?? ""
                notes.append(
                    "would keep the existing store (\(records)with its -wal and -shm, when it has them) as \(target.path).questbak-backup-\(options.backupStamp)"
                )
            }
            // The outermost folder made (or to be made) is the one to name: the rest are inside it.
            if let created = createdFolders.first {
                notes.append("created folder " + created.path)
            } else if let target, options.dryRun, let missing = StorePlacement.missingFolders(for: target).first {
                notes.append("would create folder " + missing.path)
            }
        }
    }

    /// What a restore wrote: each entity's counts and digest, the external-storage files it
    /// spooled, and what it did to the store as a whole.
    private struct Restored {
        var entities: [EntityResult]
        var external: [(name: String, spooled: URL?)]
        var notes: [String]
    }

    /// The one restore: the store's statements replayed in order (a format 1 or 2 archive's are
    /// its schema's), then its records, repaired; read back and compared with the digests
    /// computed while writing.
    private static func restore(
        _ source: Source, to storeURL: URL, spool: URL?, log: RepairLog, options: Options, progress: RecordProgressCounter
    ) throws -> Restored {
        let manifest = source.manifest
        let restore = source.restore
        var result = try restore.write(
            from: source.reader, to: storeURL, spool: spool, log: log, validate: options.validate, progress: progress,
            notingInserts: options.skipsChecksTheInsertsRuleOut, decodingAhead: options.decodesLinesAhead,
            bindingLinksOnInsert: options.bindsLinksOnInsert, indexesAfterRecords: options.makesIndexesAfterRecords,
            holdingLinks: options.linksHeldInMemory)
        progress.finishEntity()
        let written: [String: Int]
        do {
            written = try readBack(restore, storeURL, written: result, log: log, options: options)
        } catch is StatementRestore.NotAsExported {
            // Lines an export would have written otherwise (another tool's): restored again, its
            // records encoded inside the transaction, as every archive's were before. Its records
            // were counted once already.
            for suffix in CoreDataSQL.storeFileSuffixes { try? FileManager.default.removeItem(atPath: storeURL.path + suffix) }
            try log.reset()
            result = try restore.write(
                from: source.reader, to: storeURL, spool: spool, log: log, validate: options.validate, encodingDigests: true,
                notingInserts: options.skipsChecksTheInsertsRuleOut, decodingAhead: options.decodesLinesAhead,
                bindingLinksOnInsert: options.bindsLinksOnInsert, indexesAfterRecords: options.makesIndexesAfterRecords,
                holdingLinks: options.linksHeldInMemory)
            written = try readBack(restore, storeURL, written: result, log: log, options: options)
        }
        let readCounts = result.readCounts
        var notes = result.notes
        FaultPoint.reached("read back and verified")
        let members = Dictionary(manifest.entities.map { ($0.name, $0.sha256) }, uniquingKeysWith: { first, _ in first })
        let entities = restore.entityNames.map {
            EntityResult(
                name: $0, read: readCounts[$0] ?? 0, written: written[$0] ?? 0, sha256: result.digests[$0]?.sha256 ?? members[$0] ?? "")
        }
        // A format 1 or 2 archive's restore has never said this (its results stay as they were).
        let history = restore.legacy == nil ? manifest.bookkeepingRows.filter { $0.value > 0 }.sorted { $0.key < $1.key } : []
        if !history.isEmpty {
            notes.append(
                "persistent history and CloudKit mirroring start empty, as Core Data rebuilds them (the source had "
                    + history.map { "\($0.value) rows in \($0.key)" }.joined(separator: ", ") + ")")
        }
        if options.validate, manifest.source.schema == ArchiveManifest.Source.genericSchema {
            notes.append("no repairs are made to a store no model describes: restored exactly as archived")
        }
        return Restored(entities: entities, external: result.external, notes: notes)
    }

    /// The read-back proof of what `write` wrote, with `options.besideReadBack` run on this thread
    /// meanwhile (the proof on threads of its own then). The work is waited for before the
    /// proof's answer is taken, and the proof's failure is thrown before the work's: what fails
    /// fails as it did when the work ran only after the proof had passed.
    private static func readBack(
        _ restore: StatementRestore, _ storeURL: URL, written: StatementRestore.Written, log: RepairLog, options: Options
    ) throws -> [String: Int] {
        let (readers, rowsPerRange) = (options.readBackReaders, options.readBackRowsPerRange)
        guard let beside = options.besideReadBack else {
            return try restore.verifyReadBack(storeURL, written: written, readers: readers, rowsPerRange: rowsPerRange)
        }
        let proof = ReadBackProof {
            try restore.verifyReadBack(storeURL, written: written, readers: readers, rowsPerRange: rowsPerRange)
        }
        let work = Swift.Result { try beside(storeURL, log) }
        let counts = try proof.value()
        try work.get()
        return counts
    }

    /// The read-back proof on a thread of its own, not one of the global queue's: the proof
    /// waits there for its range readers and integrity check, which the global queue runs.
    // @unchecked: `result` is written once on the proof's thread before `done` is signalled, and
    // read only after `done.wait()`; the proof's inputs (a struct of constants, a copy of
    // `Written`) are not touched by the calling thread while it runs.
    private final class ReadBackProof: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private let proof: () throws -> [String: Int]
        private var result: Swift.Result<[String: Int], Error>?

        init(_ proof: @escaping () throws -> [String: Int]) {
            self.proof = proof
            Thread { [self] in
                result = Swift.Result { try self.proof() }
                done.signal()
            }.start()
        }

        func value() throws -> [String: Int] {
            done.wait()
            return try result!.get()
        }
    }

    /// Puts the new store in place (unless this is a dry run), its external-storage files first;
    /// returns the backup of a replaced store and the notes with what was written where.
    private static func place(
        _ storeURL: URL, at target: URL, external: [(name: String, spooled: URL?)], options: Options, notes: [String]
    ) throws -> (backup: URL?, notes: [String]) {
        var notes = notes
        if !external.isEmpty {
            let folder = ExternalStorage.folder(forStore: target).path
            notes.append((options.dryRun ? "would write" : "wrote") + " \(external.count) external-storage file(s) to \(folder)")
        }
        guard !options.dryRun else { return (nil, notes) }
        // The last point where a cancelled restore leaves nothing behind.
        try options.cancellation?.check()
        // The files a record points at are in place before the store that points at them.
        let installed = try ExternalStorage.install(external.compactMap { file in file.spooled.map { (file.name, $0) } }, forStore: target)
        do {
            return (try StorePlacement.place(storeURL, at: target, replace: options.replace, backupStamp: options.backupStamp), notes)
        } catch {
            ExternalStorage.remove(installed)
            throw error
        }
    }
}
