import CoreDataStore
import Crypto
import Foundation

/// Reads an archive in one streaming pass and checks it against its manifest: the manifest
/// first, then every member's type, name, size, SHA-256 and record count. Nothing is trusted
/// before it is checked, and nothing is ever extracted to disk, so hostile member names cannot
/// reach the file system.
///
/// Entity lines reach `onRecordLine` as they are read; a member's checksum is known only at its
/// end, so a caller that acts on lines must be ready to discard its work when `read` throws.
package struct ArchiveReader: Sendable {
    /// An external-storage member's bytes, pulled by the caller: each call fills the start of
    /// the buffer and says how much it filled, 0 at the member's end.
    public typealias ExternalFileBytes = (UnsafeMutableRawBufferPointer) throws -> Int

    public struct Limits: Sendable {
        public var manifestBytes = 16 << 20
        public var lineBytes = ArchiveManifest.maximumLineBytes
        /// The metadata and the model cache, read whole into memory. External-storage files are
        /// streamed (`onExternalFile`) and have no limit: export carries any size.
        public var fileBytes: Int64 = 256 << 20
        /// After a refused line, up to this many more bytes of the member are still hashed, so
        /// that damage is reported as the checksum mismatch it is, not as a bad line.
        public var checksumAfterLineErrorBytes: Int64 = 64 << 20

        public init() {}
    }

    public struct Verification: Sendable, Encodable {
        public var archive: String
        public var manifest: ArchiveManifest
        public var verifiedMembers: Int
    }

    /// The archive as named in messages.
    public let path: String
    private let url: URL?
    private let descriptor: Int32?
    public var limits = Limits()
    /// Whether a member of lines is hashed on another thread, a read behind the reading
    /// (`ChunkHasher`), where the caller's thread sets the pace and another core has room (another
    /// app's restore, whose transaction thread reads the archive); off by default.
    package var hashesLinesAside = false
    /// What an age-encrypted archive file is opened with; a plain archive is read as it is.
    public var keys: ArchiveKeys

    /// Reads the archive file at `path`; `displayPath` names it in errors (a spooled copy). An
    /// age-encrypted file is decrypted as it is read, with `keys`, and never to disk.
    public init(path: String, displayPath: String? = nil, keys: ArchiveKeys = ArchiveKeys()) {
        self.path = displayPath ?? path
        url = URL(fileURLWithPath: path)
        descriptor = nil
        self.keys = keys
    }

    /// Reads an archive streamed from an open descriptor (a pipe), once.
    public init(fileDescriptor: Int32, displayPath: String) {
        path = displayPath
        url = nil
        descriptor = fileDescriptor
        keys = ArchiveKeys()
    }

    /// Only the manifest, checked as `read` checks it.
    public func readManifest() throws -> ArchiveManifest {
        var manifest: ArchiveManifest?
        struct Stop: Error {}
        do {
            _ = try read(onManifest: {
                manifest = $0
                throw Stop()
            })
        } catch is Stop {}
        guard let manifest else { throw ArchiveError.notAQuestbakArchive(path: path, reason: "no manifest") }
        return manifest
    }

    public func read(
        onManifest: (ArchiveManifest) throws -> Void = { _ in },
        onRecordLine: (ArchiveManifest.EntityMember, Int, Data) throws -> Void = { _, _, _ in },
        onTableLine: (ArchiveManifest.TableMember, Int, Data) throws -> Void = { _, _, _ in },
        onFile: (ArchiveManifest.FileMember, Data) throws -> Void = { _, _ in },
        onExternalFile: (ArchiveManifest.FileMember, ExternalFileBytes) throws -> Void = { _, _ in }
    ) throws -> Verification {
        var descriptor = self.descriptor ?? -1
        if let url {
            descriptor = open(url.path, O_RDONLY)
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno))
                if errno == ENOENT { throw StoreError.notFound(path: url.path) }
                throw StoreError.unreadable(path: url.path, reason: reason)
            }
        }
        let opened = descriptor
        defer { if url != nil { close(opened) } }
        // An encrypted file is read through a pipe that a thread fills with plaintext one
        // authenticated chunk at a time: memory stays flat, and no decrypted byte reaches the
        // disk. A reader that needs two passes opens the file, and decrypts it, twice.
        var decryption: AgeDecryptingPipe?
        if url != nil, Self.isEncrypted(descriptor) {
            let pipe = try AgeDecryptingPipe(reader: try keys.decryptingReader(fileDescriptor: descriptor, file: path))
            decryption = pipe
            descriptor = pipe.fileDescriptor
        }
        do {
            let tar = try TarArchiveReader(fileDescriptor: descriptor)
            let verification = try read(
                tar, onManifest: onManifest, onRecordLine: onRecordLine, onTableLine: onTableLine, onFile: onFile,
                onExternalFile: onExternalFile)
            // Read to the authenticated end: every byte of the file is checked, not only those the
            // tar reader needed.
            try decryption?.finish(readingToEnd: true)
            return verification
        } catch {
            // A damaged or cut-short encrypted file is what the archive reader saw as a
            // truncated archive: the decryption's error explains it, and comes first.
            try decryption?.finish()
            guard let error = error as? TarReadError else { throw error }
            if let codec = error.missingCodec { throw ArchiveError.codecUnavailable(path: path, codec: codec, reading: true) }
            if error.isUnrecognizedFormat {
                if decryption != nil {
                    throw ArchiveError.unreadable(path: path, reason: "it decrypts, but to something that is not a tar archive")
                }
                if let url, FileKind.of(url.path) == .sqliteStore {
                    throw ArchiveError.unreadable(path: path, reason: "it is a SQLite store, not a questbak archive")
                }
                throw ArchiveError.unreadable(path: path, reason: "neither a SQLite store nor a tar archive (plain, gzip or zstd)")
            }
            throw ArchiveError.unreadable(path: path, reason: error.location.map { "\(error.message) \($0)" } ?? error.message)
        }
    }

    /// Whether the file open at `descriptor` starts as an age file does (binary or armored);
    /// read with `pread`, so the descriptor stays at the start.
    private static func isEncrypted(_ descriptor: Int32) -> Bool {
        var prefix = [UInt8](repeating: 0, count: 64)
        let count = prefix.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 && AgeFormat.isEncrypted(prefix: prefix[0..<count])
    }

    private func read(
        _ tar: TarArchiveReader,
        onManifest: (ArchiveManifest) throws -> Void,
        onRecordLine: (ArchiveManifest.EntityMember, Int, Data) throws -> Void,
        onTableLine: (ArchiveManifest.TableMember, Int, Data) throws -> Void,
        onFile: (ArchiveManifest.FileMember, Data) throws -> Void,
        onExternalFile: (ArchiveManifest.FileMember, ExternalFileBytes) throws -> Void
    ) throws -> Verification {
        guard let first = try tar.nextEntry() else {
            throw ArchiveError.notAQuestbakArchive(path: path, reason: "the archive is empty")
        }
        guard first.path == ArchiveManifest.path else {
            throw ArchiveError.notAQuestbakArchive(
                path: path, reason: "the first member is \(UntrustedText.display(first.path)), not \(ArchiveManifest.path)")
        }
        if let reason = Self.unsafeReason(first) {
            throw ArchiveError.unexpectedMember(path: path, member: first.path, reason: reason)
        }
        guard first.size <= limits.manifestBytes else {
            throw ArchiveError.unexpectedMember(
                path: path, member: first.path, reason: "\(first.size) bytes, more than the \(limits.manifestBytes) a manifest may have")
        }
        let manifest = try parseManifest(try readAll(tar, size: first.size, member: first.path))
        try onManifest(manifest)

        // parseManifest refused duplicates; never trap on them all the same.
        var expectedEntities = Dictionary(manifest.entities.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var expectedFiles = Dictionary(manifest.files.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        var expectedTables = Dictionary((manifest.tables ?? []).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        // Compared case-folded: `entities/Routine.jsonl` and `entities/ROUTINE.jsonl` are one file
        // on a case-insensitive disk (macOS by default), so tar -x would let one replace the other.
        var seen: Set<String> = [ArchiveManifest.path.lowercased()]
        var verified = 0
        while let entry = try tar.nextEntry() {
            if let reason = Self.unsafeReason(entry) {
                throw ArchiveError.unexpectedMember(path: path, member: entry.path, reason: reason)
            }
            guard seen.insert(entry.path.lowercased()).inserted else {
                throw ArchiveError.unexpectedMember(
                    path: path, member: entry.path, reason: "appears more than once (names that differ only in case count as one)")
            }
            if let member = expectedEntities.removeValue(forKey: entry.path) {
                guard entry.size == member.bytes else {
                    throw ArchiveError.sizeMismatch(path: path, member: member.path, declared: member.bytes, found: entry.size)
                }
                let version = manifest.effectiveSchemaVersion
                let lines = LineMember(
                    path: member.path, bytes: member.bytes, sha256: member.sha256, count: member.count,
                    checkHeader: { try self.checkHeader($0, member: member, schemaVersion: version) })
                try readLines(tar, member: lines) { try onRecordLine(member, $0, $1) }
            } else if let table = expectedTables.removeValue(forKey: entry.path) {
                guard entry.size == table.bytes else {
                    throw ArchiveError.sizeMismatch(path: path, member: table.path, declared: table.bytes, found: entry.size)
                }
                let lines = LineMember(
                    path: table.path, bytes: table.bytes, sha256: table.sha256, count: table.count,
                    checkHeader: { try self.checkTableHeader($0, member: table) })
                try readLines(tar, member: lines) { try onTableLine(table, $0, $1) }
            } else if let file = expectedFiles.removeValue(forKey: entry.path) {
                guard entry.size == file.bytes else {
                    throw ArchiveError.sizeMismatch(path: path, member: file.path, declared: file.bytes, found: entry.size)
                }
                if file.path.hasPrefix(ExternalStorage.memberPrefix) {
                    try readExternal(tar, file: file, onExternalFile)
                    verified += 1
                    continue
                }
                guard file.bytes <= limits.fileBytes else {
                    throw ArchiveError.unexpectedMember(
                        path: path, member: file.path, reason: "\(file.bytes) bytes, more than the \(limits.fileBytes) allowed")
                }
                let data = try readAll(tar, size: entry.size, member: file.path)
                let digest = SHA256.hash(data: data).hexString
                guard digest == file.sha256 else {
                    throw ArchiveError.checksumMismatch(path: path, member: file.path, expected: file.sha256, found: digest)
                }
                try onFile(file, data)
            } else {
                throw ArchiveError.unexpectedMember(path: path, member: entry.path, reason: "not listed in the manifest")
            }
            verified += 1
        }
        if let missing = (expectedEntities.keys.sorted() + expectedTables.keys.sorted() + expectedFiles.keys.sorted()).first {
            throw ArchiveError.missingMember(path: path, member: missing)
        }
        return Verification(archive: path, manifest: manifest, verifiedMembers: verified)
    }

    /// Hands an external-storage member to `body` as bytes to pull, hashing them as they pass;
    /// what `body` leaves unread is read and hashed after it. The size and SHA-256 are checked
    /// at the end, so `body` must be ready to discard what it wrote when this throws.
    private func readExternal(
        _ tar: TarArchiveReader, file: ArchiveManifest.FileMember,
        _ body: (ArchiveManifest.FileMember, ExternalFileBytes) throws -> Void
    ) throws {
        var hasher = SHA256()
        var total: Int64 = 0
        func pull(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let count = try tar.read(into: buffer)
            total += Int64(count)
            guard total <= file.bytes else {
                throw ArchiveError.sizeMismatch(path: path, member: file.path, declared: file.bytes, found: total)
            }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            return count
        }
        try body(file, pull)
        var rest = [UInt8](repeating: 0, count: 64 * 1024)
        while try rest.withUnsafeMutableBytes({ try pull($0) }) > 0 {}
        guard total == file.bytes else {
            throw ArchiveError.sizeMismatch(path: path, member: file.path, declared: file.bytes, found: total)
        }
        let digest = hasher.finalize().hexString
        guard digest == file.sha256 else {
            throw ArchiveError.checksumMismatch(path: path, member: file.path, expected: file.sha256, found: digest)
        }
    }

    static func unsafeReason(_ entry: TarArchiveReader.Entry) -> String? {
        if let target = entry.linkTarget { return "is a link to \(UntrustedText.display(target)); archives hold only regular files" }
        if !entry.isRegularFile { return "is not a regular file" }
        if entry.path.hasPrefix("/") || entry.path.split(separator: "/").contains("..") { return "has an unsafe path" }
        return nil
    }

    private func parseManifest(_ data: Data) throws -> ArchiveManifest {
        // Format and version first, so a newer archive gets "upgrade" rather than a field error.
        struct Envelope: Decodable {
            var format: String?
            var formatVersion: Int?
        }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data) else {
            throw ArchiveError.notAQuestbakArchive(path: path, reason: "\(ArchiveManifest.path) is not a JSON object")
        }
        guard envelope.format == ArchiveManifest.formatName else {
            throw ArchiveError.notAQuestbakArchive(
                path: path,
                reason:
                    "format is \(envelope.format.map { "\"\(UntrustedText.display($0))\"" } ?? "missing"), not \"\(ArchiveManifest.formatName)\""
            )
        }
        guard let version = envelope.formatVersion else {
            throw ArchiveError.notAQuestbakArchive(path: path, reason: "formatVersion is missing")
        }
        // Versions start at 1: a lower one is damage, not something a newer questbak would read.
        guard version >= 1 else {
            throw ArchiveError.notAQuestbakArchive(path: path, reason: "formatVersion \(version) is not a version (they start at 1)")
        }
        guard version <= ArchiveManifest.highestSupportedFormatVersion else {
            throw ArchiveError.unsupportedFormatVersion(
                path: path, found: version, supported: ArchiveManifest.highestSupportedFormatVersion)
        }
        // JSONDecoder keeps one of two equal keys without a word: the strict parser refuses them.
        do {
            _ = try JSONLine.parseObject(data)
        } catch let error as JSONLine.SyntaxError {
            throw ArchiveError.notAQuestbakArchive(path: path, reason: "\(ArchiveManifest.path): \(error)")
        }
        let manifest: ArchiveManifest
        do {
            manifest = try JSONDecoder().decode(ArchiveManifest.self, from: data)
        } catch {
            throw ArchiveError.notAQuestbakArchive(path: path, reason: "\(ArchiveManifest.path): \(DecodingErrorText.describe(error))")
        }
        try checkListed(
            "entity", folder: "entities", manifest.entities.map { ($0.name, $0.path, $0.count, $0.bytes) },
            expectedPath: ArchiveManifest.entityPath)
        try checkListed(
            "table", folder: "tables", (manifest.tables ?? []).map { ($0.name, $0.path, $0.count, $0.bytes) },
            expectedPath: ArchiveManifest.tablePath)
        var files: Set<String> = []
        for file in manifest.files {
            let isExternal =
                manifest.formatVersion >= 3 && file.path.hasPrefix(ExternalStorage.memberPrefix)
                && ExternalStorage.isSafeFileName(String(file.path.dropFirst(ExternalStorage.memberPrefix.count)))
            guard [ArchiveManifest.metadataPath, ArchiveManifest.modelCachePath].contains(file.path) || isExternal else {
                throw ArchiveError.notAQuestbakArchive(path: path, reason: "unknown file member \(UntrustedText.display(file.path))")
            }
            guard files.insert(file.path).inserted else {
                throw ArchiveError.notAQuestbakArchive(path: path, reason: "file \(file.path) is listed twice")
            }
        }
        return manifest
    }

    /// Streams one entity member: checks its header line, hands on each record line, and
    /// compares the record count and SHA-256 with the manifest at the end.
    /// What a member of lines (an entity's or a table's) must be: its path, size, checksum and
    /// record count from the manifest, and how its header line is checked.
    private struct LineMember {
        var path: String
        var bytes: Int64
        var sha256: String
        var count: Int
        var checkHeader: (Data) throws -> Void
    }

    /// Reads a member of lines: the header, then `count` records, each passed to `onLine`, the
    /// whole checked against the manifest's size and SHA-256.
    private func readLines(_ tar: TarArchiveReader, member: LineMember, onLine: (Int, Data) throws -> Void) throws {
        let hasher = ChunkHasher(aside: hashesLinesAside)
        var pending = Data()
        var lineNumber = 0
        var total: Int64 = 0
        // A line refused (by the header check or by the caller) in a member whose bytes are
        // damaged is a symptom: the rest of the member is only hashed, and a wrong SHA-256 is
        // reported instead. Only when little enough is left, so a refusal stays quick.
        var lineError: Error?
        func handle(_ line: Data) throws {
            guard lineError == nil else { return }
            do {
                try handleLine(line)
            } catch {
                guard member.bytes - total <= limits.checksumAfterLineErrorBytes else { throw error }
                lineError = error
            }
        }
        func handleLine(_ line: Data) throws {
            lineNumber += 1
            if lineNumber == 1 {
                try member.checkHeader(line)
            } else if lineNumber - 1 > member.count {
                // Stop at the first record the header did not announce: a caller sizing its work
                // by the count never sees more, and a stream of extra lines ends here, not at its end.
                throw ArchiveError.invalidLine(
                    path: path, member: member.path, line: lineNumber,
                    reason: "a record beyond the \(member.count) the manifest and header declare")
            } else {
                try onLine(lineNumber, line)
            }
        }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try tar.read(into: $0) }
            if count == 0 { break }
            total += Int64(count)
            guard total <= member.bytes else {
                throw ArchiveError.sizeMismatch(path: path, member: member.path, declared: member.bytes, found: total)
            }
            let chunk = buffer[0..<count]
            hasher.update(chunk)
            if lineError != nil { continue }
            var start = chunk.startIndex
            // `memchr`, not `firstIndex(of:)`, whose loop over each byte was a fifteenth of the
            // transaction's thread in another app's import (the chunk's indices start at 0).
            func newline(after start: Int) -> Int? {
                chunk.withUnsafeBufferPointer { bytes in
                    guard start < bytes.count, let base = bytes.baseAddress,
                        let found = memchr(base + start, 0x0A, bytes.count - start)
                    else { return nil }
                    return UnsafeRawPointer(found) - UnsafeRawPointer(base)
                }
            }
            while let newline = newline(after: start) {
                pending.append(contentsOf: chunk[start..<newline])
                try handle(pending)
                pending.removeAll(keepingCapacity: true)
                start = newline + 1
                if lineError != nil { break }
            }
            if lineError != nil { continue }
            pending.append(contentsOf: chunk[start...])
            guard pending.count <= limits.lineBytes else {
                throw ArchiveError.invalidLine(
                    path: path, member: member.path, line: lineNumber + 1, reason: "longer than \(limits.lineBytes) bytes")
            }
        }
        if !pending.isEmpty && lineError == nil { try handle(pending) }
        guard total == member.bytes else {
            throw ArchiveError.sizeMismatch(path: path, member: member.path, declared: member.bytes, found: total)
        }
        let digest = hasher.finalize()
        guard digest == member.sha256 else {
            throw ArchiveError.checksumMismatch(path: path, member: member.path, expected: member.sha256, found: digest)
        }
        if let lineError { throw lineError }
        guard lineNumber >= 1 else {
            throw ArchiveError.invalidLine(path: path, member: member.path, line: 1, reason: "the header line is missing")
        }
        guard lineNumber - 1 == member.count else {
            throw ArchiveError.countMismatch(path: path, member: member.path, declared: member.count, found: lineNumber - 1)
        }
    }

    /// Entity and table members alike: a plain name, the path the format gives it, listed once
    /// (case-folded, like member names: Routine and ROUTINE would share one file on a
    /// case-insensitive disk, and one table in SQLite, whose names ignore case), no negative sizes.
    private func checkListed(
        _ kind: String, folder: String, _ members: [(name: String, path: String, count: Int, bytes: Int64)],
        expectedPath: (String) -> String
    ) throws {
        var names: Set<String> = []
        for member in members {
            guard member.path == expectedPath(member.name), CompiledModel.isPlainIdentifier(member.name) else {
                throw ArchiveError.notAQuestbakArchive(
                    path: path,
                    reason:
                        "\(kind) \"\(UntrustedText.display(member.name))\" has member path \"\(UntrustedText.display(member.path))\"; expected \(folder)/<Name>.jsonl with a plain name"
                )
            }
            guard names.insert(member.name.lowercased()).inserted else {
                throw ArchiveError.notAQuestbakArchive(
                    path: path, reason: "\(kind) \(member.name) is listed twice (names that differ only in case count as one)")
            }
            guard member.count >= 0, member.bytes >= 0 else {
                throw ArchiveError.notAQuestbakArchive(path: path, reason: "\(kind) \(member.name) has a negative count or size")
            }
        }
    }

    private func checkTableHeader(_ line: Data, member: ArchiveManifest.TableMember) throws {
        let members: [(key: String, value: JSONValue)]
        do {
            members = try JSONLine.parseObject(line)
        } catch {
            throw ArchiveError.invalidLine(path: path, member: member.path, line: 1, reason: "not a header object: \(error)")
        }
        let header = Dictionary(members, uniquingKeysWith: { first, _ in first })
        guard members.count == 2, header["table"] == .string(member.name), header["count"] == .integer(Int64(member.count)) else {
            throw ArchiveError.invalidLine(
                path: path, member: member.path, line: 1,
                reason: "the header is not {\"table\":\"\(member.name)\",\"count\":\(member.count)} as the manifest says")
        }
    }

    private func checkHeader(_ line: Data, member: ArchiveManifest.EntityMember, schemaVersion: String) throws {
        let header: EntityHeader
        do {
            _ = try JSONLine.parseObject(line)  // strict first: a key given twice is refused
            header = try JSONDecoder().decode(EntityHeader.self, from: line)
        } catch {
            throw ArchiveError.invalidLine(
                path: path, member: member.path, line: 1,
                reason: "not a header object with entity and count: \(DecodingErrorText.describe(error))")
        }
        let problems = [
            header.entity != member.name ? "entity \(header.entity), the manifest says \(member.name)" : nil,
            header.count != member.count ? "count \(header.count), the manifest says \(member.count)" : nil,
            (header.schemaVersion ?? "1.0.0") != schemaVersion
                ? "schemaVersion \(header.schemaVersion ?? "1.0.0"), the manifest says \(schemaVersion)" : nil,
        ].compactMap { $0 }
        if !problems.isEmpty {
            throw ArchiveError.invalidLine(
                path: path, member: member.path, line: 1, reason: "header has " + problems.joined(separator: "; "))
        }
    }

    private func readAll(_ tar: TarArchiveReader, size: Int64, member: String) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try tar.read(into: $0) }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= size else {
                throw ArchiveError.sizeMismatch(path: path, member: member, declared: size, found: Int64(data.count))
            }
        }
        return data
    }
}

/// A member's SHA-256 over its reads in their order: on the reading thread, or (`aside`) on a
/// serial queue a read or two behind it, each read copied for it (at most two wait: 512 KiB).
/// The digest is the same either way (the same bytes in the same order into one `SHA256`), and
/// it is asked for where it always was, at the member's end, after every line was handed on:
/// what the reader checks and throws, and when, does not change. Why: in another app's restore
/// the reading thread is the transaction's, which sets the pace, and SHA-256 was 3% of it while
/// the line decoder's core had room. (A whole reading thread, session 32, raised the peak by
/// 10 MB and gained nothing: here only the hashing moves, with two reads' worth of memory.)
// @unchecked: `hasher` and `updatesElsewhere` are touched only on `queue` when `aside` (else
// only by the owner), and `finalize` waits for every update queued before it.
package final class ChunkHasher: @unchecked Sendable {
    private var hasher = SHA256()
    private let queue: DispatchQueue?
    private let slots = DispatchSemaphore(value: 2)
    private let maker = pthread_self()
    /// How many reads were hashed on a thread other than the one that made the hasher (what
    /// shows that they were hashed aside: `ArchiveReaderTests`).
    private var updatesElsewhere = 0

    package init(aside: Bool) {
        queue = aside ? DispatchQueue(label: "questbak.archive-reader.hash") : nil
    }

    package func update(_ chunk: ArraySlice<UInt8>) {
        guard let queue else {
            hasher.update(data: chunk)
            return
        }
        slots.wait()
        let copy = Array(chunk)
        queue.async {
            self.hasher.update(data: copy)
            if pthread_equal(pthread_self(), self.maker) == 0 { self.updatesElsewhere += 1 }
            self.slots.signal()
        }
    }

    /// The digest (hex) of every chunk given, once each is hashed.
    package func finalize() -> String {
        guard let queue else { return hasher.finalize().hexString }
        return queue.sync { hasher.finalize().hexString }
    }

    /// `updatesElsewhere`, once every update queued is hashed.
    package var chunksHashedElsewhere: Int {
        guard let queue else { return updatesElsewhere }
        return queue.sync { updatesElsewhere }
    }
}
