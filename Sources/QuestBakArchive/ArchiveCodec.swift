import CZlib
import CoreDataStore
import Foundation

#if SystemArchive
    import CZstd
#endif

/// The compression around an archive's tar: the one seam between the tar (`TarFormat`,
/// `SwiftTarReader`) and the codecs. zstd goes through libzstd and is in the build only with the
/// `SystemArchive` trait (the iOS SDK has no libzstd); gzip goes through zlib, which every Apple
/// SDK and every Linux has; `none` is the tar as it is.
public enum ArchiveCompression: String, Sendable, CaseIterable {
    /// zstd frames with content checksums (libzstd; the default where it is linked).
    case zstd
    /// gzip members through zlib (the default of a build without libzstd).
    case gzip
    /// The tar as it is.
    case none

    /// Whether this build of questbak can write and read it.
    public var isAvailable: Bool {
        #if SystemArchive
            return true
        #else
            return self != .zstd
        #endif
    }

    /// What an export writes unless told otherwise: zstd where libzstd is linked, gzip otherwise.
    public static var preferred: ArchiveCompression { zstd.isAvailable ? .zstd : .gzip }

    /// The codec the stream starting with `prefix` was written with; anything not zstd or gzip is
    /// taken for an uncompressed tar (the tar reader then decides whether it is one).
    static func detect(prefix: some Collection<UInt8>) -> ArchiveCompression {
        let bytes = Array(prefix.prefix(4))
        if bytes == [0x28, 0xB5, 0x2F, 0xFD] { return .zstd }
        // A zstd stream may start with a skippable frame (magic 0x184D2A50 to 0x184D2A5F).
        if bytes.count == 4, bytes[0] & 0xF0 == 0x50, bytes[1...] == [0x2A, 0x4D, 0x18] { return .zstd }
        if bytes.starts(with: [0x1F, 0x8B]) { return .gzip }
        return .none
    }
}

/// Compresses whole frames: zstd frames or gzip members, each decompressing on its own, so that
/// concatenated they decompress to the concatenation of their contents (`FramedTar`).
package protocol FrameCompressor: AnyObject {
    /// `bytes` followed by `zeros` zero bytes (a tar member's padding, under 512) as one frame.
    func frame(_ bytes: UnsafeRawBufferPointer, zeros: Int) throws -> ArraySlice<UInt8>
}

extension FrameCompressor {
    package func frame(_ bytes: UnsafeRawBufferPointer) throws -> ArraySlice<UInt8> { try frame(bytes, zeros: 0) }
}

/// The compressor for `compression`, nil for `.none`; a codec this build leaves out is refused
/// with a sentence naming it (`path` is the archive being written).
package func makeFrameCompressor(_ compression: ArchiveCompression, path: String) throws -> FrameCompressor? {
    switch compression {
    case .none: return nil
    case .gzip: return try GzipFrameCompressor()
    case .zstd:
        #if SystemArchive
            return try ZstdFrameCompressor()
        #else
            throw ArchiveError.codecUnavailable(path: path, codec: "zstd", reading: false)
        #endif
    }
}

/// gzip members through zlib at its default level (6, as libarchive's gzip filter used), with
/// no name and a zero timestamp, so equal inputs give equal bytes. Each member carries a CRC-32
/// of its content.
package final class GzipFrameCompressor: FrameCompressor {
    private var stream = z_stream()
    private var output: [UInt8] = []

    package init() throws {
        // 15 + 16: a gzip header and trailer around the deflate stream, 32 KiB window.
        let status = deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw StoreError.io(path: "gzip", reason: "cannot create a compression stream (zlib \(status))") }
    }

    deinit { deflateEnd(&stream) }

    package func frame(_ bytes: UnsafeRawBufferPointer, zeros: Int) throws -> ArraySlice<UInt8> {
        precondition(zeros < 512, "padding is under one tar block")
        guard deflateReset(&stream) == Z_OK else { throw StoreError.io(path: "gzip", reason: "cannot reset the compression stream") }
        let bound = Int(deflateBound(&stream, UInt(bytes.count + zeros))) + 64
        if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
        let padding = [UInt8](repeating: 0, count: zeros)
        let written = try output.withUnsafeMutableBytes { destination -> Int in
            stream.next_out = destination.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(destination.count)
            func feed(_ input: UnsafeRawBufferPointer, finish: Bool) throws {
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(input.count)
                while true {
                    let status = deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
                    if finish && status == Z_STREAM_END { return }
                    guard status == Z_OK || status == Z_BUF_ERROR else {
                        throw StoreError.io(path: "gzip", reason: "compression failed (zlib \(status))")
                    }
                    if !finish && stream.avail_in == 0 { return }
                    guard stream.avail_out > 0 else { throw StoreError.io(path: "gzip", reason: "compressed frame outgrew its bound") }
                }
            }
            try feed(bytes, finish: false)
            try padding.withUnsafeBytes { try feed($0, finish: true) }
            return destination.count - Int(stream.avail_out)
        }
        return output[0..<written]
    }
}

/// Reads an archive's bytes from a descriptor and hands on its tar, decompressed: the codec is
/// told by the stream's first bytes, and any framing is read (one stream or many frames).
/// A stream that ends inside a frame, or whose frame checksum fails, is an error, never a short
/// tar.
package final class DecompressingInput {
    package private(set) var compression: ArchiveCompression?
    private let descriptor: Int32
    private var raw = [UInt8](repeating: 0, count: 256 * 1024)
    private var start = 0
    private var end = 0
    private var atEndOfFile = false
    private var gzip: GzipInflater?
    #if SystemArchive
        private var zstd: ZstdDecompressor?
    #endif

    package init(fileDescriptor: Int32) {
        descriptor = fileDescriptor
    }

    /// The stream held in memory (tools that edit an archive's bytes).
    package init(bytes: [UInt8]) {
        descriptor = -1
        raw = bytes
        end = bytes.count
        atEndOfFile = true
    }

    /// Fills the start of `buffer` with the tar's next bytes; 0 at the end of the stream.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if compression == nil { try detect() }
        while true {
            switch compression ?? .none {
            case .none:
                if start == end { try fill() }
                if start == end { return 0 }
                let count = min(buffer.count, end - start)
                raw.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + start, byteCount: count) }
                start += count
                return count
            case .gzip:
                let inflater = gzip!
                if inflater.memberEnded {
                    if start == end { try fill() }
                    if start == end { return 0 }
                    // Another member follows, or the stream is over: only zero bytes (a blocked
                    // tape's padding) may follow the last member.
                    if raw[start] == 0x1F {
                        try inflater.reset()
                    } else if raw[start..<end].allSatisfy({ $0 == 0 }) {
                        start = end
                        continue
                    } else {
                        throw TarReadError(operation: "decompress", message: "data after the end of the gzip stream is not a gzip member")
                    }
                }
                if start == end { try fill() }
                if start == end {
                    // Output zlib holds back for want of room comes out with no more input.
                    let (_, produced) = try inflater.inflate(UnsafeRawBufferPointer(start: nil, count: 0), into: buffer)
                    if produced > 0 { return produced }
                    if inflater.memberEnded { continue }
                    throw TarReadError(operation: "decompress", message: "Truncated gzip stream")
                }
                let (consumed, produced) = try raw.withUnsafeBytes { input in
                    try inflater.inflate(UnsafeRawBufferPointer(rebasing: input[start..<end]), into: buffer)
                }
                start += consumed
                if produced > 0 { return produced }
            case .zstd:
                #if SystemArchive
                    let decompressor = zstd!
                    if start == end { try fill() }
                    if start == end {
                        if decompressor.atFrameEnd { return 0 }
                        let (_, produced) = try decompressor.decompress(UnsafeRawBufferPointer(start: nil, count: 0), into: buffer)
                        if produced > 0 { return produced }
                        throw TarReadError(operation: "decompress", message: "Truncated zstd stream")
                    }
                    let (consumed, produced) = try raw.withUnsafeBytes { input in
                        try decompressor.decompress(UnsafeRawBufferPointer(rebasing: input[start..<end]), into: buffer)
                    }
                    start += consumed
                    if produced > 0 { return produced }
                #else
                    throw TarReadError(operation: "open archive", message: "zstd", missingCodec: "zstd")
                #endif
            }
        }
    }

    private func detect() throws {
        while end - start < 4 && !atEndOfFile { try fill(appending: true) }
        let detected = ArchiveCompression.detect(prefix: raw[start..<end])
        switch detected {
        case .gzip: gzip = try GzipInflater()
        case .zstd:
            #if SystemArchive
                zstd = try ZstdDecompressor()
            #else
                throw TarReadError(operation: "open archive", message: "compressed with zstd", missingCodec: "zstd")
            #endif
        case .none: break
        }
        compression = detected
    }

    /// Reads more raw bytes: into an empty buffer, or (`appending`) after those not yet used.
    private func fill(appending: Bool = false) throws {
        if !appending || start == end {
            start = 0
            end = 0
        }
        guard !atEndOfFile, end < raw.count else { return }
        while true {
            let count = raw.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress! + end, $0.count - end) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw TarReadError(operation: "read archive", message: String(cString: strerror(errno)))
            }
            if count == 0 { atEndOfFile = true }
            end += count
            return
        }
    }
}

/// zlib's inflate over gzip members, one at a time (`reset` for the next).
private final class GzipInflater {
    private var stream = z_stream()
    private(set) var memberEnded = false

    init() throws {
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw TarReadError(operation: "decompress", message: "cannot create a gzip stream")
        }
    }

    deinit { inflateEnd(&stream) }

    func reset() throws {
        guard inflateReset(&stream) == Z_OK else { throw TarReadError(operation: "decompress", message: "cannot reset the gzip stream") }
        memberEnded = false
    }

    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws -> (consumed: Int, produced: Int) {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(output.count)
        let status = CZlib.inflate(&stream, Z_NO_FLUSH)
        switch status {
        case Z_STREAM_END: memberEnded = true
        case Z_OK, Z_BUF_ERROR: break
        default:
            let text = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            throw TarReadError(operation: "decompress", message: "gzip: \(text)")
        }
        return (input.count - Int(stream.avail_in), output.count - Int(stream.avail_out))
    }
}

#if SystemArchive
    /// libzstd's streaming decompression; it checks each frame's content checksum itself.
    private final class ZstdDecompressor {
        private let context: OpaquePointer
        /// Whether the last frame read was complete: a stream may end only there.
        private(set) var atFrameEnd = true

        init() throws {
            guard let context = ZSTD_createDCtx() else {
                throw TarReadError(operation: "decompress", message: "cannot create a zstd context")
            }
            self.context = context
        }

        deinit { ZSTD_freeDCtx(context) }

        func decompress(
            _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
        ) throws -> (
            consumed: Int, produced: Int
        ) {
            var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
            var destination = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
            let hint = ZSTD_decompressStream(context, &destination, &source)
            if ZSTD_isError(hint) != 0 {
                throw TarReadError(operation: "decompress", message: "zstd: \(String(cString: ZSTD_getErrorName(hint)))")
            }
            atFrameEnd = hint == 0
            return (source.pos, destination.pos)
        }
    }
#endif
