import CoreDataStore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Differ {
    /// The hashes of one table's well-formed cloudIDs, in the order they were loaded, kept in an
    /// unnamed temporary file (gone when the log is): what `Comparison.everyRecordHasItsOwn`
    /// reads a second time, so that the decision needs no row of the table. A table loaded thin
    /// holds none (`Loader.thin`), and memory holds at most one buffer of hashes, at any size.
    final class HashLog {
        private let file: UnsafeMutablePointer<FILE>
        private(set) var count = 0
        /// Hashes read or written at a time.
        private static let chunk = 8192

        /// A file in the process's temporary folder (`NSTemporaryDirectory()`, which honours
        /// `TMPDIR` and is an app's own folder in a sandbox), unlinked at once: not `tmpfile()`,
        /// which writes where the C library decides (`/tmp`, or `/var/tmp` on Darwin, which an
        /// app's sandbox does not let it write).
        init() throws {
            let directory = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
            var template = Array(directory.appendingPathComponent("questbak-hashes-\(getpid())-XXXXXX").path.utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1 }
            guard descriptor >= 0 else { throw Self.failure("cannot make", directory.path) }
            unlink(template)
            guard let file = fdopen(descriptor, "w+") else {
                close(descriptor)
                throw Self.failure("cannot open", directory.path)
            }
            self.file = file
        }

        deinit { fclose(file) }

        func append(contentsOf hashes: [UInt64]) throws {
            guard !hashes.isEmpty else { return }
            let written = hashes.withUnsafeBufferPointer { fwrite($0.baseAddress, 8, $0.count, file) }
            guard written == hashes.count else { throw failure("cannot write") }
            count += hashes.count
        }

        /// Each hash, in the order appended.
        func forEachHash(_ body: (UInt64) throws -> Void) throws {
            guard fflush(file) == 0, fseek(file, 0, SEEK_SET) == 0 else { throw failure("cannot read") }
            // Appends go on at the end (`fwrite` writes where the position is).
            defer { fseek(file, 0, SEEK_END) }
            var buffer = [UInt64](repeating: 0, count: Self.chunk)
            var left = count
            while left > 0 {
                let read = buffer.withUnsafeMutableBufferPointer { fread($0.baseAddress, 8, min(left, Self.chunk), file) }
                guard read > 0 else { throw failure("cannot read") }
                for index in 0..<read { try body(buffer[index]) }
                left -= read
            }
        }

        private func failure(_ what: String) -> StoreError { Self.failure(what, NSTemporaryDirectory()) }

        private static func failure(_ what: String, _ directory: String) -> StoreError {
            StoreError.io(path: directory, reason: "\(what) a temporary file of cloudID hashes: \(String(cString: strerror(errno)))")
        }
    }
}
