import Foundation
import QuestBakTestSupport
import XCTest

/// `questbak locate`: the stores of a simulator tree (built here as Xcode lays it out) or any
/// folder, with their containers' identifiers, model versions and hashes, and WAL state; the
/// stores are left byte for byte as they were.
final class LocateCommandTests: XCTestCase {
    /// `Devices/<device>/data/Containers/{Data/Application,Shared/AppGroup}/<container>/`, each
    /// container with the metadata plist that names it.
    func makeSimulatorTree(in directory: TemporaryTestDirectory) throws -> (root: URL, stores: [String: URL]) {
        let root = directory.path("Devices")
        let containers = root.appendingPathComponent("5B1C2D3E-0000-4000-8000-000000000001/data/Containers")
        var stores: [String: URL] = [:]
        let layout: [(identifier: String, kind: String, fixture: String, folder: String)] = [
            ("com.example.timequest", "Data/Application", "v1-wal", "Library/Application Support"),
            ("com.example.other", "Data/Application", "v1-typical", "Library/Application Support"),
            ("group.com.example.shared", "Shared/AppGroup", "AnyApp/kitchen-sink", "Library/Application Support"),
        ]
        for (index, entry) in layout.enumerated() {
            let container = containers.appendingPathComponent(entry.kind).appendingPathComponent(
                "A0000000-0000-4000-8000-00000000000\(index)")
            let folder = container.appendingPathComponent(entry.folder)
            try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent(entry.fixture), to: folder)
            let plist = try PropertyListSerialization.data(
                fromPropertyList: ["MCMMetadataIdentifier": entry.identifier, "MCMMetadataContentClass": 2], format: .binary, options: 0)
            try plist.write(to: container.appendingPathComponent(".com.apple.mobile_container_manager.metadata.plist"))
            stores[entry.identifier] = folder.appendingPathComponent("default.store")
        }
        // A SQLite database that is not a store (a cache), and a link to a store outside the tree.
        let caches = containers.appendingPathComponent("Data/Application/A0000000-0000-4000-8000-000000000000/Library/Caches")
        try FileManager.default.createDirectory(at: caches, withIntermediateDirectories: true)
        try Questbak.runTool(["sqlite3", caches.appendingPathComponent("Cache.db").path, "CREATE TABLE cfurl_cache_response (x)"])
        let outside = directory.path("outside")
        try FileManager.default.copyItem(at: Repository.fixtures.appendingPathComponent("v2-typical"), to: outside)
        try FileManager.default.createSymbolicLink(at: caches.appendingPathComponent("linked"), withDestinationURL: outside)
        return (root, stores)
    }

    func testEveryStoreOfASimulatorTreeWithItsContainerModelAndWAL() throws {
        let directory = try TemporaryTestDirectory()
        let (root, stores) = try makeSimulatorTree(in: directory)
        let before = try stores.values.map { try DirectoryState(of: $0.deletingLastPathComponent()) }
        let result = try Questbak.run(["locate", "--in", root.path, "--json"])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(try stores.values.map { try DirectoryState(of: $0.deletingLastPathComponent()) }, before, "the stores changed")
        let document = try XCTUnwrap(JSONSerialization.jsonObject(with: result.outputData) as? [String: Any])
        let found = try XCTUnwrap(document["stores"] as? [[String: Any]])
        let byIdentifier = Dictionary(uniqueKeysWithValues: found.map { ($0["bundleIdentifier"] as? String ?? "", $0) })
        XCTAssertEqual(Set(byIdentifier.keys), Set(stores.keys), "the cache database and the linked store are not stores of the tree")
        for (identifier, store) in stores {
            XCTAssertEqual(byIdentifier[identifier]?["path"] as? String, store.path)
        }
        XCTAssertEqual(byIdentifier["group.com.example.shared"]?["container"] as? String, "app group")
        XCTAssertEqual(byIdentifier["com.example.timequest"]?["container"] as? String, "app")
        XCTAssertEqual(byIdentifier["com.example.timequest"]?["versionIdentifiers"] as? [String], ["1.0.0"])
        XCTAssertGreaterThan(byIdentifier["com.example.timequest"]?["walFrames"] as? Int ?? 0, 0, "v1-wal has frames in its WAL")
        XCTAssertEqual(byIdentifier["com.example.other"]?["walFrames"] as? Int, 0)
        // One physical model, one hash; another model, another.
        let timeQuest = byIdentifier["com.example.timequest"]?["modelHash"] as? String
        XCTAssertEqual(timeQuest?.count, 12)
        XCTAssertEqual(timeQuest, byIdentifier["com.example.other"]?["modelHash"] as? String)
        XCTAssertNotEqual(timeQuest, byIdentifier["group.com.example.shared"]?["modelHash"] as? String)

        let text = try Questbak.run(["locate", "--in", root.path, "--bundle-id", "com.example.timequest"])
        XCTAssertEqual(text.status, 0, text.standardError)
        XCTAssertTrue(text.standardOutput.hasPrefix(stores["com.example.timequest"]!.path + "\n"), text.standardOutput)
        XCTAssertTrue(
            text.standardOutput.contains("app com.example.timequest; version 1.0.0, model \(timeQuest ?? "")"), text.standardOutput)
        XCTAssertTrue(text.standardOutput.contains("frames not yet in the main file"), text.standardOutput)
        XCTAssertFalse(text.standardOutput.contains("com.example.other"), text.standardOutput)
    }

    /// A search that finds nothing says so and fails (66), as does a folder that is not there.
    func testNothingFoundIsAFailure() throws {
        let directory = try TemporaryTestDirectory()
        let (root, _) = try makeSimulatorTree(in: directory)
        let none = try Questbak.run(["locate", "--in", root.path, "--bundle-id", "com.example.absent"])
        XCTAssertEqual(none.status, 66, none.standardError)
        XCTAssertTrue(
            none.standardError.contains("no SwiftData or Core Data store in the container of com.example.absent"), none.standardError)
        let missing = try Questbak.run(["locate", "--in", directory.path("absent").path])
        XCTAssertEqual(missing.status, 66, missing.standardError)
        XCTAssertTrue(missing.standardError.contains("no such folder"), missing.standardError)
        let simulator = try Questbak.run(["locate"], environment: ["HOME": directory.url.path])
        XCTAssertEqual(simulator.status, 66, simulator.standardError)
        XCTAssertTrue(simulator.standardError.contains("give --in DIR"), simulator.standardError)
    }

    /// Stores outside any container are found too (a folder of fixtures), without an identifier.
    func testAnyFolder() throws {
        let result = try Questbak.run(["locate", "--in", Repository.fixtures.appendingPathComponent("Gates").path])
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertEqual(
            result.standardOutput.components(separatedBy: "\n").filter { $0.hasSuffix("default.store") }.count, 4, result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("no container; version 1.0.0"), result.standardOutput)
    }
}
