import Foundation

/// An output file that appears complete or not at all: bytes go to a temporary file beside the
/// destination, which is fsynced and renamed over it, and the directory fsynced, only on commit.
/// Until then an error removes the temporary file, and so does an interrupt (SIGINT, SIGTERM,
/// SIGHUP) when the host installed the `Hooks.temporaryFile` hook, as questbak does.
package final class AtomicOutputFile {
    public let destination: URL
    public let temporaryURL: URL
    public private(set) var fileDescriptor: Int32
    private var committed = false

    public init(destination: URL, overwrite: Bool) throws {
        self.destination = destination
        let directory = destination.deletingLastPathComponent()
        if FileKind.of(destination.path) == .folder {
            throw OutputError.cannotCreate(path: destination.path, reason: "it is a folder; name the file to write in it")
        }
        if !overwrite && FileManager.default.fileExists(atPath: destination.path) {
            throw OutputError.exists(path: destination.path)
        }
        // The pid in the name lets a later run remove what a killed one left (StorePlacement.removeStaleTemporaries).
        let suffix = ".questbak-\(getpid())-XXXXXX"
        var name = destination.lastPathComponent
        // A name near NAME_MAX (255 bytes) leaves no room for the dot and the suffix: the
        // temporary name keeps as much of it as fits, whole characters only.
        while 1 + name.utf8.count + suffix.utf8.count > 255 { name.removeLast() }
        var template = Array(directory.appendingPathComponent("." + name + suffix).path.utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0 else {
            throw OutputError.cannotCreate(path: destination.path, reason: String(cString: strerror(errno)))
        }
        fileDescriptor = descriptor
        temporaryURL = URL(fileURLWithPath: String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        fchmod(descriptor, 0o644)
        TemporaryFiles.created(temporaryURL.path)
    }

    deinit {
        if !committed { abandon() }
    }

    /// Makes the file durable and visible under its final name.
    public func commit() throws {
        guard !committed else { return }
        guard Durability.sync(fileDescriptor) else {
            throw OutputError.io(path: destination.path, reason: "fsync: " + String(cString: strerror(errno)))
        }
        close(fileDescriptor)
        fileDescriptor = -1
        guard rename(temporaryURL.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            abandon()
            throw OutputError.io(path: destination.path, reason: "rename: \(reason)")
        }
        committed = true
        TemporaryFiles.removed(temporaryURL.path)
        Durability.syncDirectory(of: destination)
    }

    public func abandon() {
        if fileDescriptor >= 0 { close(fileDescriptor) }
        fileDescriptor = -1
        unlink(temporaryURL.path)
        TemporaryFiles.removed(temporaryURL.path)
    }
}

/// Why an output cannot be written.
public enum OutputError: Error, Equatable, LocalizedError {
    /// The output exists, and replacing it was not asked for.
    case exists(path: String)
    /// It cannot be created there (a folder, no permission, a missing folder).
    case cannotCreate(path: String, reason: String)
    /// Writing it failed in the operating system.
    case io(path: String, reason: String)

    /// The sentence that says why, naming the output.
    public var errorDescription: String? {
        switch self {
        case .exists(let path): return "\(path) already exists"
        case .cannotCreate(let path, let reason): return "\(path): cannot create: \(reason)"
        case .io(let path, let reason): return "\(path): \(reason)"
        }
    }
}

package enum Durability {
    /// Makes what was written to `descriptor` durable; false when the system refused. On Darwin
    /// fsync reaches only the drive's cache, and F_FULLFSYNC asks the drive to write it out (what
    /// Apple advises for data that must survive a power loss); a file system without it falls
    /// back to fsync.
    static func sync(_ descriptor: Int32) -> Bool {
        #if canImport(Darwin)
            if fcntl(descriptor, F_FULLFSYNC) == 0 { return true }
        #endif
        return fsync(descriptor) == 0
    }

    /// The SQLite settings of a connection that writes a store: every commit synced, and on
    /// Darwin synced to the drive (SQLite's `fullfsync`, for commits and checkpoints alike).
    package static let sqlitePragmas: [String] = {
        #if canImport(Darwin)
            return ["PRAGMA synchronous = FULL", "PRAGMA fullfsync = ON", "PRAGMA checkpoint_fullfsync = ON"]
        #else
            return ["PRAGMA synchronous = FULL"]
        #endif
    }()

    /// A rename is durable only once its directory is synced.
    package static func syncDirectory(of url: URL) {
        let directory = open(url.deletingLastPathComponent().path, O_RDONLY)
        if directory >= 0 {
            _ = sync(directory)
            close(directory)
        }
    }
}
