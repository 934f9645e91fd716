import Foundation
import GRDB

/// Puts a finished store file in place of a target without ever leaving a state in which the
/// app would read something else than the old store or the new one. SQLite would replay an old
/// `-wal` onto a new main file, so the old store's WAL is checkpointed (after a byte-for-byte
/// backup was taken) before the new main file is renamed over it.
package enum StorePlacement {
    /// Files SQLite keeps beside a store: a stale `-wal` would be replayed onto a new main
    /// file, and a hot `-journal` rolled back onto it.
    static let sidecars = CoreDataSQL.sidecarSuffixes

    /// Fails early, before any work, when the target cannot be written as asked. Folders that do
    /// not exist yet are fine when `creatingFolders` (`createFolders` makes them later); the
    /// nearest one that exists must be a writable folder.
    public static func checkTarget(_ target: URL, replace: Bool, creatingFolders: Bool = false) throws {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        if fileManager.fileExists(atPath: target.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw OutputError.cannotCreate(
                path: target.path,
                reason: "it is a folder; name the store file in it (such as \(target.appendingPathComponent("default.store").path))")
        }
        var directory = target.deletingLastPathComponent()
        while creatingFolders, !fileManager.fileExists(atPath: directory.path), directory.path != "/" {
            directory = directory.deletingLastPathComponent()
        }
        guard fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw OutputError.cannotCreate(path: target.path, reason: "\(directory.path) does not exist")
        }
        guard isDirectory.boolValue else {
            throw OutputError.cannotCreate(path: target.path, reason: "\(directory.path) is not a folder")
        }
        guard access(directory.path, W_OK) == 0 else {
            throw OutputError.cannotCreate(path: target.path, reason: "\(directory.path) is not writable")
        }
        let exists = fileManager.fileExists(atPath: target.path)
        if exists && !replace { throw OutputError.exists(path: target.path) }
        if !exists {
            for suffix in sidecars where fileManager.fileExists(atPath: target.path + suffix) {
                throw OutputError.cannotCreate(
                    path: target.path,
                    reason:
                        "\(target.lastPathComponent)\(suffix) exists without its store; SQLite would replay it onto a new store. Move it away first"
                )
            }
        }
    }

    /// Creates the folders missing above `target`, outermost first, and returns them, so a failed
    /// run can remove them again (`removeFolders`).
    public static func createFolders(for target: URL) throws -> [URL] {
        let missing = missingFolders(for: target)
        for folder in missing {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
            } catch {
                removeFolders(missing)
                throw OutputError.cannotCreate(path: folder.path, reason: error.localizedDescription)
            }
            // A new folder's entry is durable only once its parent is synced; place() syncs just
            // the innermost folder, so without this a power loss after a successful run could
            // take the folders, and the store in them, away.
            Durability.syncDirectory(of: folder)
        }
        return missing
    }

    /// The folders above `target` that do not exist yet, outermost first.
    public static func missingFolders(for target: URL) -> [URL] {
        var missing: [URL] = []
        var directory = target.deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.path), directory.path != "/" {
            missing.insert(directory, at: 0)
            directory = directory.deletingLastPathComponent()
        }
        return missing
    }

    /// Removes folders `createFolders` made, innermost first, as long as they are empty.
    public static func removeFolders(_ folders: [URL]) {
        for folder in folders.reversed() { rmdir(folder.path) }
    }

    /// The files of a backup `place` made: the store and whichever of its sidecars it had.
    public static func backupFiles(_ backup: URL) -> [URL] {
        CoreDataSQL.storeFileSuffixes.map { CoreDataSQL.sidecar(of: backup, $0) }.filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Moves `newStore` (a closed store with no `-wal`) to `target`. With `replace`, the old store
    /// and its `-wal`/`-shm` are first copied to `<target>.questbak-backup-<stamp>`; that backup's
    /// path is returned.
    public static func place(_ newStore: URL, at target: URL, replace: Bool, backupStamp: String) throws -> URL? {
        try checkTarget(target, replace: replace)
        try syncFile(newStore)
        var backup: URL?
        if replace && FileManager.default.fileExists(atPath: target.path) {
            // Never over an earlier backup: a second replace within the same second gets "-2".
            var backupURL = URL(fileURLWithPath: target.path + ".questbak-backup-\(backupStamp)")
            var attempt = 1
            while FileManager.default.fileExists(atPath: backupURL.path) {
                attempt += 1
                backupURL = URL(fileURLWithPath: target.path + ".questbak-backup-\(backupStamp)-\(attempt)")
            }
            try copyStore(target, to: backupURL)
            backup = backupURL
            FaultPoint.reached("backup complete")
            do {
                try settle(target)
            } catch {
                // Refused (the store is in use): the replace will not happen, so neither does its backup.
                for file in backupFiles(backupURL) { unlink(file.path) }
                throw error
            }
            // SQLite removed the emptied -wal and -shm without syncing the folder: until it is
            // synced, a power loss may keep the rename below and lose those unlinks (and the
            // WAL's truncation with them), leaving the old WAL beside the new main file, where
            // SQLite would replay its frames into the new store.
            Durability.syncDirectory(of: target)
            FaultPoint.reached("old store checkpointed")
            guard rename(newStore.path, target.path) == 0 else {
                throw OutputError.io(path: target.path, reason: "rename: \(String(cString: strerror(errno)))")
            }
            FaultPoint.reached("renamed into place")
        } else {
            // link() refuses to replace an existing file, so a store created meanwhile is never clobbered.
            guard link(newStore.path, target.path) == 0 else {
                throw errno == EEXIST
                    ? OutputError.exists(path: target.path)
                    : OutputError.io(path: target.path, reason: "link: \(String(cString: strerror(errno)))")
            }
            unlink(newStore.path)
        }
        for suffix in sidecars {
            unlink(target.path + suffix)
            FaultPoint.reached("removed \(suffix)")
        }
        Durability.syncDirectory(of: target)
        return backup
    }

    /// Leaves the old store as one main file: its WAL folded in (or a hot journal rolled back),
    /// as SQLite does when the last connection closes. SQLite deletes `-wal` and `-shm` only
    /// then, so any sidecar still there afterwards means another process has the store open:
    /// replacing it would lose what that process writes next, so questbak refuses.
    static func settle(_ store: URL) throws {
        guard sidecars.contains(where: { FileManager.default.fileExists(atPath: store.path + $0) }) else { return }
        do {
            var configuration = Configuration()
            configuration.foreignKeysEnabled = false
            configuration.busyMode = .immediateError
            let queue = try DatabaseQueue(path: store.path, configuration: configuration)
            let busy = try queue.writeWithoutTransaction { db in
                // A read rolls back a hot journal; the checkpoint folds a WAL in.
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master")
                return try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)").map { $0[0] as Int } ?? 1
            }
            try queue.close()
            let open = sidecars.filter { FileManager.default.fileExists(atPath: store.path + $0) }
            if busy != 0 || !open.isEmpty {
                throw StoreError.sqlite(
                    path: store.path, code: 5,
                    message: "the store is in use by another process (\(open.joined(separator: ", ")) still open); close the app and retry")
            }
        } catch let error as DatabaseError {
            throw StoreError.wrapping(error, path: store.path)
        }
    }

    /// Copies a store and whichever of its `-wal`/`-shm` exist, each through a temporary name
    /// and a rename, fsynced.
    static func copyStore(_ source: URL, to destination: URL) throws {
        for suffix in [""] + sidecars where FileManager.default.fileExists(atPath: source.path + suffix) {
            let final = destination.path + suffix
            let temporary = final + ".partial-\(getpid())"
            TemporaryFiles.created(temporary)
            defer { TemporaryFiles.removed(temporary) }
            do {
                try FileBytes.copy(source.path + suffix, to: temporary)
                try syncFile(URL(fileURLWithPath: temporary))
                FaultPoint.reached("copied \(suffix.isEmpty ? "main file" : suffix) to backup")
                guard rename(temporary, final) == 0 else { throw OutputError.io(path: final, reason: String(cString: strerror(errno))) }
            } catch {
                try? FileManager.default.removeItem(atPath: temporary)
                guard let failure = error as? FileBytes.CopyFailure else { throw error }
                if case .reading = failure {
                    throw OutputError.io(path: source.path + suffix, reason: "cannot read it to back it up: \(failure.reason)")
                }
                throw OutputError.io(path: final, reason: "cannot write the backup: \(failure.reason)")
            }
        }
        Durability.syncDirectory(of: destination)
    }

    package static func syncFile(_ url: URL) throws {
        let descriptor = open(url.path, O_RDONLY)
        guard descriptor >= 0, Durability.sync(descriptor) else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw OutputError.io(path: url.path, reason: "fsync: \(reason)")
        }
        close(descriptor)
    }

    /// Temporary stores left by a questbak that was killed (its pid no longer runs) are removed.
    package static func removeStaleTemporaries(besides target: URL) {
        let directory = target.deletingLastPathComponent()
        let prefix = ".\(target.lastPathComponent).questbak-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return }
        for name in names {
            // `.<store>.questbak-<pid>-…` (a store being built) and `<store>.questbak-backup-….partial-<pid>` (a backup being copied).
            let pidText: Substring
            if name.hasPrefix(prefix) {
                pidText = name.dropFirst(prefix.count).prefix { $0.isNumber }
            } else if name.hasPrefix(target.lastPathComponent + ".questbak-backup-"), let range = name.range(of: ".partial-") {
                pidText = name[range.upperBound...].prefix { $0.isNumber }
            } else {
                continue
            }
            guard let pid = Int32(pidText), ProcessLiveness.hasExited(pid) else { continue }
            unlink(directory.appendingPathComponent(name).path)
        }
    }

    /// A unique name beside `target` for the store being built, carrying this process's id.
    package static func temporaryStoreURL(besides target: URL) -> URL {
        let directory = target.deletingLastPathComponent()
        return directory.appendingPathComponent(".\(target.lastPathComponent).questbak-\(getpid())-\(UUID().uuidString.prefix(8))")
    }
}
