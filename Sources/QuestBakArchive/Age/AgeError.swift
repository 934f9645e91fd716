import CoreDataStore
import Foundation

/// Everything that can be wrong with an age-encrypted file or with the keys given to open or make
/// one. `file` names the encrypted file (or "standard input"), `path` a key file.
public enum AgeError: Error, Equatable {
    /// The file does not start with an age header: it is not encrypted (or not with age).
    case notEncrypted(file: String)
    /// An age file in the ASCII armor (PEM) encoding, which questbak does not read.
    case armored(file: String)
    /// An age header of a later format version than v1.
    case unsupportedVersion(file: String, version: String)
    /// The header does not follow the age v1 grammar, or a stanza is not well formed.
    case malformedHeader(file: String, reason: String)
    /// The header is well formed and a key opened it, but its MAC does not match: it was changed.
    case headerAuthenticationFailed(file: String)
    /// The file is encrypted to recipients (public keys), and only a passphrase was given.
    case identityRequired(file: String)
    /// The file is encrypted, and no key was given to read it with.
    case keyRequired(file: String)
    /// The file is encrypted with a passphrase, and only identities were given.
    case passphraseRequired(file: String)
    /// None of the identities opens any of the file's recipient stanzas.
    case noMatchingIdentity(file: String, identities: Int, stanzas: Int)
    /// The passphrase does not open the file.
    case wrongPassphrase(file: String)
    /// The file asks for more scrypt work than allowed (2^found iterations).
    case workFactorTooLarge(file: String, found: Int, limit: Int)
    /// The file ends before its header, nonce or final chunk.
    case truncated(file: String, reason: String)
    /// A payload chunk fails authentication: changed, reordered or cut short.
    case damagedChunk(file: String, chunk: UInt64)
    /// Bytes follow the final chunk.
    case trailingData(file: String)
    /// The payload authenticates but breaks the format's rules (an empty final chunk after others).
    case malformedPayload(file: String, reason: String)
    /// Reading the encrypted file failed in the operating system.
    case unreadable(file: String, reason: String)
    /// Writing the encrypted output failed in the operating system.
    case write(file: String, reason: String)
    /// A key file (identity, recipients or passphrase file) is missing or cannot be read.
    case keyFileUnreadable(path: String, reason: String)
    /// A key file's line is not a key of the kind expected; `line` counts from 1.
    case invalidKey(path: String, line: Int, reason: String)
    /// A key file holds no key.
    case noKeys(path: String, kind: String)
    /// The recipients cannot be combined: none, or a passphrase with anything else.
    case invalidRecipients(reason: String)
}

extension AgeError: LocalizedError {
    /// The sentence that says what failed, naming the file or key.
    public var errorDescription: String? {
        switch self {
        case .notEncrypted(let file):
            return "\(file): not an age-encrypted file (it does not start with an age-encryption.org/v1 header)"
        case .armored(let file):
            return
                "\(file): an ASCII-armored age file; questbak reads the binary form only (decrypt it, or encrypt it again without ASCII armor)"
        case .unsupportedVersion(let file, let version):
            return "\(file): age format version \(UntrustedText.display(version, limit: 40)) is not one questbak reads (v1)"
        case .malformedHeader(let file, let reason):
            return "\(file): the age header is malformed: \(reason)"
        case .headerAuthenticationFailed(let file):
            return "\(file): the age header fails authentication: it was changed after encryption"
        case .keyRequired(let file):
            return "\(file): an age-encrypted archive, which opens only with its identity or passphrase (age -d decrypts it)"
        case .identityRequired(let file):
            return "\(file): encrypted to age recipients (public keys): it opens with an identity file, not a passphrase"
        case .passphraseRequired(let file):
            return "\(file): encrypted with a passphrase: it opens with the passphrase, not an identity file"
        case .noMatchingIdentity(let file, let identities, let stanzas):
            return
                "\(file): none of the \(identities) identit\(identities == 1 ? "y" : "ies") given opens it (encrypted to \(stanzas) recipient\(stanzas == 1 ? "" : "s")): a wrong identity file"
        case .wrongPassphrase(let file):
            return "\(file): the passphrase does not open it: a wrong passphrase"
        case .workFactorTooLarge(let file, let found, let limit):
            return "\(file): its passphrase asks for scrypt work factor 2^\(found), more than the 2^\(limit) questbak allows"
        case .truncated(let file, let reason):
            return "\(file): the encrypted file is cut short: \(reason)"
        case .damagedChunk(let file, let chunk):
            return
                "\(file): encrypted chunk \(chunk) (at byte \(chunk * UInt64(AgeFormat.chunkSize)) of the plaintext) fails authentication: the file was changed or cut short"
        case .trailingData(let file):
            return "\(file): bytes follow the final encrypted chunk: the file was changed"
        case .malformedPayload(let file, let reason):
            return "\(file): the encrypted payload is malformed: \(reason)"
        case .unreadable(let file, let reason):
            return "\(file): cannot read: \(reason)"
        case .write(let file, let reason):
            return "\(file): cannot write: \(reason)"
        case .keyFileUnreadable(let path, let reason):
            return "\(path): cannot read the key file: \(reason)"
        case .invalidKey(let path, let line, let reason):
            return "\(path) line \(line): \(reason)"
        case .noKeys(let path, let kind):
            return "\(path): holds no \(kind)"
        case .invalidRecipients(let reason):
            return "cannot encrypt: \(reason)"
        }
    }
}
