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

        init() throws {
            guard let file = tmpfile() else {
                throw StoreError.io(
                    path: NSTemporaryDirectory(), reason: "cannot make a temporary file: \(String(cString: strerror(errno)))")
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

        private func failure(_ what: String) -> StoreError {
            StoreError.io(
                path: NSTemporaryDirectory(), reason: "\(what) a temporary file of cloudID hashes: \(String(cString: strerror(errno)))")
        }
    }
}
