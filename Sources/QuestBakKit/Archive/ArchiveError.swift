import Foundation

/// Everything that can be wrong with an archive, naming the archive, the member and, where
/// there is one, the line and property.
public enum ArchiveError: Error, Equatable {
    case unreadable(path: String, reason: String)
    case write(path: String, reason: String)
    /// The first member is not a questbak manifest.
    case notAQuestbakArchive(path: String, reason: String)
    case unsupportedFormatVersion(path: String, found: Int, supported: Int)
    case unsupportedSchemaVersion(path: String, found: String, supported: [String])
    case unexpectedMember(path: String, member: String, reason: String)
    case missingMember(path: String, member: String)
    case sizeMismatch(path: String, member: String, declared: Int64, found: Int64)
    case checksumMismatch(path: String, member: String, expected: String, found: String)
    case countMismatch(path: String, member: String, declared: Int, found: Int)
    case invalidLine(path: String, member: String, line: Int, reason: String)
}

extension ArchiveError: LocalizedError {
    public var errorDescription: String? {
        switch self {
        case .unreadable(let path, let reason):
            return "\(path): cannot read the archive: \(reason)"
        case .write(let path, let reason):
            return "\(path): cannot write the archive: \(reason)"
        case .notAQuestbakArchive(let path, let reason):
            return "\(path): not a questbak archive: \(reason)"
        case .unsupportedFormatVersion(let path, let found, let supported):
            return "\(path): archive format version \(found) is newer than this questbak reads (up to \(supported)); upgrade questbak"
        case .unsupportedSchemaVersion(let path, let found, let supported):
            return "\(path): schema version \(found) is not supported (supported: \(supported.joined(separator: ", "))); upgrade questbak, or pass --allow-newer"
        case .unexpectedMember(let path, let member, let reason):
            return "\(path): member \(member): \(reason)"
        case .missingMember(let path, let member):
            return "\(path): member \(member) listed in the manifest is missing"
        case .sizeMismatch(let path, let member, let declared, let found):
            return "\(path): member \(member) is \(found) bytes, the manifest says \(declared)"
        case .checksumMismatch(let path, let member, let expected, let found):
            return "\(path): member \(member) has SHA-256 \(found), the manifest says \(expected)"
        case .countMismatch(let path, let member, let declared, let found):
            return "\(path): member \(member) holds \(found) records, the manifest says \(declared)"
        case .invalidLine(let path, let member, let line, let reason):
            return "\(path): \(member) line \(line): \(reason)"
        }
    }
}
