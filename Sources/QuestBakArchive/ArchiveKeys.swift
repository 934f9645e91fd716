import CoreDataStore
import Crypto
import Foundation

/// What an age-encrypted archive is opened with: the identities (X25519 keys, or a passphrase)
/// a reader of archives was given. Every reader of an archive takes one (`ArchiveReader`, and
/// through it import, merge, verify, inspect and diff), so there is one place that decides how an
/// archive is opened: `ArchiveReader.read`.
///
/// An archive that is not encrypted is read as it is, keys or not: one command line then serves
/// a folder of older plain backups and newer encrypted ones, and `diff` compares one of each.
package struct ArchiveKeys: Sendable {
    /// The identities tried, in order, on an encrypted archive's stanzas.
    public var identities: [AgeIdentity]
    /// The file key of an archive this process has just encrypted (export --verify reads its own
    /// output back with it): it opens that file and no other.
    var fileKey: SymmetricKey?

    /// Keys of the given identities.
    public init(identities: [AgeIdentity] = []) {
        self.identities = identities
    }

    package init(fileKey: SymmetricKey) {
        identities = []
        self.fileKey = fileKey
    }

    /// No key at all: an encrypted archive is refused as `AgeError.keyRequired`.
    public var isEmpty: Bool { identities.isEmpty && fileKey == nil }

    /// A decrypting reader of the encrypted file open at `descriptor` (at its start; not closed
    /// here): the header is read and opened now, so a wrong key is an error before any byte of
    /// the archive is read.
    func decryptingReader(fileDescriptor descriptor: Int32, file: String) throws -> AgeDecryptingReader {
        guard !isEmpty else { throw AgeError.keyRequired(file: file) }
        if let fileKey { return try AgeDecryptingReader(fileDescriptor: descriptor, file: file, fileKey: fileKey) }
        return try AgeDecryptingReader(fileDescriptor: descriptor, file: file, identities: identities)
    }
}
