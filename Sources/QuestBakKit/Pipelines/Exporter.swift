import CoreDataStore
import Crypto
import Foundation
import GRDB
import QuestBakArchive

/// `questbak export`: a store snapshot into one archive (docs/archive-format.md).
package enum Exporter {
    package enum Destination {
        /// A file written atomically; an existing one is replaced only with `overwrite`.
        case file(URL, overwrite: Bool)
        /// An already open descriptor (standard output); no atomicity is possible there.
        case fileDescriptor(Int32)
    }

    package struct Options {
        public var compression: ArchiveCompression = .preferred
        /// Stamped into the manifest and on every tar member. The caller decides it (a flag,
        /// SOURCE_DATE_EPOCH or the clock), so exports of one store can be byte-identical.
        public var createdAt: Int64
        public var progress: ((Progress) -> Void)?
        /// Before the archive is put in place, restore it into a scratch folder as it was
        /// archived and compare every member (`ArchiveVerifier`): an archive that does not give
        /// back the store is not kept. Only for a file: a stream cannot be read back.
        public var verify = false
        /// The apps whose known model versions a store may be (the command line passes
        /// `AppProfile.timeQuest`); any other store is exported by the model it carries, or by its
        /// tables. None by default: the library applies no app's profile of its own accord.
        public var profiles: [AppProfile] = []
        /// Encrypt the archive to these (age-encryption.org/v1): every byte, manifest included, is
        /// inside the encryption, encrypted as it is written. Empty: a plain archive.
        public var recipients: [AgeRecipient] = []
        /// Set by `export` for an encrypted archive: the key its staging files are sealed with.
        var stagingSeal: StagingSeal?
        /// Another app's store by its tables even when its model describes it (`diff` compares a
        /// model archive with a generic one this way).
        var byTables = false
        /// Checked between batches of records and before the archive is put in place.
        package var cancellation: Cancellation?
        /// How many more connections to the snapshot read a large entity's rows at once (each
        /// on a thread of its own; the archive's bytes are the same with any number, 0 included).
        /// One per processor, at most four: reading and encoding rows is most of an export's work.
        package var rangeReaders =
            ProcessInfo.processInfo.activeProcessorCount > 1
            ? min(ProcessInfo.processInfo.activeProcessorCount, 4) : 0
        /// Rows and bytes per range of keys (tests make them small, to cut every entity into ranges).
        package var rowsPerRange = 2048
        package var bytesPerRange = 2 << 20
        /// An entity of few rows is cut into smaller ranges, about this many per connection, so
        /// that no reader waits through the last range of it (`KeyRangeReaders.rangesPerConnection`).
        package var rangesPerConnection = 8
        /// Ranges a connection may have encoded ahead of the writer
        /// (`KeyRangeReaders.partsAheadPerConnection`): two kept both readers busy where one
        /// waited for the other's slower range (at 1M rows, peak RSS 58 → 60 MB).
        package var rangesAheadPerConnection = 2
        /// Set by `records(of:)`: each entity member's bytes go here, not to a staging file.
        var memberLines: ((_ entity: String, _ bytes: [UInt8]) throws -> Void)?
        /// Whether `records(of:)` hashes each member's bytes for the manifest's SHA-256 (else
        /// it lists "": `diff` turns it off and hashes only the members it compares, itself).
        var hashesMemberLines = true
        /// Set by `diff` when it reads some members of a store again (`records(of:)`): only these
        /// are encoded and handed over; the others are left out of the pass and of its manifest.
        var onlyMembers: Set<String>?

        public init(createdAt: Int64, compression: ArchiveCompression = .preferred, progress: ((Progress) -> Void)? = nil) {
            self.createdAt = createdAt
            self.compression = compression
            self.progress = progress
        }
    }

    package typealias Progress = RecordProgress

    /// What a backup wrote (the API's name for it is public).
    package typealias Summary = QuestBak.BackupResult
    /// The proof `Options.verify` asks for.
    package typealias Verification = QuestBak.BackupResult.Verification

    /// The manifest's `createdAt` for a creation time, or nil when it has none (outside years
    /// 0001–9999).
    package static func createdAtText(unixSeconds: Int64) -> String? {
        let (seconds, overflow) = unixSeconds.subtractingReportingOverflow(DateText.referenceDateUnixOffset)
        return overflow ? nil : DateText.iso8601(secondsSinceReferenceDate: Double(seconds))
    }

    package static func export(storeAt storeURL: URL, to destination: Destination, options: Options) throws -> Summary {
        // Refuse a creation time the manifest cannot hold, a codec the build leaves out, and an existing
        // output, before reading anything.
        guard let createdAt = createdAtText(unixSeconds: options.createdAt) else {
            throw ArchiveError.invalidCreationTime(unixSeconds: options.createdAt)
        }
        guard options.compression.isAvailable else {
            let path: String
            if case .file(let url, _) = destination { path = url.path } else { path = "standard output" }
            throw ArchiveError.codecUnavailable(path: path, codec: options.compression.rawValue, reading: false)
        }
        var output: AtomicOutputFile?
        var descriptor: Int32
        if options.verify, case .fileDescriptor = destination {
            throw OutputError.cannotCreate(
                path: "standard output", reason: "an archive written to a stream cannot be read back to verify it")
        }
        switch destination {
        case .file(let url, let overwrite):
            StorePlacement.removeStaleTemporaries(besides: url)
            let file = try AtomicOutputFile(destination: url, overwrite: overwrite)
            output = file
            descriptor = file.fileDescriptor
        case .fileDescriptor(let fd):
            descriptor = fd
        }
        let outputPath = output?.destination.path ?? "standard output"
        let snapshot = try StoreSnapshot(storeAt: storeURL)
        let staging = try TemporaryDirectory.create(prefix: "questbak-export")
        defer { TemporaryDirectory.remove(staging) }

        // An encrypted archive's members are staged sealed, so that no archive byte reaches the
        // disk in the clear.
        var options = options
        options.stagingSeal = options.recipients.isEmpty ? nil : StagingSeal()
        let staged = try stageMembers(of: snapshot, in: staging, options: options)
        let manifest = Self.manifest(of: staged, snapshot: snapshot, createdAt: createdAt)

        // Encryption sits between the archive and the output: the archive is written into a
        // pipe, and a thread encrypts it chunk by chunk into the output as it arrives, so no
        // plaintext archive byte reaches the output's disk. Unsealed (abandoned) on failure.
        var encryption: (writer: AgeEncryptingWriter, pipe: AgeEncryptingPipe)?
        if !options.recipients.isEmpty {
            let writer = try AgeEncryptingWriter(recipients: options.recipients, fileDescriptor: descriptor, file: outputPath)
            let pipe = try AgeEncryptingPipe(writer: writer)
            encryption = (writer, pipe)
            descriptor = pipe.fileDescriptor
        }
        defer { encryption?.pipe.abandon() }
        // The members were compressed as they were staged; the manifest's frame is made now and
        // written first (FramedTar).
        do {
            let modificationTime = Int(options.createdAt)
            let compressor = try makeFrameCompressor(options.compression, path: outputPath)
            func frame(_ data: Data) throws {
                try data.withUnsafeBytes { try FramedTar.appendFrame(to: descriptor, bytes: $0, path: outputPath, compressor: compressor) }
            }
            let manifestData = try manifest.encoded()
            var first = try FramedTar.header(
                path: ArchiveManifest.path, size: Int64(manifestData.count), modificationTime: modificationTime)
            first.append(manifestData)
            first.append(Data(count: FramedTar.padding(after: Int64(manifestData.count))))
            try frame(first)
            func append(_ file: URL, as memberPath: String, size: Int64) throws {
                try frame(try FramedTar.header(path: memberPath, size: size, modificationTime: modificationTime))
                if let seal = options.stagingSeal {
                    try seal.copy(file, to: descriptor, output: outputPath)
                } else {
                    try copy(file, to: descriptor, output: outputPath)
                }
            }
            if manifest.restoresFromStatements {
                // A restore from statements needs the model and Z_PRIMARYKEY before the records.
                for (member, file) in staged.files { try append(file, as: member.path, size: member.bytes) }
                for (member, file) in staged.tables { try append(file, as: member.path, size: member.bytes) }
                for (member, file) in staged.entities { try append(file, as: member.path, size: member.bytes) }
            } else {
                for (member, file) in staged.entities { try append(file, as: member.path, size: member.bytes) }
                for (member, file) in staged.tables { try append(file, as: member.path, size: member.bytes) }
                for (member, file) in staged.files { try append(file, as: member.path, size: member.bytes) }
            }
            try frame(FramedTar.trailer)
            try encryption?.pipe.finish()
        } catch let error as ArchiveError {
            throw error
        } catch let error as AgeError {
            throw error
        } catch StoreError.io(_, let reason) {
            // The operating system's on writing (a full disk, a closed pipe).
            throw ArchiveError.write(path: outputPath, reason: reason)
        } catch {
            throw ArchiveError.write(path: outputPath, reason: error.localizedDescription)
        }
        var archiveBytes: Int64?
        var verification: Verification?
        if let output, options.verify {
            // An encrypted archive is proved by reading back what was written, decrypted as it
            // is read with the file key this run made (no stanza is added for it, and nothing
            // decrypted is written): the proof covers the encryption as well as the archive.
            let keys = encryption.map { ArchiveKeys(fileKey: $0.writer.fileKey) } ?? ArchiveKeys()
            verification = try verify(
                output.temporaryURL, as: output.destination.path, keys: keys, profiles: options.profiles, against: snapshot,
                staging: staging, cancellation: options.cancellation)
        }
        if let output {
            // The last point where a cancelled export leaves nothing behind.
            try options.cancellation?.check()
            try output.commit()
            archiveBytes = FileBytes.size(atPath: output.destination.path)
        }
        return Summary(
            archive: output?.destination, compression: options.compression.rawValue, archiveBytes: archiveBytes,
            schemaVersion: staged.schemaVersion, schema: staged.kind, walFrames: snapshot.walFrameCount,
            entities: manifest.entities, files: manifest.files, tables: manifest.tables ?? [], warnings: staged.warnings,
            encryption: encryption.map { _ in Self.encryptionText(options.recipients) }, verification: verification)
    }

    /// The manifest of an archive of `staged`'s members.
    private static func manifest(of staged: Staged, snapshot: StoreSnapshot, createdAt: String) -> ArchiveManifest {
        ArchiveManifest(
            format: ArchiveManifest.formatName, formatVersion: staged.formatVersion, schemaVersion: staged.schemaVersion,
            createdAt: createdAt,
            tool: .init(name: "questbak", version: QuestBak.version),
            source: .init(
                storeUUID: staged.metadata.uuid, versionIdentifiers: staged.metadata.versionIdentifiers,
                frameworkVersion: staged.metadata.frameworkVersion, walFrames: snapshot.walFrameCount, schema: staged.kind),
            entities: staged.entities.map(\.member), files: staged.files.map(\.member),
            tables: staged.tables.isEmpty ? nil : staged.tables.map(\.member), bookkeepingRows: staged.bookkeeping,
            sql: staged.sql, sqlite: staged.sqlite,
            warnings: staged.formatVersion >= 3 && !staged.warnings.isEmpty ? staged.warnings : nil)
    }

    /// Thrown by `records(of:)` when a value is one the store's model's type cannot hold, which
    /// `export` meets by writing the store by its tables instead: the lines handed over are void,
    /// and the caller asks again with `byTables`.
    package struct ByTablesInstead: Error {}

    /// What `records(of:)` read: the manifest an export of the store would write (each
    /// entity member's count and SHA-256 included), and the model cache it would carry.
    package struct Records {
        package var manifest: ArchiveManifest
        package var modelCache: Data?
    }

    /// The entity members of a store's snapshot as `export` writes them, without an archive:
    /// `line` is given each member's bytes as the one encoder writes them (its entity, then the
    /// header line, then one record line after another, each ending in a newline), and the
    /// returned manifest has each member's SHA-256 of exactly those bytes (or "" for each, with
    /// `hashesMemberLines` off; with `onlyMembers`, only those members are handed over and
    /// listed). The store is described, checked and refused as `export` does it
    /// (the other members are staged as export stages them, in a scratch folder, and dropped).
    /// `diff` reads a store side this way: no archive written, read back and hashed again.
    package static func records(
        of snapshot: StoreSnapshot, options: Options, line: (_ entity: String, _ bytes: [UInt8]) throws -> Void
    ) throws -> Records {
        guard let createdAt = createdAtText(unixSeconds: options.createdAt) else {
            throw ArchiveError.invalidCreationTime(unixSeconds: options.createdAt)
        }
        let staging = try TemporaryDirectory.create(prefix: "questbak-export")
        defer { TemporaryDirectory.remove(staging) }
        // Nothing is written for the records: no codec, no key.
        var options = options
        options.compression = .none
        options.recipients = []
        options.stagingSeal = nil
        let staged = try withoutActuallyEscaping(line) { line in
            // Called only while the members are staged: the options that hold it end with this closure.
            var lineOptions = options
            lineOptions.memberLines = line
            return try stageMembers(of: snapshot, in: staging, options: lineOptions)
        }
        return Records(manifest: Self.manifest(of: staged, snapshot: snapshot, createdAt: createdAt), modelCache: staged.modelCache)
    }

    /// Restores the archive just written, records as archived, compares each entity's digest
    /// with its member's, and then the restored store with the snapshot the archive was made
    /// from, table by table and value by value; throws `doesNotRestore` naming what differs.
    private static func verify(
        _ archive: URL, as path: String, keys: ArchiveKeys, profiles: [AppProfile], against snapshot: StoreSnapshot, staging: URL,
        cancellation: Cancellation?
    ) throws -> Verification {
        let scratch = staging.appendingPathComponent("verify", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let restoredStore = scratch.appendingPathComponent("restored", isDirectory: true).appendingPathComponent("default.store")
        let result: ArchiveVerifier.Result
        do {
            result = try ArchiveVerifier.verify(
                archive: archive.path, displayName: path, keys: keys, asArchived: true, profiles: profiles, restoredStore: restoredStore,
                workDirectory: scratch, cancellation: cancellation)
        } catch let error as ImportError {
            // What a restore refuses, said as what it is: this archive does not restore. (The
            // operating system's failures, a full disk or a file-size limit, stay what they are.)
            throw ArchiveError.doesNotRestore(path: path, differences: [error.localizedDescription])
        } catch let error as ArchiveError {
            throw ArchiveError.doesNotRestore(path: path, differences: [error.localizedDescription])
        }
        guard result.restoresExactly else {
            throw ArchiveError.doesNotRestore(path: path, differences: ArchiveVerifier.differences(result))
        }
        var configuration = Configuration()
        configuration.readonly = true
        let restored = try DatabaseQueue(path: restoredStore.path, configuration: configuration)
        defer { try? restored.close() }
        let differences = try snapshot.read { source in
            try restored.read { try StoreComparison.differences(source: source, restored: $0) }
        }
        guard differences.isEmpty else { throw ArchiveError.doesNotRestore(path: path, differences: differences) }
        return Verification(records: result.entities.reduce(0) { $0 + $1.records }, entities: result.entities.count)
    }

    private struct Staged {
        var schemaVersion: String
        var kind: String
        var formatVersion: Int
        var metadata: StoreMetadata
        var entities: [(member: ArchiveManifest.EntityMember, file: URL)] = []
        var files: [(member: ArchiveManifest.FileMember, file: URL)] = []
        var tables: [(member: ArchiveManifest.TableMember, file: URL)] = []
        var warnings: [String] = []
        var bookkeeping: [String: Int] = [:]
        var sql: [String]?
        var sqlite: StoreFileSettings?
        /// The model cache's bytes as its member holds them (`records(of:)` hands them over; a
        /// staged file holds frames, not the bytes).
        var modelCache: Data?
    }

    /// How the store's records are written: by an app profile's version (format 2), by the
    /// store's own model, or by its tables.
    private enum Description {
        case knownVersion(ModelVersion)
        case model(ModelLayout)
        case generic
    }

    /// Encodes every member into a staging file inside one read transaction, hashing as it
    /// writes: the manifest, which comes first in the archive, needs every checksum, and memory
    /// must stay flat however large the store is.
    private static func stageMembers(of snapshot: StoreSnapshot, in staging: URL, options: Options) throws -> Staged {
        let path = snapshot.path
        let readers =
            try options.rangeReaders > 0
            ? KeyRangeReaders.open(
                path: snapshot.copyPath, count: options.rangeReaders, rowsPerRange: options.rowsPerRange,
                bytesPerRange: options.bytesPerRange, rangesPerConnection: options.rangesPerConnection,
                partsAheadPerConnection: options.rangesAheadPerConnection)
            : nil
        return try snapshot.read { db in
            let metadata = try StoreReader.metadata(db, path: path)
            let candidates = AppProfile.versions(of: options.profiles)
            let replay = replayAhead(db, metadata: metadata, candidates: candidates)
            // Its result taken on every path, so that no replay outlives the export.
            defer { _ = replay?.error() }
            var warnings: [String] = []
            var description = try describe(
                db, metadata: metadata, path: path, candidates: candidates, readers: readers, warnings: &warnings)
            if options.byTables, case .model = description { description = .generic }
            var staged: Staged
            do {
                staged = try stage(
                    db, description, metadata: metadata, path: path, staging: staging, options: options, readers: readers, replay: replay)
            } catch StoreError.undecodableValue(_, let entity, let primaryKey, let property, let reason) {
                guard case .model = description else {
                    throw StoreError.undecodableValue(
                        path: path, entity: entity, primaryKey: primaryKey, property: property, reason: reason)
                }
                // The lines handed over so far cannot be taken back: the caller asks again.
                if options.memberLines != nil { throw ByTablesInstead() }
                // A value the model's type cannot hold: the store is exported by its tables instead,
                // which keeps every value as it is stored.
                warnings.append(
                    "\(entity) \(primaryKey) \(property): \(reason); exported by its tables (generic), not by its model")
                description = .generic
                staged = try stage(
                    db, description, metadata: metadata, path: path, staging: staging, options: options, readers: readers, replay: replay)
            }
            staged.warnings = try StoreInspection.warnings(db, model: try StoreInspection.ModelSummary(db)) + warnings + staged.warnings
            return staged
        }
    }

    /// `StatementReplay.check` of the store's statements, begun on another thread beside the
    /// description of the store, whose row checks leave a core idle (the replay was 3–4 ms of
    /// another app's 100k-row export alone on this thread after them). Only where the store is
    /// surely no candidate's version: only such a version is written as format 2, which replays
    /// nothing, and `StoreDescription.resolve` takes one only when the metadata has no model
    /// hashes or they are a candidate's. Nil otherwise, or when the statements cannot be read
    /// here: `stage` replays them where it did, and throws their error where it did.
    private static func replayAhead(
        _ db: Database, metadata: StoreMetadata, candidates: [ModelVersion]
    ) -> BackgroundResult<StatementReplay>? {
        guard !metadata.entityHashes.isEmpty, metadata.versionMatchingHashes(in: candidates) == nil,
            let statements = try? CoreDataSQL.schemaStatements(db)
        else { return nil }
        return BackgroundResult { try StatementReplay.check(statements) }
    }

    /// `replay`: the statements' replay begun ahead (`replayAhead`), the same statements of the
    /// same unchanging snapshot, so the same result or refusal.
    private static func stage(
        _ db: Database, _ description: Description, metadata: StoreMetadata, path: String, staging: URL, options: Options,
        readers: KeyRangeReaders?, replay: BackgroundResult<StatementReplay>?
    ) throws -> Staged {
        let schemaVersion: String
        let kind: String
        switch description {
        case .knownVersion(let version):
            schemaVersion = version.versionIdentifier
            kind = ArchiveManifest.Source.knownSchema
        case .model:
            // No identifier in the store means none in the archive: "" claims no version.
            schemaVersion = metadata.versionIdentifiers.first ?? ""
            kind = ArchiveManifest.Source.modelSchema
        case .generic:
            schemaVersion = metadata.versionIdentifiers.first ?? ""
            kind = ArchiveManifest.Source.genericSchema
        }
        var staged = Staged(
            schemaVersion: schemaVersion, kind: kind,
            formatVersion: kind == ArchiveManifest.Source.knownSchema
                ? ArchiveManifest.knownSchemaFormatVersion : ArchiveManifest.highestSupportedFormatVersion,
            metadata: metadata)
        // Whatever a restore would refuse of the store's statements, export refuses first, with
        // the same sentence, before it writes anything: an archive called good must restore.
        var replayed = StatementReplay()
        if staged.formatVersion >= 3 {
            do {
                replayed = try replay?.value() ?? StatementReplay.check(try CoreDataSQL.schemaStatements(db))
            } catch let refusal as StatementReplay.Refusal {
                throw StoreError.schemaMismatch(path: path, versionIdentifier: nil, differences: ["sql: \(refusal.reason)"])
            }
        }
        let keys = try StoreReader.entityKeys(db)
        let maxima = Dictionary(keys.map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
        /// Stages one entity member written by `encode`.
        func stageEntity(_ name: String, _ encode: (([UInt8]) throws -> Void) throws -> Int) throws {
            if let only = options.onlyMembers, !only.contains(name) { return }
            let file = staging.appendingPathComponent(name + ".jsonl")
            // `records(of:)`: the bytes go to its caller, hashed as a staging file hashes them.
            let writer =
                try options.memberLines == nil ? StagedMember(url: file, compression: options.compression, seal: options.stagingSeal) : nil
            var hasher = SHA256()
            var handed: Int64 = 0
            try options.cancellation?.check()
            var written = 0
            let done = try encode { record in
                if let writer {
                    try writer.write(record)
                } else {
                    if options.hashesMemberLines { hasher.update(data: record) }
                    handed += Int64(record.count)
                    try options.memberLines?(name, record)
                }
                written += 1
                if written % 4096 == 0 { try options.cancellation?.check() }
            }
            let (bytes, digest) = try writer?.finish() ?? (handed, options.hashesMemberLines ? hasher.finalize().hexString : "")
            staged.entities.append(
                (
                    ArchiveManifest.EntityMember(
                        name: name, path: ArchiveManifest.entityPath(name), count: done, maximumPrimaryKey: maxima[name] ?? 0, bytes: bytes,
                        sha256: digest),
                    file
                ))
        }
        func progress(_ name: String) -> (Int, Int) -> Void {
            { options.progress?(Progress(entity: name, rowsDone: $0, rowsTotal: $1)) }
        }
        var carriedByRecords: Set<String> = []
        switch description {
        case .knownVersion(let version):
            staged.warnings += try TransformableArray.reencodedAttributes(db, model: version)
            for entity in version.entities {
                try stageEntity(entity.name) { write in
                    try EntityMemberEncoding.encode(
                        db, version: version, entity: entity, path: path, progress: progress(entity.name), readers: readers,
                        write: write)
                }
            }
        case .model(let layout):
            for plan in layout.entities {
                try stageEntity(plan.name) { write in
                    try ModelMemberEncoding.encode(
                        db, plan: plan, schemaVersion: schemaVersion, path: path, progress: progress(plan.name), readers: readers,
                        tableIsTheEntitys: layout.tablesOfOneEntity.contains(plan.table), write: write)
                }
            }
            carriedByRecords = layout.joinTables
        case .generic:
            for (key, table) in try StoreReader.modelTables(db) {
                guard CompiledModel.isPlainIdentifier(key.name) else {
                    throw StoreError.schemaMismatch(
                        path: path, versionIdentifier: nil,
                        differences: [
                            "entity name \"\(UntrustedText.display(key.name))\" is not a plain identifier, so it cannot name a member"
                        ])
                }
                // A record is keyed by its Z_PK (`_pk`); a table another tool made again without one
                // has no records to write, and a column named `_pk` would repeat that key.
                let columns = try db.columns(in: table).map(\.name)
                if columns.contains(RecordJSON.primaryKeyKey) {
                    throw StoreError.schemaMismatch(
                        path: path, versionIdentifier: nil,
                        differences: [
                            "table \(table) of entity \(key.name) has a column named \(RecordJSON.primaryKeyKey), which would repeat its records' key \(RecordJSON.primaryKeyKey)"
                        ])
                }
                guard columns.contains(where: { $0.uppercased() == CoreDataSQL.keyColumn }) else {
                    throw StoreError.schemaMismatch(
                        path: path, versionIdentifier: nil,
                        differences: [
                            "table \(table) of entity \(key.name) has no column \(CoreDataSQL.keyColumn), so its rows cannot be written as records"
                        ])
                }
                try stageEntity(key.name) { write in
                    try GenericMemberEncoding.encode(
                        db, entity: key.name, table: table, schemaVersion: schemaVersion, path: path, progress: progress(key.name),
                        write: write)
                }
            }
        }
        let rawPlist = try Data.fetchOne(db, sql: CoreDataSQL.selectMetadataPlist) ?? Data()
        staged.modelCache = try StoreReader.modelCache(db)
        for (memberPath, data) in [(ArchiveManifest.metadataPath, rawPlist), (ArchiveManifest.modelCachePath, staged.modelCache)] {
            guard let data else { continue }
            let file = staging.appendingPathComponent(URL(fileURLWithPath: memberPath).lastPathComponent)
            let (bytes, digest) = try stageFile(data, at: file, options: options)
            staged.files.append((ArchiveManifest.FileMember(path: memberPath, bytes: bytes, sha256: digest), file))
        }
        // External-storage files travel beside the records that point at them (format 3); a
        // TimeQuest store has none, and anything found there is said, not dropped silently.
        let external = try ExternalStorage.files(forStore: URL(fileURLWithPath: path))
        staged.warnings += external.notCarried
        // The search for references to files that are not there reads every BLOB of every entity
        // table (10 ms of the 180 of exporting another app's 100k rows), once the records are written and one core
        // is free: it runs on a reader's connection to the same snapshot (a private copy nothing
        // writes, so it reads the same rows) while this thread stages the rest. Its sentences
        // go where they went, and its error, if any, is thrown before any later one, as when it
        // ran here.
        let missingAt = staged.warnings.count
        let available = Set(external.files.map(\.name))
        let missing: () throws -> [String]
        if let connection = readers?.connections.first {
            let search = BackgroundResult { try connection.read { try ExternalStorage.missingReferences($0, available: available) } }
            missing = search.value
        } else {
            let sentences = try ExternalStorage.missingReferences(db, available: available)
            missing = { sentences }
        }
        do {
            if staged.formatVersion >= 3 {
                for (index, (name, url)) in external.files.enumerated() {
                    // Staged by number: the file's own name may be as long as a name can be, and
                    // read a block at a time: it may be larger than memory.
                    let file = staging.appendingPathComponent("external-\(index)")
                    let writer = try StagedMember(url: file, compression: options.compression, seal: options.stagingSeal)
                    try ExternalStorage.readChunks(of: url) { try writer.write($0) }
                    let (bytes, digest) = try writer.finish()
                    staged.files.append(
                        (ArchiveManifest.FileMember(path: ExternalStorage.memberPrefix + name, bytes: bytes, sha256: digest), file))
                }
            } else if !external.files.isEmpty {
                staged.warnings.append(
                    "\(external.files.count) external-storage file(s) in \(ExternalStorage.folder(forStore: URL(fileURLWithPath: path)).path) are not in a TimeQuest archive"
                )
            }
            // A virtual table's rows are its shadow tables', carried as tables; SQLite makes the
            // virtual table again from its statement.
            var tables = try StoreReader.otherTables(db).filter {
                !carriedByRecords.contains($0.name) && !replayed.virtualTables.contains($0.name)
            }
            if staged.formatVersion < 3 {
                // A TimeQuest archive (format 2) stands for one metadata row and one model cache: what
                // else those tables hold is said, not dropped unsaid (export --verify refuses it).
                for table in [CoreDataSQL.metadataTable, CoreDataSQL.modelCacheTable] {
                    let count = try db.tableExists(table) ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? 0 : 0
                    guard count > 1 else { continue }
                    staged.warnings.append(
                        "\(table) holds \(count) rows: a TimeQuest archive carries the store's one, not the other \(count - 1)")
                }
            }
            if staged.formatVersion >= 3 {
                // Z_PRIMARYKEY travels as it is, value for value: entity numbers, parents and Z_MAX.
                tables.append((CoreDataSQL.primaryKeyTable, "", []))
                // The metadata and model cache files stand for one row each; a table that holds
                // more (a second metadata row, a duplicated cache) travels row by row as well.
                let metadata = CoreDataSQL.metadataTable
                let metadataRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(metadata)") ?? 0
                let metadataVersion = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(metadata) WHERE Z_VERSION = 1") ?? 0
                if metadataRows != 1 || metadataVersion != 1 {
                    tables.append((metadata, "", []))
                    staged.warnings.append(
                        "\(metadata) holds \(metadataRows) row\(metadataRows == 1 ? "" : "s"), not the one of Z_VERSION 1 its file stands for: carried row by row"
                    )
                }
                let modelCache = CoreDataSQL.modelCacheTable
                if try db.tableExists(modelCache), let cacheRows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(modelCache)"),
                    cacheRows > 1
                {
                    // Rows travel in their sorted order, not their rowids': Core Data's cache is the
                    // first row, so a restore keeps it only when it is also the lowest.
                    let first = try Data.fetchOne(db, sql: CoreDataSQL.selectModelCache)
                    guard try first == Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM \(modelCache) ORDER BY Z_CONTENT LIMIT 1") else {
                        throw StoreError.schemaMismatch(
                            path: path, versionIdentifier: nil,
                            differences: [
                                "\(modelCache) holds \(cacheRows) rows whose first (the store's model) is not the lowest, and a restore, which puts rows back in order, would make another one the store's model"
                            ])
                    }
                    tables.append((modelCache, "", []))
                    staged.warnings.append("\(modelCache) holds \(cacheRows) rows, not the one its file stands for: carried row by row")
                }
                if try db.tableExists(CoreDataSQL.autoincrementTable) {
                    tables.append((CoreDataSQL.autoincrementTable, "", []))
                }
                tables.sort { $0.name < $1.name }
                staged.sql = try CoreDataSQL.schemaStatements(db)
                staged.sqlite = try StoreFileSettings.of(db)
            }
            for (name, sql, indexes) in tables {
                // The name becomes a file name in the archive and SQL in a restore.
                guard CompiledModel.isPlainIdentifier(name) else {
                    throw StoreError.schemaMismatch(
                        path: path, versionIdentifier: nil,
                        differences: [
                            "table \"\(UntrustedText.display(name))\" belongs to no entity and its name is not a plain identifier, so it cannot be carried"
                        ])
                }
                let file = staging.appendingPathComponent("table-" + name + ".jsonl")
                let writer = try StagedMember(url: file, compression: options.compression, seal: options.stagingSeal)
                let count = try TableMemberEncoding.encode(db, table: name, path: path, write: writer.write)
                let (bytes, digest) = try writer.finish()
                staged.tables.append(
                    (
                        ArchiveManifest.TableMember(
                            name: name, path: ArchiveManifest.tablePath(name), count: count, bytes: bytes, sha256: digest, sql: sql,
                            indexes: indexes),
                        file
                    ))
            }
            staged.bookkeeping = try StoreReader.bookkeepingRowCounts(db)
        } catch {
            _ = try missing()
            throw error
        }
        staged.warnings.insert(contentsOf: try missing(), at: missingAt)
        return staged
    }

    /// An app profile's known version when the store is one; else the store's own model when it
    /// describes the store exactly; else its tables, with the reason among the warnings.
    private static func describe(
        _ db: Database, metadata: StoreMetadata, path: String, candidates: [ModelVersion], readers: KeyRangeReaders?,
        warnings: inout [String]
    ) throws -> Description {
        let (description, odd) = try StoreDescription.resolve(db, path: path, candidates: candidates, readers: readers)
        warnings += odd
        switch description {
        case .knownVersion(let version):
            return .knownVersion(version)
        case .model(let layout):
            warnings += layout.warnings
            return .model(layout)
        case .tables(let reason):
            warnings.append("exported by its tables, every value in its SQLite storage class and no type inferred: " + reason)
            return .generic
        }
    }

    /// Appends a staged member's frames to the archive.
    private static func copy(_ file: URL, to descriptor: Int32, output: String) throws {
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw ArchiveError.write(path: file.path, reason: "staged member vanished")
        }
        defer { try? handle.close() }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            try chunk.withUnsafeBytes { try FramedTar.writeAll(descriptor, $0, path: output) }
        }
    }

    static func encryptionText(_ recipients: [AgeRecipient]) -> String {
        if case .passphrase = recipients.first { return "age, passphrase" }
        return "age, \(recipients.count) recipient\(recipients.count == 1 ? "" : "s")"
    }

    /// Stages a member whose bytes are already in memory.
    private static func stageFile(_ data: Data, at file: URL, options: Options) throws -> (bytes: Int64, sha256: String) {
        let writer = try StagedMember(url: file, compression: options.compression, seal: options.stagingSeal)
        try writer.write(data)
        return try writer.finish()
    }
}
