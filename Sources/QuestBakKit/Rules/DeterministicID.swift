import CoreDataStore
import Crypto
import Foundation
import QuestBakArchive

/// Name-based UUIDs (RFC 4122 version 5): the same record restored on two devices gets the same
/// cloudID, so CloudKit sees one record, not two.
enum DeterministicID {
    /// questbak's namespace for cloudIDs (a fixed random UUID).
    static let namespace = UUID(uuid: (0x5A, 0x8C, 0x6F, 0x0E, 0x3D, 0x1B, 0x4E, 0x7A, 0x9C, 0x2F, 0x71, 0xB0, 0x4D, 0x9E, 0x6A, 0x13))

    static func uuid(name: String, namespace: UUID = namespace) -> UUID {
        var input = withUnsafeBytes(of: namespace.uuid) { Data($0) }
        input.append(Data(name.utf8))
        return UUID(bytes: Array(Insecure.SHA1.hash(data: input)), version: 5)
    }

    /// A cloudID is usable when it is a UUID string, as `UUID().uuidString` makes them:
    /// 8-4-4-4-12 hexadecimal digits. Checked byte by byte (Foundation's parser on Linux goes
    /// through sscanf, a tenth of an import's time).
    static func isWellFormed(_ cloudID: String) -> Bool {
        var text = cloudID
        return text.withUTF8 { isWellFormed(UnsafeRawBufferPointer($0)) }
    }

    /// The same test of a stored text's bytes, as the restore binds them.
    static func isWellFormed(_ cloudID: Data) -> Bool {
        cloudID.withUnsafeBytes { isWellFormed($0) }
    }

    /// The same test of bytes lent in place (a row's text in SQLite's buffer).
    static func isWellFormed(_ bytes: UnsafeRawBufferPointer) -> Bool { UUID.read(text: bytes) != nil }

    /// The same test in SQL, for finding the records that need a new cloudID without reading all.
    static func wellFormedSQL(_ column: String) -> String {
        let hex = "[0-9A-Fa-f]"
        let pattern = [8, 4, 4, 4, 12].map { String(repeating: hex, count: $0) }.joined(separator: "-")
        // GLOB and length() read text only to its first NUL character; the bytes' length does
        // not, so an ID followed by a NUL and more is malformed here as in `isWellFormed`.
        return "(\(column) GLOB '\(pattern)' AND length(CAST(\(column) AS BLOB)) = 36)"
    }
}
