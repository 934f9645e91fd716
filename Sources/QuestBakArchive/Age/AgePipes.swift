import CoreDataStore
import Foundation

/// Plaintext from an `AgeDecryptingReader`, offered on a pipe: code that reads an archive from a
/// file descriptor (`ArchiveReader(fileDescriptor:displayPath:)`, libarchive) reads the decrypted
/// stream without a byte of it touching the disk. A background thread decrypts one chunk at a
/// time and blocks while the pipe is full, so memory stays flat.
///
/// ```swift
/// let pipe = try AgeDecryptingPipe(reader: AgeDecryptingReader(contentsOf: url, identities: identities))
/// let result = Result { try ArchiveReader(fileDescriptor: pipe.fileDescriptor, displayPath: url.path).read() }
/// try pipe.finish()  // a decryption error first: it explains the archive reader's "truncated"
/// let verification = try result.get()
/// ```
package final class AgeDecryptingPipe: @unchecked Sendable {
    /// The pipe's read end. `finish()` closes it.
    public let fileDescriptor: Int32
    private let writeEnd: Int32
    private let reader: AgeDecryptingReader
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var stopRequested = false
    private var failure: Error?
    private var finished = false

    public init(reader: AgeDecryptingReader) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw AgeError.unreadable(file: "pipe", reason: String(cString: strerror(errno))) }
        fileDescriptor = ends[0]
        writeEnd = ends[1]
        self.reader = reader
        Thread.detachNewThread { [self] in pump() }
    }

    private var shouldStop: Bool { lock.withLock { stopRequested } }

    private func pump() {
        defer {
            close(writeEnd)
            done.signal()
        }
        do {
            while !shouldStop, let chunk = try reader.nextChunk() {
                try chunk.withUnsafeBytes { bytes in
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(writeEnd, bytes.baseAddress! + offset, bytes.count - offset)
                        if written < 0 {
                            if errno == EINTR { continue }
                            throw AgeError.unreadable(file: "pipe", reason: String(cString: strerror(errno)))
                        }
                        offset += written
                    }
                }
            }
        } catch {
            lock.withLock { failure = error }
        }
    }

    /// Stops decrypting, waits for the thread, closes the read end, and throws what decryption
    /// threw, if anything. Call it once the consumer is done, whether it read to the end or not.
    /// An error thrown here takes precedence over the consumer's: a damaged or truncated
    /// encrypted file is what the consumer saw as a cut-short archive. `readingToEnd` decrypts
    /// (and drops) what the consumer left unread, so that a file cut short or changed after the
    /// last byte the consumer needed is an error too: for a consumer that read all it wanted.
    public func finish(readingToEnd: Bool = false) throws {
        guard !finished else { return }
        finished = true
        if !readingToEnd { lock.withLock { stopRequested = true } }
        // Drain instead of closing first: a write to a pipe without a reader raises SIGPIPE.
        var sink = [UInt8](repeating: 0, count: 64 * 1024)
        while sink.withUnsafeMutableBytes({ read(fileDescriptor, $0.baseAddress, $0.count) }) > 0 {}
        done.wait()
        close(fileDescriptor)
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    deinit {
        if !finished { try? finish() }
    }
}

/// A pipe whose plaintext an `AgeEncryptingWriter` encrypts: code that writes an archive to a file
/// descriptor (`Exporter`'s `.fileDescriptor` destination, libarchive) writes into
/// `fileDescriptor`, and a background thread encrypts what arrives, 64 KiB at a time, into the
/// writer's sink. `finish()` seals the final chunk; `abandon()` (or dropping the pipe) does not,
/// so a failed export leaves an encrypted file every reader refuses as truncated.
///
/// ```swift
/// let pipe = try AgeEncryptingPipe(writer: AgeEncryptingWriter(recipients: recipients, fileDescriptor: output, file: path))
/// do {
///     summary = try Exporter.export(storeAt: store, to: .fileDescriptor(pipe.fileDescriptor), options: options)
///     try pipe.finish()
/// } catch {
///     pipe.abandon()
///     throw error
/// }
/// ```
package final class AgeEncryptingPipe: @unchecked Sendable {
    /// The pipe's write end. `finish()` closes it.
    public let fileDescriptor: Int32
    private let readEnd: Int32
    private let writer: AgeEncryptingWriter
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failure: Error?
    private var finished = false
    private var sealAtEnd = false

    public init(writer: AgeEncryptingWriter) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw AgeError.write(file: "pipe", reason: String(cString: strerror(errno))) }
        readEnd = ends[0]
        fileDescriptor = ends[1]
        self.writer = writer
        Thread.detachNewThread { [self] in pump() }
    }

    private func pump() {
        defer {
            close(readEnd)
            done.signal()
        }
        var buffer = [UInt8](repeating: 0, count: AgeFormat.chunkSize)
        var failed = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 {
                lock.withLock { failure = AgeError.write(file: "pipe", reason: String(cString: strerror(errno))) }
                return
            }
            if count == 0 { break }
            // After a failure, keep reading (and dropping) so the producer never blocks on a full
            // pipe or dies of SIGPIPE; finish() reports the failure.
            guard !failed else { continue }
            do {
                try buffer.withUnsafeBytes { try writer.write(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            } catch {
                failed = true
                lock.withLock { failure = error }
            }
        }
        guard !failed, lock.withLock({ sealAtEnd }) else { return }
        do { try writer.finish() } catch { lock.withLock { failure = error } }
    }

    /// Closes the write end (the end of the plaintext), waits until the final chunk is sealed and
    /// written, and throws what encryption threw, if anything.
    public func finish() throws {
        try end(seal: true)
    }

    /// Closes the write end and waits, without sealing a final chunk: the output stays truncated.
    public func abandon() {
        try? end(seal: false)
    }

    private func end(seal: Bool) throws {
        guard !finished else { return }
        finished = true
        lock.withLock { sealAtEnd = seal }
        close(fileDescriptor)
        done.wait()
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    deinit {
        abandon()
    }
}
