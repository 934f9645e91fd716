import Crypto
import Foundation
import GRDB

/// `questbak export`: a store snapshot into one archive (docs/archive-format.md).
public enum Exporter {
    public enum Destination {
        /// A file written atomically; an existing one is replaced only with `overwrite`.
        case file(URL, overwrite: Bool)
        /// An already open descriptor (standard output); no atomicity is possible there.
        case fileDescriptor(Int32)
    }

    public struct Options {
        public var compression: ArchiveCompression = .zstd
        /// Stamped into the manifest and on every tar member. The caller decides it (a flag,
        /// SOURCE_DATE_EPOCH or the clock), so exports of one store can be byte-identical.
        public var createdAt: Int64
        public var progress: ((Progress) -> Void)?
        /// The schemas a store may be; any other store is exported generically.
        public var schemas: [Schema] = TimeQuestSchemas.all

        public init(createdAt: Int64, compression: ArchiveCompression = .zstd, progress: ((Progress) -> Void)? = nil) {
            self.createdAt = createdAt
            self.compression = compression
            self.progress = progress
        }
    }

    public struct Progress: Sendable {
        public var entity: String
        public var rowsDone: Int
        public var rowsTotal: Int
    }

    public struct Summary: Sendable, Encodable {
        public var archive: String
        public var compression: String
        public var archiveBytes: Int64?
        public var schemaVersion: String
        public var schema: String
        public var walFrames: Int
        public var entities: [ArchiveManifest.EntityMember]
        public var files: [ArchiveManifest.FileMember]
        /// Tables that belong to no entity, carried too (a many-to-many join table, a tool's table).
        public var tables: [ArchiveManifest.TableMember]
        /// What is odd about the store, as `inspect` says it (a `Z_MAX` below the largest `Z_PK`,
        /// a model cache that disagrees with the metadata): exported as it is, and said.
        public var warnings: [String]
    }

    /// The manifest's `createdAt` for a creation time, or nil when it has none (outside years
    /// 0001–9999).
    public static func createdAtText(unixSeconds: Int64) -> String? {
        let (seconds, overflow) = unixSeconds.subtractingReportingOverflow(DateText.referenceDateUnixOffset)
        return overflow ? nil : DateText.iso8601(secondsSinceReferenceDate: Double(seconds))
    }

    public static func export(storeAt storeURL: URL, to destination: Destination, options: Options) throws -> Summary {
        // Refuse a creation time the manifest cannot hold, and an existing output, before reading anything.
        guard let createdAt = createdAtText(unixSeconds: options.createdAt) else {
            throw ArchiveError.invalidCreationTime(unixSeconds: options.createdAt)
        }
        var output: AtomicOutputFile?
        var descriptor: Int32
        switch destination {
        case .file(let url, let overwrite):
            StorePlacement.removeStaleTemporaries(besides: url)
            let file = try AtomicOutputFile(destination: url, overwrite: overwrite)
            output = file
            descriptor = file.fileDescriptor
        case .fileDescriptor(let fd):
            descriptor = fd
        }
        let snapshot = try StoreSnapshot(storeAt: storeURL)
        let staging = try TemporaryDirectory.create(prefix: "questbak-export")
        defer { TemporaryDirectory.remove(staging) }

        let staged = try stageMembers(of: snapshot, in: staging, options: options)
        let manifest = ArchiveManifest(
            format: ArchiveManifest.formatName, formatVersion: ArchiveManifest.highestSupportedFormatVersion,
            schemaVersion: staged.schema.versionIdentifier,
            createdAt: createdAt,
            tool: .init(name: "questbak", version: QuestBak.version),
            source: .init(
                storeUUID: staged.metadata.uuid, versionIdentifiers: staged.metadata.versionIdentifiers,
                frameworkVersion: staged.metadata.frameworkVersion, walFrames: snapshot.walFrameCount, schema: staged.kind),
            entities: staged.entities.map(\.member), files: staged.files.map(\.member),
            tables: staged.tables.isEmpty ? nil : staged.tables.map(\.member), bookkeepingRows: staged.bookkeeping)

        do {
            let writer = try TarArchiveWriter(
                fileDescriptor: descriptor, compression: options.compression, modificationTime: Int(options.createdAt))
            try writer.addFile(path: ArchiveManifest.path, data: try manifest.encoded())
            for (member, file) in staged.entities { try copy(file, as: member.path, size: member.bytes, into: writer) }
            for (member, file) in staged.tables { try copy(file, as: member.path, size: member.bytes, into: writer) }
            for (member, file) in staged.files { try copy(file, as: member.path, size: member.bytes, into: writer) }
            try writer.finish()
        } catch let error as LibArchiveError {
            throw ArchiveError.write(path: output?.destination.path ?? "standard output", reason: error.localizedDescription)
        }
        var archiveBytes: Int64?
        if let output {
            try output.commit()
            archiveBytes = (try? FileManager.default.attributesOfItem(atPath: output.destination.path)[.size] as? NSNumber)?.int64Value
        }
        return Summary(
            archive: output?.destination.path ?? "standard output", compression: options.compression.rawValue, archiveBytes: archiveBytes,
            schemaVersion: staged.schema.versionIdentifier, schema: staged.kind, walFrames: snapshot.walFrameCount,
            entities: manifest.entities, files: manifest.files, tables: manifest.tables ?? [], warnings: staged.warnings)
    }

    private struct Staged {
        var schema: Schema
        var kind: String
        var metadata: StoreMetadata
        var entities: [(member: ArchiveManifest.EntityMember, file: URL)] = []
        var files: [(member: ArchiveManifest.FileMember, file: URL)] = []
        var tables: [(member: ArchiveManifest.TableMember, file: URL)] = []
        var warnings: [String] = []
        var bookkeeping: [String: Int] = [:]
    }

    /// Encodes every member into a staging file inside one read transaction, hashing as it
    /// writes: the manifest, which comes first in the archive, needs every checksum, and memory
    /// must stay flat however large the store is.
    private static func stageMembers(of snapshot: StoreSnapshot, in staging: URL, options: Options) throws -> Staged {
        let path = snapshot.path
        return try snapshot.read { db in
            let metadata = try StoreReader.metadata(db, path: path)
            let (schema, kind) = try resolveSchema(db, metadata: metadata, path: path, candidates: options.schemas)
            var staged = Staged(schema: schema, kind: kind, metadata: metadata)
            let maxima = Dictionary(try StoreReader.entityKeys(db).map { ($0.name, $0.maximumPrimaryKey) }, uniquingKeysWith: max)
            for entity in schema.entities {
                let number = kind == ArchiveManifest.Source.timeQuestSchema ? schema.entityNumber(of: entity.name) : nil
                let memberPath = ArchiveManifest.entityPath(entity.name)
                let file = staging.appendingPathComponent(entity.name + ".jsonl")
                let writer = try HashingFileWriter(url: file)
                let done = try EntityMemberEncoding.encode(
                    db, schema: schema, entity: entity, entityNumber: number, path: path,
                    progress: { options.progress?(Progress(entity: entity.name, rowsDone: $0, rowsTotal: $1)) },
                    write: writer.write)
                let (bytes, digest) = try writer.finish()
                staged.entities.append(
                    (
                        ArchiveManifest.EntityMember(
                            name: entity.name, path: memberPath, count: done, maximumPrimaryKey: maxima[entity.name] ?? 0, bytes: bytes,
                            sha256: digest),
                        file
                    ))
            }
            let rawPlist = try Data.fetchOne(db, sql: CoreDataSQL.selectMetadataPlist) ?? Data()
            for (memberPath, data) in [
                (ArchiveManifest.metadataPath, rawPlist), (ArchiveManifest.modelCachePath, try StoreReader.modelCache(db)),
            ] {
                guard let data else { continue }
                let file = staging.appendingPathComponent(URL(fileURLWithPath: memberPath).lastPathComponent)
                try data.write(to: file)
                staged.files.append(
                    (
                        ArchiveManifest.FileMember(path: memberPath, bytes: Int64(data.count), sha256: SHA256.hash(data: data).hexString),
                        file
                    ))
            }
            for (name, sql, indexes) in try StoreReader.otherTables(db) {
                // The name becomes a file name in the archive and SQL in a restore.
                guard Schema.isPlainIdentifier(name) else {
                    throw StoreError.schemaMismatch(
                        path: path, versionIdentifier: nil,
                        differences: [
                            "table \"\(ArchiveError.displayName(name))\" belongs to no entity and its name is not a plain identifier, so it cannot be carried"
                        ])
                }
                let file = staging.appendingPathComponent("table-" + name + ".jsonl")
                let writer = try HashingFileWriter(url: file)
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
            staged.warnings = try StoreInspection.warnings(db, model: try StoreInspection.ModelSummary(db))
            return staged
        }
    }

    /// A known TimeQuest schema when the store is one; any other app's store is exported
    /// generically. A store with TimeQuest's entities that matches no TimeQuest schema is an
    /// error, not a generic export: an archive that cannot be restored is no backup.
    private static func resolveSchema(
        _ db: Database, metadata: StoreMetadata, path: String, candidates: [Schema]
    ) throws -> (Schema, String) {
        do {
            return (try StoreReader.detectSchema(db, path: path, candidates: candidates), ArchiveManifest.Source.timeQuestSchema)
        } catch let error as StoreError {
            switch error {
            case .schemaMismatch, .unsupportedVersion, .unknownVersion:
                let names = Set(try StoreReader.modelTables(db).map(\.entity.name))
                if candidates.contains(where: { names == Set($0.entities.map(\.name)) }) { throw error }
                return (try GenericSchema.derive(db, metadata: metadata, path: path), ArchiveManifest.Source.genericSchema)
            default:
                throw error
            }
        }
    }

    private static func copy(_ file: URL, as memberPath: String, size: Int64, into writer: TarArchiveWriter) throws {
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            throw ArchiveError.write(path: file.path, reason: "staged member vanished")
        }
        defer { try? handle.close() }
        try writer.addFile(path: memberPath, size: size) { write in
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                try chunk.withUnsafeBytes { try write($0) }
            }
        }
    }
}

/// Appends to a file through a buffer, computing its SHA-256 on the way.
final class HashingFileWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var hasher = SHA256()
    private var bytes: Int64 = 0
    private let url: URL

    init(url: URL) throws {
        self.url = url
        guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = FileHandle(forWritingAtPath: url.path) else {
            throw StoreError.io(path: url.path, reason: "cannot create a staging file")
        }
        self.handle = handle
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ chunk: [UInt8]) throws {
        buffer.append(contentsOf: chunk)
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        hasher.update(data: buffer)
        bytes += Int64(buffer.count)
        do {
            try handle.write(contentsOf: buffer)
        } catch {
            throw StoreError.io(path: url.path, reason: error.localizedDescription)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func finish() throws -> (bytes: Int64, sha256: String) {
        try flush()
        try handle.close()
        return (bytes, hasher.finalize().hexString)
    }
}

extension Sequence where Element == UInt8 {
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var output: [UInt8] = []
        for byte in self {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }
}

extension SHA256.Digest {
    package var hexString: String { Array(self).hexString }
}
