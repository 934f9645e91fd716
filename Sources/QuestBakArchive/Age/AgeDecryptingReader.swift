import CoreDataStore
import Crypto
import Foundation

/// Decrypts an age v1 file as a stream: the header is read and authenticated when the reader is
/// made, then the plaintext comes out one 64 KiB chunk at a time, each authenticated before any
/// of its bytes is returned. At most two chunks are held in memory. The end of the plaintext is
/// reported only after the final chunk authenticates, so a file cut short at any byte is an
/// error, never a shorter plaintext.
///
/// ```swift
/// let reader = try AgeDecryptingReader(contentsOf: url, identities: [.x25519(identity)])
/// while let chunk = try reader.nextChunk() { consume(chunk) }
/// ```
package final class AgeDecryptingReader {
    private let input: AgeInput
    private let payloadKey: SymmetricKey
    private var counter: UInt64 = 0
    private var finished = false
    private var current = Data()
    private var currentOffset = 0
    private let ownedDescriptor: Int32?

    /// Reads the header from `fileDescriptor` (positioned at the file's start; not closed here) and
    /// opens it with the first of `identities` that can. `file` names the input in errors.
    public convenience init(fileDescriptor: Int32, file: String, identities: [AgeIdentity]) throws {
        try self.init(input: AgeInput(descriptor: fileDescriptor, file: file), identities: identities, owned: nil)
    }

    /// Opens the encrypted file at `url`; the reader closes it when it goes away.
    public convenience init(contentsOf url: URL, identities: [AgeIdentity]) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0 else { throw AgeError.unreadable(file: url.path, reason: String(cString: strerror(errno))) }
        do {
            try self.init(input: AgeInput(descriptor: descriptor, file: url.path), identities: identities, owned: descriptor)
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// Opens a file whose file key the caller already holds (an export verifying what it has
    /// just encrypted: `AgeEncryptingWriter.fileKey`). The header is still read and its MAC
    /// checked, so the check covers every byte a recipient will read.
    convenience init(fileDescriptor: Int32, file: String, fileKey: SymmetricKey) throws {
        try self.init(input: AgeInput(descriptor: fileDescriptor, file: file), fileKey: { _ in fileKey }, owned: nil)
    }

    private convenience init(input: AgeInput, identities: [AgeIdentity], owned: Int32?) throws {
        try self.init(
            input: input, fileKey: { try AgeStanzaCrypto.unwrap($0, with: identities, file: input.file) }, owned: owned)
    }

    private init(input: AgeInput, fileKey unwrap: (AgeHeader) throws -> SymmetricKey, owned: Int32?) throws {
        self.input = input
        let file = input.file
        let (header, mac) = try AgeHeader.read(from: input)
        let fileKey = try unwrap(header)
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: header.authenticatedText, using: AgeHeader.macKey(fileKey))
        else { throw AgeError.headerAuthenticationFailed(file: file) }
        guard try input.fill(AgeFormat.payloadNonceSize) >= AgeFormat.payloadNonceSize else {
            throw AgeError.truncated(file: file, reason: "it ends before the payload's nonce")
        }
        let nonce = Data(input.available.prefix(AgeFormat.payloadNonceSize))
        input.consume(AgeFormat.payloadNonceSize)
        payloadKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Data("payload".utf8), outputByteCount: 32)
        ownedDescriptor = owned
    }

    deinit {
        if let ownedDescriptor { close(ownedDescriptor) }
    }

    /// The next chunk of plaintext (64 KiB but for the last), or nil once the final chunk has
    /// authenticated.
    public func nextChunk() throws -> Data? {
        if finished { return nil }
        let file = input.file
        let sealedSize = AgeFormat.chunkSize + AgeFormat.tagSize
        let available = try input.fill(sealedSize + 1)
        let sealed = Data(input.available.prefix(sealedSize))
        if available > sealedSize {
            // More follows, so this chunk must not be the final one.
            guard let plaintext = unseal(sealed, final: false) else {
                if unseal(sealed, final: true) != nil { throw AgeError.trailingData(file: file) }
                throw AgeError.damagedChunk(file: file, chunk: counter)
            }
            input.consume(sealedSize)
            counter += 1
            return plaintext
        }
        if available == 0 {
            throw AgeError.truncated(
                file: file,
                reason: counter == 0 ? "it ends before the first chunk" : "it ends after chunk \(counter - 1), not the final one")
        }
        guard let plaintext = unseal(sealed, final: true) else {
            if available == sealedSize, unseal(sealed, final: false) != nil {
                throw AgeError.truncated(file: file, reason: "it ends after chunk \(counter), which is not the final one")
            }
            throw AgeError.damagedChunk(file: file, chunk: counter)
        }
        if plaintext.isEmpty && counter > 0 {
            throw AgeError.malformedPayload(file: file, reason: "the final chunk is empty, which age writes only for an empty file")
        }
        input.consume(available)
        finished = true
        return plaintext.isEmpty ? nil : plaintext
    }

    /// Reads plaintext into `buffer`; returns 0 only at the authenticated end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while currentOffset == current.count {
            guard let chunk = try nextChunk() else { return 0 }
            current = chunk
            currentOffset = 0
        }
        let count = min(buffer.count, current.count - currentOffset)
        current.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + currentOffset, byteCount: count)
        }
        currentOffset += count
        return count
    }

    private func unseal(_ sealed: Data, final: Bool) -> Data? {
        guard sealed.count >= AgeFormat.tagSize,
            let box = try? ChaChaPoly.SealedBox(
                nonce: AgePayload.nonce(counter: counter, final: final), ciphertext: sealed.dropLast(AgeFormat.tagSize),
                tag: sealed.suffix(AgeFormat.tagSize))
        else { return nil }
        return try? ChaChaPoly.open(box, using: payloadKey)
    }
}
