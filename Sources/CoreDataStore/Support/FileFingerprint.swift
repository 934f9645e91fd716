import Foundation

/// What a set of files looked like at one moment (absent files included), to notice a change:
/// the snapshot copies a store again when its main file changed meanwhile, and a merge or an
/// in-place migration refuses to replace a store that changed under it.
///
/// Each file's `lstat`: its size, its modification time to the nanosecond, and the file's
/// identity (device and inode). It was `FileManager.attributesOfItem`'s size and modification
/// date (seconds as a `Double`, from the same `lstat`), which also looked up the owner's and
/// group's names in /etc/passwd and /etc/group on every call (docs/performance.md, "another
/// app's export, the fixed costs"). *Why it notices every change the old one noticed:* two
/// fingerprints that agree here agree in size and in the modification time, exactly, so their
/// `Double` seconds agree too; and a file absent for one is absent for the other. What is new
/// is noticed besides: a modification within the same quarter of a microsecond (below the
/// `Double`'s resolution) and a file replaced by another of the same size and time (a rename
/// over it). `FileFingerprintTests` compares both on each kind of change.
package struct FileFingerprint: Equatable {
    /// Per file: nil when it cannot be examined (absent, or a folder on the way is unreadable).
    var entries: [Entry?]

    struct Entry: Equatable {
        var size: Int64
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
        var device: UInt64
        var inode: UInt64
    }

    package static func of(_ urls: [URL]) throws -> FileFingerprint {
        FileFingerprint(entries: urls.map { entry(atPath: $0.path) })
    }

    static func entry(atPath path: String) -> Entry? {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = status.st_mtimespec
        #else
            let modified = status.st_mtim
        #endif
        return Entry(
            size: Int64(status.st_size), modifiedSeconds: Int(modified.tv_sec), modifiedNanoseconds: Int(modified.tv_nsec),
            device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }
}
