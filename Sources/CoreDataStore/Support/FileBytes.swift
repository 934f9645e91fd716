import CLibcExtras
import Foundation

/// A file's bytes compared with another's, or copied into a new file: one comparison for the
/// places that ask (an external-storage file already in place, and `diff`'s two store snapshots),
/// one copy for the places that copy a whole store (a snapshot, a backup before a replace).
package enum FileBytes {
    /// Sizes first (a size that cannot be read, or two that differ: not the same), then a MiB
    /// at a time, so memory stays flat at any size; nil when either file cannot be opened (each
    /// caller says what that means for it).
    package static func same(_ first: String, _ second: String) throws -> Bool? {
        guard let firstSize = size(atPath: first), firstSize == size(atPath: second) else { return false }
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

extension FileBytes {
    /// A file's size as `FileManager.attributesOfItem` gives it (`lstat`: a symbolic link's own),
    /// nil when it cannot be examined; without the owner's and group's names that
    /// `attributesOfItem` looks up in /etc/passwd and /etc/group on every call.
    package static func size(atPath path: String) -> Int64? {
        FileFingerprint.entry(atPath: path)?.size
    }
}

extension FileBytes {
    /// Why a copy failed, and on which side: reading the source is the source's fault (a
    /// permission), writing the copy the destination's (a full disk, a file-size limit).
    package enum CopyFailure: Error, Equatable {
        case reading(errno: Int32)
        case writing(errno: Int32)

        /// The operating system's sentence for the error ("No space left on device").
        package var reason: String {
            switch self {
            case .reading(let code), .writing(let code): return String(cString: strerror(code))
            }
        }
    }

    /// Copies the bytes of `source` into a new file at `destination`, which must not exist, with
    /// `permissions`, or the source's own when nil (set after creating it, so that the umask does
    /// not narrow them). Nothing is synced: callers that need the copy durable sync it.
    ///
    /// Why not `FileManager.copyItem`: swift-corelibs-foundation copies through `sendfile` 4 KiB
    /// per call, 170,000 system calls for a 700 MB store, about three times as long as this loop
    /// of reads and writes a MiB at a time (docs/performance.md, "a store's copy").
    package static func copy(_ source: String, to destination: String, permissions: mode_t? = nil) throws(CopyFailure) {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .reading(errno: errno) }
        defer { close(input) }
        var status = stat()
        guard fstat(input, &status) == 0 else { throw .reading(errno: errno) }
        let mode = permissions ?? (status.st_mode & 0o7777)
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard output >= 0 else { throw .writing(errno: errno) }
        var failure: CopyFailure?
        if fchmod(output, mode) != 0 { failure = .writing(errno: errno) }
        if failure == nil { failure = copyInKernel(from: input, to: output) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ExternalStorage.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        copying: while failure == nil {
            let count = read(input, buffer.baseAddress, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                failure = .reading(errno: errno)
                break
            }
            if count == 0 { break }
            var written = 0
            while written < count {
                let step = write(output, buffer.baseAddress! + written, count - written)
                if step < 0 {
                    if errno == EINTR { continue }
                    failure = .writing(errno: errno)
                    break copying
                }
                written += step
            }
        }
        // A close that fails reports a write the file system could not keep (NFS, a quota).
        if close(output) != 0, failure == nil { failure = .writing(errno: errno) }
        if let failure {
            unlink(destination)
            throw failure
        }
    }

    /// Copies what `copy_file_range` will copy (Linux): the kernel moves the bytes from one file's
    /// pages to the other's, without the round trip through this process's buffer that `read`
    /// and `write` make (a 10 MB store: 5-7 ms of CPU with the loop, 4-5 ms with this). Both
    /// files' offsets advance by what was copied, so the loop after it goes on from there: when
    /// this stops early for any reason but the destination's own (a file system that cannot,
    /// an old kernel, a read error), the loop copies the rest and names the failure's side as
    /// before. Nil, or the write failure that no second try would cure.
    private static func copyInKernel(from input: Int32, to output: Int32) -> CopyFailure? {
        while true {
            let copied = questbak_copy_file_range(input, output, 1 << 30)
            if copied > 0 { continue }
            if copied == 0 { return nil }
            switch errno {
            case EINTR: continue
            case ENOSPC, EFBIG, EDQUOT: return .writing(errno: errno)
            default: return nil
            }
        }
    }
}
