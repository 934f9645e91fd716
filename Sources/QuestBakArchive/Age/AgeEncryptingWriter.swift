import CoreDataStore
import Crypto
import Foundation

/// Encrypts a stream of bytes into an age v1 file, as it is written: the header and nonce first,
/// then one ChaCha20-Poly1305 chunk per 64 KiB of plaintext. At most one chunk is held in memory,
/// whatever the size of the stream. Call `finish()` once the last byte is written: it seals the
/// final chunk, without which the output is a truncated file every age reader refuses.
///
/// ```swift
/// let writer = try AgeEncryptingWriter(recipients: [.x25519(recipient)], fileDescriptor: fd, file: "backup.qbak.age")
/// try writer.write(bytes)
/// try writer.finish()
/// ```
package final class AgeEncryptingWriter {
    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private let payloadKey: SymmetricKey
    private var pending: [UInt8] = []
    private var counter: UInt64 = 0
    private var finished = false
    /// The key the payload is derived from. Kept so that the code that made the file can read it
    /// back (export --verify) without a recipient's identity, and without a stanza of its own.
    package let fileKey: SymmetricKey

    /// Writes the header for `recipients` to `sink` at once. Every recipient can open the output
    /// on its own; a passphrase must be the only recipient (the format's rule). `sink` receives
    /// the encrypted bytes in order and throws to stop.
    public init(recipients: [AgeRecipient], sink: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !recipients.isEmpty else { throw AgeError.invalidRecipients(reason: "no recipient and no passphrase given") }
        if recipients.count > 1, recipients.contains(where: { if case .passphrase = $0 { true } else { false } }) {
            throw AgeError.invalidRecipients(reason: "a passphrase must be the only recipient of a file (age's rule)")
        }
        for case .passphrase(let passphrase, let workFactor) in recipients {
            guard !passphrase.isEmpty else { throw AgeError.invalidRecipients(reason: "the passphrase is empty") }
            guard (1...AgeFormat.maximumScryptWorkFactor).contains(workFactor) else {
                throw AgeError.invalidRecipients(
                    reason: "scrypt work factor \(workFactor) is outside 1…\(AgeFormat.maximumScryptWorkFactor), which age readers accept")
            }
        }
        self.sink = sink
        let fileKey = SymmetricKey(size: .bits128)
        self.fileKey = fileKey
        let header = AgeHeader(stanzas: try recipients.map { try AgeStanzaCrypto.wrap(fileKey, for: $0) })
        var nonce = [UInt8](repeating: 0, count: AgeFormat.payloadNonceSize)
        for index in nonce.indices { nonce[index] = UInt8.random(in: 0...255) }
        payloadKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Data("payload".utf8), outputByteCount: 32)
        pending.reserveCapacity(AgeFormat.chunkSize)
        let start = header.encoded(fileKey: fileKey) + nonce
        try start.withUnsafeBytes { try sink($0) }
    }

    /// Writes the encrypted file to `fileDescriptor` (not closed here); `file` names it in errors.
    public convenience init(recipients: [AgeRecipient], fileDescriptor: Int32, file: String) throws {
        try self.init(recipients: recipients) { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(fileDescriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw AgeError.write(file: file, reason: String(cString: strerror(errno)))
                }
                offset += written
            }
        }
    }

    /// Encrypts `bytes`, writing every chunk that is complete and known not to be the last.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "AgeEncryptingWriter.write after finish")
        var remaining = bytes[...]
        while !remaining.isEmpty {
            // A full chunk is sealed only once more bytes arrive: the final chunk is flagged as such.
            if pending.count == AgeFormat.chunkSize { try seal(final: false) }
            let take = min(AgeFormat.chunkSize - pending.count, remaining.count)
            pending.append(contentsOf: remaining.prefix(take))
            remaining = remaining.dropFirst(take)
        }
    }

    public func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write($0) }
    }

    /// Seals the final chunk (empty only when nothing was written at all).
    public func finish() throws {
        precondition(!finished, "AgeEncryptingWriter.finish called twice")
        try seal(final: true)
        finished = true
    }

    private func seal(final: Bool) throws {
        let box = try ChaChaPoly.seal(pending, using: payloadKey, nonce: AgePayload.nonce(counter: counter, final: final))
        counter += 1
        pending.removeAll(keepingCapacity: true)
        try box.ciphertext.withUnsafeBytes { try sink($0) }
        try box.tag.withUnsafeBytes { try sink($0) }
    }
}

enum AgePayload {
    /// The STREAM nonce: the chunk counter as 11 big-endian bytes, then 1 for the final chunk.
    static func nonce(counter: UInt64, final: Bool) -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[3 + index] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * (7 - index))) }
        bytes[11] = final ? 1 : 0
        return try! ChaChaPoly.Nonce(data: bytes)
    }
}
