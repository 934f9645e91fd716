import CoreDataStore
import Crypto
import Dispatch
import Foundation

#if SystemArchive
    import CZstd
#endif

/// Writes an archive as a sequence of independently compressed frames: zstd frames and gzip
/// members both decompress, concatenated, to the concatenation of their contents, so the tar
/// inside is byte for byte the one a single compressed stream would hold.
///
/// Why: the manifest comes first and lists every member's SHA-256, so a single stream could not
/// start compressing before the last member was encoded, and one core sat idle while the other
/// worked. With frames, a member is hashed and compressed on a second thread, block by block,
/// while the encoder produces the next block (`StagedMember`); the manifest's frame is made last
/// and written first. A tar entry's bytes do not depend on where it sits in the stream, so each
/// piece can be made on its own: a header frame once the size is known, the data's frames as
/// they come, the padding with the last of them.
package enum FramedTar {
    /// Uncompressed bytes per data frame: large enough that compression loses little by starting
    /// afresh (about 1%), small enough that two blocks, their output and zstd's context for them
    /// stay a few MiB (4 MiB blocks took peak RSS from 38 to 64-68 MB at 1M rows).
    package static let blockSize = 1 << 20

    /// The tar header of a member (pax, restricted), made in Swift in every build: byte for byte
    /// what libarchive wrote (`TarFormatTests`), without a libarchive handle per member.
    package static func header(path: String, size: Int64, modificationTime: Int) throws -> Data {
        TarFormat.header(path: path, size: size, modificationTime: modificationTime)
    }

    /// The zero bytes that bring a member's data to a whole 512-byte block.
    package static func padding(after size: Int64) -> Int { Int((512 - size % 512) % 512) }

    /// The end of a tar: two zero blocks.
    package static let trailer = Data(count: 1024)

    /// Appends `bytes` and then `zeros` zero bytes to the file open on `descriptor` as one frame
    /// of `compressor` (none: the bytes as they are), straight from the caller's buffer.
    package static func appendFrame(
        to descriptor: Int32, bytes: UnsafeRawBufferPointer, zeros: Int = 0, path: String, compressor: FrameCompressor?
    ) throws {
        guard let compressor else {
            try writeAll(descriptor, bytes, path: path)
            if zeros > 0 { try [UInt8](repeating: 0, count: zeros).withUnsafeBytes { try writeAll(descriptor, $0, path: path) } }
            return
        }
        let frame = try compressor.frame(bytes, zeros: zeros)
        try frame.withUnsafeBytes { try writeAll(descriptor, $0, path: path) }
    }

    package static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Foundation.write(descriptor, bytes.baseAddress?.advanced(by: offset), bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw StoreError.io(path: path, reason: String(cString: strerror(errno))) }
            offset += written
        }
    }
}

#if SystemArchive
    /// zstd frames at zstd's default level (3, as libarchive's filter used) with a content checksum,
    /// so that a flipped bit anywhere in a frame, the manifest's included, fails the read instead of
    /// changing a value. One compressor is reused for every frame of a member.
    package final class ZstdFrameCompressor: FrameCompressor {
        private let context: OpaquePointer
        private var output: [UInt8] = []

        package init() throws {
            guard let context = ZSTD_createCCtx() else { throw StoreError.io(path: "zstd", reason: "cannot create a compression context") }
            self.context = context
            ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3)
            ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
        }

        deinit { ZSTD_freeCCtx(context) }

        /// `bytes` followed by `zeros` zero bytes (a tar member's padding, under 512) as one frame,
        /// streamed from the caller's buffer into one output buffer kept for the next frame.
        package func frame(_ bytes: UnsafeRawBufferPointer, zeros: Int = 0) throws -> ArraySlice<UInt8> {
            precondition(zeros < 512, "padding is under one tar block")
            func check(_ code: Int) throws {
                if ZSTD_isError(code) != 0 { throw StoreError.io(path: "zstd", reason: String(cString: ZSTD_getErrorName(code))) }
            }
            try check(ZSTD_CCtx_reset(context, ZSTD_reset_session_only))
            // The content size goes into the frame's header, as a one-shot compression writes it.
            try check(ZSTD_CCtx_setPledgedSrcSize(context, UInt64(bytes.count + zeros)))
            let bound = ZSTD_compressBound(bytes.count + zeros)
            if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
            let written = try output.withUnsafeMutableBytes { destination -> Int in
                var out = ZSTD_outBuffer(dst: destination.baseAddress, size: destination.count, pos: 0)
                var input = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: 0)
                while input.pos < input.size { try check(ZSTD_compressStream2(context, &out, &input, ZSTD_e_continue)) }
                try Self.zeros.withUnsafeBytes { padding in
                    var tail = ZSTD_inBuffer(src: padding.baseAddress, size: zeros, pos: 0)
                    while true {
                        let remaining = ZSTD_compressStream2(context, &out, &tail, ZSTD_e_end)
                        try check(remaining)
                        if remaining == 0 { break }
                    }
                }
                return out.pos
            }
            return output[0..<written]
        }

        private static let zeros = [UInt8](repeating: 0, count: 512)
    }
#endif

/// One member being staged: its bytes are hashed and compressed into frames in a file, on a
/// second thread, while the caller produces more. `finish` waits for the last frame and gives the
/// member's size and SHA-256 (of the bytes, not the frames).
///
/// Memory stays flat: one block is compressed while the caller fills the next; the caller waits
/// otherwise.
package final class StagedMember: @unchecked Sendable {
    // @unchecked: `hasher`, `spare` and `failure` are written only on `queue` (serial), and read by
    // the caller only after `slots.wait()` or `queue.sync`, which order them after those writes.
    package let url: URL
    private let compression: ArchiveCompression
    private let queue = DispatchQueue(label: "questbak.stage")
    private let slots = DispatchSemaphore(value: 1)

    /// A block's bytes in a box: handed to the second thread by reference, so its storage is
    /// never copied, and filled again once that thread is done with it. Two boxes take turns,
    /// never a new buffer per block (freed and allocated across threads, glibc's heap grew with
    /// every block of a million-record member).
    private final class Block: @unchecked Sendable {  // handed between the two threads by `slots`
        var bytes: [UInt8] = []
        init() { bytes.reserveCapacity(FramedTar.blockSize) }
    }

    private var current = Block()
    private var spare: Block?
    private var bytes: Int64 = 0
    private var hasher = SHA256()
    /// Where the frames go: the staging file, or the pipe that seals them into it.
    private let descriptor: Int32
    private let file: Int32
    /// With a seal, the staging file holds the frames age-encrypted to a key that lives only in
    /// this process (an encrypted export writes no archive byte to disk in the clear, its staging
    /// included); `StagingSeal.copy` opens it again.
    private let sealing: AgeEncryptingPipe?
    private var failure: Error?
    private let compressor: FrameCompressor?

    package init(url: URL, compression: ArchiveCompression, seal: StagingSeal? = nil) throws {
        self.url = url
        self.compression = compression
        // First, so that a codec this build leaves out is refused before a file is opened.
        compressor = try makeFrameCompressor(compression, path: url.path)
        let file = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw StoreError.io(path: url.path, reason: "cannot create a staging file") }
        var sealing: AgeEncryptingPipe?
        do {
            if let seal {
                sealing = try AgeEncryptingPipe(
                    writer: AgeEncryptingWriter(recipients: [.x25519(seal.identity.recipient)], fileDescriptor: file, file: url.path))
            }
        } catch {
            close(file)
            throw error
        }
        self.file = file
        self.sealing = sealing
        descriptor = sealing?.fileDescriptor ?? file
    }

    deinit {
        if let sealing { sealing.abandon() } else { close(descriptor) }
        if sealing != nil { close(file) }
    }

    package func write(_ chunk: [UInt8]) throws {
        current.bytes.append(contentsOf: chunk)
        if current.bytes.count >= FramedTar.blockSize { try handOver(last: false) }
    }

    /// A file's bytes, a block at a time (an external-storage file may be large).
    package func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write($0) }
    }

    /// Bytes from the caller's buffer, copied into blocks.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let end = offset + min(FramedTar.blockSize - current.bytes.count, bytes.count - offset)
            current.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            if current.bytes.count >= FramedTar.blockSize { try handOver(last: false) }
        }
    }

    /// The member's size and SHA-256, once every frame is in the file.
    package func finish() throws -> (bytes: Int64, sha256: String) {
        try handOver(last: true)
        let (failure, digest): (Error?, String) = queue.sync { (self.failure, self.hasher.finalize().hexString) }
        if let failure { throw failure }
        try sealing?.finish()
        return (bytes, digest)
    }

    private func handOver(last: Bool) throws {
        // Waits until the second thread is done with the previous block (so `spare` is back).
        slots.wait()
        if let failure {
            slots.signal()
            throw failure
        }
        let full = current
        current = spare ?? Block()
        spare = nil
        current.bytes.removeAll(keepingCapacity: true)
        bytes += Int64(full.bytes.count)
        let zeros = last ? FramedTar.padding(after: bytes) : 0
        guard !full.bytes.isEmpty || zeros > 0 else {
            spare = full
            slots.signal()
            return
        }
        queue.async {
            do {
                try full.bytes.withUnsafeBytes { block in
                    self.hasher.update(bufferPointer: block)
                    try FramedTar.appendFrame(
                        to: self.descriptor, bytes: block, zeros: zeros, path: self.url.path, compressor: self.compressor)
                }
            } catch {
                self.failure = error
            }
            self.spare = full
            self.slots.signal()
        }
    }
}

/// The key that seals an encrypted export's staging files: made for one export, kept in memory
/// only, gone with the process.
package struct StagingSeal: Sendable {
    let identity = AgeX25519Identity.generate()

    package init() {}

    /// Copies a staging file sealed with this key to `descriptor`, decrypted as it is read.
    package func copy(_ staged: URL, to descriptor: Int32, output: String) throws {
        let reader = try AgeDecryptingReader(contentsOf: staged, identities: [.x25519(identity)])
        while let chunk = try reader.nextChunk(), !chunk.isEmpty {
            try chunk.withUnsafeBytes { try FramedTar.writeAll(descriptor, $0, path: output) }
        }
    }
}
