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
        var schemas: [Schema] { AppProfile.versions(of: profiles) }
        /// What an age-encrypted archive is opened with (each pass decrypts it again).
        public var keys = ArchiveKeys()
        /// Told how far the restore is through each entity's records (the manifest's counts).
        public var progress: ((RecordProgress) -> Void)?
        /// Checked between batches of records and before the store is put in place.
        package var cancellation: Cancellation?

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
    /// (`preflight`), where the new store is built (`Workplace`), the restore itself (by the
    /// store's own statements, or by a known schema for a format 1 or 2 archive), and putting
    /// the store in place (`place`).
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
        let restored: Restored
        if let restore = source.statementRestore {
            restored = try restoreByStatements(
                restore, source: source, path: path, to: workplace.storeURL, spool: spool, log: log, options: options, progress: progress)
        } else if let plan = source.plan {
            restored = try restoreBySchema(
                plan, source: source, path: path, to: workplace.storeURL, log: log, options: options, progress: progress)
        } else {
            preconditionFailure("preflight gives a restore by statements or a plan")
        }

        var notes = workplace.notes + restored.notes
        var backup: URL?
        if let target {
            (backup, notes) = try place(workplace.storeURL, at: target, external: restored.external, options: options, notes: notes)
            workplace.placed = !options.dryRun
        }
        return Result(
            archive: URL(fileURLWithPath: file), archiveName: path, target: target, dryRun: options.dryRun || target == nil,
            sourceSchemaVersion: source.manifest.effectiveSchemaVersion,
            targetSchemaVersion: source.plan?.target.versionIdentifier ?? source.manifest.effectiveSchemaVersion,
            entities: restored.entities, counts: log.counts, repairs: log.repairs, changes: log.total, backup: backup,
            backupFiles: backup.map { StorePlacement.backupFiles($0) } ?? [], notes: notes, log: log)
    }

    /// What `preflight` found: the archive's manifest and how it restores.
    private struct Source {
        var reader: ArchiveReader
        var manifest: ArchiveManifest
        /// Any app's store comes back from its own statements.
        var statementRestore: StatementRestore?
        /// A format 1 or 2 archive, through an app profile's schemas.
        var plan: Plan?
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
            return Source(
                reader: reader, manifest: manifest, statementRestore: nil,
                plan: try Plan(manifest: manifest, archive: path, options: options))
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
        return Source(
            reader: reader, manifest: manifest, statementRestore: try StatementRestore(manifest: manifest, archive: path), plan: nil)
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

    /// Any app's store, from its own statements replayed in order, then its records; read back
    /// and compared with the digests computed while writing.
    private static func restoreByStatements(
        _ restore: StatementRestore, source: Source, path: String, to storeURL: URL, spool: URL?, log: RepairLog, options: Options,
        progress: RecordProgressCounter
    ) throws -> Restored {
        let manifest = source.manifest
        let reader = source.reader
        let result = try restore.write(
            from: reader, to: storeURL, spool: spool, log: log, validate: options.validate, progress: progress)
        progress.finishEntity()
        let readCounts = result.readCounts
        var notes = result.notes
        let written = try restore.verifyReadBack(
            storeURL, digests: result.digests,
            files: Dictionary(manifest.files.map { ($0.path, $0.sha256) }, uniquingKeysWith: { first, _ in first }))
        FaultPoint.reached("read back and verified")
        let entities = manifest.entities.map {
            EntityResult(
                name: $0.name, read: readCounts[$0.name] ?? 0, written: written[$0.name] ?? 0,
                sha256: result.digests[$0.name]?.sha256 ?? $0.sha256)
        }
        let history = manifest.bookkeepingRows.filter { $0.value > 0 }.sorted { $0.key < $1.key }
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

    /// A format 1 or 2 archive (TimeQuest's), through the profile's schema: records parsed on a
    /// second core while this one inserts them, then repaired (unless restored as archived),
    /// digested and read back.
    private static func restoreBySchema(
        _ plan: Plan, source: Source, path: String, to storeURL: URL, log: RepairLog, options: Options, progress: RecordProgressCounter
    ) throws -> Restored {
        let manifest = source.manifest
        let reader = source.reader
        var readCounts: [String: Int] = [:]
        var notes: [String] = []
        var digests: [String: EntityMemberEncoding.Digest] = [:]
        var carried = CarriedTables(archive: path, tables: manifest.tables ?? [])
        let summary = try StoreWriter.write(to: storeURL, schema: plan.target) { sink in
            var files: [String: Data] = [:]
            try carried.create(in: sink.database)
            let tables = carried
            // Reading, checking and parsing the archive on a second core while SQLite inserts
            // on this one (the transaction's thread), in the archive's order.
            enum Item {
                case records([Plan.DecodedLine])
                case tableLine(ArchiveManifest.TableMember, Int, Data)
                case file(ArchiveManifest.FileMember, Data)
            }
            try HandOff.run(
                capacity: 16,
                produce: { (handOver: (Item) throws -> Void) in
                    var batch: [Plan.DecodedLine] = []
                    func flush() throws {
                        if !batch.isEmpty { try handOver(.records(batch)) }
                        batch.removeAll(keepingCapacity: true)
                    }
                    _ = try reader.read(
                        onRecordLine: { member, lineNumber, line in
                            batch.append(try plan.decode(line: line, member: member, lineNumber: lineNumber, archive: path))
                            if batch.count >= 512 { try flush() }
                        },
                        onTableLine: { table, lineNumber, line in
                            try flush()
                            try handOver(.tableLine(table, lineNumber, line))
                        },
                        onFile: { file, data in
                            try flush()
                            try handOver(.file(file, data))
                        })
                    try flush()
                },
                consume: { item in
                    switch item {
                    case .records(let lines):
                        for line in lines {
                            readCounts[line.memberName, default: 0] += 1
                            try plan.apply(line, archive: path, into: sink, log: log)
                            try progress.count(line.memberName)
                        }
                    case .tableLine(let table, let lineNumber, let line):
                        try tables.insert(line: line, table: table, lineNumber: lineNumber, into: sink.database)
                    case .file(let file, let data):
                        files[file.path] = data
                    }
                })
            progress.finishEntity()
            if !options.asArchived {
                try RepairPipeline.run(
                    in: RepairContext(
                        db: sink.database, schema: plan.target, entityNumbers: sink.entityNumbers,
                        defaultsSchema: options.schemas.last ?? plan.target,
                        now: options.now ?? plan.createdAt, randomIDs: options.randomIDs,
                        cloudIDKind: plan.source.entities.contains { $0.cloudID != nil } ? .repair : .migration,
                        log: log, path: path, keepDistinctIDs: options.keepDistinctIDs))
            }
            if !options.validate && log.repairs > 0 {
                throw ImportError.repairsNeeded(archive: path, counts: log.counts.filter { $0.key.hasPrefix("repair.") })
            }
            let floors = Dictionary(manifest.entities.map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
            for entity in plan.target.entities {
                digests[entity.name] = try EntityMemberEncoding.digest(
                    sink.database, schema: plan.target, entity: entity, path: storeURL.path)
                // Z_MAX below a record's key would make Core Data hand out that key again.
                if let largest = sink.maximumPrimaryKeys[entity.name], let floor = floors[entity.name], largest > floor {
                    try log.record(
                        RepairEntry(
                            rule: .maximumPrimaryKey, kind: .bookkeeping, entity: entity.name, primaryKey: largest, cloudID: nil,
                            field: "Z_MAX", old: .value(.integer(floor)), new: .value(.integer(largest))))
                }
            }
            let (metadata, metadataNote, computed) = try plan.metadata(archiveFiles: files, archive: path)
            if let metadataNote { notes.append(metadataNote) }
            if computed, let metadataNote {
                // The store's metadata is not the archive's: a change to the store, so an entry
                // of the report (old: the version the archive's metadata names, if any).
                let carried = try files[ArchiveManifest.metadataPath].map { try StoreMetadata(uuid: "", encodedPlist: $0) }
                try log.record(
                    RepairEntry(
                        rule: .metadata, kind: .bookkeeping, entity: "Z_METADATA", primaryKey: 1, cloudID: nil, field: "Z_PLIST",
                        old: .value(carried.map { .stringArray($0.versionIdentifiers) } ?? .null),
                        new: .value(.string(metadataNote))))
            }
            return StoreWriter.Bookkeeping(
                metadata: metadata, modelCache: try plan.modelCache(archiveFiles: files), maximumPrimaryKeyFloor: floors)
        }
        try verifyReadBack(storeURL, schema: plan.target, expected: digests, tables: carried)
        FaultPoint.reached("read back and verified")
        let entities = plan.target.entities.map { entity in
            EntityResult(
                name: entity.name, read: readCounts[entity.name] ?? 0, written: summary.counts[entity.name] ?? 0,
                sha256: digests[entity.name]?.sha256 ?? "")
        }
        return Restored(entities: entities, external: [], notes: notes)
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

    /// Reads the closed store back through a fresh connection and compares every entity's
    /// digest with what was computed inside the write transaction.
    private static func verifyReadBack(
        _ url: URL, schema: Schema, expected: [String: EntityMemberEncoding.Digest], tables: CarriedTables
    ) throws {
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        defer { try? queue.close() }
        try queue.read { db in
            guard try String.fetchOne(db, sql: "PRAGMA integrity_check") == "ok" else {
                throw ImportError.verificationFailed(store: url.path, entity: "(file)", expected: "integrity_check ok", found: "damage")
            }
            for entity in schema.entities {
                let found = try EntityMemberEncoding.digest(db, schema: schema, entity: entity, path: url.path)
                if let wanted = expected[entity.name], wanted != found {
                    throw ImportError.verificationFailed(
                        store: url.path, entity: entity.name, expected: "\(wanted.count) records \(wanted.sha256)",
                        found: "\(found.count) records \(found.sha256)")
                }
            }
            try tables.verify(db, store: url.path)
        }
    }

    /// What an archive becomes: which schema its lines are read with, which one is written,
    /// and how each line turns into a record of the target.
    struct Plan {
        var manifest: ArchiveManifest
        var source: Schema
        var target: Schema
        /// Archive schema newer than any known one, read because `allowNewer` was given.
        var newerSource: Bool
        var options: Options
        var createdAt: Double
        /// The template store's metadata and model cache, read once.
        var template: (path: String, metadata: StoreMetadata, modelCache: Data?)?

        init(manifest: ArchiveManifest, archive: String, options: Options) throws {
            self.manifest = manifest
            self.options = options
            guard manifest.source.schema == ArchiveManifest.Source.knownSchema else {
                throw ImportError.notImportable(
                    archive: archive,
                    reason:
                        "it is a generic archive of another app's store (\(UntrustedText.display(manifest.source.schema))); only TimeQuest archives can be restored"
                )
            }
            let version = manifest.effectiveSchemaVersion
            let schemas = options.schemas
            let supported = schemas.map(\.versionIdentifier)
            guard let newest = schemas.last else {
                // The library applies no app's profile unasked: its caller passes the ones it reads.
                throw ImportError.notImportable(
                    archive: archive,
                    reason:
                        "it is written by TimeQuest's schema \(version) (format \(manifest.formatVersion)), and no app profile was given to read it by (Importer.Options.profiles: AppProfile.timeQuest)"
                )
            }
            if let known = schemas.first(where: { $0.versionIdentifier == version }) {
                source = known
                newerSource = false
            } else if !VersionIdentifier.isNewer(version, thanAll: supported) {
                throw ArchiveError.unknownSchemaVersion(path: archive, found: version, known: supported)
            } else if options.allowNewer {
                source = newest
                newerSource = true
            } else {
                throw ArchiveError.unsupportedSchemaVersion(path: archive, found: version, supported: supported)
            }
            if let requested = options.targetVersion {
                guard let schema = schemas.first(where: { $0.versionIdentifier == requested }) else {
                    throw ImportError.unknownTargetVersion(version: requested, supported: supported)
                }
                target = schema
            } else {
                target = source
            }
            guard !VersionIdentifier.isNewer(source.versionIdentifier, than: target.versionIdentifier) else {
                throw ImportError.downgrade(archive: archive, from: source.versionIdentifier, to: target.versionIdentifier)
            }
            if !newerSource {
                for member in manifest.entities where source.entity(named: member.name) == nil {
                    throw ImportError.notImportable(archive: archive, reason: "entity \(member.name) is not part of schema \(version)")
                }
                // A missing member is not an empty entity: an archive of a known schema lists them all.
                for entity in source.entities where !manifest.entities.contains(where: { $0.name == entity.name }) {
                    throw ImportError.notImportable(
                        archive: archive,
                        reason:
                            "its manifest lists no member for entity \(entity.name) of schema \(version) (an empty entity is listed with count 0)"
                    )
                }
            }
            let created = DateText.secondsSinceReferenceDate(iso8601: manifest.createdAt)
            guard let created else {
                throw ArchiveError.notAQuestbakArchive(
                    path: archive, reason: "createdAt \"\(manifest.createdAt)\" is not an ISO 8601 UTC date")
            }
            createdAt = created
            if let url = options.template {
                let snapshot = try StoreSnapshot(storeAt: url)
                template = try snapshot.read { db in
                    (url.path, try StoreReader.metadata(db, path: url.path), try StoreReader.modelCache(db))
                }
            }
        }

        /// One record line, decoded and checked: the record to insert (none when its entity is
        /// not the target's) and what the target cannot store, for the report.
        struct DecodedLine {
            var memberName: String
            var memberPath: String
            var lineNumber: Int
            var entity: String?
            var record: EntityRecord?
            var unstorable: [RepairEntry] = []
        }

        /// Inserts a decoded line (on the thread of the store's transaction).
        func apply(_ line: DecodedLine, archive: String, into sink: StoreWriter.Sink, log: RepairLog) throws {
            for entry in line.unstorable { try log.record(entry) }
            guard let entity = line.entity, let record = line.record else { return }
            do {
                try sink.insert(record, into: entity)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                throw ArchiveError.invalidLine(
                    path: archive, member: line.memberPath, line: line.lineNumber,
                    reason: "\(RecordJSON.primaryKeyKey) \(record.primaryKey) appears more than once")
            }
        }

        /// Decodes one record line (on any thread: it touches neither the store nor the log); what
        /// the target cannot store is kept for the report (`--allow-newer`) or refused.
        func decode(line: Data, member: ArchiveManifest.EntityMember, lineNumber: Int, archive: String) throws -> DecodedLine {
            var decoded = DecodedLine(memberName: member.name, memberPath: member.path, lineNumber: lineNumber)
            func invalid(_ reason: String) -> ArchiveError {
                ArchiveError.invalidLine(path: archive, member: member.path, line: lineNumber, reason: reason)
            }
            let members: [(key: String, value: JSONValue)]
            do {
                members = try JSONLine.parseObject(line)
            } catch let error as JSONLine.SyntaxError {
                throw invalid(error.lineReason)
            }
            guard case .integer(let primaryKey)? = members.first(where: { $0.key == RecordJSON.primaryKeyKey })?.value else {
                throw invalid("\(RecordJSON.primaryKeyKey) must be an integer")
            }
            // Format version 2 carries Z_OPT; version 1 did not, and its records restore with 1,
            // as Core Data gives a newly inserted row (docs/archive-format.md).
            var opt: Int64? = 1
            if manifest.formatVersion >= 2 {
                switch members.first(where: { $0.key == RecordJSON.optKey })?.value {
                case .integer(let number)?: opt = number
                case .null?: opt = nil
                case nil: throw invalid("\(RecordJSON.optKey) is missing")
                case let other?: throw invalid("\(RecordJSON.optKey) must be an integer or null, found \(other.typeName)")
                }
            }
            guard let entity = target.entity(named: member.name) else {
                // Only with allowNewer: an entity the target does not have is kept in the report.
                decoded.unstorable.append(
                    RepairEntry(
                        rule: .unknownProperty, kind: .unstorable, entity: member.name, primaryKey: primaryKey, cloudID: nil, field: nil,
                        old: .value(.string(String(decoding: line, as: UTF8.self))), new: nil))
                return decoded
            }
            var values: [String: Value] = [:]
            let bookkeepingKeys = manifest.formatVersion >= 2 ? [RecordJSON.primaryKeyKey, RecordJSON.optKey] : [RecordJSON.primaryKeyKey]
            for (key, json) in members where !bookkeepingKeys.contains(key) {
                if let attribute = entity.attribute(named: key) {
                    do {
                        values[key] = try ValueJSON.value(json, as: attribute.kind)
                    } catch let mismatch as ValueJSON.TypeMismatch {
                        throw invalid("\(key) must be \(mismatch.expected), found \(mismatch.found)")
                    }
                } else if let relationship = entity.relationship(named: key) {
                    // A to-many follows from its inverse's keys, so the format has no place for it:
                    // a value given here would be dropped without a word.
                    guard !relationship.isToMany else {
                        throw invalid(
                            "\(key) is a to-many relationship, which a record does not carry (it follows from \(relationship.destination).\(relationship.inverse ?? "its inverse")); found \(json.typeName)"
                        )
                    }
                    // Any integer: a key that points at no record is an orphan, whatever its value.
                    switch json {
                    case .null: values[key] = .null
                    case .integer(let target): values[key] = .integer(target)
                    default: throw invalid("\(key) must be the _pk of a \(relationship.destination) or null, found \(json.typeName)")
                    }
                } else if newerSource {
                    decoded.unstorable.append(
                        RepairEntry(
                            rule: .unknownProperty, kind: .unstorable, entity: entity.name, primaryKey: primaryKey, cloudID: nil,
                            field: key,
                            old: .value(Self.reportable(json)), new: nil))
                } else {
                    throw invalid("unknown property \(key) for \(entity.name) in schema \(source.versionIdentifier)")
                }
            }
            // Every property is written, null when empty: a missing key is damage, not a null.
            if !newerSource, let sourceEntity = source.entity(named: member.name) {
                for name in sourceEntity.storedPropertyNames where !members.contains(where: { $0.key == name }) {
                    throw invalid("\(name) is missing (every property of \(entity.name) is written, null when empty)")
                }
            }
            decoded.entity = entity.name
            decoded.record = EntityRecord(primaryKey: primaryKey, opt: opt, values: values)
            return decoded
        }

        static func reportable(_ json: JSONValue) -> Value {
            switch json {
            case .null: return .null
            case .boolean(let flag): return .boolean(flag)
            case .integer(let number): return .integer(number)
            case .number(let number): return .double(number)
            case .string(let text): return .string(text)
            case .array, .object: return .string("\(json)")
            }
        }

        /// Metadata: from the template store; else the archive's own when the version is unchanged
        /// and its hashes are the target's (so the app sees the same store); else computed. Any
        /// metadata but the archive's own comes with a note saying so.
        func metadata(archiveFiles: [String: Data], archive: String) throws -> (StoreMetadata, note: String?, computed: Bool) {
            let uuid = manifest.source.storeUUID
            // Metadata the archive carries but that cannot be read is damage: computing new
            // metadata in its place would change the store without a word.
            var carried: StoreMetadata?
            if let bytes = archiveFiles[ArchiveManifest.metadataPath] {
                let decoded: StoreMetadata
                do {
                    decoded = try StoreMetadata(uuid: uuid, encodedPlist: bytes)
                } catch {
                    throw ArchiveError.unexpectedMember(
                        path: archive, member: ArchiveManifest.metadataPath,
                        reason: "cannot be decoded as a binary property list: \((error as? LocalizedError)?.errorDescription ?? "\(error)")"
                    )
                }
                guard case .dictionary = decoded.plist else {
                    throw ArchiveError.unexpectedMember(
                        path: archive, member: ArchiveManifest.metadataPath, reason: "is a property list but not a dictionary of metadata")
                }
                carried = decoded
            }
            if let template {
                let metadata = template.metadata
                guard metadata.schemaMatchingHashes(in: [target]) != nil else {
                    throw ImportError.template(
                        path: template.path, reason: "its model hashes are not those of schema \(target.versionIdentifier)")
                }
                return (metadata.withUUID(uuid), "metadata taken from the template store \(template.path)", false)
            }
            let namesTarget = carried?.versionIdentifiers == [target.versionIdentifier]
            if source.versionIdentifier == target.versionIdentifier, !newerSource, let carried,
                carried.schemaMatchingHashes(in: [target]) != nil,
                namesTarget
            {
                // Kept as the archive has them, even when they disagree; but said.
                if case .string(let plistUUID)? = carried.plist["NSStoreUUID"], plistUUID != uuid {
                    return (
                        carried,
                        "Z_UUID \"\(UntrustedText.display(uuid))\" and the metadata's NSStoreUUID \"\(UntrustedText.display(plistUUID))\" differ, as the archive has them",
                        false
                    )
                }
                return (carried, nil, false)
            }
            let why: String
            if carried == nil {
                why = "the archive has no metadata.plist"
            } else if source.versionIdentifier != target.versionIdentifier || newerSource {
                why = "the store is written as schema \(target.versionIdentifier), not \(manifest.effectiveSchemaVersion)"
            } else if !namesTarget {
                why = "the archive's metadata names version identifiers other than \(target.versionIdentifier)"
            } else {
                why = "the archive's metadata has model hashes other than schema \(target.versionIdentifier)'s"
            }
            let computed = StoreMetadata(
                schema: target, uuid: uuid, frameworkVersion: manifest.source.frameworkVersion ?? StoreMetadata.defaultFrameworkVersion,
                carryingOver: carried)
            return (computed, "metadata computed for schema \(target.versionIdentifier): \(why)", true)
        }

        /// The compiled model travels only where it still describes the store.
        func modelCache(archiveFiles: [String: Data]) throws -> Data? {
            if let template { return template.modelCache }
            return source.versionIdentifier == target.versionIdentifier && !newerSource ? archiveFiles[ArchiveManifest.modelCachePath] : nil
        }
    }
}
