import CoreDataStore
import Foundation

/// The fixed strings and sizes of the age v1 format (C2SP's age.md), and its base64: standard
/// alphabet, no `=` padding, and only the canonical encoding of each value accepted.
public enum AgeFormat {
    /// The first line of every age v1 file, without its line feed.
    static let versionLine = "age-encryption.org/v1"
    /// What every age file starts with, whatever its version.
    static let magic = Array("age-encryption.org/".utf8)
    static let armorMagic = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    /// Plaintext bytes per STREAM chunk; the final chunk may be shorter.
    public static let chunkSize = 64 * 1024
    static let tagSize = 16
    static let fileKeySize = 16
    static let payloadNonceSize = 16
    /// The column at which stanza bodies wrap.
    static let bodyLineLength = 64
    /// The scrypt work factor (log2 N) questbak encrypts with, as age does.
    public static let defaultScryptWorkFactor = 18
    /// The largest scrypt work factor questbak accepts when decrypting, as age does: 2^22
    /// iterations take 4 GiB and tens of seconds; more is an attack on the reader.
    public static let maximumScryptWorkFactor = 22

    /// Whether `prefix` (the first bytes of a file) is the start of an age file, binary or armored:
    /// how a reader tells an encrypted archive from a plain one before choosing how to open it.
    public static func isEncrypted(prefix: some Collection<UInt8>) -> Bool {
        let bytes = Array(prefix.prefix(armorMagic.count))
        return bytes.starts(with: magic) || bytes.starts(with: armorMagic)
    }

    /// The unpadded base64 of `bytes`.
    static func base64(_ bytes: some DataProtocol) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.last == "=" { text.removeLast() }
        return text
    }

    /// The bytes of unpadded canonical base64 `text`, or nil for anything else (padding, other
    /// characters, a length no encoding has, unused bits that are not zero).
    static func decodeBase64(_ text: some StringProtocol) -> Data? {
        guard text.utf8.allSatisfy(isBase64Character) else { return nil }
        let remainder = text.utf8.count % 4
        guard remainder != 1 else { return nil }
        guard let data = Data(base64Encoded: String(text) + String(repeating: "=", count: (4 - remainder) % 4)) else { return nil }
        return base64(data) == text ? data : nil
    }

    static func isBase64Character(_ byte: UInt8) -> Bool {
        (65...90).contains(byte) || (97...122).contains(byte) || (48...57).contains(byte) || byte == UInt8(ascii: "+")
            || byte == UInt8(ascii: "/")
    }
}
