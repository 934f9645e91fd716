import CoreDataStore
import Foundation

/// Everything that can be wrong with an archive, naming the archive, the member and, where
/// there is one, the line and property.
public enum ArchiveError: Error, Equatable {
    /// The archive cannot be read (missing, not a file, not a tar stream).
    case unreadable(path: String, reason: String)
    /// Writing the archive failed in the operating system.
    case write(path: String, reason: String)
    /// The first member is not a questbak manifest.
    case notAQuestbakArchive(path: String, reason: String)
    /// The archive's format version is newer than this library reads.
    case unsupportedFormatVersion(path: String, found: Int, supported: Int)
    /// The archive's schema version is newer than the known schemas.
    case unsupportedSchemaVersion(path: String, found: String, supported: [String])
    /// The archive is compressed (`reading`), or was asked to be, with a codec this build of
    /// questbak leaves out: zstd, in the build without the `SystemArchive` trait.
    case codecUnavailable(path: String, codec: String, reading: Bool)
    /// A schema version that is neither known nor a later version than the known ones.
    case unknownSchemaVersion(path: String, found: String, known: [String])
    /// A member the manifest does not list, or one in the wrong place.
    case unexpectedMember(path: String, member: String, reason: String)
    /// A member the manifest lists is not in the archive.
    case missingMember(path: String, member: String)
    /// A member's size is not the manifest's.
    case sizeMismatch(path: String, member: String, declared: Int64, found: Int64)
    /// A member's SHA-256 is not the manifest's.
    case checksumMismatch(path: String, member: String, expected: String, found: String)
    /// A member holds another number of records than the manifest says.
    case countMismatch(path: String, member: String, declared: Int, found: Int)
    /// A record line is not valid JSON of its entity, naming the member and line.
    case invalidLine(path: String, member: String, line: Int, reason: String)
    /// A creation time (seconds since 1970) that the manifest's `createdAt` cannot express.
    case invalidCreationTime(unixSeconds: Int64)
    /// An export's own proof failed: the archive it wrote, restored, is not the store it was
    /// made from. Each difference is one sentence.
    case doesNotRestore(path: String, differences: [String])
}

extension ArchiveError {
    /// A reason may quote the archive (a link target, a field's value): escaped, never cut.
    private static func displayReason(_ text: String) -> String { UntrustedText.display(text, limit: .max) }
}

extension ArchiveError: LocalizedError {
    /// The sentence that says what is wrong, naming the archive, member and line.
    public var errorDescription: String? {
        let member = { (name: String) in UntrustedText.display(name) }
        let reason = { (text: String) in Self.displayReason(text) }
        switch self {
        case .unreadable(let path, let text):
            return "\(path): cannot read the archive: \(reason(text))"
        case .write(let path, let text):
            return "\(path): cannot write the archive: \(text)"
        case .notAQuestbakArchive(let path, let text):
            return "\(path): not a questbak archive: \(reason(text))"
        case .unsupportedFormatVersion(let path, let found, let supported):
            return "\(path): archive format version \(found) is newer than this questbak reads (up to \(supported)); upgrade questbak"
        case .unsupportedSchemaVersion(let path, let found, let supported):
            return
                "\(path): schema version \(UntrustedText.display(found)) is newer than this questbak knows (supported: \(supported.joined(separator: ", "))); a newer questbak may read it"
        case .codecUnavailable(let path, let codec, let reading):
            let missing = "this questbak was built without the \(codec) codec (it has gzip and none)"
            return reading
                ? "\(path): the archive is compressed with \(codec), and \(missing); read it with a questbak built with lib\(codec)"
                : "\(path): cannot write a \(codec) archive: \(missing)"
        case .invalidCreationTime(let seconds):
            return "creation time \(seconds) seconds since 1970 is outside years 0001–9999, which an archive's createdAt can hold"
        case .unknownSchemaVersion(let path, let found, let known):
            return
                "\(path): schema version \"\(UntrustedText.display(found))\" is not one this questbak knows (\(known.joined(separator: ", "))) and not a later version of them"
        case .unexpectedMember(let path, let name, let text):
            return "\(path): member \(member(name)): \(reason(text))"
        case .missingMember(let path, let name):
            return "\(path): member \(member(name)) listed in the manifest is missing"
        case .sizeMismatch(let path, let name, let declared, let found):
            return "\(path): member \(member(name)) is \(found) bytes, the manifest says \(declared)"
        case .checksumMismatch(let path, let name, let expected, let found):
            return "\(path): member \(member(name)) has SHA-256 \(found), the manifest says \(UntrustedText.display(expected, limit: 64))"
        case .countMismatch(let path, let name, let declared, let found):
            return "\(path): member \(member(name)) holds \(found) records, the manifest says \(declared)"
        case .invalidLine(let path, let name, let line, let text):
            return "\(path): \(member(name)) line \(line): \(reason(text))"
        case .doesNotRestore(let path, let differences):
            return "\(path): the archive does not restore the store exactly, so it was not kept: "
                + differences.map(reason).joined(separator: "; ")
        }
    }
}
