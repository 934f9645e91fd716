import CArchive
import Foundation

// The only file of the library that calls libarchive (the fuzzer's `RawCompression` is
// tooling's). It exposes what questbak needs: writing regular files into a compressed tar
// stream, and reading such a stream member by member with every entry checked before its bytes
// are trusted.

/// How an archive's members are compressed: `zstd` (the default), `gzip`, or `none`.
public enum ArchiveCompression: String, Sendable, CaseIterable {
    case zstd, gzip, none
}

package struct LibArchiveError: Error, LocalizedError {
    package var operation: String
    package var message: String
    /// Where in the archive reading failed ("in member entities/Routine.jsonl"), so a message
    /// about damage can say which member it hit; nil when the failure is not about one place.
    package var location: String?
    package var errorDescription: String? { "\(operation): \(message)" }

    package init(operation: String, message: String, location: String? = nil) {
        self.operation = operation
        self.message = message
        self.location = location
    }

    /// `withCause` adds errno's text: libarchive says only "Write error" when a disk is full.
    package init(_ operation: String, _ archive: OpaquePointer?, location: String? = nil, withCause: Bool = false) {
        self.operation = operation
        var text = archive.flatMap { archive_error_string($0) }.map { String(cString: $0) } ?? "unknown libarchive error"
        if withCause, let archive, archive_errno(archive) > 0 {
            let cause = String(cString: strerror(archive_errno(archive)))
            if !text.contains(cause) { text += " (\(cause))" }
        }
        message = text
        self.location = location
    }
}

/// Writes a tar (pax/ustar) stream to a file descriptor through a compression filter, as one
/// stream: what the fuzzer and the tests build archives with. `export` writes frames instead
/// (`FramedTar`); both hold the same tar.
package final class TarArchiveWriter {
    private var archive: OpaquePointer?
    private let modificationTime: Int

    /// `modificationTime` (Unix seconds) is stamped on every member, so equal inputs give equal bytes.
    package init(fileDescriptor: Int32, compression: ArchiveCompression, modificationTime: Int) throws {
        self.modificationTime = modificationTime
        archive = archive_write_new()
        guard let archive else { throw LibArchiveError("archive_write_new", nil) }
        try check(archive_write_set_format_pax_restricted(archive), "set tar format")
        switch compression {
        case .zstd:
            try check(archive_write_add_filter_zstd(archive), "add zstd filter")
        case .gzip:
            try check(archive_write_add_filter_gzip(archive), "add gzip filter")
            // gzip stamps the current time into its header unless told not to.
            try check(archive_write_set_filter_option(archive, "gzip", "timestamp", nil), "disable gzip timestamp")
        case .none:
            try check(archive_write_add_filter_none(archive), "add no filter")
        }
        // Without this, output to a pipe is zero-padded to a 10 KiB block after the compressed
        // stream, which zstd and gzip then reject as trailing garbage.
        try check(archive_write_set_bytes_in_last_block(archive, 1), "set last block size")
        try check(archive_write_open_fd(archive, fileDescriptor), "open output")
    }

    deinit {
        if let archive { archive_write_free(archive) }
    }

    /// Adds a regular file of exactly `size` bytes whose contents `produce` writes through `write`.
    package func addFile(path: String, size: Int64, produce: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
        guard let archive else { throw LibArchiveError(operation: "write \(path)", message: "archive already closed") }
        let entry = Self.regularFileEntry(path: path, size: size, modificationTime: modificationTime)
        defer { archive_entry_free(entry) }
        try check(archive_write_header(archive, entry), "write header of \(path)")
        var written: Int64 = 0
        try produce { chunk in
            guard chunk.count > 0 else { return }
            let result = archive_write_data(archive, chunk.baseAddress, chunk.count)
            guard result == chunk.count else { throw LibArchiveError("write \(path)", archive, withCause: true) }
            written += Int64(result)
        }
        guard written == size else {
            throw LibArchiveError(operation: "write \(path)", message: "wrote \(written) bytes, announced \(size)")
        }
    }

    /// Every member's entry: a regular file, mode 0644, owner 0:0, modified at the archive's time.
    /// The caller frees it.
    static func regularFileEntry(path: String, size: Int64, modificationTime: Int) -> OpaquePointer? {
        let entry = archive_entry_new()
        archive_entry_set_pathname(entry, path)
        archive_entry_set_size(entry, size)
        archive_entry_set_filetype(entry, 0o100000)  // AE_IFREG
        archive_entry_set_perm(entry, 0o644)
        archive_entry_set_mtime(entry, modificationTime, 0)
        archive_entry_set_uid(entry, 0)
        archive_entry_set_gid(entry, 0)
        return entry
    }

    package func addFile(path: String, data: Data) throws {
        try addFile(path: path, size: Int64(data.count)) { write in try data.withUnsafeBytes { try write($0) } }
    }

    /// Flushes the compressor and the tar trailer; the archive is incomplete until this returns.
    package func finish() throws {
        guard let archive else { return }
        try check(archive_write_close(archive), "finish archive")
        archive_write_free(archive)
        self.archive = nil
    }

    private func check(_ result: Int32, _ operation: String) throws {
        if result < ARCHIVE_WARN { throw LibArchiveError(operation, archive, withCause: true) }
    }
}

/// Reads a tar stream (zstd, gzip or uncompressed) member by member.
package final class TarArchiveReader {
    package struct Entry {
        package var path: String
        /// The size the tar header declares.
        package var size: Int64
        package var isRegularFile: Bool
        /// For links: where they point; such entries are refused by the callers.
        package var linkTarget: String?
    }

    private var archive: OpaquePointer?
    /// The member whose header was read last, for error locations.
    private var currentPath: String?

    package init(fileDescriptor: Int32) throws {
        archive = archive_read_new()
        guard let archive else { throw LibArchiveError("archive_read_new", nil) }
        archive_read_support_filter_zstd(archive)
        archive_read_support_filter_gzip(archive)
        archive_read_support_filter_none(archive)
        archive_read_support_format_tar(archive)
        guard archive_read_open_fd(archive, fileDescriptor, 256 * 1024) == ARCHIVE_OK else {
            throw LibArchiveError("open archive", archive)
        }
    }

    deinit {
        if let archive { archive_read_free(archive) }
    }

    /// The next member's header, or `nil` at the end of the archive.
    package func nextEntry() throws -> Entry? {
        guard let archive else { return nil }
        var entry: OpaquePointer?
        let result = archive_read_next_header(archive, &entry)
        if result == ARCHIVE_EOF { return nil }
        // ARCHIVE_RETRY (a header whose checksum is wrong: "Damaged tar archive") leaves an empty
        // entry behind; it is damage like any other, not a member without a name.
        guard result == ARCHIVE_OK || result == ARCHIVE_WARN, let entry else {
            let location = currentPath.map { "after member \(ArchiveError.displayName($0))" } ?? "at the first member"
            throw LibArchiveError("read member header", archive, location: location)
        }
        let path = archive_entry_pathname(entry).map { String(cString: $0) } ?? ""
        currentPath = path
        let link = archive_entry_hardlink(entry) ?? archive_entry_symlink(entry)
        return Entry(
            path: path, size: archive_entry_size(entry),
            isRegularFile: archive_entry_filetype(entry) == 0o100000 && link == nil,
            linkTarget: link.map { String(cString: $0) })
    }

    /// Reads the current member's next bytes into `buffer`; 0 at its end.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let archive else { return 0 }
        let count = archive_read_data(archive, buffer.baseAddress, buffer.count)
        guard count >= 0 else {
            throw LibArchiveError("read member data", archive, location: currentPath.map { "in member \(ArchiveError.displayName($0))" })
        }
        return count
    }
}
