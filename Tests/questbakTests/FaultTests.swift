import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

/// Faults from outside while questbak works: a full disk, a store another process writes to or
/// holds locked, files of the wrong kind. Each ends in a clean error and a documented status,
/// with source and target unchanged and nothing half-written.
final class FaultTests: XCTestCase {
    /// A 1 MiB file system, when this machine lets the tests mount one (root in a container with
    /// CAP_SYS_ADMIN); otherwise `prlimit --fsize` gives questbak the same wall to hit.
    struct SmallDisk {
        let url: URL
        let mounted: Bool
        var limit: [String] { mounted ? [] : ["prlimit", "--fsize=1048576"] }

        init(in directory: TemporaryTestDirectory) throws {
            url = directory.path("small-disk")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            mounted =
                getuid() == 0
                && (try? Questbak.runProcess("/usr/bin/env", ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", url.path])) == 0
        }

        func unmount() {
            if mounted { _ = try? Questbak.runProcess("/usr/bin/env", ["umount", url.path]) }
        }
    }

    func bulkStore(_ directory: TemporaryTestDirectory, estimations: Int) throws -> URL {
        let store = directory.path("big/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        let generator = Questbak.executable.deletingLastPathComponent().appendingPathComponent("questbak-fixtures")
        XCTAssertEqual(try Questbak.runProcess(generator.path, ["--bulk", String(estimations), store.path]), 0)
        return store
    }

    func testAFullDiskDuringExportAndImportLeavesNothingHalfWritten() throws {
        let directory = try TemporaryTestDirectory()
        let store = try bulkStore(directory, estimations: 30_000)
        let disk = try SmallDisk(in: directory)
        defer { disk.unmount() }
        let sourceBefore = try DirectoryState(of: store.deletingLastPathComponent())

        let export = try Questbak.run(
            ["export", store.path, "-o", disk.url.appendingPathComponent("b.qbak").path, "--compression", "none"], prefix: disk.limit)
        XCTAssertEqual(export.status, 74, export.standardError)
        XCTAssertTrue(
            export.standardError.contains("No space left on device") || export.standardError.contains("too large"), export.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk.url.path), [], "no partial archive, no temporary file")

        let archive = directory.path("b.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
        let target = disk.url.appendingPathComponent("restored.store")
        try Data("existing".utf8).write(to: target)
        let imported = try Questbak.run(["import", archive.path, "--into", target.path, "--replace"], prefix: disk.limit)
        XCTAssertEqual(imported.status, 74, imported.standardError)
        XCTAssertTrue(imported.standardError.contains("full") || imported.standardError.contains("too large"), imported.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: disk.url.path), ["restored.store"])
        XCTAssertEqual(try Data(contentsOf: target), Data("existing".utf8))
        XCTAssertEqual(try DirectoryState(of: store.deletingLastPathComponent()), sourceBefore)
    }

    /// A second process commits a routine and its task in one transaction, again and again,
    /// while the export runs: the archive must hold whole transactions only.
    func testAStoreChangingDuringExportGivesAConsistentSnapshot() throws {
        let directory = try TemporaryTestDirectory()
        let store = try bulkStore(directory, estimations: 60_000)
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        writer.arguments = [
            "python3", "-c",
            """
            import sqlite3, time
            db = sqlite3.connect('\(store.path)', isolation_level=None)
            db.execute('PRAGMA journal_mode=WAL')
            deadline = time.time() + 8
            n = 0
            while time.time() < deadline and n < 4000:
                n += 1
                db.execute('BEGIN IMMEDIATE')
                db.execute("INSERT INTO ZROUTINE (Z_PK, Z_ENT, Z_OPT, ZNAME, ZDISPLAYNAME, ZISACTIVE, ZCREATEDAT, ZUPDATEDAT, ZCLOUDID) VALUES (?, 3, 1, ?, 'w', 1, 0, 0, ?)", (100000 + n, 'writer_%d' % n, '00000000-0000-4000-8000-%012d' % n))
                db.execute("INSERT INTO ZROUTINETASK (Z_PK, Z_ENT, Z_OPT, ZNAME, ZDISPLAYNAME, ZORDERINDEX, ZROUTINE, ZCLOUDID) VALUES (?, 4, 1, ?, 't', 0, ?, ?)", (100000 + n, 'writer_%d' % n, 100000 + n, '00000000-0000-4000-9000-%012d' % n))
                db.execute('COMMIT')
                if n == 1:
                    print('committed', flush=True)
                time.sleep(0.002)
            """,
        ]
        // The export starts once the writer has committed its first transaction (a fixed wait
        // was too short for python to start on a busy machine, and then the snapshot held none),
        // and the writer is stopped once the export is done: what it writes later is never read.
        let committed = Pipe()
        writer.standardOutput = committed
        try writer.run()
        let firstLine = String(decoding: committed.fileHandleForReading.availableData, as: UTF8.self)
        XCTAssertTrue(firstLine.hasPrefix("committed"), "the writer stopped before its first commit: \(firstLine)")
        let archive = directory.path("during.qbak")
        let export = try Questbak.run(["export", store.path, "-o", archive.path, "--compression", "none", "--json"])
        writer.terminate()
        writer.waitUntilExit()
        XCTAssertEqual(export.status, 0, export.standardError)
        let routines = try Questbak.runTool(["tar", "-xOf", archive.path, "entities/Routine.jsonl"]).standardOutput
        let tasks = try Questbak.runTool(["tar", "-xOf", archive.path, "entities/RoutineTask.jsonl"]).standardOutput
        let writtenRoutines = routines.split(separator: "\n").filter { $0.contains("\"name\":\"writer_") }.count
        let writtenTasks = tasks.split(separator: "\n").filter { $0.contains("\"name\":\"writer_") }.count
        XCTAssertGreaterThan(writtenRoutines, 0, "the writer ran before the snapshot")
        XCTAssertEqual(writtenRoutines, writtenTasks, "a transaction was cut in half")
        let validation = try Questbak.run(["import", archive.path, "--validate", "--json"])
        let counts = (try JSONSerialization.jsonObject(with: validation.outputData) as? [String: Any])?["counts"] as? [String: Int]
        XCTAssertNil(counts?["repair.orphan"], "every task's routine is in the snapshot: \(String(describing: counts))")
    }

    func testAStoreHeldByAnotherWriterIsNotReplaced() throws {
        let directory = try TemporaryTestDirectory()
        let target = try directory.copyFixture("v2-typical")
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", target.path, "-o", archive.path, "-q"]).status, 0)
        // Another process keeps a write transaction open on the store, as a running app could.
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            """
            import sqlite3, sys, time
            db = sqlite3.connect('\(target.path)', isolation_level=None)
            db.execute('PRAGMA journal_mode=WAL')
            db.execute('BEGIN IMMEDIATE')
            db.execute('UPDATE ZPLAYERPROFILE SET ZTOTALXP = ZTOTALXP + 1')
            print('locked', flush=True)
            time.sleep(6)
            db.execute('ROLLBACK')
            """,
        ]
        let ready = Pipe()
        holder.standardOutput = ready
        try holder.run()
        _ = ready.fileHandleForReading.availableData  // "locked"
        let before = files(target)
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--replace"])
        XCTAssertEqual(result.status, 75, result.standardError)
        XCTAssertTrue(
            result.standardError.contains("in use by another process") || result.standardError.contains("locked"), result.standardError)
        XCTAssertEqual(files(target).first, before.first, "the main file is untouched")
        // Export needs no lock: it reads a copy.
        XCTAssertEqual(try Questbak.run(["export", target.path, "-o", directory.path("b.qbak").path, "-q"]).status, 0)
        holder.terminate()
        holder.waitUntilExit()
    }

    /// An app that merely has the store open (no transaction) would go on writing to the old
    /// files after a replace; questbak sees its open -wal and refuses.
    func testAStoreOpenInAnIdleConnectionIsNotReplaced() throws {
        let directory = try TemporaryTestDirectory()
        let target = try directory.copyFixture("v1-wal")
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        holder.arguments = [
            "python3", "-c",
            """
            import sqlite3, time
            db = sqlite3.connect('\(target.path)')
            db.execute('SELECT count(*) FROM ZROUTINE').fetchall()
            print('open', flush=True)
            time.sleep(6)
            """,
        ]
        let ready = Pipe()
        holder.standardOutput = ready
        try holder.run()
        _ = ready.fileHandleForReading.availableData
        let result = try Questbak.run(["import", archive.path, "--into", target.path, "--replace"])
        XCTAssertEqual(result.status, 75, result.standardError)
        XCTAssertTrue(result.standardError.contains("in use by another process"), result.standardError)
        XCTAssertEqual(
            try Questbak.runTool(["sqlite3", "file:\(target.path)?mode=ro", "SELECT count(*) FROM ZTASKESTIMATION"]).standardOutput, "8\n")
        holder.terminate()
        holder.waitUntilExit()
    }

    func testATargetDirectoryWithoutWritePermissionIsRefusedUpFront() throws {
        let directory = try TemporaryTestDirectory()
        let archive = directory.path("a.qbak")
        XCTAssertEqual(try Questbak.run(["export", try directory.copyFixture("v1-typical").path, "-o", archive.path, "-q"]).status, 0)
        let locked = directory.path("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o555])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.url.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: archive.path)
        let result = try Questbak.run(
            ["import", archive.path, "--into", locked.appendingPathComponent("new.store").path], prefix: Questbak.unprivileged)
        XCTAssertEqual(result.status, 73, result.standardError)
        XCTAssertTrue(result.standardError.contains("is not writable"), result.standardError)
    }

    func testStoresOfTheWrongKindGetClearErrors() throws {
        let directory = try TemporaryTestDirectory()
        let v3 = try directory.copyFixture("v2-typical")
        try DatabaseQueue(path: v3.path).write { db in
            let plist = try XCTUnwrap(Data.fetchOne(db, sql: "SELECT Z_PLIST FROM Z_METADATA"))
            // The binary plist holds "2.0.0" once, as a five-byte ASCII string.
            XCTAssertTrue(String(decoding: plist, as: UTF8.self).contains("2.0.0"))
            var bytes = [UInt8](plist)
            let needle = Array("2.0.0".utf8)
            let index = try XCTUnwrap((0...(bytes.count - needle.count)).first { Array(bytes[$0..<$0 + needle.count]) == needle })
            bytes[index] = UInt8(ascii: "3")
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [Data(bytes)])
        }
        let newer = try Questbak.run(["export", v3.path, "-o", directory.path("v3.qbak").path])
        XCTAssertEqual(newer.status, 69, newer.standardError)
        XCTAssertTrue(
            newer.standardError.contains(
                "schema version 3.0.0 is not supported by this questbak (supported: 1.0.0, 2.0.0); upgrade questbak"), newer.standardError)
        let migrate = try Questbak.run(["migrate", v3.path, "-o", directory.path("m.store").path])
        XCTAssertEqual(migrate.status, 69, migrate.standardError)

        let text = directory.path("notes.store")
        try Data("hello".utf8).write(to: text)
        let notSQLite = try Questbak.run(["export", text.path, "-o", directory.path("t.qbak").path])
        XCTAssertEqual(notSQLite.status, 65, notSQLite.standardError)
        XCTAssertTrue(notSQLite.standardError.contains("notes.store is not a store: it is not a SQLite file"), notSQLite.standardError)

        let plain = directory.path("plain.sqlite")
        try DatabaseQueue(path: plain.path).write { try $0.execute(sql: "CREATE TABLE notes (body TEXT)") }
        let notCoreData = try Questbak.run(["export", plain.path, "-o", directory.path("p.qbak").path])
        XCTAssertEqual(notCoreData.status, 65, notCoreData.standardError)
        XCTAssertTrue(
            notCoreData.standardError.contains("not a Core Data / SwiftData store (missing tables Z_PRIMARYKEY, Z_METADATA)"),
            notCoreData.standardError)
        for name in ["v3.qbak", "t.qbak", "p.qbak", "m.store"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path(name).path), name)
        }
    }

    func files(_ store: URL) -> [Data?] {
        ["", "-wal"].map { try? Data(contentsOf: URL(fileURLWithPath: store.path + $0)) }
    }
}
