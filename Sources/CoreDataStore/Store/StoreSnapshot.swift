import Foundation
import GRDB

/// A store opened for reading without touching its files.
///
/// SQLite rewrites `-shm` even on a read-only open and checkpoints the WAL on close, so the
/// source's main file and WAL are copied into a private temporary directory and the copy is
/// opened; the source directory sees only reads, and may be read-only. The copy is repeated
/// when the source changed while it was copied, so the snapshot is one moment of the store.
package final class StoreSnapshot {
    public let sourceURL: URL
    /// Committed WAL frames present when the snapshot was taken: rows newer than the main file.
    public let walFrameCount: Int
    let directory: URL
    package let database: DatabaseQueue

    public var path: String { sourceURL.path }
    /// The private copy's main file: nothing but this snapshot writes it, and only `copyFiles`
    /// does (a checkpoint), so other read connections may open it (`KeyRangeReaders`).
    package var copyPath: String { directory.appendingPathComponent("snapshot.store").path }

    public init(storeAt url: URL, maximumAttempts: Int = 5) throws {
        sourceURL = url
        let fileManager = FileManager.default
        switch FileKind.of(url.path) {
        case .missing: throw StoreError.notFound(path: url.path)
        case .folder:
            throw StoreError.notAStore(path: url.path, reason: "it is a folder; name the store file in it (such as default.store)")
        case .unreadable: throw StoreError.unreadable(path: url.path, reason: "permission denied")
        case .archive: throw StoreError.notAStore(path: url.path, reason: "it is a tar archive (a questbak backup?), not a SQLite store")
        case .other: throw StoreError.notAStore(path: url.path, reason: "it is not a SQLite file")
        case .sqliteStore: break
        }
        directory = try TemporaryDirectory.create(prefix: "questbak-snapshot")
        let copy = directory.appendingPathComponent("snapshot.store")
        let walURL = CoreDataSQL.sidecar(of: url, "-wal")
        let walCopy = CoreDataSQL.sidecar(of: copy, "-wal")
        var frames = 0
        var copied = false
        do {
            // Only the main file must not change while it is copied: SQLite writes it only when
            // checkpointing. The WAL may grow meanwhile: recovery keeps its committed prefix.
            for _ in 0..<maximumAttempts {
                let before = try FileFingerprint.of([url])
                try? fileManager.removeItem(at: copy)
                try? fileManager.removeItem(at: walCopy)
                // The source's permissions are kept: `copyFiles` hands them on to the store a
                // merge puts in the source's place.
                try FileBytes.copy(url.path, to: copy.path)
                if fileManager.fileExists(atPath: walURL.path) {
                    try FileBytes.copy(walURL.path, to: walCopy.path)
                    frames = WriteAheadLog.committedFrameCount(at: walCopy)
                }
                if try FileFingerprint.of([url]) == before {
                    copied = true
                    break
                }
            }
            guard copied else { throw StoreError.sourceKeptChanging(path: url.path, attempts: maximumAttempts) }
            walFrameCount = frames
            var configuration = Configuration()
            configuration.foreignKeysEnabled = false
            database = try DatabaseQueue(path: copy.path, configuration: configuration)
            try database.read { db in
                // Forces SQLite to read the header and recover the WAL now, so a file that is not
                // SQLite fails here with the source's name rather than later.
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
            }
        } catch let failure as FileBytes.CopyFailure {
            TemporaryDirectory.remove(directory)
            switch failure {
            case .reading(errno: EACCES), .reading(errno: EPERM):
                throw StoreError.unreadable(path: url.path, reason: "permission denied")
            case .reading:
                throw StoreError.io(path: url.path, reason: failure.reason)
            case .writing:
                // Reading the source worked: the copy into the temporary folder did not (a full
                // disk, a file-size limit). That is the temporary folder's fault, not the store's.
                throw StoreError.io(path: directory.path, reason: "cannot copy the store into the temporary folder: \(failure.reason)")
            }
        } catch {
            TemporaryDirectory.remove(directory)
            throw StoreError.wrapping(error, path: url.path)
        }
    }

    deinit {
        try? database.close()
        TemporaryDirectory.remove(directory)
    }

    /// Copies the snapshot's main file and WAL (SQLite recovers the WAL when the copy is opened).
    /// A checkpoint first folds the WAL into the private copy, so the result is one file.
    public func copyFiles(to destination: URL) throws {
        do {
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try FileBytes.copy(copyPath, to: destination.path)
        } catch let failure as FileBytes.CopyFailure {
            throw OutputError.io(path: destination.path, reason: failure.reason)
        } catch {
            throw StoreError.wrapping(error, path: destination.path)
        }
    }

    /// Runs `body` inside one read transaction, so everything it reads is one consistent state.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        do {
            return try database.read(body)
        } catch {
            throw StoreError.wrapping(error, path: path)
        }
    }
}

/// Reading SQLite's WAL file format (https://sqlite.org/fileformat.html#the_write_ahead_log).
package enum WriteAheadLog {
    /// The number of frames up to the last commit whose salts match the header: what SQLite's
    /// recovery would keep. Checksums are not verified; this only reports, it does not decide.
    static func committedFrameCount(at url: URL) -> Int {
        guard let data = try? Data(contentsOf: url), data.count >= 32 else { return 0 }
        let bytes = [UInt8](data)
        func word(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        guard word(0) & 0xFFFF_FFFE == 0x377F_0682 else { return 0 }
        let pageSize = Int(word(8))
        guard pageSize >= 512 else { return 0 }
        let salts = (word(16), word(20))
        var frames = 0
        var committed = 0
        var offset = 32
        while offset + 24 + pageSize <= bytes.count {
            guard (word(offset + 8), word(offset + 12)) == salts else { break }
            frames += 1
            if word(offset + 4) != 0 { committed = frames }
            offset += 24 + pageSize
        }
        return committed
    }
}
