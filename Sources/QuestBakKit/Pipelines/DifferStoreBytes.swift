import CoreDataStore
import Foundation

extension Differ {
    /// Whether two store snapshots are the same bytes, so that one read of either stands for
    /// both: `diff` of a store and its copy reads only A, and B's side is A's.
    ///
    /// Why that gives B's side exactly: a store side is what `Exporter.records(of:)` makes of a
    /// snapshot, the manifest and the lines of each entity member, and those are a function of
    /// what SQLite reads from the snapshot's files (its main file and its WAL, copied as they
    /// were) and of the options, which are the same for both sides but for the progress step's
    /// name. Equal files give equal reads. The one thing an export reads beside the store is its
    /// support folder (external-storage files, staged as file members, which a side does not
    /// use); it is read from the source's folder, so a store with one, on either side, is read
    /// as before, and any error reading it is met as before.
    enum StoreBytes {
        static func same(_ a: StoreSnapshot, _ b: StoreSnapshot) throws -> Bool {
            for store in [a.sourceURL, b.sourceURL] {
                let support = ExternalStorage.supportFolder(forStore: store).path
                // Not followed when it is a link: anything there at all, and B is read.
                if (try? FileManager.default.attributesOfItem(atPath: support)) != nil { return false }
            }
            let main = (a.copyPath, b.copyPath)
            let wal = (a.copyPath + "-wal", b.copyPath + "-wal")
            return try sameFile(main.0, main.1) && sameFile(wal.0, wal.1)
        }

        /// Whether the files at the two paths hold the same bytes (both absent: the same).
        static func sameFile(_ first: String, _ second: String) throws -> Bool {
            let manager = FileManager.default
            let (hasFirst, hasSecond) = (manager.fileExists(atPath: first), manager.fileExists(atPath: second))
            guard hasFirst, hasSecond else { return hasFirst == hasSecond }
            // (A file that cannot be opened: not the same, and B is read, which says why.)
            return try FileBytes.same(first, second) ?? false
        }
    }
}
