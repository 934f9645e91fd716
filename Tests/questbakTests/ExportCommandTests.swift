import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures

final class ExportCommandTests: XCTestCase {
    let fixtures = ["v1-typical", "v1-edge-cases", "v1-anomalies", "v1-wal", "v2-typical"]

    /// Extracts with the system tar and its decompressor, as a user would.
    func extract(_ archive: URL, into directory: URL, compression: String = "zstd") throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let flag = ["zstd": ["--zstd"], "gzip": ["-z"], "none": []][compression]!
        XCTAssertEqual(
            try Questbak.runProcess("/usr/bin/env", ["tar"] + flag + ["-xf", archive.path, "-C", directory.path]), 0,
            "tar -xf \(archive.path)")
    }

    /// Every record of every fixture, compared field by field with the store by
    /// Scripts/check-archive.py, which shares no code with questbak.
    func testEveryFixtureExportsFieldByFieldEqualToTheStore() throws {
        for name in fixtures {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(name)
            let archive = directory.path("backup.qbak")
            let result = try Questbak.run(["export", store.path, "-o", archive.path])
            XCTAssertEqual(result.status, 0, result.standardError)
            let extracted = directory.path("extracted")
            try extract(archive, into: extracted)
            let storeCopy = directory.path("copy")
            try FileManager.default.copyItem(at: store.deletingLastPathComponent(), to: storeCopy)
            let check = try Questbak.runTool([
                "python3", Repository.root.appendingPathComponent("Scripts/check-archive.py").path, extracted.path,
                storeCopy.appendingPathComponent("default.store").path,
            ])
            XCTAssertEqual(check.status, 0, "\(name): \(check.standardOutput)\(check.standardError)")
            XCTAssertEqual(
                check.standardOutput.components(separatedBy: " passed, 0 failed").count - 1, 5, "\(name): \(check.standardOutput)")
        }
    }

    func testManifestAndMembersFollowTheFormat() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-wal")
        let archive = directory.path("backup.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "--created-at", "2026-01-31T12:00:00Z"]).status, 0)
        let listing = try Questbak.runTool(["tar", "--zstd", "-tvf", archive.path])
        let names = listing.standardOutput.split(separator: "\n").map { String($0.split(separator: " ").last!) }
        XCTAssertEqual(
            names,
            [
                "manifest.json", "entities/GameSession.jsonl", "entities/PlayerProfile.jsonl", "entities/Routine.jsonl",
                "entities/RoutineTask.jsonl", "entities/TaskEstimation.jsonl", "store/metadata.plist", "store/modelcache.bin",
            ])
        XCTAssertTrue(listing.standardOutput.contains("2026-01-31 12:00"), listing.standardOutput)
        let extracted = directory.path("x")
        try extract(archive, into: extracted)
        let manifest = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: extracted.appendingPathComponent("manifest.json"))) as? [String: Any])
        XCTAssertEqual(manifest["format"] as? String, "questbak-archive")
        XCTAssertEqual(manifest["formatVersion"] as? Int, 2)
        XCTAssertEqual(manifest["schemaVersion"] as? String, "1.0.0")
        XCTAssertEqual(manifest["createdAt"] as? String, "2026-01-31T12:00:00Z")
        XCTAssertEqual((manifest["tool"] as? [String: Any])?["name"] as? String, "questbak")
        let source = try XCTUnwrap(manifest["source"] as? [String: Any])
        XCTAssertEqual(source["storeUUID"] as? String, "3C0A9E61-0D4E-4C5B-9B53-6E1F0F1A0004")
        XCTAssertEqual(source["versionIdentifiers"] as? [String], ["1.0.0"])
        XCTAssertEqual(source["walFrames"] as? Int, 9)
        let entities = try XCTUnwrap(manifest["entities"] as? [[String: Any]])
        let estimations = try XCTUnwrap(entities.first { $0["name"] as? String == "TaskEstimation" })
        XCTAssertEqual(estimations["count"] as? Int, 8, "the WAL's rows are in the archive")
        XCTAssertEqual(estimations["maximumPrimaryKey"] as? Int, 8)
        let lines = try String(contentsOf: extracted.appendingPathComponent("entities/TaskEstimation.jsonl"), encoding: .utf8).split(
            separator: "\n")
        XCTAssertEqual(lines.first, #"{"schemaVersion":"1.0.0","entity":"TaskEstimation","count":8}"#)
        XCTAssertEqual(lines.count, 9)
        // The metadata travels byte for byte, so a restore gives the app the same model hashes.
        let storedPlist = try DatabaseQueue(path: store.path).read { try Data.fetchOne($0, sql: "SELECT Z_PLIST FROM Z_METADATA") }
        XCTAssertEqual(try Data(contentsOf: extracted.appendingPathComponent("store/metadata.plist")), storedPlist)
    }

    func testExportsAreByteIdenticalForEveryCompression() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        for compression in ["zstd", "gzip", "none"] {
            var archives: [Data] = []
            for run in 0..<2 {
                let archive = directory.path("\(compression)-\(run).qbak")
                let result = try Questbak.run(
                    ["export", store.path, "-o", archive.path, "--compression", compression, "-q"],
                    environment: ["SOURCE_DATE_EPOCH": "1767225600"])
                XCTAssertEqual(result.status, 0, result.standardError)
                XCTAssertEqual(result.standardOutput, "", "--quiet prints nothing")
                archives.append(try Data(contentsOf: archive))
                if run == 0 {
                    let extracted = directory.path("\(compression)-x")
                    try extract(archive, into: extracted, compression: compression)
                    XCTAssertTrue(FileManager.default.fileExists(atPath: extracted.appendingPathComponent("entities/Routine.jsonl").path))
                }
            }
            XCTAssertEqual(archives[0], archives[1], "two \(compression) exports differ")
        }
        XCTAssertNotEqual(try Data(contentsOf: directory.path("zstd-0.qbak")), try Data(contentsOf: directory.path("gzip-0.qbak")))
    }

    func testStandardOutputCarriesTheSameArchive() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let file = directory.path("file.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", file.path, "--created-at", "2026-02-01T00:00:00Z", "-q"]).status, 0)
        let piped = try Questbak.run(["export", store.path, "-o", "-", "--created-at", "2026-02-01T00:00:00Z"])
        XCTAssertEqual(piped.status, 0, piped.standardError)
        XCTAssertEqual(piped.outputData, try Data(contentsOf: file))
        XCTAssertTrue(piped.standardError.contains("exported TimeQuest 1.0.0 store"), "the summary goes to stderr: \(piped.standardError)")
        let inspected = try Questbak.run(["inspect", "-", "--json"], input: piped.outputData)
        XCTAssertEqual(inspected.status, 0, inspected.standardError)
    }

    func testTheSourceIsLeftByteIdenticalAlsoInAReadOnlyDirectory() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-wal")
        let folder = store.deletingLastPathComponent()
        try directory.makeReadOnly(folder)
        let output = directory.path("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        let before = try DirectoryState(of: folder)
        let result = try Questbak.run(
            ["export", store.path, "-o", output.appendingPathComponent("b.qbak").path, "--json"], prefix: Questbak.unprivileged)
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(summary["walFrames"] as? Int, 9)
        XCTAssertEqual(try DirectoryState(of: folder), before)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: output.path), ["b.qbak"])
    }

    /// On a terminal (here a pseudo-terminal from `script`) stderr shows a progress bar per
    /// entity; redirected, it stays silent.
    func testAProgressBarOnlyOnATerminal() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let command = "\(Questbak.executable.path) export \(store.path) -o \(directory.path("tty.qbak").path) 2>&1 >/dev/null"
        let onTerminal = try Questbak.runTool(["script", "-qec", command, "/dev/null"])
        XCTAssertEqual(onTerminal.status, 0, onTerminal.standardOutput)
        XCTAssertTrue(
            onTerminal.standardOutput.contains("TaskEstimation [##############################] 36/36"), onTerminal.standardOutput)
        let redirected = try Questbak.run(["export", store.path, "-o", directory.path("plain.qbak").path])
        XCTAssertEqual(redirected.standardError, "")
    }

    func testAnExistingOutputIsRefusedWithoutForce() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        let archive = directory.path("b.qbak")
        try Data("precious".utf8).write(to: archive)
        let refused = try Questbak.run(["export", store.path, "-o", archive.path])
        XCTAssertEqual(refused.status, 73)
        XCTAssertTrue(refused.standardError.contains("already exists (use --force"), refused.standardError)
        XCTAssertEqual(try Data(contentsOf: archive), Data("precious".utf8))
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "--force", "-q"]).status, 0)
        XCTAssertEqual(try Questbak.run(["inspect", archive.path]).status, 0)
    }

    func testAnInterruptedExportLeavesNoPartialFile() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("big.store")
        XCTAssertEqual(
            try Questbak.runProcess(
                Questbak.executable.deletingLastPathComponent().appendingPathComponent("questbak-fixtures").path,
                ["--bulk", "60000", store.path]), 0)
        for delay in [0.3, 0.8] {
            let output = directory.path("out-\(delay)")
            try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = Questbak.executable
            process.arguments = ["export", store.path, "-o", output.appendingPathComponent("b.qbak").path, "-q"]
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            process.terminate()
            process.waitUntilExit()
            let left = try FileManager.default.contentsOfDirectory(atPath: output.path)
            if process.terminationReason == .uncaughtSignal {
                XCTAssertEqual(left, [], "an interrupted export left \(left)")
            } else {
                // It finished before the signal: then the archive must be complete.
                XCTAssertEqual(left, ["b.qbak"])
                XCTAssertEqual(try Questbak.run(["inspect", output.appendingPathComponent("b.qbak").path]).status, 0)
            }
        }
    }

    func testAnotherAppsStoreIsExportedGenerically() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("other.store")
        try Questbak.makeForeignStore(at: store)
        let archive = directory.path("other.qbak")
        let result = try Questbak.run(["export", store.path, "-o", archive.path, "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let summary = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        XCTAssertEqual(summary["schema"] as? String, "generic")
        XCTAssertEqual(summary["schemaVersion"] as? String, "7.1")
        let extracted = directory.path("x")
        try extract(archive, into: extracted)
        let lines = try String(contentsOf: extracted.appendingPathComponent("entities/Item.jsonl"), encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(
            lines,
            [
                #"{"schemaVersion":"7.1","entity":"Item","count":2}"#,
                #"{"_pk":1,"Z_ENT":1,"Z_OPT":1,"ZCRAFTINGRECIPE":3,"ZNAME":"Anise"}"#,
                #"{"_pk":2,"Z_ENT":1,"Z_OPT":2,"ZCRAFTINGRECIPE":null,"ZNAME":"Grapefruit"}"#,
            ])
    }

    /// A row whose Z_ENT is not its entity's would be left out by an entity-filtered read.
    func testRowsWithAStrayEntityNumberAreNamedNotDropped() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "UPDATE ZROUTINE SET Z_ENT = 0 WHERE Z_PK = 2") }
        let result = try Questbak.run(["export", store.path, "-o", directory.path("b.qbak").path])
        XCTAssertEqual(result.status, 65)
        XCTAssertTrue(result.standardError.contains("ZROUTINE: 1 row with Z_ENT other than 3 (Routine)"), result.standardError)
    }

    func testHostileNamesInAnotherAppsStoreAreRefused() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("other.store")
        try Questbak.makeForeignStore(at: store)
        try DatabaseQueue(path: store.path).write { db in
            try db.execute(sql: "UPDATE Z_PRIMARYKEY SET Z_NAME = '../../x' WHERE Z_ENT = 1")
            try db.execute(sql: #"ALTER TABLE ZITEM RENAME TO "Z../../X""#)
        }
        let result = try Questbak.run(["export", store.path, "-o", directory.path("b.qbak").path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("entity name \"../../x\" is not a plain identifier"), result.standardError)
    }

    func testATimeQuestStoreInTheWrongShapeIsRefusedNotExportedGenerically() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        try DatabaseQueue(path: store.path).write { try $0.execute(sql: "ALTER TABLE ZROUTINE DROP COLUMN ZNAME") }
        let result = try Questbak.run(["export", store.path, "-o", directory.path("b.qbak").path])
        XCTAssertEqual(result.status, 65)
        XCTAssertTrue(result.standardError.contains("ZROUTINE: missing column ZNAME (Routine.name)"), result.standardError)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("b.qbak").path))
    }

    /// A SOURCE_DATE_EPOCH the manifest cannot hold is refused by name before the store is read;
    /// Int64.min crashed the exporter once, and a year past 9999 wrote `"createdAt": ""`.
    func testAnOutOfRangeSourceDateEpochIsRefusedBeforeAnyWork() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v1-typical")
        for epoch in ["-9223372036854775808", "9223372036854775807", "253402300800", "soon"] {
            let archive = directory.path("epoch.qbak")
            let result = try Questbak.run(["export", store.path, "-o", archive.path], environment: ["SOURCE_DATE_EPOCH": epoch])
            XCTAssertEqual(result.status, 64, "\(epoch): \(result.standardError)")
            XCTAssertTrue(
                result.standardError.contains("SOURCE_DATE_EPOCH must be whole seconds since 1970 within years 0001–9999"),
                result.standardError)
            XCTAssertFalse(FileManager.default.fileExists(atPath: archive.path), epoch)
        }
    }
}

extension Questbak {
    /// A small Core Data store of another app (the spec's ZITEM example), written with plain SQL.
    static func makeForeignStore(at url: URL) throws {
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE ZITEM ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCRAFTINGRECIPE INTEGER, ZNAME VARCHAR );
                    CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
                    CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
                    INSERT INTO ZITEM VALUES (1, 1, 1, 3, 'Anise'), (2, 1, 2, NULL, 'Grapefruit');
                    INSERT INTO Z_PRIMARYKEY VALUES (1, 'Item', 0, 2);
                    """)
            // A binary plist: {NSStoreModelVersionIdentifiers: ["7.1"], NSStoreType: "SQLite"}, made with Python's plistlib.
            let plist = Data(
                base64Encoded:
                    "YnBsaXN0MDDSAQIDBV8QHk5TU3RvcmVNb2RlbFZlcnNpb25JZGVudGlmaWVyc1tOU1N0b3JlVHlwZaEEUzcuMVZTUUxpdGUIDS46PEAAAAAAAAABAQAAAAAAAAAGAAAAAAAAAAAAAAAAAAAARw=="
            )!
            try db.execute(sql: "INSERT INTO Z_METADATA VALUES (1, 'FOREIGN-UUID', ?)", arguments: [plist])
        }
    }
}
