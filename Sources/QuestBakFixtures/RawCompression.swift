import CArchive
import Foundation
import QuestBakKit

/// A compression filter on bytes with no tar around them, for tools that edit the tar stream
/// inside a compressed archive (the fuzzer mutates both layers).
package enum RawCompression {

    package static func detectCompression(_ data: Data) -> ArchiveCompression {
        if data.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .zstd }
        if data.starts(with: [0x1F, 0x8B]) { return .gzip }
        return .none
    }

    /// `data` compressed as one zstd frame or gzip stream (or unchanged).
    package static func compress(_ data: Data, with compression: ArchiveCompression) throws -> Data {
        guard compression != .none else { return data }
        guard let archive = archive_write_new() else { throw LibArchiveError("archive_write_new", nil) }
        defer { archive_write_free(archive) }
        func check(_ result: Int32, _ operation: String) throws {
            if result < ARCHIVE_WARN { throw LibArchiveError(operation, archive) }
        }
        try check(archive_write_set_format_raw(archive), "set raw format")
        if compression == .zstd {
            try check(archive_write_add_filter_zstd(archive), "add zstd filter")
        } else {
            try check(archive_write_add_filter_gzip(archive), "add gzip filter")
            try check(archive_write_set_filter_option(archive, "gzip", "timestamp", nil), "disable gzip timestamp")
        }
        try check(archive_write_set_bytes_per_block(archive, 0), "unblocked output")
        let capacity = data.count + data.count / 2 + 4096
        var output = [UInt8](repeating: 0, count: capacity)
        var used = 0
        try output.withUnsafeMutableBytes { buffer in
            try check(archive_write_open_memory(archive, buffer.baseAddress, capacity, &used), "open memory")
            let entry = archive_entry_new()
            defer { archive_entry_free(entry) }
            archive_entry_set_pathname(entry, "data")
            archive_entry_set_filetype(entry, 0o100000)
            archive_entry_set_size(entry, Int64(data.count))
            try check(archive_write_header(archive, entry), "write header")
            if !data.isEmpty {
                let written = data.withUnsafeBytes { archive_write_data(archive, $0.baseAddress, $0.count) }
                guard written == data.count else { throw LibArchiveError("write data", archive) }
            }
            try check(archive_write_close(archive), "close")
        }
        return Data(output[0..<used])
    }

    /// The decompressed bytes of a zstd or gzip file.
    package static func decompress(_ data: Data) throws -> Data {
        guard let archive = archive_read_new() else { throw LibArchiveError("archive_read_new", nil) }
        defer { archive_read_free(archive) }
        archive_read_support_filter_zstd(archive)
        archive_read_support_filter_gzip(archive)
        archive_read_support_format_raw(archive)
        return try data.withUnsafeBytes { input in
            guard archive_read_open_memory(archive, input.baseAddress, input.count) == ARCHIVE_OK else {
                throw LibArchiveError("open", archive)
            }
            var entry: OpaquePointer?
            guard archive_read_next_header(archive, &entry) == ARCHIVE_OK else { throw LibArchiveError("read header", archive) }
            var output = Data()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { archive_read_data(archive, $0.baseAddress, $0.count) }
                guard count >= 0 else { throw LibArchiveError("read data", archive) }
                if count == 0 { break }
                output.append(contentsOf: buffer[0..<count])
            }
            return output
        }
    }
}
