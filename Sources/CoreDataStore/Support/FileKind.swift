import Foundation

/// What a path holds, by its first bytes: so a store given where an archive is expected (or the
/// reverse, or a folder) is named for what it is, instead of failing deep inside SQLite or
/// libarchive with their words.
package enum FileKind: Equatable {
    case missing
    case folder
    case unreadable
    case sqliteStore
    /// A tar file, plain or compressed with zstd or gzip: a questbak archive, or any other.
    case archive
    case other

    package static func of(_ path: String) -> FileKind {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing }
        if isDirectory.boolValue { return .folder }
        guard let handle = FileHandle(forReadingAtPath: path) else { return .unreadable }
        defer { try? handle.close() }
        let head = [UInt8]((try? handle.read(upToCount: 512)) ?? Data())
        if head.starts(with: Array("SQLite format 3\0".utf8)) { return .sqliteStore }
        if head.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) || head.starts(with: [0x1F, 0x8B]) { return .archive }
        // POSIX tar: "ustar" at offset 257.
        if head.count >= 262, Array(head[257..<262]) == Array("ustar".utf8) { return .archive }
        return .other
    }
}
