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

    /// `data` compressed as one zstd frame or gzip member (or unchanged), through the archive codecs.
    package static func compress(_ data: Data, with compression: ArchiveCompression) throws -> Data {
        guard let compressor = try makeFrameCompressor(compression, path: "data") else { return data }
        return try data.withUnsafeBytes { Data(try compressor.frame($0)) }
    }

    /// The decompressed bytes of a zstd or gzip file.
    package static func decompress(_ data: Data) throws -> Data {
        let input = DecompressingInput(bytes: [UInt8](data))
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try input.read(into: $0) }
            if count == 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        return output
    }
}
