import CoreDataStore
import Foundation
import QuestBakArchive

/// A store's files copied aside byte for byte, before anything reads the store as a database:
/// the store, its `-wal` and `-shm`, and its support folder (`.<name>_SUPPORT`, external storage
/// and whatever else Core Data keeps there). Never opened with SQLite, which could checkpoint a
/// WAL or roll back a journal and so change what is being saved; each file is written through
/// `AtomicOutputFile` (synced, renamed, its folder synced) and each folder made is synced in its
/// parent, so the copy survives a power loss that follows the call.
enum StoreFilesCopy {
    struct Copied {
        /// Every file and link written, in the copy, sorted.
        var files: [String] = []
        var bytes: Int64 = 0
        /// What the support folder holds that is neither file, folder nor link (a socket, a
        /// FIFO): named, not copied.
        var notCopied: [String] = []
    }

    static func copy(storeAt store: URL, into folder: URL) throws -> Copied {
        // The -shm is left out of the check: another process merely reading the store changes it.
        let watched = [store, URL(fileURLWithPath: store.path + "-wal")]
        let before = watched.map(FileStamp.init(of:))
        var copied = Copied()
        try createFolder(folder)
        for suffix in ["", "-wal", "-shm"] {
            let source = URL(fileURLWithPath: store.path + suffix)
            // The store's own files are copied for their bytes even when reached through a link.
            guard let type = entryType(source.path, followingLinks: true) else { continue }
            let target = folder.appendingPathComponent(source.lastPathComponent)
            try copyEntry(source, type: type, to: target, copied: &copied)
        }
        let support = ExternalStorage.supportFolder(forStore: store)
        if let type = entryType(support.path) {
            try copyEntry(support, type: type, to: folder.appendingPathComponent(support.lastPathComponent), copied: &copied)
        }
        // A process that still has the store open (a widget, an app extension) could have written
        // between two files: such a copy is no one state of the store.
        guard watched.map(FileStamp.init(of:)) == before else {
            throw StoreError.sqlite(
                path: store.path, code: 5,
                message: "the store changed while it was being copied; close every process that uses it and retry")
        }
        copied.files.sort()
        return copied
    }

    /// A folder made (with the folders above it that are missing), each synced in its parent.
    static func createFolder(_ folder: URL) throws {
        var missing: [URL] = []
        var current = folder
        while entryType(current.path) == nil, current.path != "/" {
            missing.append(current)
            current = current.deletingLastPathComponent()
        }
        for url in missing.reversed() {
            guard mkdir(url.path, 0o755) == 0 || errno == EEXIST else {
                throw OutputError.cannotCreate(path: url.path, reason: String(cString: strerror(errno)))
            }
            Durability.syncDirectory(of: url)
        }
    }

    private static func copyEntry(_ source: URL, type: mode_t, to target: URL, copied: inout Copied) throws {
        switch type {
        case S_IFREG:
            copied.bytes += try copyFile(source, to: target)
            copied.files.append(target.path)
        case S_IFDIR:
            try createFolder(target)
            let names: [String]
            do {
                names = try FileManager.default.contentsOfDirectory(atPath: source.path).sorted()
            } catch {
                throw StoreError.unreadable(path: source.path, reason: error.localizedDescription)
            }
            for name in names {
                let child = source.appendingPathComponent(name)
                guard let childType = entryType(child.path) else { continue }
                try copyEntry(child, type: childType, to: target.appendingPathComponent(name), copied: &copied)
            }
        case S_IFLNK:
            // A link is kept as a link, not followed: what it points at is not the store's.
            let destination: String
            do {
                destination = try FileManager.default.destinationOfSymbolicLink(atPath: source.path)
            } catch {
                throw StoreError.unreadable(path: source.path, reason: error.localizedDescription)
            }
            guard symlink(destination, target.path) == 0 else {
                throw OutputError.cannotCreate(path: target.path, reason: String(cString: strerror(errno)))
            }
            Durability.syncDirectory(of: target)
            copied.files.append(target.path)
        default:
            copied.notCopied.append(source.path)
        }
    }

    /// Copies one file's bytes; returns how many.
    private static func copyFile(_ source: URL, to target: URL) throws -> Int64 {
        let input = open(source.path, O_RDONLY)
        guard input >= 0 else { throw StoreError.unreadable(path: source.path, reason: String(cString: strerror(errno))) }
        defer { close(input) }
        let output = try AtomicOutputFile(destination: target, overwrite: false)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var total: Int64 = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                output.abandon()
                throw StoreError.unreadable(path: source.path, reason: reason)
            }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(output.fileDescriptor, $0.baseAddress! + offset, count - offset) }
                if written < 0 {
                    if errno == EINTR { continue }
                    let reason = String(cString: strerror(errno))
                    output.abandon()
                    throw OutputError.io(path: target.path, reason: reason)
                }
                offset += written
            }
            total += Int64(count)
        }
        try output.commit()
        return total
    }

    /// What is at `path`: itself (a link not followed) unless `followingLinks`; nil when nothing is there.
    static func entryType(_ path: String, followingLinks: Bool = false) -> mode_t? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    /// Enough of a file's status to see that it changed: size, modification time, inode.
    struct FileStamp: Equatable {
        var exists: Bool
        var size: Int64 = 0
        var modified: [Int] = []
        var inode: UInt64 = 0

        init(of url: URL) {
            var info = stat()
            exists = stat(url.path, &info) == 0
            guard exists else { return }
            size = Int64(info.st_size)
            #if canImport(Darwin)
                modified = [Int(info.st_mtimespec.tv_sec), Int(info.st_mtimespec.tv_nsec)]
            #else
                modified = [Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec)]
            #endif
            inode = UInt64(info.st_ino)
        }
    }
}
