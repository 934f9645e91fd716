import Foundation

/// Whether two files hold the same bytes: one comparison for the places that ask (an
/// external-storage file already in place, and `diff`'s two store snapshots).
package enum FileBytes {
    /// Sizes first (a size that cannot be read, or two that differ: not the same), then a MiB
    /// at a time, so memory stays flat at any size; nil when either file cannot be opened (each
    /// caller says what that means for it).
    package static func same(_ first: String, _ second: String) throws -> Bool? {
        let size = { (path: String) in (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value }
        guard let firstSize = size(first), firstSize == size(second) else { return false }
        guard let one = FileHandle(forReadingAtPath: first), let other = FileHandle(forReadingAtPath: second) else { return nil }
        defer {
            try? one.close()
            try? other.close()
        }
        while true {
            let a = try one.read(upToCount: ExternalStorage.chunkSize) ?? Data()
            let b = try other.read(upToCount: ExternalStorage.chunkSize) ?? Data()
            guard a == b else { return false }
            if a.isEmpty { return true }
        }
    }
}
