import CoreDataStore
import Crypto
import Foundation
import _CryptoExtras

/// One recipient stanza of an age header: its arguments (the first names its type) and its body.
struct AgeStanza: Equatable {
    var arguments: [String]
    var body: Data
    var type: String { arguments.first ?? "" }
}

/// The age v1 header: the stanzas that each wrap the file key for one recipient, and the MAC
/// that binds them to it.
struct AgeHeader {
    var stanzas: [AgeStanza]

    /// The header's text up to and including `---`: what the MAC covers.
    var authenticatedText: Data {
        var text = AgeFormat.versionLine + "\n"
        for stanza in stanzas {
            text += "-> " + stanza.arguments.joined(separator: " ") + "\n"
            // Full 64-column lines, then always a shorter (possibly empty) last line.
            let body = AgeFormat.base64(stanza.body)
            var start = body.startIndex
            while true {
                let end = body.index(start, offsetBy: AgeFormat.bodyLineLength, limitedBy: body.endIndex) ?? body.endIndex
                text += body[start..<end] + "\n"
                if body.distance(from: start, to: end) < AgeFormat.bodyLineLength { break }
                start = end
            }
        }
        return Data((text + "---").utf8)
    }

    /// The whole header, MAC line included, for `fileKey`.
    func encoded(fileKey: SymmetricKey) -> Data {
        let text = authenticatedText
        return text + Data((" " + AgeFormat.base64(Self.mac(of: text, fileKey: fileKey)) + "\n").utf8)
    }

    static func mac(of text: Data, fileKey: SymmetricKey) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: text, using: macKey(fileKey)))
    }

    static func macKey(_ fileKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: Data(), info: Data("header".utf8), outputByteCount: 32)
    }
}

/// Wrapping the file key for each kind of recipient, and unwrapping it with each kind of identity.
enum AgeStanzaCrypto {
    static let x25519Label = "age-encryption.org/v1/X25519"
    static let scryptLabel = "age-encryption.org/v1/scrypt"
    /// Stanza bodies are sealed once per key, so the nonce can be fixed.
    static let zeroNonce = try! ChaChaPoly.Nonce(data: Data(count: 12))

    static func wrap(_ fileKey: SymmetricKey, for recipient: AgeRecipient) throws -> AgeStanza {
        switch recipient {
        case .x25519(let recipient):
            let ephemeral = Curve25519.KeyAgreement.PrivateKey()
            let share = ephemeral.publicKey.rawRepresentation
            let secret = try ephemeral.sharedSecretFromKeyAgreement(with: recipient.publicKey)
            let wrapKey = secret.hkdfDerivedSymmetricKey(
                using: SHA256.self, salt: share + recipient.publicKey.rawRepresentation, sharedInfo: Data(x25519Label.utf8),
                outputByteCount: 32)
            return AgeStanza(arguments: ["X25519", AgeFormat.base64(share)], body: try seal(fileKey, with: wrapKey))
        case .passphrase(let passphrase, let workFactor):
            var salt = [UInt8](repeating: 0, count: 16)
            for index in salt.indices { salt[index] = UInt8.random(in: 0...255) }
            let wrapKey = try scryptKey(passphrase, salt: salt, workFactor: workFactor)
            return AgeStanza(
                arguments: ["scrypt", AgeFormat.base64(salt), String(workFactor)], body: try seal(fileKey, with: wrapKey))
        }
    }

    static func scryptKey(_ passphrase: Data, salt: some DataProtocol, workFactor: Int) throws -> SymmetricKey {
        try KDF.Scrypt.deriveKey(
            from: passphrase, salt: Data(scryptLabel.utf8) + salt, outputByteCount: 32, rounds: 1 << workFactor, blockSize: 8,
            parallelism: 1)
    }

    private static func seal(_ fileKey: SymmetricKey, with wrapKey: SymmetricKey) throws -> Data {
        let box = try ChaChaPoly.seal(fileKey.withUnsafeBytes { Data($0) }, using: wrapKey, nonce: zeroNonce)
        return box.ciphertext + box.tag
    }

    /// The file key in `body` (32 bytes: the sealed 16-byte key and its tag), or nil when
    /// `wrapKey` does not open it.
    static func open(_ body: Data, with wrapKey: SymmetricKey) -> SymmetricKey? {
        guard body.count == AgeFormat.fileKeySize + AgeFormat.tagSize,
            let box = try? ChaChaPoly.SealedBox(nonce: zeroNonce, ciphertext: body.prefix(16), tag: body.suffix(16)),
            let key = try? ChaChaPoly.open(box, using: wrapKey)
        else { return nil }
        return SymmetricKey(data: key)
    }

    /// The file key, from the first stanza an identity opens. Stanzas addressed to the given kind
    /// of identity are checked strictly; stanzas of types questbak does not know are skipped, as
    /// the format asks.
    static func unwrap(_ header: AgeHeader, with identities: [AgeIdentity], file: String) throws -> SymmetricKey {
        let malformed = { (reason: String) in AgeError.malformedHeader(file: file, reason: reason) }
        let keys = identities.compactMap { if case .x25519(let identity) = $0 { identity } else { nil } }
        let passphrases = identities.compactMap { if case .passphrase(let data, let limit) = $0 { (data, limit) } else { nil } }

        if let scrypt = header.stanzas.first(where: { $0.type == "scrypt" }) {
            // A passphrase must be the file's only recipient, or anyone holding another recipient's
            // key could make a file that looks passphrase-protected.
            guard header.stanzas.count == 1 else { throw malformed("a passphrase (scrypt) stanza is mixed with other stanzas") }
            guard !passphrases.isEmpty else { throw AgeError.passphraseRequired(file: file) }
            guard scrypt.arguments.count == 3 else { throw malformed("a scrypt stanza has \(scrypt.arguments.count - 1) arguments, not 2") }
            guard let salt = AgeFormat.decodeBase64(scrypt.arguments[1]), salt.count == 16 else {
                throw malformed("a scrypt stanza's salt is not the canonical base64 of 16 bytes")
            }
            let factorText = scrypt.arguments[2]
            guard let first = factorText.utf8.first, (49...57).contains(first), factorText.utf8.allSatisfy({ (48...57).contains($0) }),
                let workFactor = Int(factorText), workFactor < 64
            else {
                throw malformed(
                    "a scrypt stanza's work factor \(UntrustedText.display(factorText, limit: 40)) is not a decimal number from 1 to 63")
            }
            guard scrypt.body.count == 32 else { throw malformed("a scrypt stanza's body is \(scrypt.body.count) bytes, not 32") }
            // An empty passphrase opens nothing questbak writes (and swift-crypto's scrypt traps on one).
            for (passphrase, requestedLimit) in passphrases where !passphrase.isEmpty {
                // 2^40 iterations would take 128 TiB: no limit above that is meant.
                let limit = min(requestedLimit, 40)
                guard workFactor <= limit else { throw AgeError.workFactorTooLarge(file: file, found: workFactor, limit: limit) }
                let wrapKey: SymmetricKey
                do {
                    wrapKey = try scryptKey(passphrase, salt: salt, workFactor: workFactor)
                } catch {
                    throw AgeError.unreadable(
                        file: file, reason: "scrypt with work factor 2^\(workFactor) failed (out of memory?): \(error)")
                }
                if let fileKey = open(scrypt.body, with: wrapKey) { return fileKey }
            }
            throw AgeError.wrongPassphrase(file: file)
        }

        let x25519 = header.stanzas.filter { $0.type == "X25519" }
        guard !keys.isEmpty else { throw AgeError.identityRequired(file: file) }
        for stanza in x25519 {
            guard stanza.arguments.count == 2 else {
                throw malformed("an X25519 stanza has \(stanza.arguments.count - 1) arguments, not 1")
            }
            guard let shareBytes = AgeFormat.decodeBase64(stanza.arguments[1]), shareBytes.count == 32,
                let share = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: shareBytes)
            else { throw malformed("an X25519 stanza's share is not the canonical base64 of 32 bytes") }
            guard stanza.body.count == 32 else { throw malformed("an X25519 stanza's body is \(stanza.body.count) bytes, not 32") }
            for identity in keys {
                // A low-order share gives an all-zero secret, which would let anyone open the stanza.
                guard let secret = try? identity.privateKey.sharedSecretFromKeyAgreement(with: share),
                    secret.withUnsafeBytes({ $0.contains { $0 != 0 } })
                else { throw malformed("an X25519 stanza's share is a low-order point") }
                let wrapKey = secret.hkdfDerivedSymmetricKey(
                    using: SHA256.self, salt: shareBytes + identity.recipient.publicKey.rawRepresentation,
                    sharedInfo: Data(x25519Label.utf8), outputByteCount: 32)
                if let fileKey = open(stanza.body, with: wrapKey) { return fileKey }
            }
        }
        throw AgeError.noMatchingIdentity(file: file, identities: keys.count, stanzas: header.stanzas.count)
    }
}

/// A buffered reader of an encrypted file's bytes from a file descriptor.
final class AgeInput {
    private let descriptor: Int32
    let file: String
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEnd = false

    init(descriptor: Int32, file: String) {
        self.descriptor = descriptor
        self.file = file
        buffer = [UInt8](repeating: 0, count: 2 * (AgeFormat.chunkSize + AgeFormat.tagSize) + 1)
    }

    /// Makes at least `count` bytes available unless the file ends first; returns how many are.
    @discardableResult
    func fill(_ count: Int) throws -> Int {
        precondition(count <= buffer.count)
        if end - start >= count || atEnd { return end - start }
        if start > 0 {
            buffer.withUnsafeMutableBytes { raw in
                raw.baseAddress!.copyMemory(from: raw.baseAddress! + start, byteCount: end - start)
            }
            end -= start
            start = 0
        }
        while end < count && !atEnd {
            let got = buffer.withUnsafeMutableBytes { raw in Foundation.read(descriptor, raw.baseAddress! + end, raw.count - end) }
            if got < 0 {
                if errno == EINTR { continue }
                throw AgeError.unreadable(file: file, reason: String(cString: strerror(errno)))
            }
            if got == 0 { atEnd = true } else { end += got }
        }
        return end - start
    }

    var available: ArraySlice<UInt8> { buffer[start..<end] }

    /// Whether the file has ended (bytes may still be buffered).
    var reachedEnd: Bool { atEnd }

    func consume(_ count: Int) { start += count }

    /// The next line without its line feed, or nil when no line feed comes within `limit` bytes.
    func line(limit: Int) throws -> ArraySlice<UInt8>? {
        var scanned = 0
        while true {
            if let index = buffer[(start + scanned)..<end].firstIndex(of: UInt8(ascii: "\n")) {
                let line = buffer[start..<index]
                start = index + 1
                return line
            }
            scanned = end - start
            if scanned >= limit || atEnd { return nil }
            try fill(min(limit + 1, scanned + 4096))
            if end - start == scanned { return nil }
        }
    }
}

extension AgeHeader {
    /// Lines and stanzas beyond any honest header's: age's own recipients give lines of under 2 KiB.
    static let lineLimit = 16 * 1024
    static let stanzaLimit = 4096

    /// Parses the header at the start of `input`, strictly: anything the grammar does not allow is
    /// refused. Returns the header and the exact text its MAC covers, and the MAC.
    static func read(from input: AgeInput) throws -> (header: AgeHeader, mac: Data) {
        let file = input.file
        let malformed = { (reason: String) in AgeError.malformedHeader(file: file, reason: reason) }
        let available = try input.fill(AgeFormat.armorMagic.count)
        let prefix = Array(input.available.prefix(available))
        if prefix.starts(with: AgeFormat.armorMagic) { throw AgeError.armored(file: file) }
        guard prefix.starts(with: AgeFormat.magic) else {
            if AgeFormat.magic.starts(with: prefix) && !prefix.isEmpty {
                throw AgeError.truncated(file: file, reason: "it ends inside the header")
            }
            throw AgeError.notEncrypted(file: file)
        }
        guard let version = try input.line(limit: 256) else {
            throw input.reachedEnd
                ? AgeError.truncated(file: file, reason: "it ends inside the header") : malformed("the version line does not end")
        }
        guard version.elementsEqual(AgeFormat.versionLine.utf8) else {
            let name = String(decoding: version.dropFirst(AgeFormat.magic.count), as: UTF8.self)
            if version.allSatisfy({ (33...126).contains($0) }) { throw AgeError.unsupportedVersion(file: file, version: name) }
            throw malformed("the version line holds characters other than printable ASCII")
        }
        var stanzas: [AgeStanza] = []
        while true {
            guard let line = try input.line(limit: lineLimit) else {
                throw input.reachedEnd
                    ? AgeError.truncated(file: file, reason: "it ends inside the header")
                    : malformed("a header line is longer than \(lineLimit) bytes or does not end")
            }
            if line.starts(with: "---".utf8) {
                guard !stanzas.isEmpty else { throw malformed("it has no recipient stanza") }
                guard line.count == 4 + 43, line.dropFirst(3).first == UInt8(ascii: " "),
                    let mac = AgeFormat.decodeBase64(String(decoding: line.dropFirst(4), as: UTF8.self)), mac.count == 32
                else { throw malformed("the MAC line is not \"--- \" and the canonical base64 of 32 bytes") }
                return (AgeHeader(stanzas: stanzas), mac)
            }
            guard line.starts(with: "-> ".utf8) else {
                throw malformed("a line that is neither a recipient stanza (\"-> \") nor the MAC (\"--- \")")
            }
            guard stanzas.count < stanzaLimit else { throw malformed("more than \(stanzaLimit) recipient stanzas") }
            let arguments = line.dropFirst(3).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (33...126).contains($0) } }) else {
                throw malformed("a stanza's arguments are not printable ASCII words separated by single spaces")
            }
            var body = ""
            while true {
                guard let bodyLine = try input.line(limit: AgeFormat.bodyLineLength + 1) else {
                    throw input.reachedEnd
                        ? AgeError.truncated(file: file, reason: "it ends inside the header")
                        : malformed("a stanza's body line is longer than \(AgeFormat.bodyLineLength) columns")
                }
                guard bodyLine.count <= AgeFormat.bodyLineLength, bodyLine.allSatisfy(AgeFormat.isBase64Character) else {
                    throw malformed("a stanza's body line is not unpadded base64 of at most \(AgeFormat.bodyLineLength) columns")
                }
                body += String(decoding: bodyLine, as: UTF8.self)
                if bodyLine.count < AgeFormat.bodyLineLength { break }
            }
            guard let bodyBytes = AgeFormat.decodeBase64(body) else { throw malformed("a stanza's body is not canonical base64") }
            stanzas.append(AgeStanza(arguments: arguments.map { String(decoding: $0, as: UTF8.self) }, body: bodyBytes))
        }
    }
}
