import CoreDataStore
import Foundation
import GRDB
import XCTest

/// The connections questbak opens beside each other on one private file (the read-back proof,
/// the merge's checks, the merge attaching the restored archive) wait for each other's brief
/// locks instead of failing. A merge under load failed with "database is locked" when two of
/// them opened a WAL file at once.
final class BesideConnectionsTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("questbak-beside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A file with some rows, in the journal mode given; its connection closed.
    private func makeFile(_ name: String, journalMode: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = \(journalMode)")
            try db.execute(sql: "CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
            try db.inTransaction {
                for n in 0..<500 { try db.execute(sql: "INSERT INTO t (b) VALUES (?)", arguments: ["row \(n)"]) }
                return .commit
            }
        }
        try queue.close()
        return path
    }

    /// Another connection holds the file's exclusive lock for a moment: the integrity check
    /// (and every connection of the same configuration) waits for it. GRDB's default gave up at
    /// once, which this asserts too, so the test shows the lock was held while it asked.
    func testABesideConnectionWaitsForAnotherConnectionsLock() throws {
        let path = try makeFile("locked.sqlite", journalMode: "DELETE")
        let holder = try DatabaseQueue(path: path)
        let locked = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        Thread {
            try? holder.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN EXCLUSIVE")
                locked.signal()
                Thread.sleep(forTimeInterval: 0.4)
                try db.execute(sql: "COMMIT")
            }
            released.signal()
        }.start()
        locked.wait()
        var immediate = Configuration()
        immediate.readonly = true
        XCTAssertThrowsError(
            try DatabaseQueue(path: path, configuration: immediate).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") }
        ) {
            XCTAssertEqual(($0 as? DatabaseError)?.resultCode, .SQLITE_BUSY, "\($0)")
        }
        XCTAssertTrue(try StoreReader.passesIntegrityCheck(path: path))
        released.wait()
    }

    /// Many connections of the configuration open a WAL file with frames and no index at the same
    /// moment, again and again: every one of them reads every row.
    func testBesideConnectionsOpeningAWALFileAtOnceAllRead() throws {
        let original = try makeFile("wal.sqlite", journalMode: "WAL")
        // Frames in the WAL that the close would otherwise have checkpointed: a writer kept open
        // while the files are copied.
        let writer = try DatabaseQueue(path: original)
        try writer.write { db in try db.execute(sql: "UPDATE t SET b = b || '!' WHERE a % 2 = 0") }
        let readers = 6
        for round in 0..<12 {
            let copy = folder.appendingPathComponent("copy-\(round).sqlite").path
            for suffix in ["", "-wal"] { try FileManager.default.copyItem(atPath: original + suffix, toPath: copy + suffix) }
            let counts = ConcurrentCounts()
            let start = DispatchSemaphore(value: 0)
            let group = DispatchGroup()
            for _ in 0..<readers {
                group.enter()
                Thread {
                    start.wait()
                    counts.add(
                        Result {
                            let queue = try DatabaseQueue(path: copy, configuration: StoreReader.besideConfiguration(readonly: true))
                            defer { try? queue.close() }
                            return try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t WHERE b LIKE '%!'") ?? -1 }
                        })
                    group.leave()
                }.start()
            }
            for _ in 0..<readers { start.signal() }
            group.wait()
            XCTAssertEqual(try counts.all(), Array(repeating: 250, count: readers), "round \(round)")
        }
        try writer.close()
    }
}

/// Results gathered from several threads.
private final class ConcurrentCounts: @unchecked Sendable {
    // @unchecked: `results` is only touched under `lock`.
    private let lock = NSLock()
    private var results: [Result<Int, Error>] = []

    func add(_ result: Result<Int, Error>) { lock.withLock { results.append(result) } }

    func all() throws -> [Int] { try lock.withLock { try results.map { try $0.get() } } }
}
